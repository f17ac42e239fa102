#!/usr/bin/env bash
# PCPATCHAMG beside GAMG (and BoomerAMG where this PETSc has hypre) on the tetrahedral meshes of Fu et
# al. 2014 (examples/tets), CG to ||r||/||b|| < 1e-8 with b = 1: setup, solve, iterations; on the GPU
# when GPU_OPTS selects device matrices. Run after a build, from the repository root:
#   GPU_OPTS="-dm_mat_type aijcusparse -dm_vec_type cuda" bash bench/patchamg.sh
# REFINE (default "3 4") lists the refinements of the 8^3-cube box: 3 is the paper's 275K-node mesh.
# MESHES (default "regular irregular blobs"; blobs with sigma ratio 100). PCS (default "patchamg gamg"):
# the PCs, each optionally with options joined by '+', e.g. "patchamg+-pc_patchamg_threshold+0.05".
# CPU_RANKS (default none): also hypre's BoomerAMG on that many CPU ranks (rows "hypre-cpuN", a host
# hypre: no GPU options), where this PETSc has hypre; HYPRE_OPTS: BoomerAMG's options (default below).
set -u
cd "$(dirname "$0")/.."
T=build/examples/tets
OPTS=${GPU_OPTS:-}
PCS=${PCS:-"patchamg gamg"}
# BoomerAMG: HMIS, ext+i (P_max 4), theta 0.5, one level of aggressive coarsening, PETSc's default
# symmetric-SOR/Jacobi: the fastest to solution of 4 settings on the H200 machine's 16 cores (fd7 256^3,
# P1 meshes r=4); Falgout + classical (PETSc's default) needs 9 iterations but a 3.4x longer total.
HYPRE_OPTS=${HYPRE_OPTS:-"-pc_hypre_type boomeramg -pc_hypre_boomeramg_coarsen_type HMIS -pc_hypre_boomeramg_interp_type ext+i -pc_hypre_boomeramg_P_max 4 -pc_hypre_boomeramg_strong_threshold 0.5 -pc_hypre_boomeramg_agg_nl 1"}
HYPRE_CPU=
if [ -n "${CPU_RANKS:-}" ]; then # does -pc_type hypre work in this PETSc? (the coarse mesh, one rank)
  out=$($T -mesh regular -refine 0 -pc_type hypre 2>&1)
  if grep -q 'summary:.*reason=CONVERGED' <<<"$out"; then HYPRE_CPU=$CPU_RANKS
  elif grep -q -i 'hypre' <<<"$out" && grep -q -E 'Unknown type|Unable to find requested' <<<"$out"; then
    echo "== BoomerAMG (hypre) rows skipped: this PETSc has no hypre"
  else echo "== BoomerAMG (hypre) rows skipped: -pc_type hypre failed on the coarse mesh: $(grep -m1 -E 'ERROR|rror' <<<"$out")"
  fi
fi
row() { printf '%-22s %-9s %10s %8s %9s %9s %5s %s\n' "$@"; }
sigma() { [ "$1" = blobs ] && echo 100 || echo 1; }
echo "== PCPATCHAMG beside other AMG, CG to 1e-8, b = 1 (examples/tets $OPTS)"
row mesh pc nodes assembly setup solve its reason
for r in ${REFINE:-3 4}; do
  for m in ${MESHES:-regular irregular blobs}; do
    set -- $m $(sigma $m)
    for pc in $PCS; do
      s=$(timeout ${TETS_TIMEOUT:-300} $T -mesh $1 -sigma_ratio $2 -refine $r -pc_type ${pc//+/ } $OPTS 2>&1 | grep summary:)
      get() { echo "$s" | grep -o "$1=[^ ]*" | cut -d= -f2; }
      row "$1 r=$r" "$pc" "$(get vertices)" "$(get assembly_s)" "$(get setup_s)" "$(get solve_s)" "$(get its)" "$(get reason)"
    done
    if [ -n "$HYPRE_CPU" ]; then
      s=$(OMP_NUM_THREADS=1 timeout ${TETS_TIMEOUT:-300} mpiexec --allow-run-as-root --oversubscribe -n $HYPRE_CPU $T -mesh $1 -sigma_ratio $2 -refine $r -pc_type hypre $HYPRE_OPTS 2>&1 | grep summary:)
      row "$1 r=$r" "hypre-cpu$HYPRE_CPU" "$(get vertices)" "$(get assembly_s)" "$(get setup_s)" "$(get solve_s)" "$(get its)" "$(get reason)"
    fi
  done
done
