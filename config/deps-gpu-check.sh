#!/usr/bin/env bash
# config/deps-gpu-check.sh -- smoke test of the CUDA PETSc from config/deps-gpu.sh
# on the GPU machine: unpacks deps/petsc-cuda.tar.xz to / if needed, checks the
# shared-library resolution, then builds and runs a tiny VECCUDA program with
# PETSc's own makefile variables (PETSC_DIR=/opt/patchwork/petsc-cuda, PETSC_ARCH=),
# and, if its hypre is a CUDA build, CG + BoomerAMG on aijcusparse + CUDA vectors
# (GPU) and on host AIJ, with PASS/FAIL lines and the iteration counts.
# Run on the GPU machine from the repository root:  bash config/deps-gpu-check.sh
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PREFIX=/opt/patchwork/petsc-cuda
# unpack if missing, or if the archive is newer than the last unpacking by this script
if [ ! -f $PREFIX/lib/petsc/conf/petscvariables ] || [ "$REPO/deps/petsc-cuda.tar.xz" -nt $PREFIX/.unpacked ]; then
  echo "== unpack deps/petsc-cuda.tar.xz"; tar -C / -xJf "$REPO/deps/petsc-cuda.tar.xz"; touch $PREFIX/.unpacked
fi
grep -E '^(features|hypre):' "$REPO/deps/petsc-cuda.info" 2>/dev/null | cut -c1-160 || true
echo "== ldd libpetsc.so"; ldd $PREFIX/lib/libpetsc.so | grep -E 'not found|=> /opt|lapack|blas|gfortran|quadmath|cuda|cublas|mpi\.' || true
if grep -q 'not found' <<< "$(ldd $PREFIX/lib/libpetsc.so)"; then echo "FAIL: unresolved libs"; exit 1; fi
if [ -e $PREFIX/lib/libHYPRE.so ]; then
  echo "== ldd libHYPRE.so (RUNPATH $(readelf -d $PREFIX/lib/libHYPRE.so | sed -n 's/.*RUNPATH.*\[\(.*\)\]/\1/p'))"
  ldd $PREFIX/lib/libHYPRE.so | grep -E 'not found|cuda|cu[a-z]*\.so|nvJit' || true
  if grep -q 'not found' <<< "$(ldd $PREFIX/lib/libHYPRE.so)"; then echo "FAIL: libHYPRE.so has unresolved libs"; exit 1; fi
fi
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

# ---- hypre on the GPU: 2D 5-point Laplacian (m x m), CG + BoomerAMG, on aijcusparse + CUDA
# vectors (1 and 2 ranks; hypre's memory location must be DEVICE), and on host AIJ (CPU, the
# same CUDA hypre: memory location HOST).  Prints PASS/FAIL lines; any FAIL fails the script.
if grep -q '^#define HYPRE_USING_CUDA 1' $PREFIX/include/hypre/HYPRE_config.h 2>/dev/null; then
  grep -E '^#define PETSC_HAVE_HYPRE' $PREFIX/include/petscconf.h | sed 's/^/   /'
  if ! grep -q '^#define PETSC_HAVE_HYPRE_DEVICE 1' $PREFIX/include/petscconf.h; then
    echo "FAIL: hypre is a CUDA build but PETSc has no PETSC_HAVE_HYPRE_DEVICE"; exit 1
  fi
  cat > $T/pwhypresmoke.c <<'EOF2'
#include <petscksp.h>
#include <HYPRE_utilities.h>
int main(int argc, char **argv)
{
  Mat                  A;
  Vec                  x, b, u, r;
  KSP                  ksp;
  PC                   pc;
  PetscInt             m = 128, rs, re, its;
  PetscReal            rn, bn, en;
  PetscBool            gpu, pass;
  KSPConvergedReason   reason;
  VecType              vt;
  MatType              mt;
  HYPRE_MemoryLocation loc = HYPRE_MEMORY_UNDEFINED;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-m", &m, NULL));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, m * m, m * m));
  PetscCall(MatSetFromOptions(A)); /* -mat_type aijcusparse | aij */
  PetscCall(MatSeqAIJSetPreallocation(A, 5, NULL));
  PetscCall(MatMPIAIJSetPreallocation(A, 5, NULL, 2, NULL));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  for (PetscInt k = rs; k < re; k++) {
    PetscInt i = k / m, j = k % m;
    if (i > 0) PetscCall(MatSetValue(A, k, k - m, -1.0, INSERT_VALUES));
    if (i < m - 1) PetscCall(MatSetValue(A, k, k + m, -1.0, INSERT_VALUES));
    if (j > 0) PetscCall(MatSetValue(A, k, k - 1, -1.0, INSERT_VALUES));
    if (j < m - 1) PetscCall(MatSetValue(A, k, k + 1, -1.0, INSERT_VALUES));
    PetscCall(MatSetValue(A, k, k, 4.0, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(x, &u));
  PetscCall(VecDuplicate(x, &r));
  PetscCall(VecSet(u, 1.0));
  PetscCall(MatMult(A, u, b));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
  PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_CURRENT, PETSC_CURRENT, 200));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCHYPRE));
  PetscCall(PCHYPRESetType(pc, "boomeramg"));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSetUp(ksp));
  (void)HYPRE_GetMemoryLocation(&loc); /* set by PETSc (MatConvert to MATHYPRE) from the matrix's memory type */
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &rn));
  PetscCall(VecNorm(b, NORM_2, &bn));
  PetscCall(VecAXPY(x, -1.0, u));
  PetscCall(VecNorm(x, NORM_INFINITY, &en));
  PetscCall(MatGetType(A, &mt));
  PetscCall(VecGetType(x, &vt));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &gpu, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, ""));
#if defined(PETSC_HAVE_HYPRE_DEVICE)
  pass = (PetscBool)(loc == (gpu ? HYPRE_MEMORY_DEVICE : HYPRE_MEMORY_HOST));
#else
  pass = PETSC_TRUE; /* a host hypre: PETSc does not set hypre's memory location */
#endif
  pass = (PetscBool)(pass && reason > 0 && its <= 50 && rn <= 1e-7 * bn && en <= 1e-5);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: hypre %s: %s + %s, n = %" PetscInt_FMT ", hypre memory %s (expect %s): CG + BoomerAMG %" PetscInt_FMT " iterations (%s), |b-Ax|/|b| = %.2e, max error %.2e\n", pass ? "PASS" : "FAIL", gpu ? "GPU" : "CPU", mt, vt, m * m, loc == HYPRE_MEMORY_DEVICE ? "DEVICE" : loc == HYPRE_MEMORY_HOST ? "HOST" : "UNDEFINED", gpu ? "DEVICE" : "HOST", its, KSPConvergedReasons[reason], (double)(rn / bn), (double)en));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&r));
  PetscCall(MatDestroy(&A));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(PetscFinalize());
  return pass ? 0 : 1;
}
EOF2
  echo "== build pwhypresmoke"; make -C $T pwhypresmoke
  HFAIL=0
  hrun() { # NP OPTIONS...: one run, its PASS/FAIL line (FAIL if it crashed or timed out)
    local np=$1; shift
    echo "== hypre: $np rank(s) $*"
    if ! (cd $T && timeout 120 mpiexec --allow-run-as-root --oversubscribe -n $np ./pwhypresmoke "$@" > $T/h.out 2>&1); then
      cat $T/h.out | tail -20; grep -q '^FAIL' $T/h.out || echo "FAIL: hypre $np rank(s) $*: crashed or timed out"; HFAIL=1
    else
      grep -E '^(PASS|FAIL)' $T/h.out || true
    fi
  }
  hrun 1 -mat_type aijcusparse
  hrun 2 -mat_type aijcusparse
  hrun 1 -mat_type aij
  hrun 2 -mat_type aij
  # where BoomerAMG ran: GPU flops and the setup/solve times of the 1-rank GPU run
  (cd $T && ./pwhypresmoke -mat_type aijcusparse -log_view :$T/hlog.txt > /dev/null 2>&1) || true
  grep -E '^(PCSetUp|PCApply|KSPSolve|MatMult) ' $T/hlog.txt | head -6 || true
  [ $HFAIL = 0 ] || { echo "deps-gpu-check: FAIL (hypre)"; exit 1; }
  echo "PASS: hypre (CUDA) BoomerAMG on aijcusparse/CUDA vectors and on host AIJ"
else
  echo "== hypre: the archive has no CUDA hypre (HYPRE_USING_CUDA not set): GPU hypre check skipped"
fi
echo "deps-gpu-check: OK"
