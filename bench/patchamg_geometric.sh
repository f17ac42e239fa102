#!/usr/bin/env bash
# PCPATCHAMG's geometric mode (-pc_patchamg_hierarchy geometric, Geveler et al.): every DoF numbering
# x every SpMV format on the regular and the irregular tetrahedral mesh of examples/tets (8^3 cubes
# refined REFINE times, the coarse meshes kept), CG to ||r||/||b|| < 1e-8 with b = 1: setup, solve,
# iterations, solve time per iteration (one V-cycle, one SpMV with A and the CG vector work), the
# bandwidth max|i-j| of the finest matrix, and the setup's renumbering, relaxation (SPAI(1) and its
# damping) and format-conversion parts.
# On the GPU when GPU_OPTS selects device matrices. Run after a build, from the repository root:
#   GPU_OPTS="-dm_mat_type aijcusparse -dm_vec_type cuda" bash bench/patchamg_geometric.sh
# REFINE (default 3: 275K vertices), RELAX (default spai1), MESHES, NUMBERINGS, FORMATS override the
# sweep; the format "-" is the matrix's own (aij on the CPU, aijcusparse on the GPU).
set -u
cd "$(dirname "$0")/.."
T=build/examples/tets
OPTS=${GPU_OPTS:-}
R=${REFINE:-3}
case "$OPTS" in
*cuda*) FMTS=${FORMATS:-"- sellcuda"} ;;
*) FMTS=${FORMATS:-"- sell"} ;;
esac
row() { printf '%-12s %-13s %-10s %9s %8s %8s %5s %9s %9s %8s %8s %8s %s\n' "$@"; }
echo "== PCPATCHAMG geometric: numbering x format, relaxation ${RELAX:-spai1}, CG to 1e-8, b = 1 (examples/tets -cells 8 -refine $R $OPTS)"
row mesh numbering format vertices setup_s solve_s its ms/iter bandwidth renum_s relax_s format_s reason
for m in ${MESHES:-regular irregular}; do
  for f in $FMTS; do
    for n in ${NUMBERINGS:-natural rcm coordinate hierarchical}; do
      fo=""
      [ "$f" != "-" ] && fo="-pc_patchamg_mat_type $f"
      out=$(timeout ${TETS_TIMEOUT:-120} $T -mesh $m -cells 8 -refine $R -refine_hierarchy -pc_type patchamg -pc_patchamg_hierarchy geometric \
        -pc_patchamg_relax ${RELAX:-spai1} -pc_patchamg_renumber $n $fo -ksp_view $OPTS 2>&1)
      s=$(echo "$out" | grep summary:)
      get() { echo "$s" | grep -o " $1=[^ ]*" | cut -d= -f2; }
      bw=$(echo "$out" | awk '/level +rows +nonzeros +bandwidth/ { getline; print $4; exit }')
      split=$(echo "$out" | grep -o 'renumbering [0-9.e+-]*, relaxation [0-9.e+-]*, coarse [0-9.e+-]*, formats [0-9.e+-]*' | head -n 1)
      rs=$(echo "$split" | awk '{ print $2 }' | tr -d ,)
      xs=$(echo "$split" | awk '{ print $4 }' | tr -d ,)
      fs=$(echo "$split" | awk '{ print $8 }')
      its=$(get its)
      ms=$(awk -v t="$(get solve_s)" -v i="$its" 'BEGIN { if (i > 0) printf "%.3f", 1000 * t / i; else print "-" }')
      [ -n "$s" ] || { echo "$out" | grep -m3 -i error; }
      fl=$f
      [ "$f" = "-" ] && fl="(matrix's)"
      row "$m" "$n" "$fl" "$(get vertices)" "$(get setup_s)" "$(get solve_s)" "$its" "$ms" "$bw" "${rs:--}" "${xs:--}" "${fs:--}" "$(get reason)"
    done
  done
done
