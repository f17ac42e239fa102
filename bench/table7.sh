#!/usr/bin/env bash
# The paper's table 7 on one GPU (Cui et al. 2024: 3D Poisson, u = prod sin(pi x_d), rtol 1e-9, FMG
# then GMRES around the V-cycle) at 135M (Q1), 454M (Q3) and 721M (Q7) DoF, plus a smaller comparison
# with PETSc's PCMG (Chebyshev-Jacobi) and CG-Jacobi. Run on the GPU machine after a CUDA build
# (tests/gpu/run.sh does the build; this script only runs). Each run has its own time limit so that
# one that runs long leaves the others their time; logs go to $OUT (or build/bench-out).
#   RUNS="q7-305M cmp" bash bench/table7.sh [LIMIT_S per run, default 150]
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/bench-out}
mkdir -p "$OUT"
LIM=${1:-150}
. tests/gpu/env.sh || exit 1
B=build/bench/bench_solve
one() { # NAME ARGS...: one bench_solve run, its table appended to $OUT/table7.txt
  local name=$1
  shift
  echo "== $name: $B $*" | tee -a "$OUT/table7.txt"
  timeout "$LIM" $B $GPU "$@" > "$OUT/$name.log" 2>&1
  echo "exit $?" >> "$OUT/$name.log"
  grep '^run:' "$OUT/$name.log" | sed 's/^run: //' | tee -a "$OUT/table7.txt"
  tail -n 1 "$OUT/$name.log" | tee -a "$OUT/table7.txt"
}
# 721M DoF (Q7, 128^3 cells) needs a PETSc with 64-bit indices (the DMDA's coordinate vector has
# 3 x 721M entries): build against the one from `INDEX64=1 make deps-gpu` (PETSC_DIR=
# /opt/patchwork/petsc-cuda64) and a LIMIT_S of several minutes: one solver at 721M takes about 270 s
# (170 s of it the host's DMDA, coordinates and operator; the PC set-up 29-31 s; vp-single peaks at
# 65 GB of GPU memory), q3-454M with both solvers about 270 s. 305M is the largest Q7 grid with
# 32-bit indices.
for run in ${RUNS:-q7-305M cmp}; do
  case $run in
  q7-721M) one q7-721M -degrees 7 -cells 128 -solvers vp-single,vp-double -restart 3 -log_view ;;
  q7-721M-single) one q7-721M-single -degrees 7 -cells 128 -solvers vp-single -restart 3 -log_view ;;
  q7-721M-double) one q7-721M-double -degrees 7 -cells 128 -solvers vp-double -restart 3 -log_view ;;
  q7-721M-mg) one q7-721M-mg -degrees 7 -cells 128 -solvers mg-cheb -restart 3 ;;
  q7-305M) one q7-305M -degrees 7 -cells 96 -solvers vp-single,vp-double -restart 3 -log_view ;;
  q3-454M) one q3-454M -degrees 3 -cells 256 -solvers vp-single,vp-double -restart 3 ;;
  q1-135M) one q1-135M -degrees 1 -cells 512 -solvers vp-single,vp-double,mg-cheb -restart 3 ;;
  cmp) one cmp -degrees 7,3,1 -cells 64,128,256 -solvers vp-single,vp-double,mg-cheb -restart 3 ;;
  esac
done
