#!/usr/bin/env bash
# Where PCPATCHAMG's setup time goes, at scale, beside GAMG on the same matrix: the 7-point Laplacian
# on an N^3 grid (tests/mat/test_patchamg -problem fd7, N = 256: 16.8M unknowns, the issue's size)
# and the regular tetrahedral P1 mesh (examples/tets, REFINE 4: 2.1M nodes). CG to 1e-8, b = 1.
# Prints PCPATCHAMG's own breakdown (PCView) and the -log_view times of the setup events, then one
# line per solver: setup s, solve s, iterations. Run after a build, from the repository root:
#   GPU_OPTS="-dm_mat_type aijcusparse -dm_vec_type cuda" bash bench/patchamg_setup.sh
# N (default 256), REFINE (default 4), PCS (default "patchamg gamg"; "hypre" runs BoomerAMG on the
# GPU matrices when PETSc's hypre is a device one, with PETSc's defaults for it plus HYPRE_GPU_OPTS), CPU_RANKS (GAMG, and hypre's
# BoomerAMG where this PETSc has hypre, on that many CPU ranks too, default none), HYPRE_OPTS
# (BoomerAMG's options, default below), LOGS (where logs go, default build/bench-logs).
set -u
cd "$(dirname "$0")/.."
OPTS=${GPU_OPTS:-}
LOGS=${LOGS:-build/bench-logs}
mkdir -p "$LOGS"
AMG=build/tests/mat/test_patchamg
T=build/examples/tets
LV="-log_view -log_view_gpu_time"
EV='PCSetUp|KSPSolve|PWAMG[A-Za-z]*  |MatPtAP|MatMatMult|MatAXPY|MatGetDiag|MatSetPreallCOO|MatCUSPARSCopyTo'
# time of an event in a -log_view (max over ranks, column 4)
evt() { awk -v e="$1" '$1 == e {print $4; exit}' "$2"; }
# BoomerAMG: HMIS, ext+i (P_max 4), theta 0.5, one level of aggressive coarsening, PETSc's default
# symmetric-SOR/Jacobi: the fastest to solution of 4 settings on the H200 machine's 16 cores (fd7 256^3,
# P1 meshes r=4); Falgout + classical (PETSc's default) needs 9 iterations but a 3.4x longer total.
HYPRE_OPTS=${HYPRE_OPTS:-"-pc_hypre_type boomeramg -pc_hypre_boomeramg_coarsen_type HMIS -pc_hypre_boomeramg_interp_type ext+i -pc_hypre_boomeramg_P_max 4 -pc_hypre_boomeramg_strong_threshold 0.5 -pc_hypre_boomeramg_agg_nl 1"}
MPI="mpiexec --allow-run-as-root --oversubscribe"
# hypre_ok: does -pc_type hypre work in this PETSc? (a 4^3 solve on one rank); else says why not
hypre_ok() {
  local out
  out=$($AMG -problem fd7 -n 4 -pc_type hypre 2>&1) && grep -q 'CG iterations' <<<"$out" && return 0
  if grep -q -i 'hypre' <<<"$out" && grep -q -E 'Unknown type|Unable to find requested' <<<"$out"; then
    echo "== BoomerAMG (hypre) rows skipped: this PETSc has no hypre"
  else
    echo "== BoomerAMG (hypre) rows skipped: -pc_type hypre failed on a 4^3 test: $(grep -m1 -E 'ERROR|rror' <<<"$out")"
  fi
  return 1
}
row() { printf '%-28s %-10s %9s %9s %5s\n' "$@"; }
report() { # NAME PC LOG
  local its
  its=$(grep -o -E 'CG iterations [0-9]+|its=[0-9]+' "$3" | grep -o '[0-9]*$' | head -1)
  row "$1" "$2" "$(evt PCSetUp "$3")" "$(evt KSPSolve "$3")" "${its:--}"
}
declare -a ROWS
for pc in ${PCS:-patchamg gamg}; do
  log=$LOGS/setup-fd7-$pc.log
  popts=
  [ $pc = hypre ] && popts="-pc_hypre_type boomeramg ${HYPRE_GPU_OPTS:-}"
  timeout ${SETUP_TIMEOUT:-240} $AMG -problem fd7 -n ${N:-256} -pc_type $pc $popts -ksp_view $OPTS $LV >"$log" 2>&1
  [ $pc = patchamg ] && { echo "== fd7 N=${N:-256}: PCPATCHAMG setup"; grep -E 'levels, operator complexity' "$log"; grep -E "^($EV)" "$log" | awk '{printf "  %-22s %5s calls %9s s\n", $1, $2, $4}'; }
  ROWS+=("$(report "fd7 N=${N:-256}" $pc "$log")")
  log=$LOGS/setup-tets-$pc.log
  timeout ${SETUP_TIMEOUT:-240} $T -mesh regular -refine ${REFINE:-4} -pc_type $pc $popts -ksp_view $OPTS $LV >"$log" 2>&1
  [ $pc = patchamg ] && { echo "== tets regular r=${REFINE:-4}: PCPATCHAMG setup"; grep -E 'levels, operator complexity' "$log"; grep -E "^($EV)" "$log" | awk '{printf "  %-22s %5s calls %9s s\n", $1, $2, $4}'; }
  ROWS+=("$(report "tets regular r=${REFINE:-4}" $pc "$log")")
done
if [ -n "${CPU_RANKS:-}" ]; then
  log=$LOGS/setup-fd7-gamg-cpu.log
  timeout ${SETUP_TIMEOUT:-240} mpiexec --allow-run-as-root --oversubscribe -n $CPU_RANKS $AMG -problem fd7 -n ${N:-256} -pc_type gamg -log_view >"$log" 2>&1
  ROWS+=("$(report "fd7 N=${N:-256}" "gamg-cpu$CPU_RANKS" "$log")")
  if hypre_ok; then # BoomerAMG on the same CPU ranks (a host hypre: no GPU options)
    log=$LOGS/setup-fd7-hypre-cpu.log
    OMP_NUM_THREADS=1 timeout ${SETUP_TIMEOUT:-240} $MPI -n $CPU_RANKS $AMG -problem fd7 -n ${N:-256} -pc_type hypre $HYPRE_OPTS -log_view >"$log" 2>&1
    ROWS+=("$(report "fd7 N=${N:-256}" "hypre-cpu$CPU_RANKS" "$log")")
    log=$LOGS/setup-tets-hypre-cpu.log
    OMP_NUM_THREADS=1 timeout ${SETUP_TIMEOUT:-240} $MPI -n $CPU_RANKS $T -mesh regular -refine ${REFINE:-4} -pc_type hypre $HYPRE_OPTS -log_view >"$log" 2>&1
    ROWS+=("$(report "tets regular r=${REFINE:-4}" "hypre-cpu$CPU_RANKS" "$log")")
  fi
fi
echo "== setup and solve (s), CG to 1e-8 ($OPTS)"
row problem pc setup solve its
for r in "${ROWS[@]}"; do echo "$r"; done
