#!/usr/bin/env bash
# PCPATCHAMG on the GPU beside BoomerAMG and GAMG on CPU ranks, on the same large P1 matrices: the regular
# tetrahedral box of examples/tets built without edges and faces (-interpolate 0; CELLS^3 cubes, 6 tets each:
# 256 -> 16.97M vertices, 368 -> 50.2M). The GPU run assembles the matrix (PatchworkDMPlexAssembleP1 into
# aijcusparse), solves with PCPATCHAMG and writes the matrix (-ksp_view_mat binary); bench_load then solves
# that very matrix on CPU_RANKS ranks with each CPU AMG. CG to ||r|| / ||b|| < 1e-8, b = 1, in every run.
# Run after `make lib examples bench` against the CUDA PETSc (tests/gpu/run.sh's environment), from the
# repository root; it needs about 3.3x the matrix's nonzeros x 12 bytes of disk under TMP (3.1 GB at 256,
# 9.2 GB at 368) and 56 GB of host memory at 368. About 2 minutes at 256 and 6 at 368 on the H100 machine:
#   CELLS="256 368" bash bench/patchamg_p1_large.sh
# The GPU run's solve_s includes the writing of the matrix: its solve time is the KSPSolve event.
set -u
cd "$(dirname "$0")/.."
. tests/gpu/env.sh || exit 1
GPU=${P1_GPU-"-dm_mat_type aijcusparse $GPU"} # P1_GPU="" runs it on the CPU
MPI="$MPI --bind-to core"
RANKS=${CPU_RANKS:-16}
TMP=${TMP:-/tmp}
LOGS=${LOGS:-build/bench-logs}
# BoomerAMG as in bench/patchamg.sh (the fastest of 4 settings on 16 cores)
HYPRE="-pc_hypre_type boomeramg -pc_hypre_boomeramg_coarsen_type HMIS -pc_hypre_boomeramg_interp_type ext+i -pc_hypre_boomeramg_P_max 4 -pc_hypre_boomeramg_strong_threshold 0.5 -pc_hypre_boomeramg_agg_nl 1"
mkdir -p "$LOGS"
get() { echo "$2" | grep -o " $1=[^ ]*" | cut -d= -f2; }
rows=()
ME="PCPATCHAMG ($([ -n "$GPU" ] && echo GPU || echo "CPU, 1 rank"))"
for c in ${CELLS:-256}; do
  A=$TMP/patchwork-p1-$c.bin
  log=$LOGS/p1-large-$c.log
  build/examples/tets -mesh regular -cells "$c" -interpolate 0 -pc_type patchamg $GPU -log_view -ksp_view_mat binary:"$A" >"$log" 2>&1
  s=$(grep summary: "$log")
  [ -z "$s" ] && { rows+=("$(printf '%-6s %-22s failed (see %s)' "$c" "$ME" "$log")"); continue; }
  solve=$(awk '$1 == "KSPSolve" {print $4; exit}' "$log")
  rows+=("$(printf '%-6s %-22s %11s %9s %9.3f %9.3f %4s   assembly %s s, mesh %s s' "$c" "$ME" "$(get vertices "$s")" "$(get nnz "$s")" "$(get setup_s "$s")" "$solve" "$(get its "$s")" "$(get assembly_s "$s")" "$(get mesh_s "$s")")")
  for pc in hypre gamg; do
    o=$([ $pc = hypre ] && echo "$HYPRE")
    s=$(timeout 300 $MPI -n "$RANKS" build/bench/bench_load -f "$A" -pc_type $pc $o -reps 2 2>&1 | tee "$LOGS/p1-large-$c-$pc.log" | grep summary:)
    if [ -z "$s" ]; then rows+=("$(printf '%-6s %-22s failed or timed out' "$c" "$pc ($RANKS CPU ranks)")"); continue; fi
    rows+=("$(printf '%-6s %-22s %11s %9s %9.3f %9.3f %4s   load %s s' "$c" "$pc ($RANKS CPU ranks)" "$(get rows "$s")" "" "$(get setup_s "$s")" "$(get solve_s "$s")" "$(get its "$s")" "$(get load_s "$s")")")
  done
  rm -f "$A" "$A.info"
done
echo "== P1 regular box, CG to 1e-8 (unpreconditioned norm), b = 1: the same matrix on the GPU and on $RANKS CPU ranks"
printf '%-6s %-22s %11s %9s %9s %9s %4s\n' cells solver rows nnz setup_s solve_s its
printf '%s\n' "${rows[@]}"
