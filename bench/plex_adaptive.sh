#!/usr/bin/env bash
# The experiment of Ljungkvist (2017) on the DMPlex operator: MatMult throughput vs problem size, degrees
# KMIN..KMAX, 2D and 3D, on a uniform mesh and on the same mesh refined towards the sphere |x| = 0.75 in
# LEVELS levels (hanging nodes, 1-irregular; examples/shell.h), beside PETSc's AIJCUSPARSE SpMV of the same
# operator where bench_plex assembles it (-spmv_max_work), and the overhead of the hanging nodes: uniform
# GDoF/s over refined GDoF/s, minus 1, at the same target size (the refined meshes have more DoF).
# DOMAIN box (default): multilinear cells on both sides, so both compute their geometry on the fly on the
# GPU and the overhead is the constraints' alone; shell: the curved panel, whose uniform mesh has quadratic
# coordinates (stored factors) while the refined one is multilinear (on the fly): not the same apply;
# forest: a p4est brick on [-1,1]^dim (PETSc with p4est), adapted towards the sphere |x| = 0.75 by p4est
# (2:1 balanced), on the fly on both sides. BENCH_OPTS: more bench_plex options (e.g. -spmv_max_work 0).
# Run after `make bench` against the CUDA PETSc, from the repository root (tests/gpu/run.sh's environment):
#   SIZES="1e6 4e6 1.6e7" KMAX=4 bash bench/plex_adaptive.sh
# (GPU="" runs it on host vectors: the CPU reference, for a check of the script only)
set -u
cd "$(dirname "$0")/.."
if [ -z "${GPU+set}" ]; then . tests/gpu/env.sh || exit 1; GPU="$GPU -dm_mat_type aijcusparse"; fi
SIZES=${SIZES:-1e6 4e6}
DIMS=${DIMS:-3 2}
LEVELS=${LEVELS:-"0 1 2"}
DOMAIN=${DOMAIN:-box}
LOGS=${LOGS:-build/bench-logs}
mkdir -p "$LOGS"
rows=()
for d in $DIMS; do
  for l in $LEVELS; do
    ref=$([ "$l" -gt 0 ] && echo "-refine_shell 0.75 -refine_shell_levels $l")
    log=$LOGS/plex-adaptive-$DOMAIN-${d}d-l$l.log
    timeout "${RUN_LIMIT:-540}" build/bench/bench_plex -dim "$d" -kmin "${KMIN:-1}" -kmax "${KMAX:-4}" -dofs "$(echo $SIZES | tr ' ' ,)" \
      -domain "$DOMAIN" $ref -reps "${REPS:-10}" $GPU ${BENCH_OPTS:-} >"$log" 2>&1 || echo "bench_plex dim $d levels $l: failed or timed out, see $log"
    # bench_plex rows: dim k cells DoF gll gauss gauss+1 gll-stored gauss-stored AIJ-SpMV nnz ratio
    while read -r line; do rows+=("$l $line"); done < <(awk '$1 ~ /^[23]$/ && $2 ~ /^[0-9]+$/ && NF == 12' "$log")
  done
done
echo "== DMPlex operator, $DOMAIN cells, variable coefficient, MatMult GDoF/s (gll: collocated Gauss-Lobatto, gauss: k+1 points), levels of refinement towards |x| = 0.75"
printf '%-3s %-3s %-6s %11s %8s %8s %8s %8s %10s %12s\n' dim k levels DoF gll gauss AIJ gauss/AIJ 'overhead' '(gll, gauss)'
printf '%s\n' "${rows[@]}" | awk '
  { l = $1; d = $2; k = $3; n = $5; gll = $6; ga = $7; aij = $11; r = $13
    NR_size[d " " k " " l]++
    if (l == 0) { ugll[d " " k " " NR_size[d " " k " " l]] = gll; uga[d " " k " " NR_size[d " " k " " l]] = ga }
    i = NR_size[d " " k " " l]
    ov = (l > 0 && ugll[d " " k " " i] != "") ? sprintf("%+.0f%%, %+.0f%%", 100 * (ugll[d " " k " " i] / gll - 1), 100 * (uga[d " " k " " i] / ga - 1)) : "-"
    printf "%-3s %-3s %-6s %11s %8s %8s %8s %8s %22s\n", d, k, l, n, gll, ga, aij, r, ov }' | sort -k1,1nr -k2,2n -k3,3n -s
