#!/usr/bin/env bash
# The option tables of a docs page against what the programs read: every option named in the first cell
# of a table row (a line starting with "| `-option`") must be listed by the page's program with -help,
# and every option with the page's prefix that -help lists must be in a table. The docs cannot drift
# from the sources that way, in either direction.
#   bash tests/doc_options.sh PAGE      PAGE: vertexpatch, lor, patchamg or operator (docs/PAGE.md)
# Run from the repository root after `make examples`; exits 1 naming each option that disagrees.
set -u
set -o pipefail
cd "$(dirname "$0")/.."
page=${1:?usage: tests/doc_options.sh vertexpatch|lor|patchamg|operator}
doc=docs/$page.md
[ -f "$doc" ] || { echo "no $doc"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=build/examples

# Per page: the runs whose -help output is searched, and the prefixes whose options must all be documented
# (inner solvers' options, -pc_*_coarse_ksp_* and the like, are PETSc's and left out).
# Some options a program reads do not appear under its -help: PETSc prints the options under one title
# ("Matrix (Mat) options") once, and the DMPlex examples set an AIJ matrix from the options before the
# operator (PCLOR's -lor_mat_type the same). Those are checked by setting them (the values in SET) in
# SET_RUN and asking -options_left whether the program read them.
SET=() SET_RUN=
case $page in
vertexpatch)
  # two levels on 16^2 Q2 cells: the coarse level has several patches, so the coarse solver exists
  RUNS=("$B/poisson -dim 2 -degree 2 -cells 16 -pc_type vertexpatch -pc_vertexpatch_levels 2")
  PREFIX='-pc_vertexpatch_' SKIP='-pc_vertexpatch_coarse_' ;;
lor)
  RUNS=("$B/lor -dim 2 -degree 2 -cells 4")
  SET=(-lor_mat_type=aij) SET_RUN=${RUNS[0]}
  PREFIX='-pc_lor_' SKIP='^$' ;;
patchamg)
  RUNS=("$B/tets -mesh regular -refine 0 -pc_type patchamg" "$B/tets -mesh regular -refine 0 -pc_type patchamg -pc_patchamg_relax chebyshev")
  PREFIX='-pc_patchamg_|-patchwork_p1_' SKIP='-pc_patchamg_(coarse|levels)_' ;;
operator)
  RUNS=("$B/poisson -dim 2 -degree 2 -cells 4")
  SET_RUN="$B/shell -dim 2 -degree 2 -cells 2"
  SET=(-mat_patchwork_quadrature_points=3 -mat_patchwork_geometry_on_the_fly=1)
  PREFIX='-mat_patchwork_' SKIP='^$' ;;
*) echo "no option check for page $page"; exit 1 ;;
esac

# the documented options: backquoted words starting with '-' in the first cell of each table row
documented=$(grep -E '^\| `-' "$doc" | cut -d'|' -f2 | grep -oE '`-[A-Za-z0-9_]+`' | tr -d '`' | sort -u)
[ -n "$documented" ] || { echo "$doc has no option table"; exit 1; }

help=""
for r in "${RUNS[@]}"; do
  out=$($r -help 2>&1) || { echo "$out" | tail -n 20; echo "failed: $r -help"; exit 1; }
  help+=$'\n'"$out"
done
listed=$(grep -oE '^ +-[A-Za-z0-9_]+' <<<"$help" | tr -d ' ' | sort -u)

fail=0
for opt in $documented; do
  grep -qxF -- "$opt" <<<"$listed" && continue
  value=""
  for s in "${SET[@]}"; do [ "${s%%=*}" = "$opt" ] && value=${s#*=}; done
  if [ -n "$value" ]; then
    out=$($SET_RUN "$opt" "$value" -options_left 2>&1) || { echo "$out" | tail -n 20; echo "failed: $SET_RUN $opt $value"; exit 1; }
    if ! grep -q "Option left: name:$opt " <<<"$out"; then echo "ok (read when set, $SET_RUN): $opt"; continue; fi
  fi
  echo "documented in $doc but not read by the program (-help does not list it): $opt"
  fail=1
done
for opt in $(grep -E -- "^($PREFIX)" <<<"$listed" | grep -Ev -- "$SKIP"); do
  grep -qxF -- "$opt" <<<"$documented" || { echo "listed by -help but missing from the tables of $doc: $opt"; fail=1; }
done
n=$(wc -w <<<"$documented")
[ $fail = 0 ] && echo "$doc: all $n documented options are read by the programs (${RUNS[*]})"
exit $fail
