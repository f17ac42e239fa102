#!/usr/bin/env bash
# Everything that needs a GPU, in one call on the GPU machine (see README.md, "GPU runs"):
# unpack the CUDA PETSc made by `make deps-gpu`, build against it, run the GPU tests (kernels vs the
# CPU reference, the operator on device vectors vs an assembled matrix, the Poisson example on the
# GPU), compute-sanitizer memcheck/racecheck, then the benchmarks. Logs go to $OUT (or build/gpu-out),
# packed as logs.tar.gz; a short table is printed last.
#   bash tests/gpu/run.sh [--no-bench] [--quick] [--no-tests] [--no-cpu-suite] [--no-kernels] [--lor-only] [--plex-only] [--amg-only] [--tensor-only] [--multi-gpu-only] [--ranks=N] [--no-build]
# (--multi-gpu-only: the build, then every object on one rank per GPU against the CPU on as many ranks,
#  compute-sanitizer on those ranks; the same block runs in a full run when the machine has 2+ GPUs)
# (--no-tests: build and benchmarks only; one device call has 10 minutes, so a full run is two calls:
#  `--no-bench --no-cpu-suite`, then `--no-tests`, back to back so the second finds the build;
#  --no-kernels leaves out tests/gpu/kernels.sh, e.g. to run it beside this script's build)
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/gpu-out}
L=build/gpu-logs
mkdir -p "$OUT" "$L"
BENCH=1 QUICK= TESTS=1 KERNELS=1 CPUSUITE=1 LORONLY= PLEXONLY= AMGONLY= TENSORONLY= MULTIONLY= BUILD=1 MGPU_RANKS=2
for a in "$@"; do case $a in --ranks=*) MGPU_RANKS=${a#--ranks=} ;; --no-bench) BENCH= ;; --quick) QUICK=1 ;; --no-tests) TESTS= ;; --no-cpu-suite) CPUSUITE= ;; --no-kernels) KERNELS= ;; --lor-only) LORONLY=1 ;; --plex-only) PLEXONLY=1 ;; --amg-only) AMGONLY=1 ;; --tensor-only) TENSORONLY=1 ;; --multi-gpu-only) MULTIONLY=1 ;; --no-build) BUILD= ;; esac; done
# --multi-gpu-only: the several-GPU block alone (no benchmarks: bench/multigpu.sh)
[ -n "$MULTIONLY" ] && { KERNELS=; CPUSUITE=; BENCH=; LORONLY=1; PLEXONLY=1; TENSORONLY=1; }
# --lor-only: the PCLOR kernels, tests and benchmark alone; --plex-only: the same for the operator on DMPlex
[ -n "$LORONLY" ] && { KERNEL_SUITES=lor; CPUSUITE=; BENCHES=${BENCHES:-lor}; }
[ -n "$PLEXONLY" ] && { KERNEL_SUITES=plex; CPUSUITE=; BENCHES=${BENCHES:-plex}; }
# --amg-only: PCPATCHAMG (its kernels, the PC on device matrices, its benchmark)
[ -n "$AMGONLY" ] && { KERNEL_SUITES=${KERNEL_SUITES:-amg graph}; CPUSUITE=; BENCHES=${BENCHES:-amg amgsetup}; LORONLY=1; PLEXONLY=1; }
# --tensor-only: the Cartesian operator and PCVERTEXPATCH (their kernels, tests on device vectors, MatMult benchmark)
[ -n "$TENSORONLY" ] && { KERNEL_SUITES=${KERNEL_SUITES:-tensor patch}; CPUSUITE=; BENCHES=${BENCHES:-matmult}; }
T0=$(date +%s)
. tests/gpu/env.sh || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$L/gpu.txt"
echo "unpacked PETSc in $(($(date +%s) - T0)) s"

ROWS=()
row() { ROWS+=("$(printf '%-34s %-5s %s' "$1" "$2" "$3")"); echo ">> $1: $2 $3"; }
# check NAME CMD...: run, keep the log, record ok/FAIL with the last line of output
check() {
  local name=$1 rc
  shift
  "$@" >"$L/$name.log" 2>&1
  rc=$?
  if [ $rc = 0 ]; then row "$name" ok "$(tail -n 1 "$L/$name.log" | cut -c1-90)"
  elif [ $rc = 77 ] && grep -q '^SKIP:' "$L/$name.log"; then row "$name" skip "$(grep -m1 '^SKIP:' "$L/$name.log" | cut -c1-90)"; else
    row "$name" FAIL "exit $rc: $(tail -n 1 "$L/$name.log" | cut -c1-80)"
    tail -n 20 "$L/$name.log"
  fi
}

# same_as_cpu NAME NP TOL GREP CMD...: CMD on NP ranks on the CPU and with $GPU; its= within 1, l2err (or
# relres; neither: the iterations alone) within TOL relative, and the GPU log contains GREP (a multi-rank GPU
# run checked against the CPU)
same_as_cpu() {
  local name=$1 np=$2 tol=$3 want=$4 c g
  shift 4
  c=$($MPI -n $np "$@" 2>&1 | grep summary: | sed 's/ [a-z_]*_s=[^ ]*//g')
  g=$($MPI -n $np "$@" $GPU -ksp_view 2>&1 | tee "$L/$name.log" | grep summary: | sed 's/ [a-z_]*_s=[^ ]*//g')
  if [ -n "$c" ] && [ -n "$g" ] && grep -q -- "$want" "$L/$name.log" && awk -v a="$c" -v b="$g" -v tol="$tol" 'function val(s, k) { if (match(s, k "=[^ ]*")) return substr(s, RSTART + length(k) + 1, RLENGTH - length(k) - 1); return "" }
      BEGIN { ia = val(a, "its"); ib = val(b, "its"); ea = val(a, "l2err"); eb = val(b, "l2err"); if (ea == "") { ea = val(a, "relres"); eb = val(b, "relres") }
              if (ia == "" || ib == "" || (ea == "") != (eb == "") || val(a, "reason") !~ /^CONVERGED/ || val(b, "reason") !~ /^CONVERGED/) exit 1
              d = ia - ib; if (d < -1 || d > 1) exit 1; if (ea == "") exit 0; e = ea - eb; if (e < 0) e = -e; exit !(e <= tol * ea) }'; then
    row "$name" ok "$(echo "$g" | grep -o 'its=[0-9]*') $(echo "$g" | grep -o -E '(l2err|relres)=[^ ]*') (cpu $(echo "$c" | grep -o 'its=[0-9]*') $(echo "$c" | grep -o -E '(l2err|relres)=[^ ]*'))"
  else row "$name" FAIL "cpu: ${c:-none} | gpu: ${g:-$(tail -n 3 "$L/$name.log" | head -1)}"; fi
}
for t in mpicc mpicxx mpiexec nvcc compute-sanitizer; do printf "%s: %s\n" $t "$(command -v $t || echo MISSING)"; done | tee "$L/tools.txt"
# the benchmarks are built only where they run
# --no-build: lib/ and build/ were built elsewhere against the same CUDA PETSc (and carried)
[ -n "$BUILD" ] && { make -j16 lib examples tests ${BENCH:+bench} cuda-check >"$L/build.log" 2>&1 || { tail -n 40 "$L/build.log"; row build FAIL "see build.log"; }; }
echo "built in $(($(date +%s) - T0)) s"

# -log_view: columns CpuToGpu Count/Size, GpuToCpu Count/Size, then GPU %F, are the last 5 of the KSPSolve
# row. Our operator and PC must cause none. (PETSc's PCJACOBI builds its inverse diagonal lazily at the
# first PCApply with a loop on the host, one copy each way per solve: not measured here.)
copies() { awk '/^KSPSolve/ {print $(NF-4) + $(NF-2)}' "$1"; }
# CG keeps GMRES's own traffic out (its VecMDot results come back to the host every iteration)
no_copies() {
for pc in none vertexpatch; do
  $P $GPU -pc_type $pc -pc_vertexpatch_symmetric -ksp_type cg -ksp_max_it 200 -log_view >"$L/copies-$pc.log" 2>&1
  c=$(copies "$L/copies-$pc.log")
  if [ "$c" = 0 ]; then row "gpu-no-copies-pc-$pc" ok "KSPSolve: 0 host<->device copies ($(grep summary: "$L/copies-$pc.log" | grep -o 'its=[0-9]*'))"; else
    row "gpu-no-copies-pc-$pc" FAIL "KSPSolve copies: '${c}' ($(grep '^KSPSolve' "$L/copies-$pc.log" | tr -s ' '))"; fi
done
}

if [ -n "$TESTS" ]; then
# --- kernels alone (PETSc-free): GPU vs CPU reference at every degree, compute-sanitizer memcheck
#     and racecheck, kernel benchmarks; suites from KERNEL_SUITES (default: all)
[ -n "$KERNELS" ] && check kernels          env OUT="$L/kernels" bash tests/gpu/kernels.sh ${KERNEL_SUITES:-}

if [ -z "$LORONLY" ] && [ -z "$PLEXONLY" ]; then
# --- the operator on PETSc device vectors vs an independently assembled AIJ matrix
check aij-gpu-n1       $MPI -n 1 build/tests/mat/test_tensor_aij $GPU
check aij-gpu-n2       $MPI -n 2 build/tests/mat/test_tensor_aij $GPU
check transfer-gpu-n1  $MPI -n 1 build/tests/mat/test_transfer $GPU
check transfer-gpu-n2  $MPI -n 2 build/tests/mat/test_transfer $GPU

# --- the Poisson example on the GPU: same iterations and error as on the CPU, no copies inside KSPSolve
P="build/examples/poisson -dim 3 -degree 4 -cells 12"
$P | grep summary: | sed 's/ solve_s=.*//' >"$L/poisson-cpu.txt"
$P $GPU -log_view >"$L/poisson-gpu.log" 2>&1
grep summary: "$L/poisson-gpu.log" | sed 's/ solve_s=.*//' >"$L/poisson-gpu.txt"
if [ -s "$L/poisson-cpu.txt" ] && cmp -s "$L/poisson-cpu.txt" "$L/poisson-gpu.txt"; then row poisson-gpu-vs-cpu ok "$(cut -c1-90 "$L/poisson-gpu.txt")"; else
  row poisson-gpu-vs-cpu FAIL "cpu: $(cat "$L/poisson-cpu.txt") gpu: $(cat "$L/poisson-gpu.txt")"; fi
no_copies
same_as_cpu poisson-gpu-n2 2 1e-8 "vector type cuda" $P
# --- PCVERTEXPATCH on device vectors: the iterations and L2 error of the CPU run (to 1e-5: the float
#     cycle rounds differently on the GPU), every kernel variant in both precisions
VP="-dim 3 -degree 4 -cells 8 -ksp_type fgmres -ksp_rtol 1e-9 -pc_type vertexpatch"
same_its_err() { # "summary A" "summary B"
  [ -n "$1" ] && [ "$(echo "$1" | grep -o 'its=[0-9]*')" = "$(echo "$2" | grep -o 'its=[0-9]*')" ] &&
    awk -v a="$(echo "$1" | sed 's/.*l2err=//')" -v b="$(echo "$2" | sed 's/.*l2err=//')" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 0 && d <= 1e-5 * a) }'
}
for v in "single fused" "double fused" "single separate" "double separate" "single global" "double global"; do
  set -- $v
  o="$VP -pc_vertexpatch_precision $1 -pc_vertexpatch_kernel $2"
  vp_cpu=$(build/examples/poisson $o 2>&1 | grep summary: | sed 's/ solve_s=.*//')
  vp_gpu=$(build/examples/poisson $o $GPU -ksp_view 2>&1 | tee "$L/vertexpatch-gpu-$1-$2.log" | grep summary: | sed 's/ solve_s=.*//')
  if same_its_err "$vp_cpu" "$vp_gpu"; then row "vertexpatch-gpu-$1-$2" ok "$(echo "$vp_gpu" | sed 's/.*its=/its=/') (cpu $(echo "$vp_cpu" | grep -o 'l2err=.*'))"; else
    row "vertexpatch-gpu-$1-$2" FAIL "cpu: $vp_cpu gpu: ${vp_gpu:-$(tail -n 3 "$L/vertexpatch-gpu-$1-$2.log" | head -1)}"; fi
done
same_as_cpu vertexpatch-gpu-n2 2 1e-8 "precision: double" build/examples/poisson $VP -pc_vertexpatch_kernel separate -pc_vertexpatch_precision double -pc_vertexpatch_gather_nodes 0
# the float cycle on 2 and 3 ranks (ghosts exchanged by the PC's float halo, staged through the host) gives
# the CPU's iterations and error on as many ranks (3 ranks: the 3-way split of the z nodes allows two
# levels, so the coarse KSP runs too)
for v in "2 fused" "2 separate" "2 global" "3 fused"; do
  set -- $v
  o="$VP -pc_vertexpatch_precision single -pc_vertexpatch_kernel $2 -pc_vertexpatch_gather_nodes 0 ${*:3}"
  vp_cpu=$($MPI -n $1 build/examples/poisson $o 2>&1 | grep summary: | sed 's/ solve_s=.*//')
  vp_gpu=$($MPI -n $1 build/examples/poisson $o $GPU -ksp_view 2>&1 | tee "$L/vertexpatch-gpu-n$1-single-$2.log" | grep summary: | sed 's/ solve_s=.*//')
  if same_its_err "$vp_cpu" "$vp_gpu" && grep -q 'precision: single' "$L/vertexpatch-gpu-n$1-single-$2.log"; then row "vertexpatch-gpu-n$1-single-$2" ok "$(echo "$vp_gpu" | sed 's/.*its=/its=/') (cpu $(echo "$vp_cpu" | grep -o 'l2err=.*'))"; else
    row "vertexpatch-gpu-n$1-single-$2" FAIL "cpu: $vp_cpu gpu: ${vp_gpu:-$(tail -n 3 "$L/vertexpatch-gpu-n$1-single-$2.log" | head -1)}"; fi
done
check vp-memcheck-n2-single $MPI -n 2 compute-sanitizer --tool memcheck --error-exitcode 1 build/examples/poisson -dim 3 -degree 3 -cells 4 $GPU -pc_type vertexpatch -ksp_type fgmres -pc_vertexpatch_gather_nodes 0
check poisson-memcheck compute-sanitizer --tool memcheck --error-exitcode 1 build/examples/poisson -dim 3 -degree 3 -cells 3 $GPU
check poisson-racecheck compute-sanitizer --tool racecheck --error-exitcode 1 build/examples/poisson -dim 2 -degree 5 -cells 3 $GPU
for v in fused separate global; do
  check vp-memcheck-$v compute-sanitizer --tool memcheck --error-exitcode 1 build/examples/poisson -dim 3 -degree 3 -cells 4 $GPU -pc_type vertexpatch -ksp_type gmres -pc_vertexpatch_kernel $v
done
check vp-racecheck compute-sanitizer --tool racecheck --error-exitcode 1 build/examples/poisson -dim 3 -degree 2 -cells 4 $GPU -pc_type vertexpatch -ksp_type gmres -pc_vertexpatch_kernel separate
fi

# --- several GPUs, one rank per GPU (PETSc gives rank r the GPU r % count), exchanges GPU-direct: every
#     object on 2 ranks (--ranks=N: N) gives the CPU's iterations (within 1) and error (to rounding, or the float cycle's
#     1e-5) on as many ranks; the GPU run must really be on the GPUs ('summary' lines compared, -ksp_view
#     checked for device vectors and the exchange path)
if [ "$NGPUS" -ge 2 ] || [ -n "$MULTIONLY" ]; then
NP=$MGPU_RANKS
[ -n "$CUDA_AWARE" ] && XPATH='GPU-direct' || XPATH='staged through host memory'
# Patchwork's own exchanges go through NCCL where the library was built with it (cuda/nccl_halo.cu);
# MPIPATH: the path with -patchwork_nccl 0
if nm -D lib/libpatchwork.so 2>/dev/null | grep -q ' U ncclSend'; then HPATH='GPU-direct (NCCL)'; else HPATH=$XPATH; fi
[ -n "$CUDA_AWARE" ] && MPIPATH='GPU-direct (CUDA-aware MPI)' || MPIPATH='staged through host memory'
check mgpu-aij-n$NP      $MPI -n $NP build/tests/mat/test_tensor_aij $GPU
check mgpu-transfer-n$NP $MPI -n $NP build/tests/mat/test_transfer $GPU
same_as_cpu mgpu-poisson-cg-n$NP $NP 1e-8 'vector type cuda' build/examples/poisson -dim 3 -degree 4 -cells 12
same_as_cpu mgpu-pcmg-n$NP $NP 1e-8 'vector type cuda' build/examples/poisson -dim 3 -degree 3 -cells 16 -pc_type mg
for v in "double fused 1e-8" "double separate 1e-8" "double global 1e-8" "single fused 1e-5" "single separate 1e-5" "single global 1e-5"; do
  set -- $v
  same_as_cpu mgpu-vertexpatch-$1-$2-n$NP $NP $3 "$HPATH" build/examples/poisson -dim 3 -degree 4 -cells 16 -ksp_type fgmres -ksp_rtol 1e-9 -pc_type vertexpatch -pc_vertexpatch_precision $1 -pc_vertexpatch_kernel $2 -pc_vertexpatch_gather_nodes 0
done
same_as_cpu mgpu-vertexpatch-2d-n$NP $NP 1e-5 "$HPATH" build/examples/poisson -dim 2 -degree 3 -cells 32 -ksp_type fgmres -ksp_rtol 1e-9 -pc_type vertexpatch -pc_vertexpatch_gather_nodes 0
same_as_cpu mgpu-vertexpatch-cg-n$NP $NP 1e-5 "$HPATH" build/examples/poisson -dim 3 -degree 3 -cells 16 -ksp_type cg -pc_type vertexpatch -pc_vertexpatch_symmetric -pc_vertexpatch_gather_nodes 0
# the same exchanges through MPI (-patchwork_nccl 0), both precisions, and the operator alone
same_as_cpu mgpu-vertexpatch-double-mpi-n$NP $NP 1e-8 "$MPIPATH" build/examples/poisson -dim 3 -degree 4 -cells 16 -ksp_type fgmres -ksp_rtol 1e-9 -pc_type vertexpatch -pc_vertexpatch_precision double -patchwork_nccl 0 -pc_vertexpatch_gather_nodes 0
same_as_cpu mgpu-vertexpatch-single-mpi-n$NP $NP 1e-5 "$MPIPATH" build/examples/poisson -dim 3 -degree 4 -cells 16 -ksp_type fgmres -ksp_rtol 1e-9 -pc_type vertexpatch -patchwork_nccl 0 -pc_vertexpatch_gather_nodes 0
# the boundary patches sent back to their owners (two exchanges per color) instead of computed here too
same_as_cpu mgpu-vertexpatch-two-exchanges-n$NP $NP 1e-8 "$HPATH" build/examples/poisson -dim 3 -degree 4 -cells 16 -ksp_type fgmres -ksp_rtol 1e-9 -pc_type vertexpatch -pc_vertexpatch_precision double -pc_vertexpatch_redundant 0 -pc_vertexpatch_gather_nodes 0
# the coarse levels gathered onto both GPUs (the default; here from the level of at most 5000 nodes, so that
# the finer ones stay shared), both precisions, and FMG through them
same_as_cpu mgpu-vertexpatch-gathered-double-n$NP $NP 1e-8 "levels 0-" build/examples/poisson -dim 3 -degree 4 -cells 16 -ksp_type fgmres -ksp_rtol 1e-9 -pc_type vertexpatch -pc_vertexpatch_precision double -pc_vertexpatch_gather_nodes 5000
same_as_cpu mgpu-vertexpatch-gathered-single-n$NP $NP 1e-5 "levels 0-" build/examples/poisson -dim 3 -degree 4 -cells 16 -ksp_type fgmres -ksp_rtol 1e-9 -pc_type vertexpatch -pc_vertexpatch_gather_nodes 5000
same_as_cpu mgpu-vertexpatch-gathered-fmg-n$NP $NP 1e-5 "levels 0-" build/examples/poisson -dim 3 -degree 3 -cells 16 -fmg -ksp_type richardson -ksp_norm_type unpreconditioned -ksp_rtol 1e-9 -ksp_max_it 6 -pc_type vertexpatch
same_as_cpu mgpu-poisson-cg-mpi-n$NP $NP 1e-8 'vector type cuda' build/examples/poisson -dim 3 -degree 4 -cells 12 -patchwork_nccl 0
check mgpu-plex-n$NP     $MPI -n $NP build/tests/mat/test_plex -dm_plex_simplex 0 $GPU -dm_mat_type aijcusparse -dm_plex_dim 3 -dm_plex_box_faces 3,2,3 -kmax 4 -curved -variable -dirichlet
check mgpu-plex-hanging-n$NP $MPI -n $NP build/tests/mat/test_plex -dm_plex_simplex 0 $GPU -dm_mat_type aijcusparse -tol 1e-13 -dm_plex_dim 3 -dm_plex_box_faces 3,3,3 -refine_cells 4,10,12,13,14,16,22 -kmax 4 -curved -variable -dirichlet
same_as_cpu mgpu-shell-n$NP $NP 1e-8 'CUDA kernels on device vectors' build/examples/shell -dim 3 -degree 3 -cells 4
check mgpu-lor-matrix-n$NP $MPI -n $NP build/tests/mat/test_lor -lor_mat_type aijcusparse -kmax 5 $GPU
same_as_cpu mgpu-lor-gamg-n$NP $NP 1e-6 'values computed on the GPU' build/examples/lor -dim 3 -degree 4 -cells 12 -lor_pc_type gamg
same_as_cpu mgpu-patchamg-tets-n$NP $NP 0.5 'on the GPU' build/examples/tets -mesh regular -cells 8 -refine 2 -pc_type patchamg -dm_mat_type aijcusparse
# PCPATCHAMG's block products on the GPUs (-pc_patchamg_block_products, pampi.c): the CPU's iterations on
# as many ranks, memcheck
check mgpu-patchamg-kernels-n$NP bash -c "c=\$($MPI -n $NP build/tests/mat/test_patchamg -problem fd7 -n 64 -pc_patchamg_block_products | grep -o 'CG iterations [0-9]*' | awk '{print \$3}'); g=\$($MPI -n $NP build/tests/mat/test_patchamg -problem fd7 -n 64 -pc_patchamg_block_products -dm_mat_type aijcusparse $GPU | grep -o 'CG iterations [0-9]*' | awk '{print \$3}'); echo CG iterations cpu \$c gpu \$g; [ -n \"\$c\" ] && [ -n \"\$g\" ] && [ \$((c - g)) -le 1 ] && [ \$((g - c)) -le 1 ]"
check mgpu-memcheck-patchamg $MPI -n $NP compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 1 build/tests/mat/test_patchamg -problem fd7 -n 16 -pc_patchamg_block_products -dm_mat_type aijcusparse $GPU
same_as_cpu mgpu-patchamg-geometric-n$NP $NP 0.5 'on the GPU' build/examples/tets -mesh regular -cells 8 -refine 2 -refine_hierarchy -pc_type patchamg -pc_patchamg_hierarchy geometric -dm_mat_type aijcusparse
# (--report-api-errors no: Open MPI's IPC registration cache gets CUDA_ERROR_ALREADY_MAPPED from
#  cuIpcOpenMemHandle when a freed buffer's address comes back, and handles it; Patchwork checks every
#  CUDA call it makes itself, and memcheck still reports every bad access)
MC="compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 1"
check mgpu-memcheck-vp-double $MPI -n $NP $MC build/examples/poisson -dim 3 -degree 3 -cells 6 $GPU -pc_type vertexpatch -ksp_type fgmres -pc_vertexpatch_precision double -pc_vertexpatch_gather_nodes 0
check mgpu-memcheck-vp-single $MPI -n $NP $MC build/examples/poisson -dim 3 -degree 3 -cells 6 $GPU -pc_type vertexpatch -ksp_type fgmres -pc_vertexpatch_kernel separate -pc_vertexpatch_gather_nodes 0
check mgpu-memcheck-vp-mpi $MPI -n $NP $MC build/examples/poisson -dim 3 -degree 3 -cells 6 $GPU -pc_type vertexpatch -ksp_type fgmres -pc_vertexpatch_precision double -patchwork_nccl 0 -pc_vertexpatch_gather_nodes 0
check mgpu-memcheck-vp-gathered $MPI -n $NP $MC build/examples/poisson -dim 3 -degree 2 -cells 8 $GPU -pc_type vertexpatch -ksp_type fgmres -fmg -pc_vertexpatch_gather_nodes 1000
check mgpu-racecheck-vp $MPI -n $NP compute-sanitizer --tool racecheck --error-exitcode 1 build/examples/poisson -dim 3 -degree 2 -cells 6 $GPU -pc_type vertexpatch -ksp_type fgmres -pc_vertexpatch_gather_nodes 0
check mgpu-memcheck-aij $MPI -n $NP $MC build/tests/mat/test_tensor_aij $GPU -kmax 3
# the prefix's Open MPI pins its shared-memory segment in /dev/shm (its openmpi-mca-params.conf): no
# cuMemHostRegister warning at start-up in any of the runs above
if [ -n "$CUDA_AWARE" ] && grep -l 'cuMemHostRegister' "$L"/mgpu-*.log >/dev/null 2>&1; then row mgpu-no-register-warning FAIL "$(grep -l 'cuMemHostRegister' "$L"/mgpu-*.log | head -3 | tr '\n' ' ')"
else row mgpu-no-register-warning ok "no cuMemHostRegister warning in the mgpu-* logs"; fi
# several ranks on one GPU still work (PETSc gives rank r GPU r % count; NCCL refuses that, so MPI carries
# Patchwork's exchanges): the CPU's iterations and error
CUDA_VISIBLE_DEVICES=0 same_as_cpu mgpu-two-ranks-one-gpu $NP 1e-5 "$MPIPATH" build/examples/poisson -dim 3 -degree 3 -cells 8 -ksp_type fgmres -ksp_rtol 1e-9 -pc_type vertexpatch
# a rank without a GPU asked for device vectors: an error that says so, no hang
if CUDA_VISIBLE_DEVICES= timeout 60 $MPI -n 1 build/examples/poisson -dim 3 -degree 2 -cells 4 $GPU >"$L/mgpu-no-gpu.log" 2>&1; then row mgpu-no-gpu FAIL "ran without a GPU: $(tail -n 1 "$L/mgpu-no-gpu.log")"
elif [ "$(tail -c 2000 "$L/mgpu-no-gpu.log" | grep -c -i -E 'cuda|device')" -gt 0 ]; then row mgpu-no-gpu ok "$(grep -i -m1 -E 'error.*(cuda|device)|(cuda|device).*error' "$L/mgpu-no-gpu.log" | cut -c1-100)"
else row mgpu-no-gpu FAIL "no message naming the device: $(tail -n 2 "$L/mgpu-no-gpu.log" | head -1)"; fi
# the machine's own mpiexec (another Open MPI, not CUDA-aware) with our binaries: what happens, within 60 s
if [ -n "$CUDA_AWARE" ] && command -v /usr/bin/mpiexec >/dev/null; then
  timeout 60 /usr/bin/mpiexec --allow-run-as-root -n 2 build/examples/poisson -dim 3 -degree 2 -cells 4 $GPU >"$L/mgpu-foreign-mpiexec.log" 2>&1
  row mgpu-foreign-mpiexec info "exit $?: $(grep -v '^ *$' "$L/mgpu-foreign-mpiexec.log" | tail -n 1 | cut -c1-100)"
fi
fi

# --- the operator on DMPlex meshes on device vectors (geometric factors computed on the GPU) vs PETSc's
#     own FEM assembly, serial and on 2 ranks; the curved-shell example on the GPU gives the CPU's
#     iterations and error; compute-sanitizer on both
if [ -z "$LORONLY$TENSORONLY" ]; then
PLEX="build/tests/mat/test_plex -dm_plex_simplex 0 $GPU -dm_mat_type aijcusparse"
check plex-gpu-3d      $PLEX -dm_plex_dim 3 -dm_plex_box_faces 2,2,2 -kmax 6 -curved -variable -dirichlet
check plex-gpu-2d      $PLEX -dm_plex_dim 2 -dm_plex_box_faces 3,2 -kmax 10 -curved -variable -dirichlet -extra_points 2
check plex-gpu-gll     $PLEX -dm_plex_dim 3 -dm_plex_box_faces 2,2,2 -kmax 5 -gausslobatto -curved
check plex-gpu-gmsh    $PLEX -gmsh_rotated -gmsh_path $L/rotated.msh -dm_plex_dim 3 -gmsh_cells 3 -kmax 4 -variable -coefficient_vecs
check plex-gpu-n2      $MPI -n 2 $PLEX -dm_plex_dim 3 -dm_plex_box_faces 3,2,3 -kmax 4 -curved -variable -dirichlet
# the cells above are multilinear (vertices moved), so their applies computed the geometry on the fly; the
# same with stored factors, and cells of degree 2 (always stored; from k = 2, where Q_k holds them)
check plex-gpu-stored  $PLEX -dm_plex_dim 3 -dm_plex_box_faces 2,2,2 -kmax 6 -curved -variable -dirichlet -mat_patchwork_geometry_on_the_fly 0
check plex-gpu-stored-2d $PLEX -dm_plex_dim 2 -dm_plex_box_faces 3,2 -kmax 10 -curved -variable -extra_points 1 -mat_patchwork_geometry_on_the_fly 0
check plex-gpu-q2coords $PLEX -dm_plex_dim 3 -dm_plex_box_faces 2,2,2 -kmin 2 -kmax 4 -curved -dm_coord_petscspace_degree 2 -variable -dirichlet
# hanging nodes (one cell split by DMPlexTreeRefineCell()): the templated kernels apply the hanging cells
# with their constraints; against PETSc's assembly with its anchors, to 1e-13
check plex-gpu-hanging-2d $PLEX -tol 1e-13 -dm_plex_dim 2 -dm_plex_box_faces 3,3 -tree_cell 4 -kmax 10 -curved -variable -dirichlet
check plex-gpu-hanging-3d $PLEX -tol 1e-13 -dm_plex_dim 3 -dm_plex_box_faces 3,3,3 -tree_cell 13 -kmax 6 -curved -variable
check plex-gpu-hanging-gll $PLEX -tol 1e-13 -dm_plex_dim 3 -dm_plex_box_faces 2,2,2 -tree_cell 3 -kmax 4 -gausslobatto -dirichlet
check plex-gpu-hanging-n2 $MPI -n 2 $PLEX -tol 1e-13 -dm_plex_dim 3 -dm_plex_box_faces 3,3,3 -tree_cell 13 -kmax 4 -curved -variable -dirichlet
check plex-gpu-hanging-stored $PLEX -tol 1e-13 -dm_plex_dim 3 -dm_plex_box_faces 3,3,3 -tree_cell 13 -kmax 5 -curved -variable -mat_patchwork_geometry_on_the_fly 0
# several split cells (PatchworkDMPlexRefineCells()): faces between split neighbours, edge-only constraints
# (7 of the 8 cells of a 2x2x2 box), the 3D cross on 2 ranks
check plex-gpu-refine-2d  $PLEX -tol 1e-13 -dm_plex_dim 2 -dm_plex_box_faces 3,3 -refine_cells 0,4,5,8 -kmax 10 -curved -variable -dirichlet
check plex-gpu-refine-edge-only $PLEX -tol 1e-13 -dm_plex_dim 3 -dm_plex_box_faces 2,2,2 -refine_cells 0,1,2,3,4,5,6 -kmax 6 -curved -variable -dirichlet
check plex-gpu-refine-gll $PLEX -tol 1e-13 -dm_plex_dim 3 -dm_plex_box_faces 3,3,3 -refine_cells 9,13 -kmax 5 -gausslobatto -curved
check plex-gpu-refine-n2  $MPI -n 2 $PLEX -tol 1e-13 -dm_plex_dim 3 -dm_plex_box_faces 3,3,3 -refine_cells 4,10,12,13,14,16,22 -kmax 4 -curved -variable -dirichlet
# two levels of hanging nodes (the tree split again; tests/run.sh mat/plex-refine2-*), untested on a GPU until run here
C2_3D=1,3,4,5,7,9,10,11,12,13,14,15,16,18,20,21,22,24,26,27,28,29,30,31,32,33
check plex-gpu-refine2-2d $PLEX -tol 1e-13 -dm_plex_dim 2 -dm_plex_box_faces 4,4 -refine_cells 5,6,9,10 -refine_cells2 1,4,12,13,14,15 -kmax 8 -curved -variable -dirichlet
check plex-gpu-refine2-3d $PLEX -tol 1e-13 -dm_plex_dim 3 -dm_plex_box_faces 3,3,3 -refine_cells 13 -refine_cells2 $C2_3D -kmax 5 -curved -variable
# DMForest (p4est; the CUDA PETSc has Debian's): the operator made from the forest, on its device vectors
FOREST="build/tests/mat/test_forest $GPU -dm_mat_type aijcusparse"
check forest-gpu-2d   $FOREST -tol 1e-13 -dim 2 -kmax 8 -levels 3 -curved -variable -dirichlet
check forest-gpu-3d   $FOREST -tol 1e-13 -dim 3 -kmax 4 -levels 2 -curved -variable
check forest-gpu-3d-high $FOREST -tol 1e-13 -dim 3 -cells 3 -radius 1.3 -levels 1 -kmin 5 -kmax 6 -curved -variable
check forest-gpu-n2   $MPI -n 2 $FOREST -tol 1e-13 -dim 3 -kmax 3 -levels 2 -curved -variable -dirichlet
check forest-gpu-ball $FOREST -tol 1e-13 -dim 3 -ball -kmax 4 -levels 2 -variable -dirichlet
# a forest before adaptation is a tree without hanging cells: the plain kernels, the geometry on the fly at k = 3
check forest-gpu-conforming-fly bash -c "$FOREST -dim 3 -levels 0 -kmin 3 -kmax 3 -op_view | grep -q 'computed at every quadrature point' && ! $FOREST -dim 3 -levels 0 -kmin 3 -kmax 3 -op_view | grep -q 'hanging nodes:' && echo 'no hanging masks, geometry on the fly at k = 3'"
check forest-cpu-3d   build/tests/mat/test_forest -dim 3 -kmax 3 -levels 2 -curved -variable -dirichlet
check forest-memcheck compute-sanitizer --tool memcheck --error-exitcode 1 $FOREST -dim 3 -kmin 2 -kmax 3 -levels 1 -variable
check forest-racecheck compute-sanitizer --tool racecheck --error-exitcode 1 $FOREST -dim 3 -kmin 3 -kmax 3 -levels 1
check plex-refine-memcheck compute-sanitizer --tool memcheck --error-exitcode 1 $PLEX -dm_plex_dim 3 -dm_plex_box_faces 2,2,2 -refine_cells 0,1,2,3,4,5,6 -kmin 3 -kmax 3 -variable
check plex-refine-racecheck compute-sanitizer --tool racecheck --error-exitcode 1 $PLEX -dm_plex_dim 3 -dm_plex_box_faces 2,2,2 -refine_cells 0,1,2,3,4,5,6 -kmin 2 -kmax 2 -gausslobatto
check plex-hanging-memcheck compute-sanitizer --tool memcheck --error-exitcode 1 $PLEX -dm_plex_dim 3 -dm_plex_box_faces 3,3,3 -tree_cell 13 -kmin 2 -kmax 2 -variable
check plex-hanging-racecheck compute-sanitizer --tool racecheck --error-exitcode 1 $PLEX -dm_plex_dim 3 -dm_plex_box_faces 2,2,2 -tree_cell 0 -kmin 3 -kmax 3
SH="build/examples/shell -dim 3 -degree 4 -cells 6"
sh_cpu=$($SH 2>&1 | grep -o 'its=[0-9]* .*l2err=[^ ]*' | sed 's/ ksp.*reason/ reason/')
sh_gpu=$($SH $GPU -log_view 2>&1 | tee "$L/shell-gpu.log" | grep -o 'its=[0-9]* .*l2err=[^ ]*' | sed 's/ ksp.*reason/ reason/')
if [ -n "$sh_gpu" ] && [ "$(echo "$sh_cpu" | cut -d' ' -f1)" = "$(echo "$sh_gpu" | cut -d' ' -f1)" ] &&
   awk -v a="${sh_cpu##*=}" -v b="${sh_gpu##*=}" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 0 && d <= 1e-8 * a) }'; then
  row shell-gpu-vs-cpu ok "gpu: $sh_gpu; cpu: ${sh_cpu##*l2err=}"; else row shell-gpu-vs-cpu FAIL "gpu: ${sh_gpu:-$(tail -n 2 "$L/shell-gpu.log" | head -1)} cpu: $sh_cpu"; fi
row shell-gpu-copies info "KSPSolve host<->device copies: $(copies "$L/shell-gpu.log") (PCJACOBI's diagonal)"
same_as_cpu shell-gpu-n2 2 1e-8 "CUDA kernels on device vectors" build/examples/shell -dim 3 -degree 3 -cells 4
# the shell with the cells around |x| = 0.75 split: the same iterations and error on the GPU as on the CPU
shr_cpu=$(build/examples/shell -dim 3 -degree 3 -cells 6 -refine_shell 0.75 2>&1 | grep -o 'its=[0-9]* .*l2err=[^ ]*' | sed 's/ ksp.*reason/ reason/')
shr_gpu=$(build/examples/shell -dim 3 -degree 3 -cells 6 -refine_shell 0.75 $GPU -mat_patchwork_geometry_on_the_fly 1 -ksp_view 2>&1 | tee "$L/shell-refine-gpu.log" | grep -o 'its=[0-9]* .*l2err=[^ ]*' | sed 's/ ksp.*reason/ reason/')
if [ -n "$shr_gpu" ] && [ "$(echo "$shr_cpu" | cut -d' ' -f1)" = "$(echo "$shr_gpu" | cut -d' ' -f1)" ] &&
   awk -v a="${shr_cpu##*=}" -v b="${shr_gpu##*=}" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 0 && d <= 1e-8 * a) }'; then
  row shell-refine-gpu-vs-cpu ok "gpu: $shr_gpu; cpu: ${shr_cpu##*l2err=}"; else row shell-refine-gpu-vs-cpu FAIL "gpu: ${shr_gpu:-none} cpu: $shr_cpu"; fi
# its cells are multilinear: the GPU run computed the geometry on the fly, as asked (by default not with
# hanging nodes below k = 4), the CPU stored it
if grep -q 'computed at every quadrature point' "$L/shell-refine-gpu.log"; then row shell-refine-gpu-on-the-fly ok "-ksp_view: geometric factors computed on the fly"
else row shell-refine-gpu-on-the-fly FAIL "-ksp_view does not say that the geometry was computed on the fly"; fi
# by default the cells without hanging faces or edges compute their geometry on the fly (a launch of their
# own), the hanging ones store it below k = 4 and compute it on the fly from k = 4
v3=$(build/examples/shell -dim 3 -degree 3 -cells 4 -refine_shell 0.75 $GPU -ksp_view 2>&1)
v4=$(build/examples/shell -dim 3 -degree 4 -cells 4 -refine_shell 0.75 $GPU -ksp_view 2>&1)
if echo "$v3" | grep -q 'computed at every quadrature point' && echo "$v3" | grep -q 'hanging faces or edges (a launch of their own) stored.*default from k = 4' &&
   echo "$v4" | grep -q 'computed at every quadrature point' && ! echo "$v4" | grep -q 'a launch of their own'; then
  row shell-refine-gpu-geometry-default ok "k=3: plain cells on the fly, hanging ones stored; k=4: all on the fly"
else row shell-refine-gpu-geometry-default FAIL "-ksp_view: $(echo "$v3" | grep -c 'a launch of their own') / $(echo "$v4" | grep -c 'computed at every')"; fi
check plex-memcheck    compute-sanitizer --tool memcheck --error-exitcode 1 build/examples/shell -dim 3 -degree 3 -cells 2 $GPU
check plex-racecheck   compute-sanitizer --tool racecheck --error-exitcode 1 build/examples/shell -dim 2 -degree 5 -cells 3 $GPU
fi

if [ -z "$PLEXONLY$TENSORONLY" ]; then
# --- PCLOR: the LOR matrix assembled by the CUDA kernels into AIJCUSPARSE equals the independent CPU
#     assembly (1e-13), serial and on 2 ranks; CG + PCLOR on device vectors converges like on the CPU
check lor-matrix-gpu-n1 $MPI -n 1 build/tests/mat/test_lor -lor_mat_type aijcusparse $GPU
check lor-matrix-gpu-n2 $MPI -n 2 build/tests/mat/test_lor -lor_mat_type aijcusparse -kmax 5 $GPU
LO="build/examples/lor -dim 3 -degree 4 -cells 12 -lor_pc_type gamg"
lor_cpu=$($LO 2>&1 | grep -o 'its=[0-9]* reason=[A-Z_]*')
lor_gpu=$($LO $GPU -ksp_view -log_view 2>&1 | tee "$L/lor-gpu.log" | grep -o 'its=[0-9]* reason=[A-Z_]*')
if grep -q 'values computed on the GPU' "$L/lor-gpu.log" && [ -n "$lor_gpu" ] && awk -v a="${lor_cpu#its=}" -v b="${lor_gpu#its=}" 'BEGIN { d = a - b; exit !(d <= 2 && d >= -2) }'; then
  row lor-gpu-vs-cpu ok "gpu $lor_gpu, cpu $lor_cpu (GAMG; values computed on the GPU)"; else
  row lor-gpu-vs-cpu FAIL "gpu: ${lor_gpu:-$(tail -n 2 "$L/lor-gpu.log" | head -1)} cpu: $lor_cpu"; fi
row lor-gpu-copies info "KSPSolve host<->device copies: $(copies "$L/lor-gpu.log") (GAMG's coarse solve)"
same_as_cpu lor-gpu-n2 2 1e-6 "values computed on the GPU" build/examples/lor -dim 3 -degree 3 -cells 8 -lor_pc_type patchamg
# the default inner PC on device matrices is PCPATCHAMG, on one rank with the LOR matrix as the device CSR
build/examples/lor -dim 3 -degree 3 -cells 6 $GPU -ksp_view >"$L/lor-gpu-default-inner.log" 2>&1
if grep -A1 '(lor_)' "$L/lor-gpu-default-inner.log" | grep -q 'type: patchamg' && grep -q 'as a device CSR that PCPATCHAMG reads directly' "$L/lor-gpu-default-inner.log" && grep -q 'reason=CONVERGED' "$L/lor-gpu-default-inner.log"; then
  row lor-gpu-default-inner ok "PCPATCHAMG on the device CSR: $(grep -o 'its=[0-9]*' "$L/lor-gpu-default-inner.log")"
else row lor-gpu-default-inner FAIL "$(grep -A1 '(lor_)' "$L/lor-gpu-default-inner.log" | grep 'type:' | head -1)$(tail -n 1 "$L/lor-gpu-default-inner.log")"; fi
# PCPATCHAMG inside: the LOR matrix stays the kernels' device CSR (no AIJCUSPARSE); its entries equal the
# reference assembly (test_lor converts it through MatMult), also after new coefficients (values in place),
# and CG needs the iterations of the AIJCUSPARSE route (-pc_lor_device_csr 0: the same matrix and hierarchy)
check lor-matrix-gpu-devcsr $MPI -n 1 build/tests/mat/test_lor -lor_mat_type aijcusparse -lor_pc_type patchamg -kmax 4 $GPU
LD="build/examples/lor -dim 3 -degree 4 -cells 10 -lor_pc_type patchamg $GPU"
ld_aij=$($LD -pc_lor_device_csr 0 2>&1 | grep -o 'its=[0-9]* reason=[A-Z_]*')
ld_dev=$($LD -ksp_view -log_view 2>&1 | tee "$L/lor-gpu-devcsr.log" | grep -o 'its=[0-9]* reason=[A-Z_]*')
if grep -q 'as a device CSR that PCPATCHAMG reads directly' "$L/lor-gpu-devcsr.log" && [ -n "$ld_dev" ] && [ "$ld_dev" = "$ld_aij" ]; then
  row lor-gpu-devcsr ok "device CSR $ld_dev, aijcusparse $ld_aij"; else
  row lor-gpu-devcsr FAIL "device CSR: ${ld_dev:-$(tail -n 2 "$L/lor-gpu-devcsr.log" | head -1)} aijcusparse: $ld_aij"; fi
check lor-devcsr-memcheck compute-sanitizer --tool memcheck --error-exitcode 1 build/examples/lor -dim 3 -degree 3 -cells 4 -lor_pc_type patchamg $GPU
check lor-memcheck compute-sanitizer --tool memcheck --error-exitcode 1 build/examples/lor -dim 3 -degree 3 -cells 3 $GPU
# cuSPARSE's csrmv kernel (GAMG's SpMV) reports shared-memory hazards of its own: ours only
check lor-racecheck compute-sanitizer --tool racecheck --kernel-name-exclude kns=cusparse --error-exitcode 1 build/examples/lor -dim 2 -degree 5 -cells 3 $GPU
# PCLOR on DMPlex: the values by the CUDA kernel equal the host's (and the independent checks of
# test_lor_plex hold on the device matrix); the curved shell converges as on the CPU
LP="build/tests/mat/test_lor_plex -dm_plex_simplex 0 -compare_host $GPU"
check lor-plex-gpu-3d $LP -dm_plex_dim 3 -dm_plex_box_faces 2,3,2 -kmax 6 -dirichlet
check lor-plex-gpu-2d $LP -dm_plex_dim 2 -dm_plex_box_faces 3,4 -kmax 8
check lor-plex-gpu-n2 $MPI -n 2 $LP -dm_plex_dim 3 -dm_plex_box_faces 3,2,3 -kmax 4 -dirichlet
check lor-plex-gpu-hanging $LP -dm_plex_dim 3 -dm_plex_box_faces 3,3,3 -tree_cell 13 -kmax 4 -dirichlet
SL="build/examples/shell -dim 3 -degree 4 -cells 4 -pc_type lor -lor_pc_type gamg"
sl_cpu=$($SL 2>&1 | grep -o 'its=[0-9]* reason=[A-Z_]*')
sl_gpu=$($SL $GPU -ksp_view -log_view 2>&1 | tee "$L/lor-plex-shell-gpu.log" | grep -o 'its=[0-9]* reason=[A-Z_]*')
if grep -q 'values computed on the GPU' "$L/lor-plex-shell-gpu.log" && [ -n "$sl_gpu" ] && awk -v a="${sl_cpu#its=}" -v b="${sl_gpu#its=}" 'BEGIN { d = a - b; exit !(d <= 2 && d >= -2) }'; then
  row lor-plex-shell-gpu-vs-cpu ok "gpu $sl_gpu, cpu $sl_cpu (GAMG; values computed on the GPU)"; else
  row lor-plex-shell-gpu-vs-cpu FAIL "gpu: ${sl_gpu:-$(tail -n 2 "$L/lor-plex-shell-gpu.log" | head -1)} cpu: $sl_cpu"; fi
check lor-plex-memcheck compute-sanitizer --tool memcheck --error-exitcode 1 build/tests/mat/test_lor_plex -dm_plex_simplex 0 -dm_plex_dim 3 -dm_plex_box_faces 2,2,2 -kmax 3 -dirichlet -compare_host $GPU

fi

# --- PCPATCHAMG with aijcusparse matrices: the relaxation in the CUDA kernels gives the CPU run's
#     iterations (within 1: float values round differently), serial and on 2 ranks; compute-sanitizer
if [ -n "$AMGONLY" ] || [ -z "$LORONLY$PLEXONLY$TENSORONLY" ]; then
AMG="build/tests/mat/test_patchamg"
AGPU="-dm_mat_type aijcusparse $GPU"
# gpu_its NAME TEXT CMD...: CMD's CG iterations with $AGPU within 1 of the CPU run's, and TEXT in the
# GPU run's log ($L/NAME.log, with -ksp_view -info :mat -log_view); the row quotes the log from TEXT on
gpu_its() {
  local name=$1 text=$2 c g
  shift 2
  c=$("$@" 2>&1 | grep -o 'CG iterations [0-9]*\|its=[0-9]*' | tail -n 1 | grep -o '[0-9]*$')
  "$@" $AGPU -ksp_view -info :mat -log_view >"$L/$name.log" 2>&1
  g=$(grep -o 'CG iterations [0-9]*\|its=[0-9]*' "$L/$name.log" | tail -n 1 | grep -o '[0-9]*$')
  if [ -n "$g" ] && [ -n "$c" ] && [ $((g - c)) -le 1 ] && [ $((c - g)) -le 1 ] && grep -q "$text" "$L/$name.log"; then
    row "$name" ok "gpu its=$g, cpu its=$c; $(grep -o "$text.*" "$L/$name.log" | head -n 1 | cut -c1-110)"; else
    row "$name" FAIL "gpu its=${g:-$(tail -n 2 "$L/$name.log" | head -n 1)} cpu its=$c; see $L/$name.log"; fi
}
for c in "q1 32" "fd7 48" "fd7 32 -pc_patchamg_precision double"; do
  set -- $c
  gpu_its "patchamg-gpu-$1-$2${3:+-double}" 'on the GPU' $AMG -problem $1 -n $2 ${3:-} ${4:-}
done
row patchamg-gpu-copies info "KSPSolve host<->device copies: $(copies "$L/patchamg-gpu-fd7-48.log")"
# the hierarchy built on the GPU (cuda/amg_graph.cu, amg_balance.cu) equals the CPU's for the same seed,
# also geometry-informed (-coordinates: PCSetCoordinates, the aggregate centroids on coarse levels):
# PCView's level table (rows, nonzeros, aggregates and patches with their sizes, in-patch share), not
# its damping column (estimated in floating point)
hier() { "$@" -ksp_view 2>&1 | awk '/level +rows +nonzeros/ {on = 1; next} on && /coarse solve/ {print $1, $2, $3; exit} on {print $1, $2, $3, $4, $5, $6, $7, $8}'; }
for c in "$AMG -problem q1 -n 32" "$AMG -problem fd7 -n 64 -pc_patchamg_k 3" "build/examples/tets -mesh blobs -cells 32 -sigma_ratio 100 -pc_type patchamg" "build/examples/tets -mesh irregular -cells 24 -pc_type patchamg -pc_patchamg_patch_size 100" \
  "$AMG -problem fd7 -n 48 -coordinates" "build/examples/tets -mesh irregular -cells 20 -pc_type patchamg -coordinates" \
  "build/examples/tets -mesh blobs -cells 28 -sigma_ratio 100 -pc_type patchamg -pc_patchamg_threshold 0.05"; do
  h_cpu=$(hier $c)
  h_gpu=$(hier $c $AGPU)
  name="patchamg-hierarchy-$(echo $c | awk '{print $3 "-" $5}')"
  echo "$h_cpu" >"$L/$name-cpu.txt"
  echo "$h_gpu" >"$L/$name-gpu.txt"
  if [ -n "$h_cpu" ] && [ "$h_cpu" = "$h_gpu" ]; then row "$name" ok "$(echo "$h_gpu" | wc -l) levels, same aggregates and patches"; else
    row "$name" FAIL "see $L/$name-{cpu,gpu}.txt"; diff "$L/$name-cpu.txt" "$L/$name-gpu.txt" | head -8; fi
done
# the LOR matrix of PCLOR has eliminated Dirichlet rows, isolated vertices of the graph: grouped alike
h_cpu=$(hier build/examples/lor -dim 3 -degree 3 -cells 10 -lor_pc_type patchamg)
h_gpu=$(hier build/examples/lor -dim 3 -degree 3 -cells 10 -lor_pc_type patchamg $GPU)
echo "$h_cpu" >"$L/patchamg-hierarchy-lor-cpu.txt"
echo "$h_gpu" >"$L/patchamg-hierarchy-lor-gpu.txt"
if [ -n "$h_cpu" ] && [ "$h_cpu" = "$h_gpu" ]; then row patchamg-hierarchy-lor ok "$(echo "$h_gpu" | wc -l) levels, same aggregates and patches"; else
  row patchamg-hierarchy-lor FAIL "see $L/patchamg-hierarchy-lor-{cpu,gpu}.txt"; fi
check patchamg-gpu-n2 $MPI -n 2 $AMG -problem fd7 -n 32 -max_its 20 $AGPU
# the strong graph built on each rank's device block (cuda/amg_strength.cu)
gpu_its patchamg-gpu-threshold-n2 'strength of connection' $MPI -n 2 build/examples/tets -mesh blobs -cells 24 -sigma_ratio 100 -pc_type patchamg -pc_patchamg_threshold 0.05
# coarse levels gathered onto one rank from level 1 on (patchamg-gpu-n2 gathers from level 2, by default): rank 1 then holds no rows there
check patchamg-gpu-gather-n2 $MPI -n 2 $AMG -problem fd7 -n 32 -max_its 14 -pc_patchamg_redistribute 5000 $AGPU
# the same with coordinates: the gathered level's points (centroids on the device) move with its rows
check patchamg-gpu-gather-coords-n2 bash -c "set -o pipefail; $MPI -n 2 $AMG -problem fd7 -n 32 -max_its 14 -pc_patchamg_redistribute 5000 -coordinates -ksp_view $AGPU | grep -E ' ([0-9]+) of \\1 aggregation levels\\)'"
# SPAI(1) on the GPU (cuda/amg_spai.cu; only the rows it refuses are solved on the host): the algebraic
# and the geometric hierarchy give the CPU's iterations (within 1), and -info says where the rows went
gpu_its patchamg-gpu-spai1 'SPAI(1) on the GPU' $AMG -problem fd7 -n 32 -max_its 32 -pc_patchamg_relax spai1
gpu_its patchamg-gpu-spai1-geometric 'SPAI(1) on the GPU' build/examples/tets -mesh regular -cells 8 -refine 2 -refine_hierarchy -pc_type patchamg -pc_patchamg_hierarchy geometric
gpu_its patchamg-gpu-spai1-annulus 'SPAI(1) on the GPU' build/examples/tets -mesh annulus -cells 16 -refine 2 -sigma_ratio 10 -refine_hierarchy -pc_type patchamg -pc_patchamg_hierarchy geometric
# the irregular mesh has rows the GPU refuses (solved on the host, into M's device matrix)
gpu_its patchamg-gpu-spai1-irregular 'SPAI(1) on the GPU' build/examples/tets -mesh irregular -cells 8 -refine 2 -refine_hierarchy -pc_type patchamg -pc_patchamg_hierarchy geometric
# against a dense least-squares solve per row, and bad input (zero rows, singular rows) named on the GPU route
check spai-gpu-n1 $MPI -n 1 build/tests/mat/test_spai -mat_type aijcusparse $GPU
check spai-gpu-memcheck compute-sanitizer --tool memcheck --error-exitcode 1 build/tests/mat/test_spai -mat_type aijcusparse $GPU
check patchamg-spai1-memcheck compute-sanitizer --tool memcheck --error-exitcode 1 build/examples/tets -mesh regular -cells 4 -refine 1 -refine_hierarchy -pc_type patchamg -pc_patchamg_hierarchy geometric $AGPU
# the P1 assembly on the GPU (Fu et al.'s patch-based kernel): the kernel against the CPU reference with
# compute-sanitizer, the assembled aijcusparse matrix against PETSc's FEM assembly, the example on the GPU
KB=build/gpu-kernels
mkdir -p $KB
check p1-kernel-build bash -c "gcc -O2 -Iinclude -c src/core/p1_ref.c -o $KB/p1_ref.o && nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude -c cuda/p1_assemble.cu -o $KB/p1_assemble.o && nvcc -O3 -std=c++17 -arch=sm_90 -Iinclude tests/gpu/test_p1_kernels.cu $KB/p1_assemble.o $KB/p1_ref.o -lm -o $KB/test_p1_kernels"
check p1-kernels      $KB/test_p1_kernels
check p1-kernels-memcheck compute-sanitizer --tool memcheck --error-exitcode 3 $KB/test_p1_kernels --quick
check p1-kernels-racecheck compute-sanitizer --tool racecheck --error-exitcode 3 $KB/test_p1_kernels --quick
check p1-matrix-gpu-n1 $MPI -n 1 build/tests/mat/test_p1 -dm_mat_type aijcusparse $GPU
check p1-matrix-gpu-n2 $MPI -n 2 build/tests/mat/test_p1 -dm_mat_type aijcusparse $GPU -skip_bad
check tets-gpu-patchamg build/examples/tets -mesh blobs -cells 32 -sigma_ratio 100 -dm_mat_type aijcusparse -pc_type patchamg -ksp_view -log_view $GPU
check patchamg-memcheck compute-sanitizer --tool memcheck --error-exitcode 1 $AMG -problem fd7 -n 12 -pc_patchamg_coarse_size 50 -coordinates $AGPU
check patchamg-threshold-memcheck compute-sanitizer --tool memcheck --error-exitcode 1 build/examples/tets -mesh blobs -cells 8 -sigma_ratio 100 -pc_type patchamg -pc_patchamg_coarse_size 50 -pc_patchamg_threshold 0.05 $AGPU
check patchamg-racecheck compute-sanitizer --tool racecheck --kernel-name-exclude kns=cusparse --error-exitcode 1 $AMG -problem q1 -n 8 -pc_patchamg_coarse_size 50 $AGPU
fi
# --- the CPU suite against this (newer) PETSc
[ -n "$CPUSUITE" ] && check cpu-suite bash tests/run.sh
elif [ -z "$MULTIONLY" ]; then
  P="build/examples/poisson -dim 3 -degree 4 -cells 12"
  no_copies
fi

# --- benchmarks (BENCHES: which, default all: matmult solve table7)
if [ -n "$BENCH" ]; then
  BENCHES=${BENCHES:-matmult solve table7}
  case " $BENCHES " in *" matmult "*)
    if [ -n "$QUICK" ]; then DOFS="-dofs 1e6,2e7"; else DOFS="-dofs 1e5,1e6,1e7,6e7"; fi
    check bench-matmult build/bench/bench_matmult $GPU $DOFS ;;
  esac
  # PCLOR: time to solution and its breakdown (Pazner et al. figure 5), k = 2..8 at about 10M and 30M
  # DoF, beside GAMG on the assembled Q_k matrix where it fits and PCVERTEXPATCH
  # the operator on a curved DMPlex shell with stored geometry: three quadrature rules beside PETSc's SpMV
  case " $BENCHES " in *" plex "*)
    # (k = 1 at small sizes only: PETSc's host-side DMPlex set-up of millions of cells dominates the run)
    check bench-plex bash -c "timeout ${PLEX_TIMEOUT:-400} build/bench/bench_plex $GPU -dm_mat_type aijcusparse -spmv_max_work 5e9 -kmax 1 -dofs 3e5,1e6 && timeout ${PLEX_TIMEOUT:-400} build/bench/bench_plex $GPU -dm_mat_type aijcusparse -spmv_max_work 5e9 -kmin 2 -dofs ${PLEX_DOFS:-3e5,5e6}" ;;
  esac
  # PCPATCHAMG beside GAMG on the tetrahedral meshes of Fu et al. 2014 (the P1 matrix assembled on the GPU)
  case " $BENCHES " in *" amg "*)
    check bench-amg env GPU_OPTS="-dm_mat_type aijcusparse $GPU" CPU_RANKS=${CPU_RANKS:-16} bash bench/patchamg.sh ;;
  esac
  # where PCPATCHAMG's setup time goes at 16.8M unknowns, beside GAMG on the GPU and on the CPU cores
  case " $BENCHES " in *" amgsetup "*)
    check bench-amgsetup env GPU_OPTS="-dm_mat_type aijcusparse $GPU" LOGS="$L" CPU_RANKS=${CPU_RANKS:-16} bash bench/patchamg_setup.sh ;;
  esac
  case " $BENCHES " in *" lor "*)
    check bench-lor bash bench/lor.sh ;;
  esac
  # time to solution beside PCMG-Chebyshev and GAMG at sizes where GAMG's matrix fits
  case " $BENCHES " in *" solve "*)
    check bench-solve build/bench/bench_solve $GPU -degrees 1,3,7 -cells 128,48,16 -solvers vp-single,vp-double,mg-cheb,gamg,cg-jacobi -log_view ;;
  esac
  # the paper's table 7 sizes (135M, 454M, 721M DoF), GMRES(3) to fit 80 GB, with -log_view for the breakdown
  case " $BENCHES " in *" table7 "*)
    check bench-table7 build/bench/bench_solve $GPU -degrees 1,3,7 -cells ${TABLE7_CELLS:-512,256,128} -solvers ${TABLE7_SOLVERS:-vp-single,vp-double,mg-cheb} -restart 3 -log_view ;;
  esac
fi
tar -C build -czf "$OUT/logs.tar.gz" gpu-logs
for b in matmult solve table7 lor plex amg amgsetup; do [ -f "$L/bench-$b.log" ] && cp "$L/bench-$b.log" "$OUT/"; done
echo
echo "== GPU results ($(cat "$L/gpu.txt"), $(($(date +%s) - T0)) s; logs in logs.tar.gz)"
[ -f "$L/bench-matmult.log" ] && grep -A 100 '^vectors' "$L/bench-matmult.log"
for b in solve table7; do [ -f "$L/bench-$b.log" ] && sed -n '/^dim k/,/^err_M/p' "$L/bench-$b.log"; done
[ -f "$L/bench-lor.log" ] && sed -n '/^== LOR/,$p' "$L/bench-lor.log"
[ -f "$L/bench-amg.log" ] && sed -n '/^== PCPATCHAMG/,$p' "$L/bench-amg.log"
[ -f "$L/bench-amgsetup.log" ] && cat "$L/bench-amgsetup.log"
[ -f "$L/bench-plex.log" ] && grep -v '^\[' "$L/bench-plex.log" | tail -n 40
[ -f "$L/kernels/plex-bench.log" ] && tail -n 30 "$L/kernels/plex-bench.log"
[ -f "$L/kernels/lor-bench.log" ] && cat "$L/kernels/lor-bench.log"
printf '%s\n' "${ROWS[@]}"
n_fail=$(printf '%s\n' "${ROWS[@]}" | grep -c ' FAIL ')
n_skip=$(printf '%s\n' "${ROWS[@]}" | grep -c ' skip ')
n_info=$(printf '%s\n' "${ROWS[@]}" | grep -c ' info ')
echo "$((${#ROWS[@]} - n_fail - n_skip - n_info)) passed, $n_fail failed, $n_skip skipped ($n_info info rows)"
[ "$n_fail" = 0 ]
