#!/usr/bin/env bash
# config/deps-gpu.sh -- build a CUDA-enabled PETSc for Patchwork's GPU runs.
#
# Produces  deps/petsc-cuda.tar.xz  (+ deps/petsc-cuda.info) holding an install
# of PETSc at the FIXED prefix /opt/patchwork/petsc-cuda.  On the GPU machine:
#     tar -C / -xJf deps/petsc-cuda.tar.xz
#     make PETSC_DIR=/opt/patchwork/petsc-cuda PETSC_ARCH=
#
# Build host : Debian 12, CUDA 13.0 toolkit in /usr/local/cuda, no GPU needed.
# Target     : Ubuntu 24.04, CUDA 13.0 driver/runtime, OpenMPI 4.1.x in /usr,
#              sm_90 (H100/H200).  Code is generated for sm_90 only (SASS).
#
# Choices:
#  * Source: PETSc sdist from PyPI (petsc==3.26.1; 3.25.6 as fallback if
#    3.26.1 fails to configure with CUDA 13).
#  * NVML: PETSc 3.26 makes NVML opt-in (--with-cuda-nvml, default 0), so the
#    build does not need nvml.h nor link libnvidia-ml.  Only if the chosen
#    PETSc has no such option (mandatory NVML) do we fetch the header from the
#    PyPI package nvidia-nvml-dev and add it to the include path.
#  * MPI: Debian's OpenMPI 4.1 (mpicc/mpicxx); ABI matches Ubuntu's 4.1.6.
#  * BLAS/LAPACK: Debian's reference libblas/liblapack.  They (and their
#    non-system deps: libgfortran, libquadmath) are copied into the prefix's
#    lib/ with RPATH=$ORIGIN, since the GPU machine may lack them.
#  * hypre: a host (CPU) hypre 2.32.0 built here from Debian 13 (trixie)'s
#    source package (the orig tarball, sha256-checked, fetched with
#    'apt-get source' through a private apt configuration that adds trixie's
#    deb-src to this machine's Debian mirror; /etc/apt is not touched).
#    Debian 12's own hypre 2.26 (libhypre-dev) does NOT build with PETSc 3.26:
#    its hypre interface uses HYPRE_INT_MAX, hypre_IntArrayDataI,
#    HYPRE_IJMatrixGetValues2, HYPRE_ILUSetIterativeSetup* and
#    hypre_ParILUData, newer than 2.26, although hypre.py says minversion 2.14.
#    hypre is configured CPU-only (no CUDA, no OpenMP, 32-bit ints, internal
#    BLAS/LAPACK), so a CUDA PETSc takes it as a host hypre: PCHYPRE runs on
#    the CPU (BoomerAMG on the 16 CPU ranks as the CPU reference), no
#    PETSC_HAVE_HYPRE_DEVICE.  A GPU hypre cannot be downloaded here (PETSc's
#    --download-hypre needs GitHub).  Its headers go to include/hypre, its
#    library to lib/ (RPATH $ORIGIN).  WITH_HYPRE=0 builds without it.
#  * No Fortran, no X, no SSL/valgrind (fewer runtime deps).
#  * The GPU machine's OpenMPI is not CUDA-aware: PETSc aborts at the first
#    GPU object unless run with -use_gpu_aware_mpi 0 (e.g. in PETSC_OPTIONS).
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
NAME=petsc-cuda$([ "$INDEX64" = 1 ] && echo 64)
ARCHIVE=$DEPS/$NAME.tar.xz
INFO=$DEPS/$NAME.info
PREFIX=/opt/patchwork/$NAME
BUILD=/tmp/$([ "$INDEX64" = 1 ] && echo petsc-gpu-build64 || echo petsc-gpu-build)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/patchwork-deps
CUDA_DIR=${CUDA_DIR:-/usr/local/cuda}
PETSC_VERSIONS=${PETSC_VERSIONS:-"3.26.1 3.25.6"}
PETSC_ARCH=arch-patchwork-cuda$([ "$INDEX64" = 1 ] && echo 64)
JOBS=${JOBS:-2}
WITH_HYPRE=${WITH_HYPRE:-$([ "$INDEX64" = 1 ] && echo 0 || echo 1)}
HYPRE_VERSION=2.32.0
HYPRE_SHA256=2277b6f01de4a7d0b01cfe12615255d9640eaa02268565a7ce1a769beab25fa1
HYPRE_SUITE=trixie                       # the Debian release whose source package has it
HYPRE_PREFIX=$BUILD/hypre-install        # built here, copied into $PREFIX at install
FEATURES="cuda hypre=$([ "$WITH_HYPRE" = 1 ] && echo "host-$HYPRE_VERSION" || echo no)$([ "$INDEX64" = 1 ] && echo " index64")"

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

# ---------------------------------------------------------------- hypre (host)
fetch_hypre() {
  local tgz=$CACHE/hypre_$HYPRE_VERSION.orig.tar.gz a=$CACHE/apt-$HYPRE_SUITE uri
  [ -f "$tgz" ] && return 0
  # this machine's Debian mirror, from its apt sources (deb822 or one-line)
  uri=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -1)
  [ -n "$uri" ] || uri=$(awk '$1 == "deb" && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
  [ -n "$uri" ] || { echo "no Debian mirror in /etc/apt" >&2; return 1; }
  mkdir -p "$a/lists/partial" "$a/cache/archives/partial" "$a/dl"
  echo "deb-src $uri $HYPRE_SUITE main" > "$a/sources.list"
  local o=(-o Dir::Etc::SourceList="$a/sources.list" -o Dir::Etc::SourceParts=/nonexistent
           -o Dir::State::Lists="$a/lists" -o Dir::Cache="$a/cache")
  apt-get "${o[@]}" update
  # only the orig tarball is needed (a missing .dsc/.debian.tar is not an error here)
  (cd "$a/dl" && apt-get "${o[@]}" source --download-only hypre) || true
  [ -f "$a/dl/hypre_$HYPRE_VERSION.orig.tar.gz" ] || { echo "$HYPRE_SUITE has no hypre $HYPRE_VERSION: $(ls "$a/dl")" >&2; return 1; }
  echo "$HYPRE_SHA256  $a/dl/hypre_$HYPRE_VERSION.orig.tar.gz" | sha256sum -c -
  mv "$a/dl/hypre_$HYPRE_VERSION.orig.tar.gz" "$tgz"
  rm -rf "$a"
}
build_hypre() {
  local src=$BUILD/hypre-$HYPRE_VERSION
  rm -rf "$src" "$HYPRE_PREFIX"
  tar -C "$BUILD" -xzf "$CACHE/hypre_$HYPRE_VERSION.orig.tar.gz"
  cd "$src/src"
  ./configure --prefix="$HYPRE_PREFIX" --enable-shared --disable-fortran --without-openmp \
    CC=mpicc CXX=mpicxx CFLAGS=-O2 CXXFLAGS=-O2
  make -j"$JOBS"
  make install
  if grep -E '^#define HYPRE_(USING_GPU|USING_CUDA|USING_OPENMP|BIGINT|MIXEDINT|COMPLEX) ' "$HYPRE_PREFIX/include/HYPRE_config.h"; then
    echo "hypre is not a plain host double/int32 build" >&2; return 1
  fi
  [ -f "$HYPRE_PREFIX/lib/libHYPRE.so" ]
  touch "$src/.installed"
}
if [ "$WITH_HYPRE" = 1 ] && [ ! -f "$BUILD/hypre-$HYPRE_VERSION/.installed" ]; then
  phase fetch-hypre fetch_hypre > "$BUILD/hypre-fetch.log" 2>&1
  [ $PHASE_RC -eq 0 ] || die "could not fetch hypre $HYPRE_VERSION, see $BUILD/hypre-fetch.log"
  phase hypre build_hypre > "$BUILD/hypre.log" 2>&1
  [ $PHASE_RC -eq 0 ] || die "hypre build failed, see $BUILD/hypre.log"
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
  if [ "$WITH_HYPRE" = 1 ]; then
    extra+=(--with-hypre-include=$HYPRE_PREFIX/include --with-hypre-lib=$HYPRE_PREFIX/lib/libHYPRE.so)
  else
    extra+=(--with-hypre=0)
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
    --with-cc=mpicc --with-cxx=mpicxx --with-fc=0
    --with-cuda=1 --with-cuda-dir=$CUDA_DIR --with-cudac=$CUDA_DIR/bin/nvcc
    --with-cuda-arch=90
    --with-shared-libraries=1 --with-debugging=0
    COPTFLAGS=-O3 CXXOPTFLAGS=-O3 CUDAOPTFLAGS=-O3
    --with-blaslapack-lib="[/usr/lib/x86_64-linux-gnu/liblapack.so,/usr/lib/x86_64-linux-gnu/libblas.so]"
    --with-x=0 --with-ssl=0 --with-valgrind=0
    "--with-mpiexec=mpiexec --allow-run-as-root --oversubscribe"
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
  make -C "$SRC" PETSC_DIR="$SRC" PETSC_ARCH=$PETSC_ARCH DESTDIR="$STAGE" install
  cd "$STAGE$PREFIX"
  # strip and trim what a user of the installed library does not need
  find lib -maxdepth 1 -name 'libpetsc*.so*' -type f -exec strip --strip-unneeded {} +
  find . -name '*.a' -delete
  rm -rf share/petsc/examples share/petsc/datafiles share/doc share/man docs
  find . -type d \( -name tutorials -o -name tests \) -prune -exec rm -rf {} +
  # hypre: headers to include/hypre, library to lib/; the build paths in
  # PETSc's makefile variables, pkg-config and RUNPATH become the prefix's
  if [ "$WITH_HYPRE" = 1 ]; then
    mkdir -p include/hypre
    cp -a "$HYPRE_PREFIX"/include/. include/hypre/
    local hl
    for hl in "$HYPRE_PREFIX"/lib/libHYPRE*.so*; do
      [ -L "$hl" ] && { cp -a "$hl" lib/; continue; }
      cp "$hl" lib/; chmod 755 "lib/${hl##*/}"
      strip --strip-unneeded "lib/${hl##*/}"
      patchelf --set-rpath '$ORIGIN' "lib/${hl##*/}"
    done
    grep -rlF "$HYPRE_PREFIX" lib/petsc/conf lib/pkgconfig include/*.h | xargs -r sed -i \
      -e "s#$HYPRE_PREFIX/include#$PREFIX/include/hypre#g" -e "s#$HYPRE_PREFIX/lib#$PREFIX/lib#g"
  fi
  # runtime libs the GPU machine may lack: BLAS/LAPACK, hypre's and their
  # non-system deps.  Not copied: glibc/gcc runtime, OpenMPI's own libraries
  # and what they need (the GPU machine's OpenMPI 4.1.6 brings them; ABI as
  # Debian's 4.1.4), and base-system compression/udev libraries.
  local sysre='^(libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|ld-linux-x86-64|linux-vdso|libmpi|libopen-rte|libopen-pal|libhwloc|libevent[a-z_]*-[0-9.]*|libudev|libz|liblzma|libbz2)\.so'
  local libs=(/usr/lib/x86_64-linux-gnu/libblas.so.3 /usr/lib/x86_64-linux-gnu/liblapack.so.3)
  [ "$WITH_HYPRE" = 1 ] && libs+=("$(readlink -f lib/libHYPRE.so)")
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
  # link-time names, for a machine that has no liblapack-dev/libblas-dev
  ln -sf liblapack.so.3 lib/liblapack.so
  ln -sf libblas.so.3 lib/libblas.so
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
  patchelf --set-rpath "$rp:\$ORIGIN" "$so"
  echo "libpetsc RUNPATH: $(patchelf --print-rpath "$so")"
  log "copied runtime libs: $(tr '\n' ' ' < "$BUILD/copied-libs.txt")"
  check_prefix "$STAGE$PREFIX"
  swap_prefix
}
check_prefix() {
  local p=$1
  ldd "$p/lib/libpetsc.so" | grep -q 'not found' && { echo "libpetsc.so has unresolved deps" >&2; return 1; }
  grep -q '^#define PETSC_HAVE_CUDA 1' "$p/include/petscconf.h" || { echo "PETSc built without CUDA" >&2; return 1; }
  if [ "$WITH_HYPRE" = 1 ]; then
    grep -q '^#define PETSC_HAVE_HYPRE 1' "$p/include/petscconf.h" || { echo "PETSc built without hypre" >&2; return 1; }
    ldd "$p/lib/libpetsc.so" | grep -q "libHYPRE" || { echo "libpetsc.so does not link libHYPRE" >&2; return 1; }
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
if [ ! -f "$SRC/.installed" ] || [ ! -f "$PREFIX/lib/petsc/conf/petscvariables" ]; then
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
  [ "$WITH_HYPRE" = 1 ] && echo "hypre:   $(sed -n 's/^#define HYPRE_RELEASE_VERSION "\(.*\)"/\1/p' "$PREFIX/include/hypre/HYPRE_config.h") (host only: PCHYPRE/BoomerAMG on CPU matrices; Debian $HYPRE_SUITE source, sha256 $HYPRE_SHA256)"
  [ -f "$BUILD/fallback.txt" ] && sed 's/^/note:    /' "$BUILD/fallback.txt"
  echo "nvcc:    $("$CUDA_DIR/bin/nvcc" --version | grep -o 'release [0-9.]*')"
  echo "mpi:     $(mpicc --showme:version 2>&1 | head -1)"
  echo "built:   $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release; echo "$PRETTY_NAME")"
  echo "configure: ./configure PETSC_ARCH=$PETSC_ARCH $(cat "$SRC/.configured")"
  echo "copied runtime libs: $(tr '\n' ' ' < "$BUILD/copied-libs.txt")"
  echo "phase times (s):"
  sed 's/^/  /' "$TIMES"
  echo "runtime: OpenMPI on the GPU machine is not CUDA-aware: PETSC_OPTIONS='-use_gpu_aware_mpi 0'"
  echo "makefile: PETSC_DIR=$PREFIX PETSC_ARCH= ; include \$(PETSC_DIR)/lib/petsc/conf/variables"
  grep -E '^(CUDAC|CUDAC_FLAGS|CUDAFLAGS|CUDAPP_FLAGS|CUDA_INCLUDE|CUDA_LIB|CUDA_CXX|CUDA_CXXFLAGS) ' \
    "$PREFIX/lib/petsc/conf/petscvariables" | sed 's/^/  /'
} > "$INFO"
log "phase times (s):"; sed 's/^/  /' "$TIMES"
log "done: $ARCHIVE ($((SIZE / 1048576)) MiB), info in $INFO"
