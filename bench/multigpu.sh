#!/usr/bin/env bash
# Several GPUs against one, in one run on one machine (one rank per GPU): MatMult alone on a DMDA (GPU-
# direct and, for the table of exchange paths, staged through host memory), and time to solution of
# the table-7 problems at the sizes that fit one GPU (PCVERTEXPATCH single and double, PCMG
# Chebyshev-Jacobi), with set-up beside solve. Run on the GPU machine after a CUDA build
# (tests/gpu/run.sh builds); logs go to $OUT (or build/bench-out), a short table is printed last.
#   NPS="1 2" PARTS="matmult solve weak" bash bench/multigpu.sh [LIMIT_S per run, default 300]
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/bench-out}
mkdir -p "$OUT"
LIM=${1:-300}
. tests/gpu/env.sh || exit 1
NPS=${NPS:-"1 $NGPUS"}
NMAX=${NPS##* }
T=$OUT/multigpu.txt
: >"$T"
run() { # NAME NP ARGS...: one run of NP ranks, its log kept
  local name=$1 np=$2
  shift 2
  echo "== $name ($np ranks): $*" >>"$T"
  timeout "$LIM" $MPI -n "$np" "$@" >"$OUT/$name.log" 2>&1
  echo "exit $?" >>"$OUT/$name.log"
}
for part in ${PARTS:-matmult solve weak}; do
  case $part in
  matmult) # the operator alone at ~1.2e8 DoF; k = 3, 5, 7; staged exchanges on the most ranks for the path table
    for np in $NPS; do run matmult-n$np $np build/bench/bench_matmult $GPU -kmin 3 -kmax 7 -dofs ${MM_DOFS:-1.2e8} -spmv_max_nnz 0 -reps 20; done
    [ "$NMAX" -gt 1 ] && run matmult-n$NMAX-staged $NMAX build/bench/bench_matmult $GPU -kmin 3 -kmax 7 -dofs ${MM_DOFS:-1.2e8} -spmv_max_nnz 0 -reps 20 -patchwork_gpu_direct 0 ;;
  solve) # strong scaling: Q7 90.5M, Q3 57.1M, Q1 17M DoF
    for np in $NPS; do run solve-n$np $np build/bench/bench_solve $GPU -degrees 7,3,1 -cells 64,128,256 -solvers ${SOLVERS:-vp-single,vp-double,mg-cheb} -restart 3 -log_view; done ;;
  weak) # about 90M DoF per GPU: Q7 with 64 cells per direction per GPU along z
    for np in $NPS; do run weak-n$np $np build/bench/bench_solve $GPU -degrees 7 -cells 64 -cells_z_factor $np -solvers ${SOLVERS:-vp-single,vp-double} -restart 3; done ;;
  esac
done
{
  echo "== MatMult GDoF/s (all ranks together), $(head -1 "$OUT/matmult-n1.log" 2>/dev/null)"
  for f in "$OUT"/matmult-n*.log; do [ -f "$f" ] && echo "-- $(basename "$f" .log)" && grep -E '^3 +[0-9]' "$f" | awk '{printf "k=%s DoF=%s %s GDoF/s\n", $2, $3, $4}'; done
  for part in solve weak; do
    for f in "$OUT"/$part-n*.log; do [ -f "$f" ] && echo "-- $(basename "$f" .log)" && grep '^run:' "$f" | sed 's/^run: //'; done
  done
} | tee -a "$T"
