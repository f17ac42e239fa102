#!/usr/bin/env bash
# config/deps-gpu-check.sh -- smoke test of the CUDA PETSc from config/deps-gpu.sh
# on the GPU machine: unpacks deps/petsc-cuda.tar.xz to / if needed, checks the
# shared-library resolution, then builds and runs a tiny VECCUDA program with
# PETSc's own makefile variables (PETSC_DIR=/opt/patchwork/petsc-cuda, PETSC_ARCH=).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PREFIX=/opt/patchwork/petsc-cuda
[ -f $PREFIX/lib/petsc/conf/petscvariables ] || tar -C / -xJf "$REPO/deps/petsc-cuda.tar.xz"
echo "== ldd libpetsc.so"; ldd $PREFIX/lib/libpetsc.so | grep -E 'not found|=> /opt|lapack|blas|gfortran|quadmath|cuda|cublas|mpi\.' || true
if ldd $PREFIX/lib/libpetsc.so | grep -q 'not found'; then echo "FAIL: unresolved libs"; exit 1; fi
T=$(mktemp -d)
cat > $T/pwcudasmoke.c <<'EOF'
#include <petscvec.h>
int main(int argc, char **argv) {
  Vec x; PetscReal n; PetscInt N = 1000000;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(VecCreate(PETSC_COMM_WORLD, &x));
  PetscCall(VecSetSizes(x, PETSC_DECIDE, N));
  PetscCall(VecSetType(x, VECCUDA));
  PetscCall(VecSet(x, 2.0));
  PetscCall(VecNorm(x, NORM_1, &n));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "VECCUDA norm1 = %g (expect %g)\n", (double)n, 2.0 * N));
  PetscCheck(n == 2.0 * N, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "wrong norm");
  PetscCall(VecDestroy(&x));
  PetscCall(PetscFinalize());
  return 0;
}
EOF
printf 'PETSC_DIR = %s\nPETSC_ARCH =\ninclude $(PETSC_DIR)/lib/petsc/conf/variables\ninclude $(PETSC_DIR)/lib/petsc/conf/rules\n' $PREFIX > $T/makefile
echo "== build"; make -C $T pwcudasmoke
echo "== ldd pwcudasmoke"; ldd $T/pwcudasmoke | grep -E 'not found|petsc|lapack' || true
# Ubuntu's OpenMPI is not CUDA-aware: PETSc aborts at the first GPU object
# (even on 1 rank) unless told -use_gpu_aware_mpi 0.
export PETSC_OPTIONS="${PETSC_OPTIONS:-} -use_gpu_aware_mpi 0"
echo "== run (1 rank)"; (cd $T && ./pwcudasmoke)
echo "== run (2 ranks)"
(cd $T && mpiexec --allow-run-as-root --oversubscribe -n 2 ./pwcudasmoke -log_view :$T/log.txt)
grep -E 'CUDA|GPU|VecSet|VecNorm' $T/log.txt | head -12 || true
echo "deps-gpu-check: OK"
