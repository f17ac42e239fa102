#!/usr/bin/env bash
# The iteration counts of PCPATCHAMG on singular (pure Neumann) problems beside PCGAMG and BoomerAMG
# (issue 33, item 3), on 1 to 3 ranks: PETSc's Neumann tutorials (built from this PETSc's examples by
# tests/dll/tutorials.mk), tests/dll/neumann (P1 on jittered simplices, through -dll_append) and
# tests/mat/test_singular (the meshes of Fu et al.). Not part of make check (tests/run.sh checks the
# bounds); run after make lib examples tests:
#   bash tests/singular-table.sh [ranks...]          (default 1 2 3)
#   EXTRA="-dm_mat_type aijcusparse -dm_vec_type cuda" bash tests/singular-table.sh 1   (a GPU machine:
#   the rows of test_singular with device matrices; the tutorials take -dm_mat_type/-dm_vec_type too)
#   PWLIB=/other/lib LD_LIBRARY_PATH=/other/lib bash tests/singular-table.sh   (another build of the
#   library, e.g. the one before the fix: -dll_append takes it, and test_singular, linked with a RUNPATH)
# One line per problem and rank count: its=patchamg/gamg/hypre and the error each reports (the relative
# algebraic error up to the null space for neumann and test_singular, ex34's max-norm discretization error,
# res: the final residual norm of ex50, ex29, ex32, which print no error).
set -u
cd "$(dirname "$0")/.."
B=build
MPIEXEC=${MPIEXEC:-mpiexec}
EXTRA=${EXTRA:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
DLL="-dll_append ${PWLIB:-$PWD/lib}/libpetscpatchwork.so"
TUT=${PETSC_DIR:-/usr/lib/petsc}/share/petsc/examples/src/ksp/ksp/tutorials
ranks=${*:-1 2 3}

for t in ex50 ex29 ex32 ex34; do
  [ -f "$TUT/$t.c" ] && make -s -f tests/dll/tutorials.mk OUT=$B/tutorials "$B/tutorials/$t"
done

# one PROBLEM-NAME NP CMD...: the three preconditioners on one problem
one() {
  local name=$1 np=$2 pc out its err line=""
  shift 2
  for pc in patchamg gamg hypre; do
    out=$($MPIEXEC -n "$np" "$@" $DLL -pc_type $pc -ksp_converged_reason -ksp_view_final_residual $EXTRA 2>&1)
    its=$(echo "$out" | sed -n 's/.*solve \(converged\|did not converge\) due to \([A-Z_]*\) iterations \([0-9]*\).*/\3\/\2/p' | tail -1)
    [ -z "$its" ] && its=$(echo "$out" | sed -n 's/^summary:.* its=\([0-9]*\) reason=\([A-Z_]*\).*/\1\/\2/p')
    err=$(echo "$out" | sed -n 's/^summary:.* err=\([^ ]*\).*/\1/p')
    [ -z "$err" ] && err=$(echo "$out" | sed -n 's/^Error norm \(.*\)/\1/p' | head -1)
    [ -z "$err" ] && err=res$(echo "$out" | sed -n 's/.*KSP final norm of residual \([^ ]*\).*/\1/p' | head -1)
    echo "$out" | grep -q 'PETSC ERROR' && its="error"
    its=$(echo "${its:-none}" | sed 's/\/CONVERGED_[A-Z]*//')
    line="$line $(printf '%-7s %-22s' "$pc" "its=$its err=${err:--}")"
  done
  printf '%-44s n=%d %s\n' "$name" "$np" "$line"
}

for np in $ranks; do
  [ -x $B/tutorials/ex50 ] && one "ex50 (11^2, one level)" $np $B/tutorials/ex50
  [ -x $B/tutorials/ex50 ] && one "ex50 -da_grid 256^2" $np $B/tutorials/ex50 -da_grid_x 256 -da_grid_y 256
  [ -x $B/tutorials/ex29 ] && one "ex29 -bc_type neumann 129^2" $np $B/tutorials/ex29 -bc_type neumann -da_grid_x 129 -da_grid_y 129
  [ -x $B/tutorials/ex32 ] && one "ex32 -bc_type neumann -da_refine 4" $np $B/tutorials/ex32 -bc_type neumann -da_refine 4
  [ -x $B/tutorials/ex34 ] && one "ex34 (12^3)" $np $B/tutorials/ex34
  [ -x $B/tutorials/ex34 ] && one "ex34 32^3" $np $B/tutorials/ex34 -da_grid_x 32 -da_grid_y 32 -da_grid_z 32
  one "neumann P1 2D n=64" $np $B/tests/dll/neumann -dim 2 -n 64
  one "neumann P1 3D n=16" $np $B/tests/dll/neumann -dim 3 -n 16
  one "neumann P1 3D n=16 D A D (z = D^-1 1)" $np $B/tests/dll/neumann -dim 3 -n 16 -scale
  one "neumann P1 3D n=16 coefficient jump 100" $np $B/tests/dll/neumann -dim 3 -n 16 -jump 100
  one "tets irregular 16^3" $np $B/tests/mat/test_singular -mesh irregular -cells 16
  one "tets blobs 12^3 sigma 100" $np $B/tests/mat/test_singular -mesh blobs -cells 12 -sigma_ratio 100
  one "tets annulus 32" $np $B/tests/mat/test_singular -mesh annulus -cells 32
  one "tets regular 4^3 x4 (geometric for patchamg)" $np $B/tests/mat/test_singular -mesh regular -cells 4 -refine 2 -refine_hierarchy -pc_patchamg_hierarchy geometric
done
