#!/usr/bin/env bash
# PCPATCHAMG beside GAMG (and BoomerAMG where this PETSc has hypre) on the tetrahedral meshes of Fu et
# al. 2014 (examples/tets), CG to ||r||/||b|| < 1e-8 with b = 1: setup, solve, iterations; on the GPU
# when GPU_OPTS selects device matrices. Run after a build, from the repository root:
#   GPU_OPTS="-dm_mat_type aijcusparse -dm_vec_type cuda -use_gpu_aware_mpi 0" bash bench/patchamg.sh
# REFINE (default "3 4") lists the refinements of the 8^3-cube box: 3 is the paper's 275K-node mesh.
set -u
cd "$(dirname "$0")/.."
T=build/examples/tets
OPTS=${GPU_OPTS:-}
PCS=${PCS:-"patchamg gamg"}
row() { printf '%-22s %-9s %10s %8s %9s %9s %5s %s\n' "$@"; }
echo "== PCPATCHAMG beside other AMG, CG to 1e-8, b = 1 (examples/tets $OPTS)"
row mesh pc nodes assembly setup solve its reason
for r in ${REFINE:-3 4}; do
  for m in "regular 1" "irregular 1" "blobs 100"; do
    set -- $m
    for pc in $PCS; do
      s=$(timeout ${TETS_TIMEOUT:-300} $T -mesh $1 -sigma_ratio $2 -refine $r -pc_type $pc $OPTS 2>&1 | grep summary:)
      get() { echo "$s" | grep -o "$1=[^ ]*" | cut -d= -f2; }
      row "$1 r=$r" "$pc" "$(get vertices)" "$(get assembly_s)" "$(get setup_s)" "$(get solve_s)" "$(get its)" "$(get reason)"
    done
  done
done
