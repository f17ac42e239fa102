/* PCPATCHAMG setup (Fu et al. 2014, section 5.1.1 and 5.2.1): the graph hierarchy (aggregates by
   k-MIS, the induced graph, patches of aggregates), the orderings that make every patch and every
   aggregate contiguous, smoothed prolongators, Galerkin operators and the patchSPM layouts. */
#include "paimpl.h"

/* Diagonal entries must be positive and finite (SPD); a zero names an empty or singular row */
static PetscErrorCode CheckDiagonal(Mat A, Vec d, const char what[])
{
  PetscReal dmin, dmax;
  PetscInt  imin;

  PetscFunctionBegin;
  PetscCall(MatGetDiagonal(A, d));
  PetscCall(VecMin(d, &imin, &dmin));
  PetscCall(VecNorm(d, NORM_1, &dmax)); /* a NaN fails every comparison of VecMin, but spreads through the sum */
  PetscCheck(!PetscIsInfOrNanReal(dmin) && !PetscIsInfOrNanReal(dmax), PetscObjectComm((PetscObject)A), PETSC_ERR_FP, "PCPATCHAMG: the %s has a NaN or Inf on its diagonal", what);
  PetscCheck(dmin > 0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "PCPATCHAMG needs a symmetric positive definite matrix, but the %s has diagonal entry %g in row %" PetscInt_FMT "%s", what, (double)dmin, imin,
             dmin == 0 ? " (an empty row, or a zero on the diagonal)" : "");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The largest eigenvalue of an operator similar to a symmetric positive semidefinite one (D^-1 A,
   M^-1 A), by its power iteration from a fixed random start in v (w: work): the norm of the
   iterate approaches it from below, so callers add a margin */
typedef PetscErrorCode (*PowerOperator)(void *, Vec, Vec);

static PetscErrorCode PowerIteration(PowerOperator op, void *ctx, PetscInt its, unsigned long seed, Vec v, Vec w, PetscReal *lambda)
{
  PetscReal nrm = 0;

  PetscFunctionBegin;
  PetscCall(PatchworkVecSetHashRandom(v, (unsigned)seed));
  PetscCall(VecNormalize(v, NULL));
  *lambda = 0;
  for (PetscInt it = 0; it < its; it++) {
    PetscCall(op(ctx, v, w));
    PetscCall(VecNorm(w, NORM_2, &nrm));
    if (nrm == 0) break;
    *lambda = nrm;
    PetscCall(VecScale(w, 1.0 / nrm));
    PetscCall(VecSwap(v, w));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  Mat A;
  Vec dinv;
} DinvACtx;

static PetscErrorCode DinvAApply(void *ctx, Vec v, Vec w)
{
  DinvACtx *c = (DinvACtx *)ctx;

  PetscFunctionBegin;
  PetscCall(MatMult(c->A, v, w));
  PetscCall(VecPointwiseMult(w, w, c->dinv));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* rho(D^{-1} A), for the prolongator smoothing and the inner damping; the margin keeps the
   smoothing from amplifying the top mode */
static PetscErrorCode SpectralRadiusDinvA(Mat A, Vec dinv, PetscReal *rho)
{
  DinvACtx ctx = {A, dinv};
  Vec      v, w;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(dinv, &v));
  PetscCall(VecDuplicate(dinv, &w));
  PetscCall(PowerIteration(DinvAApply, &ctx, 20, 0x5eed, v, w, rho));
  *rho = *rho > 0 ? 1.05 * *rho : 1.0;
  PetscCall(VecDestroy(&v));
  PetscCall(VecDestroy(&w));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A matrix of an AIJ type on comm with m local rows and n local columns, preallocated and filled
   from this rank's CSR rows (global column indices) */
PetscErrorCode PCPatchAMGMatCreateFromCSR(MPI_Comm comm, MatType type, PetscInt m, PetscInt n, const PetscInt ia[], const PetscInt ja[], const PetscScalar va[], Mat *B)
{
  PetscFunctionBegin;
  PetscCall(MatCreate(comm, B));
  PetscCall(MatSetSizes(*B, m, n, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetType(*B, type));
  PetscCall(MatSeqAIJSetPreallocationCSR(*B, ia, ja, va)); /* whichever applies */
  PetscCall(MatMPIAIJSetPreallocationCSR(*B, ia, ja, va));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The tentative prolongator of level l: row i (a vertex of level l) has one entry, in the column of
   its aggregate (global numbering of level l+1), the near-null-space vector restricted to the
   aggregate and normalized there (constants by default). Built on the host in one CSR. The next
   level's near-null-space vector, zc_J = ||z on aggregate J||_2, is the one P~ maps to z exactly;
   with constants there instead, level l+2 could not represent the fine constants. ncol: P~'s local
   columns (the aggregates of this rank, or its share of the next level after a gathering). */
static PetscErrorCode TentativeProlongator(Mat A, const PC_PatchAMGGraph *H, PetscInt l, PetscInt ncol, Vec nullvec, Mat *Pt, Vec *zc)
{
  const PC_PatchAMGGraphLevel *L = &H->L[l];
  PetscInt                     n = L->g.n, nc = L->naggs, cstart;
  PetscReal                   *norm2;
  const PetscScalar           *z = NULL;
  PetscInt                    *ia, *ja;
  PetscScalar                 *va;
  int                         *agg;
  MatType                      type;
  PetscMPIInt                  own = ncol == L->naggs; /* every rank keeps its aggregates */

  PetscFunctionBegin;
  PetscCallMPI(MPI_Scan(&nc, &cstart, 1, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)A)));
  cstart -= nc;
  PetscCall(PCPatchAMGGraphToHost(H->dev, L->agg, n, &agg));
  PetscCall(PetscCalloc1(PetscMax(nc, 1), &norm2));
  PetscCall(PetscMalloc3(n + 1, &ia, PetscMax(n, 1), &ja, PetscMax(n, 1), &va));
  if (nullvec) PetscCall(VecGetArrayRead(nullvec, &z));
  for (PetscInt i = 0; i < n; i++) {
    PetscReal zi = z ? PetscRealPart(z[i]) : 1.0;

    norm2[agg[i]] += zi * zi;
  }
  for (PetscInt i = 0; i < n; i++) {
    PetscReal zi = z ? PetscRealPart(z[i]) : 1.0;

    ia[i] = i;
    ja[i] = cstart + agg[i];
    va[i] = norm2[agg[i]] > 0 ? zi / PetscSqrtReal(norm2[agg[i]]) : 0.0;
  }
  ia[n] = n;
  if (nullvec) PetscCall(VecRestoreArrayRead(nullvec, &z));
  PetscCall(MatGetType(A, &type));
  PetscCall(PCPatchAMGMatCreateFromCSR(PetscObjectComm((PetscObject)A), type, n, ncol, ia, ja, va, Pt));
  PetscCall(PetscFree3(ia, ja, va));
  PetscCall(MatCreateVecs(*Pt, zc, NULL));
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, &own, 1, MPI_INT, MPI_LAND, PetscObjectComm((PetscObject)A)));
  if (own) {
    PetscScalar *zca;

    PetscCall(VecGetArrayWrite(*zc, &zca));
    for (PetscInt a = 0; a < nc; a++) zca[a] = PetscSqrtReal(norm2[a]);
    PetscCall(VecRestoreArrayWrite(*zc, &zca));
  } else { /* gathered: the aggregates keep their global numbers, another rank may own them */
    for (PetscInt a = 0; a < nc; a++) PetscCall(VecSetValue(*zc, cstart + a, PetscSqrtReal(norm2[a]), INSERT_VALUES));
    PetscCall(VecAssemblyBegin(*zc));
    PetscCall(VecAssemblyEnd(*zc));
  }
  PetscCall(PetscFree(norm2));
  PetscCall(PetscFree(agg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The work vectors and sizes of level L, from its matrix */
PetscErrorCode PCPatchAMGLevelSetUpVecs(PC_PatchAMGLevel *L)
{
  PetscMPIInt has;

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(L->A, &L->x, NULL));
  PetscCall(VecDuplicate(L->x, &L->b));
  PetscCall(VecDuplicate(L->x, &L->r));
  PetscCall(VecDuplicate(L->x, &L->y));
  PetscCall(MatGetSize(L->A, &L->N, NULL));
  PetscCall(MatGetLocalSize(L->A, &L->n, NULL));
  has = L->n > 0;
  PetscCallMPI(MPIU_Allreduce(&has, &L->nranks, 1, MPI_INT, MPI_SUM, PetscObjectComm((PetscObject)L->A)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The local rows of the next level when it is gathered onto fewer ranks: its N rows (numbered by
   rank, nc on this one) go to max(1, N/rows_per_rank) ranks, each rank's rows whole to the one its
   first row falls to, so consecutive ranks merge and the numbering stays */
static PetscErrorCode GatheredSize(MPI_Comm comm, PetscInt nc, PetscInt rows_per_rank, PetscInt *ncol)
{
  PetscMPIInt size, rank;
  PetscInt   *counts, N = 0, active, start = 0;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscMalloc1(size, &counts));
  PetscCallMPI(MPI_Allgather(&nc, 1, MPIU_INT, counts, 1, MPIU_INT, comm));
  for (PetscMPIInt r = 0; r < size; r++) N += counts[r];
  active = PetscMax(1, PetscMin(size, N / rows_per_rank));
  *ncol  = 0;
  for (PetscMPIInt r = 0; r < size; r++) {
    if (counts[r] > 0 && (PetscInt)(((PetscInt64)start * active) / N) == rank) *ncol += counts[r];
    start += counts[r];
  }
  PetscCall(PetscFree(counts));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* P = (I - w/rho D^{-1} A) P~ (equation 6) by PETSc's products */
static PetscErrorCode SmoothProlongator(PC pc, Mat A, Vec dinv, Mat Pt, Mat *P, PetscReal rho)
{
  PC_PatchAMG *pa = (PC_PatchAMG *)pc->data;

  PetscFunctionBegin;
  PetscCall(PCPatchAMGMatProduct(pc, MATPRODUCT_AB, A, Pt, 2.0, P));
  PetscCall(MatDiagonalScale(*P, dinv, NULL));
  PetscCall(MatScale(*P, -pa->prolong_omega / rho));
  PetscCall(MatAXPY(*P, 1.0, Pt, SUBSET_NONZERO_PATTERN));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The scaling of the residual for the point relaxations: w/a_ii (Jacobi), 1/sum_j |a_ij| (l1-Jacobi),
   a_ii/sum_j a_ij^2 (SPAI(0), Broeker & Grote's diagonal sparse approximate inverse) */
static PetscErrorCode PointScaling(PC_PatchAMG *pa, Mat A, Vec dscale)
{
  PetscInt     rstart, rend;
  PetscScalar *s;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCall(VecGetArrayWrite(dscale, &s));
  for (PetscInt i = rstart; i < rend; i++) {
    PetscInt           nc;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscReal          aii = 0, l1 = 0, l2 = 0;

    PetscCall(MatGetRow(A, i, &nc, &cols, &vals));
    for (PetscInt j = 0; j < nc; j++) {
      if (cols[j] == i) aii = PetscRealPart(vals[j]);
      l1 += PetscAbsScalar(vals[j]);
      l2 += PetscRealPart(vals[j] * PetscConj(vals[j]));
    }
    PetscCall(MatRestoreRow(A, i, &nc, &cols, &vals));
    switch (pa->relax) {
    case PATCHWORK_AMG_RELAX_JACOBI:
      s[i - rstart] = (pa->omega > 0 ? pa->omega : 2.0 / 3.0) / aii;
      break;
    case PATCHWORK_AMG_RELAX_L1JACOBI:
      s[i - rstart] = (pa->omega > 0 ? pa->omega : 1.0) / l1;
      break;
    default:
      s[i - rstart] = (pa->omega > 0 ? pa->omega : 1.0) * aii / l2;
    }
  }
  PetscCall(VecRestoreArrayWrite(dscale, &s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The damping of a relaxation x += B (b - A x) on level L: -pc_patchamg_omega when given, else
   min(1, 1.5/lambda_max(B A)) with lambda_max from 12 power steps of op (w = B A v) and a 10% margin
   (the iteration approaches from below) */
static PetscErrorCode RelaxationDamping(PC_PatchAMG *pa, PC_PatchAMGLevel *L, PowerOperator op, void *ctx, unsigned long seed, PetscReal *omega)
{
  PetscReal lam;

  PetscFunctionBegin;
  if (pa->omega > 0) {
    *omega = pa->omega;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PowerIteration(op, ctx, 12, seed, L->x, L->y, &lam));
  *omega = PetscMin(1.0, 1.5 / (1.1 * lam));
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  PC_PatchAMG      *pa;
  PC_PatchAMGLevel *L;
} RelaxCtx;

/* w = M^-1 A v for the undamped patch relaxation M (the level's r as work) */
static PetscErrorCode RelaxApply(void *ctx, Vec v, Vec w)
{
  RelaxCtx *c = (RelaxCtx *)ctx;

  PetscFunctionBegin;
  PetscCall(MatMult(c->L->A, v, c->L->r));
  PetscCall(PCPatchAMGSPMRelax(c->pa, &c->L->spm, c->L->r, w, NULL, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The damping of the patch relaxation on level L. The inner sweeps are damped by
   inner_omega * 2/rho(D^-1 A): the eigenvalues of a patch block's D^-1 A_p lie below rho(D^-1 A), so
   every sweep polynomial stays positive and the relaxation symmetric positive definite, whatever the
   matrix (heterogeneous coefficients, obtuse tetrahedra). The outer update is damped by
   min(1, 1.5/lambda_max(M^-1 A)) unless -pc_patchamg_omega is given, with lambda_max estimated by
   power iteration of the relaxation itself: keeps the V-cycle positive definite (CG needs it). */
static PetscErrorCode PatchDamping(PC_PatchAMG *pa, PC_PatchAMGLevel *L)
{
  RelaxCtx ctx = {pa, L};

  PetscFunctionBegin;
  L->spm.desc.inner_omega = pa->inner_omega * 2.0 / L->rho_dinv;
  L->spm.desc.omega       = 1.0;
  PetscCall(RelaxationDamping(pa, L, RelaxApply, &ctx, 0x5eed + 1, &L->spm.desc.omega));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* w = S A v for the symmetrized SPAI(1) matrix S */
static PetscErrorCode SPAIApply(void *ctx, Vec v, Vec w)
{
  PC_PatchAMGLevel *L = (PC_PatchAMGLevel *)ctx;

  PetscFunctionBegin;
  PetscCall(MatMult(L->A, v, L->r));
  PetscCall(MatMult(L->spai, L->r, w));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* An inner KSP of the PC's own, under the PC's options prefix and the given one, so that options meant
   for the user's solver (-ksp_converged_reason, -ksp_monitor) do not reach it */
static PetscErrorCode InnerKSPCreate(PC pc, MPI_Comm comm, const char suffix[], KSP *ksp)
{
  const char *prefix;

  PetscFunctionBegin;
  PetscCall(KSPCreate(comm, ksp));
  PetscCall(PCGetOptionsPrefix(pc, &prefix));
  PetscCall(KSPSetOptionsPrefix(*ksp, prefix));
  PetscCall(KSPAppendOptionsPrefix(*ksp, suffix));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Does CG with Jacobi on S meet negative curvature before it converges (or within its steps) from a
   fixed random start? */
static PetscErrorCode FindsNegativeCurvature(PC pc, Mat S, PetscInt its, PetscBool *negative)
{
  KSP                ksp;
  PC                 jac;
  Vec                b, x;
  KSPConvergedReason reason;

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(S, &x, &b));
  PetscCall(PatchworkVecSetHashRandom(b, 0x5eed + 3));
  PetscCall(InnerKSPCreate(pc, PetscObjectComm((PetscObject)S), "pc_patchamg_spai_check_", &ksp));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &jac));
  PetscCall(PCSetType(jac, PCJACOBI));
  PetscCall(KSPSetOperators(ksp, S, S));
  PetscCall(KSPSetTolerances(ksp, 1e-10, 0, PETSC_DEFAULT, its)); /* stops once converged: rounding past that looks like negative curvature */
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  *negative = (PetscBool)(reason == KSP_DIVERGED_INDEFINITE_MAT || reason == KSP_DIVERGED_INDEFINITE_PC);
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* S = (M + M^T)/2 of SPAI(1) need not be positive definite (blobs (1,100), 12^3 cells refined twice:
   CG reported an indefinite preconditioner at every damping down to 0.02, while all of S's
   diagonal is positive): then S += tau diag(S), tau = 0.1, 0.2, 0.4, ... until CG with Jacobi on S
   meets no negative curvature in 100 steps (a test, not a proof: it sees the extreme eigenvalues
   Lanczos finds first). L->spai_shift records tau. The geometric mode only, for now. */
static PetscErrorCode SPAIMakeDefinite(PC pc, PC_PatchAMGLevel *L)
{
  PetscBool negative;
  Vec       d, inc;

  PetscFunctionBegin;
  L->spai_shift = 0;
  PetscCall(FindsNegativeCurvature(pc, L->spai, 100, &negative));
  if (!negative) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatCreateVecs(L->spai, &d, NULL));
  PetscCall(VecDuplicate(d, &inc));
  PetscCall(MatGetDiagonal(L->spai, d));
  for (PetscReal tau = 0.1; negative && tau <= 12.8; tau *= 2) { /* add (tau - previous tau) diag(S) */
    PetscCall(VecAXPBY(inc, tau - L->spai_shift, 0.0, d));
    PetscCall(MatDiagonalSet(L->spai, inc, ADD_VALUES));
    L->spai_shift = tau;
    PetscCall(FindsNegativeCurvature(pc, L->spai, 100, &negative));
  }
  PetscCall(VecDestroy(&inc));
  PetscCall(VecDestroy(&d));
  PetscCheck(!negative, PetscObjectComm((PetscObject)L->A), PETSC_ERR_CONV_FAILED, "PCPATCHAMG: SPAI(1)'s symmetric part stays indefinite after a shift of 12.8 diag(S); use another relaxation");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* M <- (M + M^T)/2 (M has A's pattern, symmetric for an SPD A): in place on one rank, on the GPU for
   aijcusparse (PETSc would transpose on the host); on several ranks, and for a pattern that is not
   symmetric (stored zeros), by PETSc's transpose and sum */
static PetscErrorCode SPAISymmetricPart(Mat M)
{
  PetscBool seq, dev = PETSC_FALSE;
  int       ret = -1; /* not tried; 3: the pattern is not symmetric */

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)M, MATSEQAIJ, &seq));
#if defined(PATCHWORK_HAVE_CUDA)
  PetscCall(PetscObjectTypeCompare((PetscObject)M, MATSEQAIJCUSPARSE, &dev));
#endif
  if ((seq || dev) && PCPatchAMGKernelTypes()) {
    const PetscInt    *ia, *ja;
    PetscScalar       *va;
    PetscInt           n;
    PatchworkCSRMatrix csr;
    MatInfo            info;

    PetscCall(MatGetLocalSize(M, &n, NULL));
    PetscCall(MatGetInfo(M, MAT_LOCAL, &info));
    if (dev) {
#if defined(PATCHWORK_HAVE_CUDA)
      void *stream;

      PetscCall(PatchworkGetDeviceStream(&stream));
      PetscCall(MatSeqAIJCUSPARSEGetIJ(M, PETSC_FALSE, &ia, &ja));
      PetscCall(MatSeqAIJCUSPARSEGetArray(M, &va));
      csr = (PatchworkCSRMatrix){(int)n, (int)n, (int)info.nz_used, (int *)ia, (int *)ja, (double *)va};
      ret = PatchworkCSRSymmetrizeCUDA(&csr, stream);
      PetscCall(MatSeqAIJCUSPARSERestoreArray(M, &va));
      PetscCall(MatSeqAIJCUSPARSERestoreIJ(M, PETSC_FALSE, &ia, &ja));
#endif
    } else {
      PetscBool done;

      PetscCall(MatGetRowIJ(M, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
      PetscCall(MatSeqAIJGetArray(M, &va));
      csr = (PatchworkCSRMatrix){(int)n, (int)n, (int)ia[n], (int *)ia, (int *)ja, (double *)va};
      ret = PatchworkCSRSymmetrizeRef(&csr);
      PetscCall(MatSeqAIJRestoreArray(M, &va));
      PetscCall(MatRestoreRowIJ(M, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
    }
    if (ret != 3) PatchworkCallKernel(ret);
  }
  if (ret != 0) {
    Mat Mt;

    PetscCall(MatTranspose(M, MAT_INITIAL_MATRIX, &Mt));
    PetscCall(MatAXPY(M, 1.0, Mt, ret == 3 ? DIFFERENT_NONZERO_PATTERN : SAME_NONZERO_PATTERN));
    PetscCall(MatScale(M, 0.5));
    PetscCall(MatDestroy(&Mt));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* SPAI(1) minimizes ||I - M A||_F, not an energy norm, and M is not symmetric: with M before and M^T
   after the coarse correction the blobs (1,100) mesh still made CG report DIVERGED_INDEFINITE_PC at
   any damping above 0.5, non-normality hiding from the eigenvalue estimate. The relaxation uses
   S = (M + M^T)/2 instead (symmetric, so one matrix serves both sides and lambda_max(S A) is real),
   damped like the patch relaxation by min(1, 1.5/lambda_max(S A)) unless -pc_patchamg_omega is given. */
static PetscErrorCode SPAIDamping(PC_PatchAMG *pa, PC_PatchAMGLevel *L)
{
  PetscReal omega;

  PetscFunctionBegin;
  PetscCall(RelaxationDamping(pa, L, SPAIApply, L, 0x5eed + 2, &omega));
  if (omega != 1.0) PetscCall(MatScale(L->spai, omega));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The relaxation of level l; G (the graph level, for the patch layout) may be NULL for the point
   and SPAI relaxations */
PetscErrorCode PCPatchAMGSetUpRelaxation(PC pc, PC_PatchAMGLevel *L, const PC_PatchAMGGraphLevel *G, PetscInt l)
{
  PC_PatchAMG *pa = (PC_PatchAMG *)pc->data;
  char         name[64];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(name, sizeof(name), "PWAMGRelax L%" PetscInt_FMT, l));
  PetscCall(PatchworkLogEventRegisterOnce(name, PC_CLASSID, &L->ev_relax));
  PetscCall(PetscSNPrintf(name, sizeof(name), "PWAMGTransfer L%" PetscInt_FMT, l));
  PetscCall(PatchworkLogEventRegisterOnce(name, PC_CLASSID, &L->ev_transfer));
  switch (pa->relax) {
  case PATCHWORK_AMG_RELAX_PATCH:
    PetscCall(PCPatchAMGSPMCreate(pa, L->A, G, &L->spm));
    PetscCall(PatchDamping(pa, L));
    break;
  case PATCHWORK_AMG_RELAX_CHEBYSHEV: {
    PC          jac;
    const char *prefix;
    char        lprefix[256];

    PetscCall(KSPCreate(PetscObjectComm((PetscObject)pc), &L->cheby));
    PetscCall(PetscObjectIncrementTabLevel((PetscObject)L->cheby, (PetscObject)pc, 1));
    PetscCall(PCGetOptionsPrefix(pc, &prefix));
    PetscCall(PetscSNPrintf(lprefix, sizeof(lprefix), "%spc_patchamg_levels_", prefix ? prefix : ""));
    PetscCall(KSPSetOptionsPrefix(L->cheby, lprefix));
    PetscCall(KSPSetType(L->cheby, KSPCHEBYSHEV));
    PetscCall(KSPGetPC(L->cheby, &jac));
    PetscCall(PCSetType(jac, PCJACOBI));
    PetscCall(KSPChebyshevEstEigSet(L->cheby, 0, 0.1, 0, 1.1));
    PetscCall(KSPSetTolerances(L->cheby, 0, 0, PETSC_DEFAULT, 2));
    PetscCall(KSPSetNormType(L->cheby, KSP_NORM_NONE));
    PetscCall(KSPSetConvergenceTest(L->cheby, KSPConvergedSkip, NULL, NULL));
    PetscCall(KSPSetInitialGuessNonzero(L->cheby, PETSC_TRUE));
    PetscCall(KSPSetOperators(L->cheby, L->A, L->A));
    PetscCall(KSPSetFromOptions(L->cheby));
    PetscCall(KSPSetUp(L->cheby));
  } break;
  case PATCHWORK_AMG_RELAX_SPAI1: {
    Mat A; /* from a real matrix of A's entries (on the GPU for aijcusparse) */

    PetscCall(PCPatchAMGMatGetAIJ(L->A, &A));
    PetscCall(PatchworkMatCreateSPAI1(A, &L->spai));
    PetscCall(MatDestroy(&A));
    PetscCall(SPAISymmetricPart(L->spai));
  }
    if (pa->geometric) PetscCall(SPAIMakeDefinite(pc, L)); /* the algebraic blobs (1,100) case has an indefinite level 1 (shift 1.6) but converges without the shift in 25 its, with it in 30 */
    PetscCall(SPAIDamping(pa, L));
    break;
  default: {
    Mat A; /* the scalings read A's rows on the host */

    PetscCall(PCPatchAMGMatGetAIJ(L->A, &A));
    PetscCall(VecDuplicate(L->x, &L->dscale));
    PetscCall(PointScaling(pa, A, L->dscale));
    PetscCall(MatDestroy(&A));
  }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCPatchAMGSetUpCoarseSolver(PC pc, Mat A)
{
  PC_PatchAMG *pa = (PC_PatchAMG *)pc->data;
  PC           cpc;
  const char  *prefix;
  char         cprefix[256];
  PetscMPIInt  size;
  Mat          Ac, Aop;

  PetscFunctionBegin;
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)pc), &pa->coarse));
  PetscCall(PetscObjectIncrementTabLevel((PetscObject)pa->coarse, (PetscObject)pc, 1));
  PetscCall(PCGetOptionsPrefix(pc, &prefix));
  PetscCall(PetscSNPrintf(cprefix, sizeof(cprefix), "%spc_patchamg_coarse_", prefix ? prefix : ""));
  PetscCall(KSPSetOptionsPrefix(pa->coarse, cprefix));
  PetscCall(KSPSetType(pa->coarse, KSPPREONLY));
  PetscCall(KSPGetPC(pa->coarse, &cpc));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)pc), &size));
  PetscCall(PCSetType(cpc, size > 1 ? PCREDUNDANT : PCLU));
  PetscCall(PCPatchAMGMatGetAIJ(A, &Ac)); /* a factorization needs a real matrix */
  PetscCall(PCPatchAMGCoarseOperator(pc, Ac, &Aop)); /* Ac, or Ac pinned where it is singular (pasingular.c) */
  PetscCall(MatDestroy(&Ac));
  PetscCall(KSPSetOperators(pa->coarse, Aop, Aop));
  PetscCall(MatDestroy(&Aop));
  PetscCall(KSPSetFromOptions(pa->coarse));
  PetscCall(KSPSetUp(pa->coarse));
  PetscCall(PCPatchAMGCheckCoarseSolver(pc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The relaxations of levels [lstart, lend), G[l - lstart] their graph levels (for the patch layout;
   NULL in the geometric mode), timed into setup_time[2] */
PetscErrorCode PCPatchAMGSetUpRelaxations(PC pc, const PC_PatchAMGGraphLevel *G, PetscInt lstart, PetscInt lend)
{
  PC_PatchAMG   *pa = (PC_PatchAMG *)pc->data;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  PetscCall(PetscLogEventBegin(PATCHWORK_AMGRelaxSetUp, pc, 0, 0, 0));
  for (PetscInt l = lstart; l < lend; l++) PetscCall(PCPatchAMGSetUpRelaxation(pc, &pa->levels[l], G ? &G[l - lstart] : NULL, l));
  PetscCall(PetscLogEventEnd(PATCHWORK_AMGRelaxSetUp, pc, 0, 0, 0));
  PetscCall(PetscTime(&t1));
  pa->setup_time[2] += t1 - t0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The solver of the coarsest level, timed into setup_time[3] */
PetscErrorCode PCPatchAMGSetUpCoarse(PC pc)
{
  PC_PatchAMG   *pa = (PC_PatchAMG *)pc->data;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  PetscCall(PetscLogEventBegin(PATCHWORK_AMGCoarse, pc, 0, 0, 0));
  PetscCall(PCPatchAMGSetUpCoarseSolver(pc, pa->levels[pa->nlevels - 1].A));
  PetscCall(PetscLogEventEnd(PATCHWORK_AMGCoarse, pc, 0, 0, 0));
  PetscCall(PetscTime(&t1));
  pa->setup_time[3] = t1 - t0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The relaxation of every level but the coarsest and the coarse solver, in one go (geometric mode) */
PetscErrorCode PCPatchAMGSetUpRelaxationsAndCoarse(PC pc, const PC_PatchAMGGraphLevel *G)
{
  PC_PatchAMG *pa = (PC_PatchAMG *)pc->data;

  PetscFunctionBegin;
  pa->setup_time[2] = 0;
  PetscCall(PCPatchAMGSetUpRelaxations(pc, G, 0, pa->nlevels - 1));
  PetscCall(PCPatchAMGSetUpCoarse(pc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Optional checks (-pc_patchamg_check): symmetry, and definiteness by a few CG steps */
static PetscErrorCode CheckMatrix(PC pc, Mat A)
{
  MPI_Comm           comm = PetscObjectComm((PetscObject)A);
  Mat                B; /* A, or an assembled copy of it: MatIsSymmetric needs one */
  PetscBool          sym;
  KSP                ksp;
  PC                 none;
  Vec                b, x;
  KSPConvergedReason reason;

  PetscFunctionBegin;
  PetscCall(PCPatchAMGMatGetAIJ(A, &B));
  PetscCall(MatIsSymmetric(B, 1e-10, &sym));
  PetscCheck(sym, comm, PETSC_ERR_ARG_WRONG, "PCPATCHAMG needs a symmetric positive definite matrix: this one is not symmetric (-pc_patchamg_check)");
  PetscCall(MatCreateVecs(B, &x, &b));
  PetscCall(VecSet(b, 1.0));
  PetscCall(InnerKSPCreate(pc, comm, "pc_patchamg_check_", &ksp));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &none));
  PetscCall(PCSetType(none, PCJACOBI));
  PetscCall(KSPSetOperators(ksp, B, B));
  PetscCall(KSPSetTolerances(ksp, 1e-30, 0, PETSC_DEFAULT, 30));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&B));
  PetscCheck(reason != KSP_DIVERGED_INDEFINITE_MAT && reason != KSP_DIVERGED_INDEFINITE_PC, comm, PETSC_ERR_ARG_WRONG, "PCPATCHAMG needs a symmetric positive definite matrix: CG found a direction of negative curvature (-pc_patchamg_check)");
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCSetUp_PatchAMG(PC pc)
{
  PC_PatchAMG     *pa = (PC_PatchAMG *)pc->data;
  Mat              A  = pc->pmat;
  MPI_Comm         comm;
  PetscBool        aij;
  PetscMPIInt      size;
  PC_PatchAMGGraph H;
  PetscInt         nl, M, N, maxl = pa->max_levels > 0 ? pa->max_levels : 30;
  Vec              dinv, nullvec = NULL, z = NULL, zc = NULL;
  MatNullSpace     nsp = NULL;
  PetscLogDouble   t0, t1;
  PetscBool        kernels, mkernels, more;
  Mat              Gmat = NULL; /* the graph of the next segment's first level, when not its matrix */
  const PatchworkCSRMatrix *Adev;

  PetscFunctionBegin;
  PetscCall(PCReset_PatchAMG(pc));
  PetscCall(PetscMemzero(pa->setup_time, sizeof(pa->setup_time)));
  PetscCall(PetscObjectGetComm((PetscObject)pc, &comm));
  PetscCall(PetscObjectBaseTypeCompareAny((PetscObject)A, &aij, MATSEQAIJ, MATMPIAIJ, ""));
  PetscCall(PCPatchAMGMatGetDeviceCSR(A, &Adev)); /* a matrix over device CSR arrays (PCLOR's) */
  PetscCheck(aij || Adev, comm, PETSC_ERR_SUP, "PCPATCHAMG needs an assembled AIJ matrix (seqaij, mpiaij, aijcusparse, ...), not %s", ((PetscObject)A)->type_name);
  PetscCall(MatGetSize(A, &M, &N));
  PetscCheck(M == N, comm, PETSC_ERR_ARG_SIZ, "PCPATCHAMG needs a square matrix, got %" PetscInt_FMT " x %" PetscInt_FMT, M, N);
  PetscCallMPI(MPI_Comm_size(comm, &size));
  pa->serial = (PetscBool)(size == 1);
  PetscCall(PCPatchAMGUseProductKernels(pc, &kernels));
  PetscCall(PatchworkMatVectorsOnDevice(A, &pa->device));
  if (Adev) PetscCheck(kernels && !pa->geometric, comm, PETSC_ERR_SUP, "PCPATCHAMG on a matrix over device CSR arrays needs the product kernels (-pc_patchamg_product_kernels) and the algebraic hierarchy");
  else if (pa->device) {
    PetscBool cusparse;

    PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &cusparse, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, MATAIJCUSPARSE, ""));
    PetscCheck(cusparse, comm, PETSC_ERR_SUP, "PCPATCHAMG on device vectors needs an aijcusparse matrix, not %s", ((PetscObject)A)->type_name);
    PetscCheck(sizeof(PetscInt) == sizeof(int), comm, PETSC_ERR_SUP, "PCPATCHAMG on the device needs a PETSc with 32-bit indices");
  }
  PetscCall(MatCreateVecs(A, NULL, &dinv));
  PetscCall(CheckDiagonal(A, dinv, "matrix"));
  PetscCall(VecDestroy(&dinv));
  if (pa->check) PetscCall(CheckMatrix(pc, A));
  /* a null space (MatSetNullSpace(): singular problems) is what the levels must carry exactly, so it
     takes the place of a near null space */
  PetscCall(PCPatchAMGSetUpNullSpace(pc, A, &nullvec));
  if (!pa->nullsp) PetscCall(MatGetNearNullSpace(A, &nsp));
  if (nsp) {
    PetscBool  has_const;
    PetscInt   nvec;
    const Vec *vecs;

    PetscCall(MatNullSpaceGetVecs(nsp, &has_const, &nvec, &vecs));
    PetscCheck(nvec + (has_const ? 1 : 0) == 1, comm, PETSC_ERR_SUP, "PCPATCHAMG supports a near null space of one vector (scalar problems); this one has %" PetscInt_FMT, nvec + (has_const ? 1 : 0));
    if (nvec) {
      nullvec = vecs[0];
      PetscCall(PetscObjectReference((PetscObject)nullvec));
    }
  }

  if (pa->geometric) { /* levels from the DM's refinement hierarchy (pageometric.c) */
    PetscCall(VecDestroy(&nullvec));
    PetscCall(PCPatchAMGSetUpGeometric(pc));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  /* The levels, one segment at a time: 1. graphs, aggregates, patches, positions from the matrix of
     the segment's first level (rank-local; on the device when the matrix is); 2. prolongators and
     Galerkin operators; 3. relaxations. A segment ends at the coarsest level, or at a level with few
     rows per rank, which its prolongator's column layout gathers onto fewer ranks, and the next
     segment starts from there. Every level keeps its own row order (level 0 the user's, level l+1
     its aggregates'): the relaxation reaches the patches through the positions of the patchSPM
     layout, so no matrix is permuted. */
  PetscCall(PCPatchAMGAggregationDefaults(pc, A));
  PetscCall(PetscCalloc1(maxl, &pa->levels));
  PetscCall(PetscObjectReference((PetscObject)A));
  pa->levels[0].A = A;
  z               = nullvec; /* the near-null-space vector of level l (NULL: constants) */
  for (PetscInt first = 0;;) {
    PetscCall(PetscTime(&t0));
    PetscCall(PetscLogEventBegin(PATCHWORK_AMGGraph, pc, 0, 0, 0));
    PetscCall(PCPatchAMGGraphBuild(pc, Gmat ? Gmat : pa->levels[first].A, first, &H));
    PetscCall(MatDestroy(&Gmat));
    PetscCall(PetscFree(pa->gathered_coords));
    PetscCall(PetscLogEventEnd(PATCHWORK_AMGGraph, pc, 0, 0, 0));
    PetscCall(PetscTime(&t1));
    pa->setup_time[0] += t1 - t0;
    nl          = first + H.nl;
    pa->nlevels = nl;

    PetscCall(PetscTime(&t0));
    for (PetscInt l = first; l < nl; l++) {
      PC_PatchAMGLevel      *L = &pa->levels[l];
      PC_PatchAMGGraphLevel *G = &H.L[l - first];
      Mat                    Pt;
      PetscInt               ncol;

      if (!L->x) { /* a segment's first level was the last of the one before */
        MatInfo                   info;
        const PatchworkCSRMatrix *M;

        PetscCall(PCPatchAMGLevelSetUpVecs(L));
        PetscCall(PCPatchAMGMatGetDeviceCSR(L->A, &M));
        if (M) L->nnz = M->nnz;
        else {
          PetscCall(MatGetInfo(L->A, MAT_GLOBAL_SUM, &info));
          L->nnz = info.nz_used;
        }
        if (l > 0) PetscCall(CheckDiagonal(L->A, L->y, "Galerkin operator"));
      }
      if (l == nl - 1) break;
      L->naggs = G->naggs;
      {
        int *w;

        PetscCall(PCPatchAMGGraphToHost(H.dev, H.L[l - first + 1].g.weight, H.L[l - first + 1].g.n, &w));
        L->agg_min = PETSC_MAX_INT;
        L->agg_max = 0;
        for (int a = 0; a < H.L[l - first + 1].g.n; a++) {
          L->agg_min = PetscMin(L->agg_min, w[a]);
          L->agg_max = PetscMax(L->agg_max, w[a]);
        }
        PetscCall(PetscFree(w));
      }
      /* the next level's local rows: this rank's aggregates, or its share after the gathering */
      ncol = L->naggs;
      if (H.redistribute && l == nl - 2) {
        PetscCall(GatheredSize(comm, L->naggs, pa->redistribute, &ncol));
        PetscCall(PCPatchAMGGatherCoordinates(pc, &H, l - first + 1, ncol));
      }
      /* several ranks: the kernels on each rank's block where the next level's rows stay on their rank
         (pampi.c); decided together, since the products are collective */
      {
        PetscMPIInt use;

        PetscCall(PCPatchAMGUseProductKernelsMPI(pc, L->A, L->naggs, ncol, &mkernels));
        use = mkernels && !(H.redistribute && l == nl - 2);
        PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, &use, 1, MPI_INT, MPI_LAND, comm));
        mkernels = use ? PETSC_TRUE : PETSC_FALSE;
      }
      PetscCall(PetscLogEventBegin(PATCHWORK_AMGProlong, pc, 0, 0, 0));
      PetscCall(VecDuplicate(L->x, &dinv));
      PetscCall(MatGetDiagonal(L->A, dinv));
      PetscCall(VecReciprocal(dinv));
      PetscCall(SpectralRadiusDinvA(L->A, dinv, &L->rho_dinv));
      if (!kernels && !mkernels) {
        PetscCall(TentativeProlongator(L->A, &H, l - first, ncol, z, &Pt, &zc));
        /* the next segment's graph: the pattern of P~^T A P~ is the induced graph (as one rank would
           have it, with the edges between the merged ranks); the sparser one, not P^T A P's */
        if (H.redistribute && l == nl - 2) PetscCall(PCPatchAMGMatProduct(pc, MATPRODUCT_PtAP, L->A, Pt, 2.0, &Gmat));
        PetscCall(SmoothProlongator(pc, L->A, dinv, Pt, &L->P, L->rho_dinv));
        PetscCall(MatDestroy(&Pt));
      }
      PetscCall(PetscLogEventEnd(PATCHWORK_AMGProlong, pc, 0, 0, 0));
      if (kernels || mkernels) { /* both products in pagalerkin.c (one rank, one segment) or pampi.c, which log them under the same events */
        PetscCall(VecScale(dinv, pa->prolong_omega / L->rho_dinv));
        if (kernels) PetscCall(PCPatchAMGProductKernels(pc, &H, l - first, z, dinv, L, &pa->levels[l + 1], &zc));
        else PetscCall(PCPatchAMGProductKernelsMPI(pc, &H, l - first, z, dinv, L, &pa->levels[l + 1], &zc));
      } else {
        PetscCall(PetscLogEventBegin(PATCHWORK_AMGGalerkin, pc, 0, 0, 0));
        PetscCall(PCPatchAMGMatProduct(pc, MATPRODUCT_PtAP, L->A, L->P, 2.0, &pa->levels[l + 1].A));
        PetscCall(PetscLogEventEnd(PATCHWORK_AMGGalerkin, pc, 0, 0, 0));
      }
      PetscCall(VecDestroy(&dinv));
      PetscCall(VecDestroy(&z));
      z  = zc;
      zc = NULL;
    }
    PetscCall(PetscTime(&t1));
    pa->setup_time[1] += t1 - t0;
    more = H.redistribute;
    PetscCall(PCPatchAMGSetUpRelaxations(pc, H.L, first, nl - 1));
    PetscCall(PCPatchAMGGraphDestroy(&H));
    if (!more) break;
    first = nl - 1;
  }
  pa->coarse_z = z; /* the coarsest level's image of the null space, for its coarse solve */
  PetscCall(PCPatchAMGSetUpCoarse(pc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCReset_PatchAMG(PC pc)
{
  PC_PatchAMG *pa = (PC_PatchAMG *)pc->data;

  PetscFunctionBegin;
  PetscCall(PetscFree(pa->gathered_coords)); /* left by a setup that failed */
  for (PetscInt l = 0; l < pa->nlevels && pa->levels; l++) {
    PC_PatchAMGLevel *L = &pa->levels[l];

    PetscCall(MatDestroy(&L->A));
    PetscCall(MatDestroy(&L->P));
    PetscCall(MatDestroy(&L->R));
    PetscCall(VecDestroy(&L->b));
    PetscCall(VecDestroy(&L->x));
    PetscCall(VecDestroy(&L->r));
    PetscCall(VecDestroy(&L->y));
    PetscCall(VecDestroy(&L->dscale));
    PetscCall(KSPDestroy(&L->cheby));
    PetscCall(MatDestroy(&L->spai));
    PetscCall(PCPatchAMGSPMDestroy(&L->spm));
  }
  PetscCall(KSPDestroy(&pa->coarse));
  PetscCall(MatNullSpaceDestroy(&pa->nullsp));
  PetscCall(MatNullSpaceDestroy(&pa->coarse_nullsp));
  PetscCall(VecDestroy(&pa->coarse_z));
  PetscCall(VecDestroy(&pa->coarse_mask));
  /* the arrays under the matrices the product kernels made, now that nothing holds those */
  for (PetscInt l = 0; l < pa->nlevels && pa->levels; l++) {
    PatchworkCSRMatrixFree(&pa->levels[l].P_arrays);
    PatchworkCSRMatrixFree(&pa->levels[l].A_arrays);
  }
  PetscCall(PetscFree(pa->levels));
  pa->nlevels = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}
