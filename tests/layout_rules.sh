#!/usr/bin/env bash
# The rules of the source layout, checked on a tree (default: this repository):
#   1. cuda/ never includes PETSc: the kernels are plain CUDA with C contracts, built and tested alone
#   2. the CPU references (src/core) include neither PETSc nor CUDA: they are the kernels' test oracle
#   3. the host code (src/) never includes CUDA's headers: it reaches the device through the kernels'
#      C functions only, so that it builds without a CUDA toolkit
#   4. make install installs include/patchwork.h alone (the kernel headers are not the library's API)
#   bash tests/layout_rules.sh [ROOT]      check ROOT
#   bash tests/layout_rules.sh --self-test  plant each violation in a copy and check that it is caught
set -u
cd "$(dirname "$0")/.."

check() { # ROOT: prints each violation, exit 1 if any
  local root=$1 bad=0 hits
  hits=$(grep -l -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]petsc' "$root"/cuda/*.cu "$root"/cuda/*.h 2>/dev/null)
  [ -n "$hits" ] && { echo "rule 1: PETSc included in cuda/: $hits"; bad=1; }
  hits=$(grep -l -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](petsc|cuda|cub/|thrust/)' "$root"/src/core/*.c "$root"/src/core/*.h 2>/dev/null)
  [ -n "$hits" ] && { echo "rule 2: PETSc or CUDA included in a CPU reference (src/core): $hits"; bad=1; }
  hits=$(grep -r -l -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](cuda|cuda_runtime|cublas|cusparse|cub/|thrust/)' "$root"/src 2>/dev/null)
  [ -n "$hits" ] && { echo "rule 3: a CUDA header included in host code (src/): $hits"; bad=1; }
  hits=$(sed -n '/^install:/,/^$/p' "$root"/makefile | grep -E 'install -m [0-9]+ include/' | grep -v -E 'include/patchwork\.h \$\(PREFIX\)/include/?$')
  [ -n "$hits" ] && { echo "rule 4: make install installs more headers than include/patchwork.h: $hits"; bad=1; }
  return $bad
}

if [ "${1:-}" = --self-test ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  plant() { # RULE FILE LINE: a fresh copy with LINE appended to FILE must fail with "rule RULE"
    rm -rf "$tmp/t" && mkdir -p "$tmp/t" && cp -r cuda src makefile "$tmp/t/" || return 1
    if [ "$2" = makefile ]; then sed -i "/^install:/a\\$3" "$tmp/t/makefile"; else echo "$3" >>"$tmp/t/$2"; fi
    if out=$(check "$tmp/t"); then echo "rule $1 not caught: $3 in $2"; return 1; fi
    echo "$out" | grep -q "^rule $1:" || { echo "rule $1 caught as something else: $out"; return 1; }
    echo "planted in $2, caught: $(echo "$out" | cut -c1-90)"
  }
  check . || { echo "the tree itself breaks a rule"; exit 1; }
  plant 1 cuda/vecops.cu '#include <petscsys.h>' &&
    plant 2 src/core/basis1d.c '#include <cuda_runtime.h>' &&
    plant 3 src/sys/halo.c '#include <cuda_runtime.h>' &&
    plant 4 makefile '	install -m 644 include/patchwork/*.h $(PREFIX)/include/patchwork/' || exit 1
  echo "every planted violation was caught"
  exit 0
fi
check "${1:-.}" && echo "layout rules hold: cuda/ without PETSc, src/core without PETSc or CUDA, src/ without CUDA headers, one installed header"
