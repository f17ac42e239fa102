#!/usr/bin/env bash
# `make run` and `make check` as a newcomer runs them on a machine without PETSc (run by tests/run.sh after
# the build, from the repository root; `bash tests/fresh_make.sh run|run-fails|check`).
#
# PETSC_DIR_DEFAULT names a directory that does not exist when make starts. config/deps.sh finds no PETSc
# there and installs it with apt-get, here a stub first on PATH whose "install" links that directory to the
# PETSc of this build (PETSC_DIR, default /usr/lib/petsc). So the make that starts reads no PETSc variables,
# config/deps.sh and the makefile are the real ones, and only the package download is left out. The built
# files are up to date, so nothing is compiled again.
#   run        make run runs the example with PETSc's MPIEXEC and exits 0
#   run-fails  make run fails when the example fails (PETSC_OPTIONS=-ksp_max_it 1: it does not converge)
#   check      make check hands tests/run.sh PETSc's MPIEXEC and PCC, and whether PETSc has CUDA
#              (PW_SUITE_SHOW_ENV=1: run.sh prints them and stops)
set -u
cd "$(dirname "$0")/.."
what=${1:?usage: tests/fresh_make.sh run|run-fails|check}
real=$(cd "${PETSC_DIR:-/usr/lib/petsc}" && pwd -P) || exit 1
t=$PWD/tests/results/fresh-make-$what
fake=$t/petsc
rm -rf "$t"
mkdir -p "$t/bin"
cat >"$t/bin/apt-get" <<EOF
#!/bin/sh
# stub apt-get of tests/fresh_make.sh: "install" links $fake to $real
echo "stub apt-get \$*" >>"$t/apt-get.log"
case " \$* " in *" install "*) ln -sfn "$real" "$fake" ;; esac
EOF
printf '#!/bin/sh\nexec "$@"\n' >"$t/bin/sudo" # deps.sh uses sudo when not root
chmod +x "$t/bin/apt-get" "$t/bin/sudo"

# what PETSc's variables say
petsc_var() { printf 'include %s/lib/petsc/conf/variables\nshow:\n\t@echo $(%s)\n' "$real" "$1" | env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS PETSC_DIR="$real" make --no-print-directory -s -f - show; }
mpiexec=$(petsc_var MPIEXEC)
pcc=$(petsc_var PCC)
[ -n "$(petsc_var CUDAC)" ] && cuda=1 || cuda=
[ -n "$mpiexec" ] || { echo "PETSc at $real defines no MPIEXEC"; exit 1; }

# make as started from a shell: no PETSC_DIR, no make above it
fresh_make() {
  env -u PETSC_DIR -u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u MAKEOVERRIDES PATH="$t/bin:$PATH" \
    make --no-print-directory PETSC_DIR_DEFAULT="$fake" "$@" >"$t/make.log" 2>&1
  rc=$?
  echo "make $* exited $rc; its output:"
  sed 's/^/  | /' "$t/make.log"
  [ -e "$fake/lib/petsc/conf/variables" ] && grep -q install "$t/apt-get.log" || { echo "deps did not install PETSc (stub apt-get not called)"; return 1; }
  ! grep -n -E 'Error [0-9]+ \(ignored\)|No such file or directory' "$t/make.log" || { echo "make ignored an error"; return 1; }
}

case $what in
run)
  fresh_make run || exit 1
  [ $rc = 0 ] || { echo "make run failed"; exit 1; }
  grep -q -F -- " $mpiexec -n 1 build/examples/poisson" "$t/make.log" || { echo "the example was not run by PETSc's MPIEXEC ($mpiexec)"; exit 1; }
  grep -E 'iterations, CONVERGED' "$t/make.log" || { echo "the example did not run to convergence"; exit 1; }
  ;;
run-fails)
  PETSC_OPTIONS="${PETSC_OPTIONS:-} -ksp_max_it 1" fresh_make run || exit 1
  [ $rc != 0 ] || { echo "make run exited 0 although the example failed"; exit 1; }
  grep -q 'DIVERGED_ITS' "$t/make.log" || { echo "the example did not run"; exit 1; }
  ;;
check)
  PW_SUITE_SHOW_ENV=1 fresh_make check || exit 1
  [ $rc = 0 ] || { echo "make check failed"; exit 1; }
  grep -q -x -F "MPIEXEC=$mpiexec" "$t/make.log" || { echo "tests/run.sh did not get PETSc's MPIEXEC ($mpiexec)"; exit 1; }
  grep -q -x -F "PCC=$pcc" "$t/make.log" || { echo "tests/run.sh did not get PETSc's PCC ($pcc)"; exit 1; }
  grep -q -x -F "PW_HAVE_CUDA=$cuda" "$t/make.log" || { echo "tests/run.sh was not told whether PETSc has CUDA (PW_HAVE_CUDA=$cuda)"; exit 1; }
  ;;
*) echo "unknown test $what"; exit 1 ;;
esac
