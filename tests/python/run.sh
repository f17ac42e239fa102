#!/usr/bin/env bash
# Patchwork from Python (petsc4py): the checks tests/run.sh runs, one per call.
#   tests/python/run.sh poisson N PC   examples/poisson.py on N ranks = build/examples/poisson with the same
#                                      options (same summary line: iterations, reason, ...; L2 error to rounding),
#                                      PC: jacobi | vertexpatch | lor | patchamg (PCLOR's inner PC) | mg
#   tests/python/run.sh module N       tests/python/test_module.py on N ranks (every function of the module)
#   tests/python/run.sh dll N          examples/plugin.py with -dll_append only = tests/mat/test_patchamg (fd7)
#   tests/python/run.sh dll-errors     plugin.py without -dll_append, and PCVERTEXPATCH on its AIJ matrix: clear failures
#   tests/python/run.sh load           the module's library lookup: PATCHWORK_LIB, and the message when nothing loads
# Exit 77 (skip) with a SKIP line when no Python here imports a petsc4py of the PETSc Patchwork was built with.
# PYTHON picks the interpreter (default: the first of python3, /usr/bin/python3 that imports petsc4py).
set -u
cd "$(dirname "$0")/../.."
B=build
MPIEXEC=${MPIEXEC:-mpiexec}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
PETSC_DIR=${PETSC_DIR:-/usr/lib/petsc}

PY=
for p in ${PYTHON:-python3 /usr/bin/python3}; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import petsc4py' 2>/dev/null; then PY=$p; break; fi
done
if [ -z "$PY" ]; then
  echo "SKIP: no Python here imports petsc4py with PETSC_DIR=${PETSC_DIR:-} (Debian: apt-get install python3-petsc4py; tried: ${PYTHON:-python3 /usr/bin/python3})"
  exit 77
fi
pdir=$("$PY" -c 'import petsc4py; print(petsc4py.get_config()["PETSC_DIR"])')
if [ "$(readlink -f "$pdir")" != "$(readlink -f "$PETSC_DIR")" ]; then
  echo "SKIP: $PY's petsc4py runs the PETSc at $pdir, Patchwork was built with PETSC_DIR=$PETSC_DIR"
  exit 77
fi
echo "python: $PY, petsc4py $("$PY" -c 'import petsc4py; print(petsc4py.__version__)') on PETSc at $pdir"

# summary LINE...: the summary line without its time
summary() { grep '^summary:' | sed -E 's/ solve_s=[^ ]*//'; }

# same_summary N OPTIONS...: C and Python on N ranks print the same summary, the L2 error equal to rounding
# (the last printed digit may differ: 2e-6 relative)
same_summary() {
  local n=$1 c out py
  shift
  c=$($MPIEXEC -n "$n" $B/examples/poisson "$@" 2>&1 | summary)
  out=$($MPIEXEC -n "$n" "$PY" examples/poisson.py "$@" 2>&1)
  echo "$out"
  py=$(echo "$out" | summary)
  echo "options: $*"
  echo "C     : $c"
  echo "Python: $py"
  [ -n "$c" ] && [ -n "$py" ] || { echo "FAIL: a summary line is missing"; return 1; }
  [ "${c% l2err=*}" = "${py% l2err=*}" ] || { echo "FAIL: the summaries differ"; return 1; }
  awk -v a="${c##*l2err=}" -v b="${py##*l2err=}" 'BEGIN { d = a - b; if (d < 0) d = -d; s = a < 0 ? -a : a;
    if (d > 2e-6 * s) { print "FAIL: L2 errors " a " and " b " differ"; exit 1 } }'
}

case "${1:-}" in
poisson)
  n=$2
  case $3 in
    jacobi) sets=("-dim 3 -degree 3 -cells 4 -pc_type jacobi" "-dim 2 -degree 5 -cells 6 -pc_type jacobi") ;;
    vertexpatch) sets=("-dim 3 -degree 3 -cells 4 -pc_type vertexpatch" "-dim 2 -degree 4 -cells 8 -ksp_type fgmres -pc_type vertexpatch -fmg"
                       "-dim 2 -degree 3 -cells 8 -rhs one -ksp_type gmres -ksp_rtol 1e-9 -pc_type vertexpatch -pc_vertexpatch_precision double") ;;
    lor) sets=("-dim 3 -degree 3 -cells 4 -pc_type lor" "-dim 2 -degree 4 -cells 8 -pc_type lor -lor_pc_type gamg") ;;
    patchamg) sets=("-dim 3 -degree 3 -cells 6 -pc_type lor -lor_pc_type patchamg" "-dim 2 -degree 4 -cells 12 -pc_type lor -lor_pc_type patchamg") ;;
    mg) sets=("-dim 3 -degree 2 -cells 8 -pc_type mg" "-dim 2 -degree 4 -cells 8 -pc_type mg -pc_mg_levels 2") ;;
    *) echo "unknown PC $3"; exit 2 ;;
  esac
  for o in "${sets[@]}"; do
    # shellcheck disable=SC2086
    same_summary "$n" $o || exit 1
  done
  if [ "$3" = patchamg ]; then # PCPATCHAMG really is the inner PC (printed through patchwork.lor_get_inner_pc)
    $MPIEXEC -n "$n" "$PY" examples/poisson.py -dim 2 -degree 4 -cells 12 -pc_type lor -lor_pc_type patchamg | grep 'inner PC patchamg$' || exit 1
  fi
  ;;
module)
  $MPIEXEC -n "$2" "$PY" tests/python/test_module.py
  ;;
dll)
  [ -x $B/tests/mat/test_patchamg ] || { echo "FAIL: $B/tests/mat/test_patchamg is not built (make tests)"; exit 1; }
  for o in "-n 24" "-n 24 -pc_patchamg_relax jacobi"; do
    # shellcheck disable=SC2086
    c=$($MPIEXEC -n "$2" $B/tests/mat/test_patchamg -problem fd7 $o | grep -o 'CG iterations [0-9]*, relative residual [^ ]*')
    # shellcheck disable=SC2086
    py=$($MPIEXEC -n "$2" "$PY" examples/plugin.py -dll_append "$PWD/lib/libpetscpatchwork.so" $o)
    echo "$py"
    echo "options: $o"
    echo "C     : $c"
    py=$(echo "$py" | grep '^summary:' | sed -E 's/.* its=([0-9]*) relres=([^ ]*) converged=1$/CG iterations \1, relative residual \2/')
    echo "Python: $py"
    [ -n "$c" ] && [ "$c" = "$py" ] || { echo "FAIL: the Python run through -dll_append differs from the C one"; exit 1; }
  done
  ;;
dll-errors)
  out=$("$PY" examples/plugin.py -n 8 2>&1)
  rc=$?
  echo "$out"
  [ $rc = 2 ] && echo "$out" | grep -q 'Patchwork is not loaded: run with -dll_append' || { echo "FAIL: expected exit 2 without the plugin"; exit 1; }
  out=$("$PY" examples/plugin.py -n 8 -dll_append "$PWD/lib/libpetscpatchwork.so" -pc_type vertexpatch 2>&1)
  rc=$?
  echo "$out"
  [ $rc = 1 ] && echo "$out" | grep -q 'PCVERTEXPATCH needs the Patchwork tensor-product operator' || { echo "FAIL: expected PCVERTEXPATCH's message"; exit 1; }
  ;;
load)
  repo=$PWD lib=$PWD/lib/libpatchwork.so
  out=$(cd /tmp && PATCHWORK_LIB="$lib" PYTHONPATH="$repo/python" "$PY" -c 'import patchwork; print(patchwork.library_path())' 2>&1)
  echo "PATCHWORK_LIB=$lib: $out"
  [ "$out" = "$lib" ] || { echo "FAIL: PATCHWORK_LIB was not used"; exit 1; }
  out=$(cd /tmp && PYTHONPATH="$repo/python" "$PY" -c 'import patchwork; patchwork.load("/nonexistent/libpatchwork.so")' 2>&1)
  echo "$out"
  echo "$out" | grep -q 'OSError: patchwork: libpatchwork.so not found; tried:' && echo "$out" | grep -q '/nonexistent/libpatchwork.so (no such file)' &&
    echo "$out" | grep -q 'PATCHWORK_LIB=' || { echo "FAIL: the error does not name the path tried and PATCHWORK_LIB"; exit 1; }
  ;;
*)
  sed -n '2,11p' "$0"
  exit 2
  ;;
esac
