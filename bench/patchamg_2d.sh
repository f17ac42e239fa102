#!/usr/bin/env bash
# PCPATCHAMG beside GAMG and BoomerAMG on 2D (and, for comparison, 3D) Laplacians, CPU, CG: iterations,
# PCPATCHAMG's operator complexity, PCSetUp and KSPSolve times (-log_view, max over ranks). PETSc's own
# tutorials (ex2, ex29, ex32, ex50, ex45, built from this PETSc's installed examples by
# tests/dll/tutorials.mk) reach Patchwork through -dll_append; the P1 meshes come from examples/tets
# (the 2D annulus, the 3D boxes) and tests/dll/neumann (jittered triangles/tetrahedra). Run after a build
# from the repository root:
#   bash bench/patchamg_2d.sh                       # every problem
#   PROBLEMS="ex2-200 annulus" bash bench/patchamg_2d.sh
#   PA_OPTS="-pc_patchamg_k 2 -pc_patchamg_min_aggregate 9" bash bench/patchamg_2d.sh   # the old 2D defaults
# NP (default 1): ranks. PCS (default "gamg hypre patchamg").
set -u
cd "$(dirname "$0")/.."
export PETSC_OPTIONS="${PETSC_OPTIONS:-} -petscpartitioner_type simple"
B=build
T=$B/tutorials
D="-dll_append $PWD/lib/libpetscpatchwork.so"
NP=${NP:-1}
PCS=${PCS:-"gamg hypre patchamg"}
PA_OPTS=${PA_OPTS:-}
MPIEXEC=${MPIEXEC:-mpiexec}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
for t in ex2 ex29 ex32 ex45 ex50; do make -s -f tests/dll/tutorials.mk OUT=$T $T/$t || exit 1; done

cmd() { # the command of problem $1 (without the PC)
  case $1 in
    ex2-200) echo "$T/ex2 -m 200 -n 200 -ksp_type cg" ;;
    ex2-400) echo "$T/ex2 -m 400 -n 400 -ksp_type cg" ;;
    ex29-257) echo "$T/ex29 -da_grid_x 257 -da_grid_y 257 -ksp_type cg" ;;
    ex32-r5) echo "$T/ex32 -da_refine 5 -ksp_type cg" ;;
    ex50-256) echo "$T/ex50 -da_grid_x 256 -da_grid_y 256 -ksp_type cg" ;;
    p1tri-128) echo "$B/tests/dll/neumann -dim 2 -n 128" ;;
    p1tri-256-jump100) echo "$B/tests/dll/neumann -dim 2 -n 256 -jump 100" ;;
    annulus-64) echo "$B/examples/tets -mesh annulus -cells 64 -sigma_ratio 10" ;;
    annulus-128) echo "$B/examples/tets -mesh annulus -cells 128 -sigma_ratio 10" ;;
    ex45-r3) echo "$T/ex45 -da_refine 3 -ksp_type cg" ;;
    fd7-40) echo "$B/tests/mat/test_patchamg -problem fd7 -n 40" ;;
    q1-24) echo "$B/tests/mat/test_patchamg -problem q1 -n 24" ;;
    p1tet-24) echo "$B/tests/dll/neumann -dim 3 -n 24" ;;
    tets-regular-r2) echo "$B/examples/tets -mesh regular -cells 8 -refine 2" ;;
    tets-irregular-24) echo "$B/examples/tets -mesh irregular -cells 24" ;;
    tets-blobs-24) echo "$B/examples/tets -mesh blobs -cells 24 -sigma_ratio 100" ;;
  esac
}
PROBLEMS=${PROBLEMS:-"ex2-200 ex2-400 ex29-257 ex32-r5 ex50-256 p1tri-128 p1tri-256-jump100 annulus-64 annulus-128 ex45-r3 fd7-40 q1-24 p1tet-24 tets-regular-r2 tets-irregular-24 tets-blobs-24"}

printf '%-20s %-9s %5s %8s %9s %9s\n' problem pc its opcx setup_s solve_s
for p in $PROBLEMS; do
  for pc in $PCS; do
    extra=
    [ "$pc" = patchamg ] && extra="$PA_OPTS -ksp_view"
    # test_patchamg sets its own PC type and skips -dll_append (linked); the others take -pc_type
    case $p in fd7-*|q1-*) [ "$pc" = patchamg ] && pcopt="" || pcopt="-pc_type $pc";; *) pcopt="$D -pc_type $pc";; esac
    out=$($MPIEXEC -n $NP $(cmd $p) $pcopt -ksp_converged_reason -log_view $extra 2>&1)
    its=$(sed -n 's/.*converged due to CONVERGED_[A-Z_]* iterations \([0-9]*\).*/\1/p; s/.*its=\([0-9]*\) reason=CONV.*/\1/p; s/.* CG iterations \([0-9]*\),.*/\1/p' <<<"$out" | head -1)
    cx=$(sed -n 's/.*operator complexity \([0-9.]*\),.*/\1/p' <<<"$out" | head -1)
    su=$(awk '$1 == "PCSetUp" {print $4; exit}' <<<"$out")
    so=$(awk '$1 == "KSPSolve" {print $4; exit}' <<<"$out")
    printf '%-20s %-9s %5s %8s %9s %9s\n' "$p" "$pc" "${its:-FAIL}" "${cx:--}" "${su:--}" "${so:--}"
  done
done
