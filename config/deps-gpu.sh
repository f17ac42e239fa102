#!/usr/bin/env bash
# config/deps-gpu.sh -- build a CUDA-enabled PETSc for Patchwork's GPU runs.
#
# Produces  deps/petsc-cuda.tar.xz  (+ deps/petsc-cuda.info) holding an install
# of PETSc at the FIXED prefix /opt/patchwork/petsc-cuda.  On the GPU machine:
#     tar -C / -xJf deps/petsc-cuda.tar.xz
#     make PETSC_DIR=/opt/patchwork/petsc-cuda PETSC_ARCH=
#
# Build host : Debian 12, CUDA 13.0 toolkit in /usr/local/cuda, no GPU needed.
# Target     : Ubuntu 24.04, CUDA 13.0 driver/runtime, sm_90 (H100/H200).  Code
#              is generated for sm_90 only (SASS).  The prefix brings its own
#              CUDA-aware Open MPI (bin/mpiexec); the machine's own Open MPI
#              4.1.6 (not CUDA-aware) is not used.
#
# Choices:
#  * Source: PETSc sdist from PyPI (petsc==3.26.1; 3.25.6 as fallback if
#    3.26.1 fails to configure with CUDA 13).
#  * NVML: PETSc 3.26 makes NVML opt-in (--with-cuda-nvml, default 0), so the
#    build does not need nvml.h nor link libnvidia-ml.  Only if the chosen
#    PETSc has no such option (mandatory NVML) do we fetch the header from the
#    PyPI package nvidia-nvml-dev and add it to the include path.
#  * MPI: a CUDA-aware Open MPI 4.1.4 built from Debian 12 (bookworm)'s source
#    package (the orig tarball, sha256-checked, fetched as hypre below) with
#    --with-cuda --without-ucx --disable-mpi-fortran, installed into the same
#    prefix ($PREFIX/bin/mpicc, mpiexec; OPAL_PREFIX if the prefix moves).  It
#    passes device buffers to its smcuda transport (CUDA IPC between the GPUs of
#    one host), so PETSc runs with its default -use_gpu_aware_mpi 1 and PetscSF
#    (DMDA ghost updates, VecScatter, MPIAIJCUSPARSE MatMult) goes GPU to GPU.
#    It uses the system's libhwloc15, libevent 2.1 and libudev (the GPU machine
#    has them) and loads libcuda at run time (none needed here).  Its
#    etc/openmpi-mca-params.conf puts the shared-memory segments into /dev/shm
#    (shmem_mmap_relocate_backing_file): smcuda pins its segment with
#    cuMemHostRegister, which Linux refuses (long-term pinning) for a writable
#    shared mapping of a regular file, such as one under /tmp's session
#    directory, but allows on tmpfs.  p4est (Debian's, built against Debian's
#    Open MPI 4.1.4, the same ABI) resolves libmpi to this one in the prefix.
#    WITH_CUDA_MPI=0 builds against the system Open MPI instead (not CUDA-aware:
#    then PETSc needs -use_gpu_aware_mpi 0).
#  * BLAS/LAPACK: Debian's reference libblas/liblapack.  They (and their
#    non-system deps: libgfortran, libquadmath) are copied into the prefix's
#    lib/ with RPATH=$ORIGIN, since the GPU machine may lack them.
#  * hypre: hypre 2.32.0 built here from Debian 13 (trixie)'s source package
#    (the orig tarball, sha256-checked, fetched with 'apt-get source' through
#    a private apt configuration that adds trixie's deb-src to this machine's
#    Debian mirror; /etc/apt is not touched).  PETSc's --download-hypre needs
#    GitHub, which this machine cannot reach.  Debian 12's own hypre 2.26
#    (libhypre-dev) does NOT build with PETSc 3.26: its hypre interface uses
#    HYPRE_INT_MAX, hypre_IntArrayDataI, HYPRE_IJMatrixGetValues2,
#    HYPRE_ILUSetIterativeSetup* and hypre_ParILUData, newer than 2.26,
#    although hypre.py says minversion 2.14.  WITH_HYPRE selects the kind:
#    - host (default; 1 means the same): the CPU-only hypre below.
#    - cuda (opt-in, WITH_HYPRE=cuda): hypre configured --with-cuda for
#      sm_90 (SASS only, like PETSc), C++17, cuSPARSE/cuBLAS/cuRAND/cuSOLVER,
#      hypre's own device memory pool (no Umpire here), NO unified memory,
#      NO GPU-aware MPI in hypre itself (not tried with the CUDA-aware
#      Open MPI), no OpenMP, 32-bit ints, double, internal BLAS/LAPACK.  PETSc then defines
#      PETSC_HAVE_HYPRE_DEVICE: PCHYPRE/BoomerAMG runs on the GPU for
#      aijcusparse matrices and CUDA vectors, and on the CPU for AIJ matrices
#      (PETSc sets hypre's memory location per matrix; hypre runs where the
#      data lives).  hypre 2.32 predates CUDA 13, whose CCCL 3 and runtime
#      API dropped or changed names hypre uses: build_hypre patches the
#      extracted source (3 small patches, see patch_hypre_cuda13).
#      With it PCHYPRE needs a GPU even for AIJ matrices: PETSc's
#      PCCreate_HYPRE initializes the CUDA PetscDevice, which fails on a
#      machine without one (also with -device_enable lazy or none); hypre
#      itself runs host solves there.  On the GPU machine, CPU-rank BoomerAMG
#      runs (AIJ) keep PETSc's CPU defaults but each rank opens a CUDA context.
#      Not the default because on the H100 (session 13) BoomerAMG on the GPU
#      solved 7-point Laplacians up to 64^3 (262K unknowns, 14 CG iterations)
#      and PCLOR up to 36K DoF, but segfaulted (host SIGSEGV inside PCSetUp)
#      from 128^3 (2.1M) on, and PCLOR's LOR matrices at 8M DoF: with this
#      build PCLOR's default inner PC on device matrices would be BoomerAMG.
#      Cause not found (the device memory pool is a suspect).
#    - host: the same source CPU-only: PCHYPRE on the CPU only, no
#      PETSC_HAVE_HYPRE_DEVICE (device matrices get GAMG in PCLOR).
#    - 0: no hypre (also forced by INDEX64=1).
#    Its headers go to include/hypre, its library to lib/ (RUNPATH $ORIGIN;
#    for cuda, $CUDA_DIR/lib64 first: libHYPRE needs cudart, cusparse,
#    cublas(Lt), curand, cusolver, which are NOT copied into the prefix but
#    taken from the GPU machine's CUDA 13 toolkit in /usr/local/cuda/lib64).
#  * p4est: Debian 12's libp4est-dev 2.2 (PETSc's --download-p4est needs
#    GitHub), for DMForest (DMP4EST/DMP8EST) meshes with hanging nodes;
#    libp4est/libsc are copied into the prefix.  WITH_P4EST=0 leaves it out.
#  * No Fortran, no X, no SSL/valgrind (fewer runtime deps).
#  * With WITH_CUDA_MPI=0 (the system Open MPI, not CUDA-aware) PETSc aborts at
#    the first GPU object unless run with -use_gpu_aware_mpi 0.
#  * config/deps-gpu-check.sh smoke-tests the archive on the GPU machine.
#
# Idempotent: exits at once if the archive exists and was built with the same
# features (the "features:" line of the .info).  Intermediate phases are
# stamped under $BUILD so a rerun resumes after a failure; changed configure
# options reconfigure and rebuild.  The new install is staged next to $PREFIX
# and swapped in only once complete and checked (others compile against it).
# Logs: /tmp/petsc-gpu-build/*.log (/tmp/petsc-gpu-build64 with INDEX64=1)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEPS=$REPO/deps
# INDEX64=1: a second PETSc with 64-bit PetscInt (for grids beyond 2^31 index entries, e.g. the
# 721M-DoF Q7 grid, whose DMDA coordinate vector has 3 x 721M entries), under its own names and
# without hypre (whose 32-bit build cannot serve it): deps/petsc-cuda64.tar.xz -> /opt/patchwork/petsc-cuda64
INDEX64=${INDEX64:-0}
NAME=petsc-cuda$([ "$INDEX64" = 1 ] && echo 64 || true)
ARCHIVE=$DEPS/$NAME.tar.xz
INFO=$DEPS/$NAME.info
PREFIX=/opt/patchwork/$NAME
BUILD=/tmp/$([ "$INDEX64" = 1 ] && echo petsc-gpu-build64 || echo petsc-gpu-build)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/patchwork-deps
CUDA_DIR=${CUDA_DIR:-/usr/local/cuda}
PETSC_VERSIONS=${PETSC_VERSIONS:-"3.26.1 3.25.6"}
PETSC_ARCH=arch-patchwork-cuda$([ "$INDEX64" = 1 ] && echo 64 || true)
JOBS=${JOBS:-2}
# WITH_HYPRE: host (default; 1 = host) | cuda (opt-in, see above) | 0 (none; the INDEX64=1 default)
WITH_HYPRE=${WITH_HYPRE:-$([ "$INDEX64" = 1 ] && echo 0 || echo host)}
case $WITH_HYPRE in
  1|host) WITH_HYPRE=host ;;
  cuda|0) ;;
  *) echo "deps-gpu: ERROR: WITH_HYPRE must be cuda, host or 0 (not '$WITH_HYPRE')" >&2; exit 1 ;;
esac
if [ "$INDEX64" = 1 ] && [ "$WITH_HYPRE" != 0 ]; then
  echo "deps-gpu: ERROR: INDEX64=1 builds without hypre (its hypre build is 32-bit): use WITH_HYPRE=0" >&2; exit 1
fi
WITH_P4EST=${WITH_P4EST:-1}
# WITH_CUDA_MPI: 1 (default) a CUDA-aware Open MPI in the prefix; 0 the system's Open MPI
WITH_CUDA_MPI=${WITH_CUDA_MPI:-1}
OMPI_VERSION=4.1.4
OMPI_SHA256=ddaee7dbdb01eb4fab1fda5b5e03e8bbff026711806c095c1f39bb410f99f263
OMPI_SUITE=bookworm
OMPI_SRC=$BUILD/openmpi-$OMPI_VERSION
OMPI_DEST=$BUILD/openmpi-dest        # DESTDIR of its install: $OMPI_DEST$PREFIX is copied into each new prefix
HYPRE_VERSION=2.32.0
HYPRE_SHA256=2277b6f01de4a7d0b01cfe12615255d9640eaa02268565a7ce1a769beab25fa1
HYPRE_SUITE=trixie                       # the Debian release whose source package has it
# built here (source tree, install prefix copied into $PREFIX at install), one per kind, so
# switching WITH_HYPRE also changes PETSc's configure options (and so reconfigures PETSc)
if [ "$WITH_HYPRE" = cuda ]; then
  HYPRE_SRC=$BUILD/hypre-cuda/hypre-$HYPRE_VERSION
  HYPRE_PREFIX=$BUILD/hypre-cuda-install
else
  HYPRE_SRC=$BUILD/hypre-$HYPRE_VERSION
  HYPRE_PREFIX=$BUILD/hypre-install
fi
FEATURES="cuda hypre=$(case $WITH_HYPRE in cuda|host) echo "$WITH_HYPRE-$HYPRE_VERSION" ;; *) echo no ;; esac)$([ "$INDEX64" = 1 ] && echo " index64" || true)$([ "$WITH_P4EST" = 1 ] && echo " p4est-2.2" || true)$([ "$WITH_CUDA_MPI" = 1 ] && echo " openmpi-cuda-$OMPI_VERSION" || true)"

if [ -f "$ARCHIVE" ] && grep -qxF "features: $FEATURES" "$INFO" 2>/dev/null; then
  echo "deps-gpu: $ARCHIVE already exists ($FEATURES)"
  exit 0
fi
[ -f "$ARCHIVE" ] && echo "deps-gpu: $ARCHIVE exists but not with '$FEATURES': rebuilding"

mkdir -p "$BUILD" "$CACHE" "$DEPS"
TIMES=$BUILD/times.txt
touch "$TIMES"
log() { echo "[deps-gpu $(date +%H:%M:%S)] $*"; }
die() { echo "deps-gpu: ERROR: $*" >&2; exit 1; }
# phase NAME cmd...: run cmd in a subshell with errexit, record elapsed
# seconds in $TIMES, leave its exit status in PHASE_RC (always returns 0:
# callers must not put phase under || / if, which would disable errexit).
PHASE_RC=0
phase() {
  local name=$1; shift
  local t0=$SECONDS
  log "phase $name ..."
  set +e
  ( set -e; "$@" )
  PHASE_RC=$?
  set -e
  local dt=$((SECONDS - t0))
  [ $PHASE_RC -eq 0 ] || { log "phase $name FAILED (rc=$PHASE_RC) after ${dt}s"; return 0; }
  sed -i "/^$name /d" "$TIMES"
  echo "$name $dt" >> "$TIMES"
  log "phase $name done in ${dt}s"
}

# Keep deps/ out of git (no .gitignore edits: that file is owned elsewhere).
GITDIR=$(git -C "$REPO" rev-parse --git-common-dir 2>/dev/null || true)
if [ -n "$GITDIR" ]; then
  case $GITDIR in /*) ;; *) GITDIR=$REPO/$GITDIR ;; esac
  mkdir -p "$GITDIR/info"
  grep -qxF '/deps/' "$GITDIR/info/exclude" 2>/dev/null || echo '/deps/' >> "$GITDIR/info/exclude"
fi

# ---------------------------------------------------------------- apt deps
apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "apt-get install ${missing[*]}"
  # wait for a concurrent apt/dpkg (poll every 30s) instead of killing it
  until DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" > "$BUILD/apt.log" 2>&1; do
    grep -q -i 'could not get lock\|unable to acquire\|lock' "$BUILD/apt.log" || die "apt-get failed, see $BUILD/apt.log"
    log "apt is locked, waiting 30s"; sleep 30
  done
}
apt_install libopenmpi-dev openmpi-bin liblapack-dev libblas-dev patchelf xz-utils make
[ "$WITH_P4EST" = 1 ] && apt_install libp4est-dev zlib1g-dev
P4EST_LIBS=(/usr/lib/x86_64-linux-gnu/libp4est.so /usr/lib/x86_64-linux-gnu/libsc.so)

# ---------------------------------------------------------------- Debian source packages
# fetch_orig PKG VERSION SUITE SHA256 EXT: the orig tarball of Debian SUITE's source package PKG
# into $CACHE/PKG_VERSION.orig.tar.EXT, sha256-checked, through a private apt configuration that
# adds SUITE's deb-src to this machine's Debian mirror (/etc/apt is not touched)
fetch_orig() {
  local pkg=$1 ver=$2 suite=$3 sha=$4 ext=$5
  local file=${pkg}_$ver.orig.tar.$ext a=$CACHE/apt-$suite uri
  [ -f "$CACHE/$file" ] && return 0
  # this machine's Debian mirror, from its apt sources (deb822 or one-line)
  uri=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -1)
  [ -n "$uri" ] || uri=$(awk '$1 == "deb" && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
  [ -n "$uri" ] || { echo "no Debian mirror in /etc/apt" >&2; return 1; }
  rm -rf "$a"
  mkdir -p "$a/lists/partial" "$a/cache/archives/partial" "$a/dl"
  echo "deb-src $uri $suite main" > "$a/sources.list"
  local o=(-o Dir::Etc::SourceList="$a/sources.list" -o Dir::Etc::SourceParts=/nonexistent
           -o Dir::State::Lists="$a/lists" -o Dir::Cache="$a/cache")
  apt-get "${o[@]}" update
  # only the orig tarball is needed (a missing .dsc/.debian.tar is not an error here)
  (cd "$a/dl" && apt-get "${o[@]}" source --download-only "$pkg") || true
  [ -f "$a/dl/$file" ] || { echo "$suite has no $pkg $ver: $(ls "$a/dl")" >&2; return 1; }
  echo "$sha  $a/dl/$file" | sha256sum -c -
  mv "$a/dl/$file" "$CACHE/$file"
  rm -rf "$a"
}

# ---------------------------------------------------------------- CUDA-aware Open MPI
# Built once into $OMPI_DEST$PREFIX (DESTDIR install, the prefix compiled in); copied into
# $PREFIX at once, so that hypre and PETSc compile with the real $PREFIX/bin/mpicc, and into
# each new prefix at install.
OMPI_CONF=(--prefix="$PREFIX" --with-cuda="$CUDA_DIR" --without-ucx --disable-mpi-fortran
           --enable-mpi-ext=cuda --disable-static --enable-shared CFLAGS=-O2)
build_openmpi() {
  rm -rf "$OMPI_SRC" "$OMPI_DEST"
  tar -C "$BUILD" -xJf "$CACHE/openmpi_$OMPI_VERSION.orig.tar.xz"
  cd "$OMPI_SRC"
  echo "Open MPI configure: ./configure $(printf '%q ' "${OMPI_CONF[@]}")"
  ./configure "${OMPI_CONF[@]}"
  make -j"$JOBS"
  make install DESTDIR="$OMPI_DEST"
  local p=$OMPI_DEST$PREFIX
  # the shared-memory segments on tmpfs, where smcuda may pin them (see the header)
  cat >> "$p/etc/openmpi-mca-params.conf" <<'MCA'
# Patchwork (config/deps-gpu.sh): shared-memory segments in /dev/shm (tmpfs). smcuda pins its
# segment with cuMemHostRegister; Linux refuses to pin a writable shared mapping of a regular
# file (the default: the session directory under /tmp), which printed a warning at start-up.
shmem_mmap_relocate_backing_file = -1
shmem_mmap_backing_file_base_dir = /dev/shm
MCA
  # its own libraries, not the system's libmpi.so.40 (Debian's, without CUDA), which the loader
  # would find first while the prefix is not yet in place
  LD_LIBRARY_PATH=$p/lib OPAL_PREFIX=$p "$p/bin/ompi_info" --parsable --all > "$BUILD/ompi_info.txt"
  grep -q '^mca:mpi:base:param:mpi_built_with_cuda_support:value:true' "$BUILD/ompi_info.txt" ||
    { echo "Open MPI was built without CUDA support" >&2; return 1; }
  echo "$(printf '%q ' "${OMPI_CONF[@]}")" > "$OMPI_SRC/.installed"
}
MPICC=mpicc MPICXX=mpicxx MPIEXEC=mpiexec
if [ "$WITH_CUDA_MPI" = 1 ]; then
  if [ "$(cat "$OMPI_SRC/.installed" 2>/dev/null)" != "$(printf '%q ' "${OMPI_CONF[@]}")" ]; then
    phase fetch-openmpi fetch_orig openmpi "$OMPI_VERSION" "$OMPI_SUITE" "$OMPI_SHA256" xz > "$BUILD/openmpi-fetch.log" 2>&1
    [ $PHASE_RC -eq 0 ] || die "could not fetch Open MPI $OMPI_VERSION, see $BUILD/openmpi-fetch.log"
    phase openmpi build_openmpi > "$BUILD/openmpi.log" 2>&1
    [ $PHASE_RC -eq 0 ] || die "Open MPI build failed, see $BUILD/openmpi.log"
  fi
  # the live prefix gets it now (hypre and PETSc are compiled with its wrappers)
  mkdir -p "$PREFIX"
  cp -a "$OMPI_DEST$PREFIX/." "$PREFIX/"
  MPICC=$PREFIX/bin/mpicc MPICXX=$PREFIX/bin/mpicxx MPIEXEC=$PREFIX/bin/mpiexec
  "$MPICC" --showme:version
fi

# ---------------------------------------------------------------- hypre
fetch_hypre() { fetch_orig hypre "$HYPRE_VERSION" "$HYPRE_SUITE" "$HYPRE_SHA256" gz; }
# hypre's configure arguments for the selected kind (HYPRE_CONF), and the stamp that
# marks a finished build with them (a changed argument or patch level rebuilds hypre)
hypre_configure_args() {
  HYPRE_CONF=(--prefix="$HYPRE_PREFIX" --enable-shared --disable-fortran --without-openmp
              CC="$MPICC" CXX="$MPICXX" CFLAGS=-O2 CXXFLAGS=-O2)
  if [ "$WITH_HYPRE" = cuda ]; then
    # C++17: CCCL 3 (CUDA 13's thrust/cub) needs it (hypre's default is C++11).
    # CUFLAGS: hypre's default less -lineinfo (smaller library); -fPIC for the shared lib.
    # hypre's own GPU-aware MPI stays off (not tried with the CUDA-aware Open MPI).
    HYPRE_CONF+=(--with-cuda --with-gpu-arch=90 --with-cxxstandard=17
                 --enable-cusparse --enable-cublas --enable-curand --enable-cusolver
                 --enable-device-memory-pool --disable-unified-memory --disable-gpu-aware-mpi
                 CUDA_HOME="$CUDA_DIR"
                 "CUFLAGS=-O2 -expt-extended-lambda -std=c++17 --x cu -Xcompiler -fPIC")
  fi
  HYPRE_STAMP="$(printf '%q ' "${HYPRE_CONF[@]}")$([ "$WITH_HYPRE" = cuda ] && echo "patches=cuda13-v2" || true)"
}
# Source patches for CUDA 13, run in hypre's src/.  hypre 2.32.0 (Oct 2024) predates CUDA 13,
# whose CCCL 3.0 (thrust/cub/libcu++ 3.0) removed names hypre uses.  Only what the compile
# needs, no behaviour change; each step fails loudly if its anchor is gone:
#  1. thrust::unary_function/binary_function (empty bases that only carry typedefs),
#     thrust::identity<T> and thrust::not1 no longer exist (compile errors "namespace thrust
#     has no member unary_function" etc. in many *_device.c files): minimal stand-ins are
#     inserted into hypre's internal device header (utilities/_hypre_utilities.hpp, used by the
#     build and installed; and its part utilities/device_utils.h) right after
#     #include <thrust/functional.h>, active only when THRUST_VERSION >= 300000.  identity
#     returns by value (the old one returned a const reference: same results for hypre's uses
#     as predicate/transform, without a dangling reference through transform iterators).
#  2. IJ_mv/IJMatrix_parcsr_device.c and IJVector_parcsr_device.c call make_reverse_iterator
#     unqualified; thrust::tuple is now cuda::std::tuple, so argument-dependent lookup also
#     finds cuda::std::make_reverse_iterator ("more than one instance of make_reverse_iterator
#     matches"): qualify the calls as thrust::make_reverse_iterator.
#  3. utilities/memory.c: CUDA 13's cudaMemPrefetchAsync takes (ptr, size, cudaMemLocation,
#     flags, stream) instead of (ptr, size, device, stream) ("no suitable constructor exists
#     to convert from int to cudaMemLocation"); used only for unified memory, which is off
#     here, but it must compile: the two calls go through a small wrapper that builds the
#     cudaMemLocation (host for cudaCpuDeviceId, else the device) when CUDART_VERSION >= 13000.
patch_hypre_cuda13() {
  local shim=.patchwork-cccl3-shim.h f
  cat > "$shim" <<'SHIM'
#if defined(HYPRE_USING_CUDA) && defined(THRUST_VERSION) && THRUST_VERSION >= 300000
/* Patchwork (config/deps-gpu.sh): CCCL 3 (CUDA 13) removed these deprecated thrust names
   that hypre 2.32 uses; minimal stand-ins (identity returns by value). */
namespace thrust
{
template <typename A, typename R> struct unary_function
{ typedef A argument_type; typedef R result_type; };
template <typename A1, typename A2, typename R> struct binary_function
{ typedef A1 first_argument_type; typedef A2 second_argument_type; typedef R result_type; };
template <typename T> struct identity
{ typedef T result_type; __host__ __device__ constexpr T operator()(const T &x) const { return x; } };
template <typename P> __host__ __device__ constexpr auto not1(const P &p) { return ::cuda::std::not_fn(p); }
}
#endif
SHIM
  for f in utilities/_hypre_utilities.hpp utilities/device_utils.h; do
    grep -qx '#include <thrust/functional.h>' "$f" || { echo "patch 1: no '#include <thrust/functional.h>' in $f" >&2; return 1; }
    sed -i "\\@^#include <thrust/functional.h>\$@r $shim" "$f"
    grep -q 'Patchwork (config/deps-gpu.sh)' "$f" || { echo "patch 1 not applied to $f" >&2; return 1; }
  done
  for f in IJ_mv/IJMatrix_parcsr_device.c IJ_mv/IJVector_parcsr_device.c; do
    grep -q '[^:[:alnum:]_]make_reverse_iterator(' "$f" || { echo "patch 2: no make_reverse_iterator( in $f" >&2; return 1; }
    sed -i 's/\([^:[:alnum:]_]\)make_reverse_iterator(/\1thrust::make_reverse_iterator(/g' "$f"
  done
  cat > .patchwork-memprefetch.h <<'WRAP'
#if defined(HYPRE_USING_CUDA)
/* Patchwork (config/deps-gpu.sh): CUDA 13 changed cudaMemPrefetchAsync to take a
   cudaMemLocation and flags instead of a device id (only used for unified memory). */
static inline cudaError_t
hypre_CudaMemPrefetchAsync(void *ptr, size_t size, int device, cudaStream_t stream)
{
#if CUDART_VERSION >= 13000
   struct cudaMemLocation loc;
   loc.type = (device == cudaCpuDeviceId) ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
   loc.id   = (device == cudaCpuDeviceId) ? 0 : device;
   return cudaMemPrefetchAsync(ptr, size, loc, 0, stream);
#else
   return cudaMemPrefetchAsync(ptr, size, device, stream);
#endif
}
#endif
WRAP
  f=utilities/memory.c
  grep -qx '#include "_hypre_utilities.hpp"' "$f" || { echo "patch 3: no '#include \"_hypre_utilities.hpp\"' in $f" >&2; return 1; }
  [ "$(grep -c 'HYPRE_CUDA_CALL( cudaMemPrefetchAsync(' "$f")" = 2 ] || { echo "patch 3: expected 2 cudaMemPrefetchAsync calls in $f" >&2; return 1; }
  sed -i -e '\@^#include "_hypre_utilities.hpp"$@r .patchwork-memprefetch.h' \
         -e 's/HYPRE_CUDA_CALL( cudaMemPrefetchAsync(/HYPRE_CUDA_CALL( hypre_CudaMemPrefetchAsync(/' "$f"
  echo "applied the CUDA 13 (CCCL 3) patches"
}
build_hypre() {
  rm -rf "$HYPRE_SRC" "$HYPRE_PREFIX"
  mkdir -p "$(dirname "$HYPRE_SRC")"
  tar -C "$(dirname "$HYPRE_SRC")" -xzf "$CACHE/hypre_$HYPRE_VERSION.orig.tar.gz"
  cd "$HYPRE_SRC/src"
  if [ "$WITH_HYPRE" = cuda ]; then patch_hypre_cuda13; fi
  echo "hypre configure: ./configure $(printf '%q ' "${HYPRE_CONF[@]}")"
  ./configure "${HYPRE_CONF[@]}"
  grep -E '^(CC|CXX|CUCC|CUFLAGS|CUDA_ARCH|HYPRE_CUDA_LIBS) ' config/Makefile.config || true
  make -j"$JOBS"
  make install
  local cfg=$HYPRE_PREFIX/include/HYPRE_config.h bad='USING_OPENMP|BIGINT|MIXEDINT|COMPLEX|SINGLE|LONG_DOUBLE' d
  if [ "$WITH_HYPRE" = cuda ]; then
    bad+='|USING_UNIFIED_MEMORY|WITH_GPU_AWARE_MPI|USING_GPU_AWARE_MPI'
    for d in USING_GPU USING_CUDA USING_CUSPARSE USING_CUBLAS USING_CURAND USING_CUSOLVER USING_DEVICE_POOL; do
      grep -q "^#define HYPRE_$d 1" "$cfg" || { echo "hypre: HYPRE_$d is not defined" >&2; return 1; }
    done
  else
    bad+='|USING_GPU|USING_CUDA'
  fi
  if grep -E "^#define HYPRE_($bad) " "$cfg"; then
    echo "hypre is not the expected $WITH_HYPRE double/int32 build" >&2; return 1
  fi
  [ -f "$HYPRE_PREFIX/lib/libHYPRE.so" ]
  if [ "$WITH_HYPRE" = cuda ]; then
    # the CUDA libs it needs, for PETSc's configure tests and build (the prefix's copy gets
    # $CUDA_DIR/lib64:$ORIGIN at install)
    patchelf --set-rpath "$CUDA_DIR/lib64" "$(readlink -f "$HYPRE_PREFIX/lib/libHYPRE.so")"
    ldd "$HYPRE_PREFIX/lib/libHYPRE.so"
    ! grep -q 'not found' <<< "$(ldd "$HYPRE_PREFIX/lib/libHYPRE.so")"
  fi
  echo "$HYPRE_STAMP" > "$HYPRE_SRC/.installed"
}
if [ "$WITH_HYPRE" != 0 ]; then
  hypre_configure_args
  if [ "$(cat "$HYPRE_SRC/.installed" 2>/dev/null)" != "$HYPRE_STAMP" ]; then
    phase fetch-hypre fetch_hypre > "$BUILD/hypre-fetch.log" 2>&1
    [ $PHASE_RC -eq 0 ] || die "could not fetch hypre $HYPRE_VERSION, see $BUILD/hypre-fetch.log"
    sed -i -E '/^hypre(-[a-z]+)? /d' "$TIMES"   # the other kind's time would mislead in the .info
    phase "hypre-$WITH_HYPRE" build_hypre > "$BUILD/hypre-$WITH_HYPRE.log" 2>&1
    [ $PHASE_RC -eq 0 ] || die "hypre build failed, see $BUILD/hypre-$WITH_HYPRE.log"
  fi
fi
[ -x "$CUDA_DIR/bin/nvcc" ] || die "no nvcc in $CUDA_DIR/bin"

# ---------------------------------------------------------------- download
SRC=""
download() {
  local v=$1
  [ -f "$CACHE/petsc-$v.tar.gz" ] && return 0
  pip download -q --no-deps --no-binary :all: "petsc==$v" -d "$CACHE" \
    > "$BUILD/download-$v.log" 2>&1
}

configure_opts() {
  local src=$1 extra=()
  [ "$INDEX64" = 1 ] && extra+=(--with-64-bit-indices=1)
  if [ "$WITH_HYPRE" != 0 ]; then
    extra+=(--with-hypre-include=$HYPRE_PREFIX/include --with-hypre-lib=$HYPRE_PREFIX/lib/libHYPRE.so)
  else
    extra+=(--with-hypre=0)
  fi
  if [ "$WITH_P4EST" = 1 ]; then
    extra+=(--with-p4est-include=/usr/include "--with-p4est-lib=[${P4EST_LIBS[0]},${P4EST_LIBS[1]}]" --with-zlib=1)
  fi
  local cudapy=$src/config/BuildSystem/config/packages/CUDA.py
  if grep -q "with-cuda-nvml" "$cudapy"; then
    extra+=(--with-cuda-nvml=0)
  else
    # NVML mandatory in this PETSc: header from PyPI's nvidia-nvml-dev
    local nv=$CACHE/nvml
    [ -f "$nv/nvidia/cu13/include/nvml.h" ] || \
      pip install -q --no-deps --target "$nv" "nvidia-nvml-dev==13.0.*" > "$BUILD/nvml.log" 2>&1
    extra+=("CPPFLAGS=-I$nv/nvidia/cu13/include" "CUDAPPFLAGS=-I$nv/nvidia/cu13/include")
    local stub=$(find "$nv" "$CUDA_DIR/lib64/stubs" -name 'libnvidia-ml.so*' 2>/dev/null | head -1)
    [ -n "$stub" ] && extra+=("LDFLAGS=-L$(dirname "$stub")")
  fi
  CONFIGURE_OPTS=(
    --prefix=$PREFIX
    --with-cc="$MPICC" --with-cxx="$MPICXX" --with-fc=0
    --with-cuda=1 --with-cuda-dir=$CUDA_DIR --with-cudac=$CUDA_DIR/bin/nvcc
    --with-cuda-arch=90
    --with-shared-libraries=1 --with-debugging=0
    COPTFLAGS=-O3 CXXOPTFLAGS=-O3 CUDAOPTFLAGS=-O3
    --with-blaslapack-lib="[/usr/lib/x86_64-linux-gnu/liblapack.so,/usr/lib/x86_64-linux-gnu/libblas.so]"
    --with-x=0 --with-ssl=0 --with-valgrind=0
    "--with-mpiexec=$MPIEXEC --allow-run-as-root --oversubscribe"
    "${extra[@]}"
  )
}
configure_petsc() { cd "$1" && ./configure PETSC_ARCH=$PETSC_ARCH "${CONFIGURE_OPTS[@]}"; }

for v in $PETSC_VERSIONS; do
  src=$BUILD/petsc-$v
  if [ -f "$src/.configured" ]; then
    configure_opts "$src"
    if [ "$(printf '%q ' "${CONFIGURE_OPTS[@]}")" = "$(cat "$src/.configured")" ]; then SRC=$src; break; fi
    log "configure options of petsc $v changed: reconfiguring and rebuilding"
  fi
  phase "download-$v" download "$v"
  [ $PHASE_RC -eq 0 ] || { log "download of petsc $v failed, see $BUILD/download-$v.log"; continue; }
  rm -rf "$src"; tar -C "$BUILD" -xzf "$CACHE/petsc-$v.tar.gz"
  [ -d "$src" ] || die "unexpected sdist layout for petsc $v"
  configure_opts "$src"
  phase "configure" configure_petsc "$src" > "$BUILD/configure-$v.log" 2>&1
  if [ $PHASE_RC -eq 0 ]; then
    printf '%q ' "${CONFIGURE_OPTS[@]}" > "$src/.configured"
    SRC=$src; break
  fi
  log "petsc $v failed to configure (see $BUILD/configure-$v.log and $src/configure.log); trying next"
  echo "petsc $v: configure failed" >> "$BUILD/fallback.txt"
done
[ -n "$SRC" ] || die "no PETSc version configured (tried: $PETSC_VERSIONS)"
grep -h -E '^(download|configure) ' "$TIMES" | sed 's/^/  /'
VERSION=${SRC##*/petsc-}
log "using PETSc $VERSION in $SRC"

# ---------------------------------------------------------------- build
if [ ! -f "$SRC/.built" ]; then
  phase make make -C "$SRC" PETSC_DIR="$SRC" PETSC_ARCH=$PETSC_ARCH MAKE_NP=$JOBS -j$JOBS all \
    > "$BUILD/make.log" 2>&1
  [ $PHASE_RC -eq 0 ] || die "make failed, see $BUILD/make.log"
  touch "$SRC/.built"
fi

# ---------------------------------------------------------------- install
# staged next to $PREFIX (same file system), swapped in by swap_prefix
STAGE=$(dirname "$PREFIX")/.$(basename "$PREFIX").stage
install_petsc() {
  rm -rf "$STAGE"
  if [ "$WITH_CUDA_MPI" = 1 ]; then mkdir -p "$STAGE$PREFIX" && cp -a "$OMPI_DEST$PREFIX/." "$STAGE$PREFIX/"; fi
  make -C "$SRC" PETSC_DIR="$SRC" PETSC_ARCH=$PETSC_ARCH DESTDIR="$STAGE" install
  cd "$STAGE$PREFIX"
  # strip and trim what a user of the installed library does not need
  find lib -maxdepth 1 -name 'libpetsc*.so*' -type f -exec strip --strip-unneeded {} +
  find . -name '*.a' -delete
  rm -rf share/petsc/examples share/petsc/datafiles share/doc share/man docs
  find . -type d \( -name tutorials -o -name tests \) -prune -exec rm -rf {} +
  # hypre: headers to include/hypre, library to lib/; the build paths in
  # PETSc's makefile variables, pkg-config and RUNPATH become the prefix's.
  # A CUDA hypre's RUNPATH: the CUDA toolkit's lib64 first (cudart, cusparse,
  # cublas, curand, cusolver: not copied, see sysre), then $ORIGIN.
  if [ "$WITH_HYPRE" != 0 ]; then
    mkdir -p include/hypre
    cp -a "$HYPRE_PREFIX"/include/. include/hypre/
    local hl hrp='$ORIGIN'
    [ "$WITH_HYPRE" = cuda ] && hrp="$CUDA_DIR/lib64:\$ORIGIN"
    for hl in "$HYPRE_PREFIX"/lib/libHYPRE*.so*; do
      [ -L "$hl" ] && { cp -a "$hl" lib/; continue; }
      cp "$hl" lib/; chmod 755 "lib/${hl##*/}"
      strip --strip-unneeded "lib/${hl##*/}"
      patchelf --set-rpath "$hrp" "lib/${hl##*/}"
      echo "${hl##*/} RUNPATH: $(patchelf --print-rpath "lib/${hl##*/}")"
    done
    grep -rlF "$HYPRE_PREFIX" lib/petsc/conf lib/pkgconfig include/*.h | xargs -r sed -i \
      -e "s#$HYPRE_PREFIX/include#$PREFIX/include/hypre#g" -e "s#$HYPRE_PREFIX/lib#$PREFIX/lib#g"
  fi
  # runtime libs the GPU machine may lack: BLAS/LAPACK, hypre's and their
  # non-system deps.  Not copied: glibc/gcc runtime, OpenMPI's own libraries
  # and what they need (the GPU machine's OpenMPI 4.1.6 brings them; ABI as
  # Debian's 4.1.4), base-system compression/udev libraries, and the CUDA
  # toolkit's libraries (a CUDA hypre's cudart, cusparse, cublas(Lt), curand,
  # cusolver, nvJitLink: the GPU machine's CUDA 13 toolkit has them in
  # /usr/local/cuda/lib64, as libpetsc's own CUDA libs).
  local sysre='^(libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|ld-linux-x86-64|linux-vdso|libmpi|libopen-rte|libopen-pal|libhwloc|libevent[a-z_]*-[0-9.]*|libudev|libz|liblzma|libbz2|libcuda|libcudart|libcublas|libcublasLt|libcusparse|libcurand|libcusolver|libcufft|libnvJitLink|libnvrtc|libnvToolsExt|libnvtx3interop)\.so'
  local libs=(/usr/lib/x86_64-linux-gnu/libblas.so.3 /usr/lib/x86_64-linux-gnu/liblapack.so.3)
  [ "$WITH_HYPRE" != 0 ] && libs+=("$(readlink -f lib/libHYPRE.so)")
  if [ "$WITH_P4EST" = 1 ]; then
    for f in "${P4EST_LIBS[@]}"; do libs+=("$(readlink -f "$f")"); done
  fi
  local f path name
  for f in "${libs[@]}"; do
    while read -r path; do libs+=("$path"); done < <(ldd "$f" | awk '$3 ~ /^\// {print $3}')
  done
  : > "$BUILD/copied-libs.txt"
  for path in "${libs[@]}"; do
    name=$(basename "$path")
    [[ $name =~ $sysre ]] && continue
    [ -e "lib/$name" ] && continue
    cp -L "$path" "lib/$name"
    chmod 755 "lib/$name"
    strip --strip-unneeded "lib/$name"
    patchelf --set-rpath '$ORIGIN' "lib/$name"
    echo "$name" >> "$BUILD/copied-libs.txt"
  done
  # link-time names, for a machine that has no liblapack-dev/libblas-dev (nor libp4est-dev: PETSc's
  # makefile variables link -lp4est -lsc, found in the prefix's lib/ there)
  ln -sf liblapack.so.3 lib/liblapack.so
  ln -sf libblas.so.3 lib/libblas.so
  if [ "$WITH_P4EST" = 1 ]; then
    for f in "${P4EST_LIBS[@]}"; do ln -sf "$(basename "$(readlink -f "$f")")" "lib/$(basename "$f")"; done
  fi
  # This toolkit has real libs in $CUDA_DIR/lib (lib64 -> lib); a standard
  # toolkit (the GPU machine) has only lib64.  Use lib64, valid on both.
  if [ -d "$CUDA_DIR/lib64" ]; then
    sed -i "s#$CUDA_DIR/lib\b#$CUDA_DIR/lib64#g" lib/petsc/conf/petscvariables \
      lib/pkgconfig/*.pc include/petscmachineinfo.h
  fi
  # libpetsc RUNPATH: system dirs first, then $ORIGIN as a fallback for the
  # copied BLAS/LAPACK (RUNPATH only applies to libpetsc's own NEEDED libs).
  local so rp
  so=$(readlink -f lib/libpetsc.so)
  rp=$(patchelf --print-rpath "$so" | sed -e "s#$CUDA_DIR/lib\b#$CUDA_DIR/lib64#g" -e "s#$HYPRE_PREFIX/lib:\?##g")
  # the prefix's own Open MPI before the system directories (BLAS/LAPACK put /usr/lib/x86_64-linux-gnu
  # first), where the machine's libmpi.so.40, not CUDA-aware, would be found instead
  if [ "$WITH_CUDA_MPI" = 1 ]; then rp="$PREFIX/lib:$(tr ':' '\n' <<< "$rp" | grep -vx "$PREFIX/lib" | paste -sd:)"; fi
  patchelf --set-rpath "$rp:\$ORIGIN" "$so"
  echo "libpetsc RUNPATH: $(patchelf --print-rpath "$so")"
  log "copied runtime libs: $(tr '\n' ' ' < "$BUILD/copied-libs.txt")"
  check_prefix "$STAGE$PREFIX"
  swap_prefix
}
check_prefix() {
  local p=$1
  if [ "$WITH_CUDA_MPI" = 1 ]; then
    [ -x "$p/bin/mpiexec" ] && [ -x "$p/bin/mpicc" ] || { echo "no Open MPI in the prefix" >&2; return 1; }
    grep -q "^MPIEXEC *= *$PREFIX/bin/mpiexec" "$p/lib/petsc/conf/petscvariables" || { echo "PETSc does not use the prefix's mpiexec" >&2; return 1; }
    grep -q "$PREFIX/lib/libmpi.so" <<< "$(ldd "$p/lib/libpetsc.so")" || { echo "libpetsc.so does not load the prefix's libmpi" >&2; return 1; }
  fi
  grep -q 'not found' <<< "$(ldd "$p/lib/libpetsc.so")" && { echo "libpetsc.so has unresolved deps" >&2; return 1; }
  grep -q '^#define PETSC_HAVE_CUDA 1' "$p/include/petscconf.h" || { echo "PETSc built without CUDA" >&2; return 1; }
  if [ "$WITH_HYPRE" != 0 ]; then
    grep -q '^#define PETSC_HAVE_HYPRE 1' "$p/include/petscconf.h" || { echo "PETSc built without hypre" >&2; return 1; }
    grep -q "libHYPRE" <<< "$(ldd "$p/lib/libpetsc.so")" || { echo "libpetsc.so does not link libHYPRE" >&2; return 1; }
    grep -q 'not found' <<< "$(ldd "$p/lib/libHYPRE.so")" && { echo "libHYPRE.so has unresolved deps" >&2; return 1; }
  fi
  if [ "$WITH_P4EST" = 1 ]; then
    grep -q '^#define PETSC_HAVE_P4EST 1' "$p/include/petscconf.h" || { echo "PETSc built without p4est" >&2; return 1; }
    [ -e "$p/lib/libp4est.so" ] && [ -e "$p/lib/libsc.so" ] || { echo "no link-time libp4est.so/libsc.so in the prefix" >&2; return 1; }
  fi
  if [ "$WITH_HYPRE" = cuda ]; then
    grep -q '^#define PETSC_HAVE_HYPRE_DEVICE 1' "$p/include/petscconf.h" || { echo "PETSc did not take hypre as a device (CUDA) hypre: no PETSC_HAVE_HYPRE_DEVICE" >&2; return 1; }
    grep -q '^#define HYPRE_USING_CUDA 1' "$p/include/hypre/HYPRE_config.h" || { echo "the prefix's hypre is not a CUDA build" >&2; return 1; }
    patchelf --print-rpath "$(readlink -f "$p/lib/libHYPRE.so")" | grep -q "^$CUDA_DIR/lib64:" || { echo "libHYPRE.so RUNPATH does not start with $CUDA_DIR/lib64" >&2; return 1; }
    grep -q 'libcusparse' <<< "$(ldd "$p/lib/libHYPRE.so")" || { echo "libHYPRE.so does not link cuSPARSE" >&2; return 1; }
  elif [ "$WITH_HYPRE" = host ]; then
    grep -q '^#define PETSC_HAVE_HYPRE_DEVICE' "$p/include/petscconf.h" && { echo "host hypre, but PETSC_HAVE_HYPRE_DEVICE is defined" >&2; return 1; }
  fi
  return 0
}
# replace $PREFIX by the checked stage: two renames on one file system
swap_prefix() {
  local old=$(dirname "$PREFIX")/.$(basename "$PREFIX").old
  rm -rf "$old"
  [ -e "$PREFIX" ] && mv "$PREFIX" "$old"
  mv "$STAGE$PREFIX" "$PREFIX"
  rm -rf "$old" "$STAGE"
}
# (again when the installed prefix fails its check, e.g. one made by an older version of this script)
if [ ! -f "$SRC/.installed" ] || [ ! -f "$PREFIX/lib/petsc/conf/petscvariables" ] || ! check_prefix "$PREFIX" > /dev/null 2>&1; then
  phase install install_petsc > "$BUILD/install.log" 2>&1
  [ $PHASE_RC -eq 0 ] || die "install failed, see $BUILD/install.log"
  touch "$SRC/.installed"
fi

# ---------------------------------------------------------------- check
check_prefix "$PREFIX" || die "check of $PREFIX failed"

# ---------------------------------------------------------------- pack
pack() {
  local tmp=$ARCHIVE.tmp
  tar -C / -cf - "${PREFIX#/}" | xz -9 -T"$JOBS" > "$tmp"
  mv "$tmp" "$ARCHIVE"
}
phase pack pack
[ $PHASE_RC -eq 0 ] || die "packing failed"
SIZE=$(stat -c %s "$ARCHIVE")
{
  echo "archive: $ARCHIVE"
  echo "unpack:  tar -C / -xJf deps/$NAME.tar.xz   -> $PREFIX"
  echo "size:    $SIZE bytes ($((SIZE / 1048576)) MiB); installed tree $(du -sh "$PREFIX" | cut -f1)"
  echo "sha256:  $(sha256sum "$ARCHIVE" | cut -d' ' -f1)"
  echo "petsc:   $VERSION (PyPI sdist)"
  echo "features: $FEATURES"
  if [ "$WITH_HYPRE" != 0 ]; then
    hv=$(sed -n 's/^#define HYPRE_RELEASE_VERSION "\(.*\)"/\1/p' "$PREFIX/include/hypre/HYPRE_config.h")
    if [ "$WITH_HYPRE" = cuda ]; then
      echo "hypre:   $hv with CUDA (sm_90, cuSPARSE/cuBLAS/cuRAND/cuSOLVER, hypre device memory pool, no unified memory, no GPU-aware MPI; PETSC_HAVE_HYPRE_DEVICE): PCHYPRE/BoomerAMG runs on the GPU for aijcusparse matrices + CUDA vectors and on the CPU for AIJ matrices (PETSc's CPU BoomerAMG defaults), but PCHYPRE needs a GPU in either case (PCCreate_HYPRE initializes the CUDA PetscDevice: on a machine without GPU it fails with cudaErrorInsufficientDriver, also with -device_enable lazy/none; each rank opens a CUDA context); libHYPRE needs the CUDA 13 toolkit libs in $CUDA_DIR/lib64 (its RUNPATH; not in the archive); source patched to compile with CUDA 13/CCCL 3 (thrust stand-ins, qualified make_reverse_iterator, cudaMemPrefetchAsync wrapper: patch_hypre_cuda13 in config/deps-gpu.sh); Debian $HYPRE_SUITE source, sha256 $HYPRE_SHA256"
    else
      echo "hypre:   $hv (host only, WITH_HYPRE=host: PCHYPRE/BoomerAMG on CPU matrices; Debian $HYPRE_SUITE source, sha256 $HYPRE_SHA256)"
    fi
    echo "hypre configure: ./configure $(printf '%q ' "${HYPRE_CONF[@]}")"
    echo "petscconf.h: $(grep -E '^#define PETSC_HAVE_HYPRE' "$PREFIX/include/petscconf.h" | tr '\n' ';')"
  fi
  [ -f "$BUILD/fallback.txt" ] && sed 's/^/note:    /' "$BUILD/fallback.txt"
  echo "nvcc:    $("$CUDA_DIR/bin/nvcc" --version | grep -o 'release [0-9.]*')"
  echo "mpi:     $("$MPICC" --showme:version 2>&1 | head -1)$([ "$WITH_CUDA_MPI" = 1 ] && echo ", CUDA-aware, in the prefix (Debian $OMPI_SUITE source, sha256 $OMPI_SHA256; configure $(printf '%q ' "${OMPI_CONF[@]}"))" || true)"
  echo "built:   $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release; echo "$PRETTY_NAME")"
  echo "configure: ./configure PETSC_ARCH=$PETSC_ARCH $(cat "$SRC/.configured")"
  echo "copied runtime libs: $(tr '\n' ' ' < "$BUILD/copied-libs.txt")"
  echo "phase times (s):"
  sed 's/^/  /' "$TIMES"
  if [ "$WITH_CUDA_MPI" = 1 ]; then
    echo "runtime: $PREFIX/bin/mpiexec (CUDA-aware); PETSc's default -use_gpu_aware_mpi 1"
  else
    echo "runtime: the system OpenMPI is not CUDA-aware: PETSC_OPTIONS='-use_gpu_aware_mpi 0'"
  fi
  echo "makefile: PETSC_DIR=$PREFIX PETSC_ARCH= ; include \$(PETSC_DIR)/lib/petsc/conf/variables"
  grep -E '^(CUDAC|CUDAC_FLAGS|CUDAFLAGS|CUDAPP_FLAGS|CUDA_INCLUDE|CUDA_LIB|CUDA_CXX|CUDA_CXXFLAGS) ' \
    "$PREFIX/lib/petsc/conf/petscvariables" | sed 's/^/  /'
} > "$INFO"
log "phase times (s):"; sed 's/^/  /' "$TIMES"
log "done: $ARCHIVE ($((SIZE / 1048576)) MiB), info in $INFO"
