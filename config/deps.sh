#!/usr/bin/env bash
# Installs what the CPU build needs when it is missing: Debian's petsc-dev (PETSc with hypre and
# OpenMPI), python3-petsc4py (the Python route, tests/python) and python3-matplotlib (bench/plot.py,
# the docs/plots test). Quiet and quick when everything is there; does nothing when the user gave a
# PETSC_DIR.
set -euo pipefail
PETSC_DIR=${PETSC_DIR:-/usr/lib/petsc}
PETSC_DIR_DEFAULT=${PETSC_DIR_DEFAULT:-/usr/lib/petsc}

have_petsc() { [ -f "$PETSC_DIR/lib/petsc/conf/variables" ] && [ -f "$PETSC_DIR/include/petsc.h" ]; }
have_tools() { command -v mpiexec >/dev/null 2>&1 && command -v mpicc >/dev/null 2>&1 && command -v pkg-config >/dev/null 2>&1; }
# petsc4py of Debian's PETSc, for Debian's python3 (only with Debian's PETSc)
have_petsc4py() { [ "$PETSC_DIR" != "$PETSC_DIR_DEFAULT" ] || [ -n "$(dpkg-query -W -f='${Status}' python3-petsc4py 2>/dev/null | grep 'install ok installed')" ]; }
# matplotlib for Debian's python3 (the plots of bench/plot.py), also only with Debian's PETSc
have_matplotlib() { [ "$PETSC_DIR" != "$PETSC_DIR_DEFAULT" ] || [ -n "$(dpkg-query -W -f='${Status}' python3-matplotlib 2>/dev/null | grep 'install ok installed')" ]; }

if have_petsc && have_tools && have_petsc4py && have_matplotlib; then exit 0; fi
if [ "$PETSC_DIR" != "$PETSC_DIR_DEFAULT" ]; then
  echo "deps: PETSC_DIR=$PETSC_DIR has no PETSc (lib/petsc/conf/variables missing); fix PETSC_DIR or unset it to use Debian's petsc-dev" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "deps: no PETSc at $PETSC_DIR and no apt-get: install PETSc >= 3.18 and set PETSC_DIR" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
    echo "deps: installing petsc-dev needs root (or sudo): apt-get install petsc-dev" >&2; exit 1
  fi
fi
echo "deps: installing Debian's petsc-dev (PETSc, hypre, OpenMPI), python3-petsc4py, python3-matplotlib and pkg-config; this takes 2-4 minutes ..."
start=$(date +%s)
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq petsc-dev pkg-config >/tmp/patchwork-deps.log 2>&1 || { tail -20 /tmp/patchwork-deps.log >&2; exit 1; }
# (without its recommends: they pull in sphinx and its documentation)
$SUDO apt-get install -y -qq --no-install-recommends python3-petsc4py python3-matplotlib >>/tmp/patchwork-deps.log 2>&1 || { tail -20 /tmp/patchwork-deps.log >&2; exit 1; }
have_petsc || { echo "deps: petsc-dev installed but $PETSC_DIR has no PETSc" >&2; exit 1; }
echo "deps: done in $(( $(date +%s) - start )) s"
