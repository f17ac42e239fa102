#!/usr/bin/env bash
# PCLOR on the GPU (run by tests/gpu/run.sh after the build; needs its environment: PETSC_DIR, the
# CUDA PETSc of tests/gpu/env.sh):
#  1. time to solution and its breakdown (Pazner et al. 2023, figure 5) of 3D Helmholtz u - lap u with
#     CG + PCLOR (GAMG on the LOR matrix, the default without a GPU hypre), k = 2..8 at the first of
#     LOR_SIZES (default 8e6 and 2.7e7) DoF and k = LOR_BIG_KS (2 5 8) at the others, examples/lor
#     with -log_view_gpu_time;
#  2. Poisson time to solution beside GAMG on the assembled Q_k matrix (where it fits) and
#     PCVERTEXPATCH (bench_solve), at about 2e6 DoF (GAMG's assembled matrix must fit);
#  3. the LOR assembly (DMDA and DMPlex operators) beside PETSc's own FEM assembly of the same Q1
#     matrix on the refined mesh (bench_lor_fem, FEM_DOFS, default 1e6, degrees FEM_KS).
# Every run has a time limit (RUN_LIMIT, default 60 s); a run that fails or times out is listed as such.
# LOR_INNER: the AMG on the LOR matrix for parts 1 and 2 (gamg, patchamg, hypre; default: PCLOR's own choice);
# LOR_PARTS: which parts to run (default "1 2 3"); LOR_KS: the degrees at the first size (default 2..8).
set -u
cd "$(dirname "$0")/.."
LIMIT=${RUN_LIMIT:-60}
SIZES=${LOR_SIZES:-8e6 2.7e7}
. tests/gpu/env.sh || exit 1
GPU=${LOR_GPU-"$GPU"}
PARTS=" ${LOR_PARTS:-1 2 3} "
INNER=${LOR_INNER:+-lor_pc_type $LOR_INNER}
cmp= fem= rows=()
if [[ $PARTS == *" 2 "* ]]; then
  cmp=$(timeout $((4 * LIMIT)) build/bench/bench_solve $GPU -degrees 2,4,6,8 -dofs ${CMP_DOFS:-2e6} -solvers lor,gamg,vp-double,mg-cheb -reps 2 ${LOR_INNER:+-cglor_lor_pc_type $LOR_INNER} 2>&1)
  echo "$cmp" | grep '^run:'
fi
[[ $PARTS == *" 3 "* ]] && fem=$(timeout $((5 * LIMIT)) build/bench/bench_lor_fem $GPU -dm_mat_type aijcusparse -dofs ${FEM_DOFS:-1e6} -degrees ${FEM_KS:-2,4,8} 2>&1 || echo "bench_lor_fem failed or timed out (exit $?)")
first=1
[[ $PARTS == *" 1 "* ]] || SIZES=
for n in $SIZES; do
  ks=${LOR_KS:-2 3 4 5 6 7 8}
  [ -z "$first" ] && ks=${LOR_BIG_KS:-2 5 8} # larger sizes: fewer degrees, to fit one device call
  first=
  for k in $ks; do
    c=$(awk -v n="$n" -v k="$k" 'BEGIN { c = int(exp(log(n) / 3) / k + 0.5); print c < 1 ? 1 : c }')
    out=$(timeout "$LIMIT" build/examples/lor -dim 3 -degree $k -cells $c $GPU $INNER -log_view_gpu_time 2>&1)
    rc=$?
    echo "$out" | grep -v '^ ' | tail -n 3
    s=$(echo "$out" | grep '^summary:')
    if [ -z "$s" ]; then rows+=("$(printf '%-2s %5s %11s  %s' "$k" "$c" "-" "$([ $rc = 124 ] && echo "timed out after $LIMIT s" || echo "failed (exit $rc): $(echo "$out" | grep -m1 -i error | cut -c1-60)")")"); continue; fi
    rows+=("$(echo "$s" | awk -v k="$k" -v c="$c" '{ for (i = 2; i <= NF; i++) { split($i, a, "="); v[a[1]] = a[2] }
      setup = v["pc_setup_s"]; tot = v["op_setup_s"] + setup + v["solve_s"]
      printf "%-2s %5s %11s %4s %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.2f %6.1f%%", k, c, v["dofs"], v["its"], v["op_setup_s"], v["lor_pattern_s"], v["lor_values_s"], v["inner_setup_s"], v["solve_s"], v["op_apply_s"], v["inner_apply_s"], tot, v["dofs"] / v["lor_values_s"] / 1e9, 100 * v["lor_values_s"] / setup }')")
  done
done
echo
if [ -n "${rows[*]}" ]; then
  echo "== LOR time to solution on the GPU (CG to 1e-8, ${LOR_INNER:-the default AMG} on the LOR matrix), seconds"
  printf '%-2s %5s %11s %4s %8s %8s %8s %8s %8s %8s %8s %8s %8s %7s\n' k cells DoFs its op-setup pattern values amg-setup solve op-apply amg-apply total 'GDoF/s' 'values'
  printf '%-2s %5s %11s %4s %8s %8s %8s %8s %8s %8s %8s %8s %8s %7s\n' '' '' '' '' '' '(once)' '(A1-A4)' '' '' '' '' '' '(values)' '/setup'
  printf '%s\n' "${rows[@]}"
  echo
fi
[ -n "$cmp" ] && echo "== Poisson time to solution: PCLOR beside GAMG on the assembled Q_k matrix and PCVERTEXPATCH"
[ -n "$cmp" ] && { echo "$cmp" | sed -n '/^dim k/,/^err_M/p'; echo; }
[ -n "$fem" ] && echo "$fem" | sed -n '/^== LOR assembly/,$p'
