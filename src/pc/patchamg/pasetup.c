/* PCPATCHAMG setup (Fu et al. 2014, section 5.1.1 and 5.2.1): the graph hierarchy (aggregates by
   k-MIS, the induced graph, patches of aggregates), the orderings that make every patch and every
   aggregate contiguous, smoothed prolongators, Galerkin operators and the patchSPM layouts. */
#include "paimpl.h"

/* One level of the graph hierarchy; all rank-local */
typedef struct {
  PatchworkGraph g;         /* the level's graph (level 0: the pattern of the matrix's diagonal block) */
  int           *agg;       /* vertex -> aggregate (= vertex of the next level); NULL on the coarsest */
  int            naggs;
  int           *patch;     /* aggregate -> patch */
  int            npatch;
  int           *order;     /* position -> vertex: patches contiguous, aggregates contiguous inside them */
  int           *pos;       /* vertex -> position */
  int           *patch_ptr; /* [npatch+1] positions */
} GraphLevel;

static PetscErrorCode GraphLevelDestroy(GraphLevel *G)
{
  PetscFunctionBegin;
  PatchworkGraphFree(&G->g);
  PetscCall(PetscFree(G->agg));
  PetscCall(PetscFree(G->patch));
  PetscCall(PetscFree2(G->order, G->pos));
  PetscCall(PetscFree(G->patch_ptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The graph of the rank-local diagonal block of A, copied into malloc'd int arrays (the kernel ABI's
   types, freed by PatchworkGraphFree); checks that every row has its diagonal */
static PetscErrorCode GraphFromMatrix(Mat A, PatchworkGraph *g)
{
  Mat             Ad;
  PetscInt        n;
  const PetscInt *ia, *ja;
  PetscBool       done, mpi;
  int            *ptr, *adj;

  PetscFunctionBegin;
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)A, MATMPIAIJ, &mpi));
  if (mpi) PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, NULL, NULL));
  else Ad = A;
  PetscCall(MatGetRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "PCPATCHAMG could not read the matrix's rows");
  PetscCheck(ia[n] < PETSC_MAX_INT && (size_t)ia[n] < (size_t)INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "PCPATCHAMG: more than 2^31 nonzeros in one rank's diagonal block");
  ptr = (int *)malloc(((size_t)n + 1) * sizeof(int));
  adj = (int *)malloc(((size_t)ia[n] + 1) * sizeof(int));
  PetscCheck(ptr && adj, PETSC_COMM_SELF, PETSC_ERR_MEM, "PCPATCHAMG: out of memory for the matrix graph");
  for (PetscInt i = 0; i <= n; i++) ptr[i] = (int)ia[i];
  for (PetscInt j = 0; j < ia[n]; j++) adj[j] = (int)ja[j];
  g->n = (int)n; /* before the restore, which may reset n */
  PetscCall(MatRestoreRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  g->ptr    = ptr;
  g->adj    = adj;
  g->weight = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

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

/* Largest eigenvalue of D^{-1} A by power iteration (deterministic start), for the prolongator smoothing */
static PetscErrorCode SpectralRadiusDinvA(Mat A, Vec dinv, PetscReal *rho)
{
  Vec         v, w;
  PetscRandom rnd;
  PetscReal   nrm = 1, lam = 0;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(dinv, &v));
  PetscCall(VecDuplicate(dinv, &w));
  PetscCall(PetscRandomCreate(PetscObjectComm((PetscObject)A), &rnd));
  PetscCall(PetscRandomSetSeed(rnd, 0x5eed));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(VecSetRandom(v, rnd));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(VecNormalize(v, NULL));
  for (PetscInt it = 0; it < 20; it++) {
    PetscCall(MatMult(A, v, w));
    PetscCall(VecPointwiseMult(w, w, dinv));
    PetscCall(VecDot(w, v, &lam)); /* Rayleigh-like quotient in the Euclidean product */
    PetscCall(VecNorm(w, NORM_2, &nrm));
    if (nrm == 0) break;
    PetscCall(VecScale(w, 1.0 / nrm));
    PetscCall(VecSwap(v, w));
  }
  /* the norm converges from below to rho for the D^{-1/2}-similar symmetric matrix; a margin keeps
     the smoothing from amplifying the top mode */
  *rho = 1.05 * PetscMax(nrm, PetscRealPart(lam));
  PetscCall(VecDestroy(&v));
  PetscCall(VecDestroy(&w));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The graph hierarchy: aggregate, induce, partition the induced graph into patches, until the
   coarse size (global) or the level limit is reached or coarsening stalls */
static PetscErrorCode BuildGraphHierarchy(PC pc, PatchworkGraph g0, GraphLevel **Gout, PetscInt *nlevels)
{
  PC_PatchAMG *pa = (PC_PatchAMG *)pc->data;
  MPI_Comm     comm;
  GraphLevel  *G;
  PetscInt     nl = 0, maxl = pa->max_levels > 0 ? pa->max_levels : 30;

  PetscFunctionBegin;
  PetscCall(PetscObjectGetComm((PetscObject)pc, &comm));
  PetscCall(PetscCalloc1(maxl, &G));
  G[0].g = g0;
  for (;;) {
    GraphLevel    *L = &G[nl++];
    PatchworkGraph unweighted = L->g;
    PetscInt       n = L->g.n, N, Nagg, nagg;
    int            min_patch = (int)PetscMax(1, pa->patch_size / 4);

    PetscCallMPI(MPIU_Allreduce(&n, &N, 1, MPIU_INT, MPI_SUM, comm));
    if (nl == maxl || N <= pa->coarse_size) break;
    /* aggregates of the level's vertices: sizes count vertices, not the weights of finer levels */
    unweighted.weight = NULL;
    PetscCall(PetscMalloc1(PetscMax(n, 1), &L->agg));
    PetscCheck(!PatchworkGraphPartition(&unweighted, (int)pa->k, (unsigned)(pa->seed + nl), (int)pa->min_agg, L->agg, &L->naggs), PETSC_COMM_SELF, PETSC_ERR_LIB, "PCPATCHAMG: aggregation of level %" PetscInt_FMT " failed", nl - 1);
    nagg = L->naggs;
    PetscCallMPI(MPIU_Allreduce(&nagg, &Nagg, 1, MPIU_INT, MPI_SUM, comm));
    if (Nagg == 0 || (PetscReal)Nagg > 0.9 * (PetscReal)N) { /* coarsening stalled: this is the coarsest level */
      PetscCall(PetscFree(L->agg));
      L->naggs = 0;
      break;
    }
    /* the next level's graph (weights: rows of this level per aggregate), then the patches of this
       level: a partition of that graph (k = 1), capped in weight, so patches never cut aggregates */
    PetscCheck(!PatchworkGraphInduce(&unweighted, L->agg, L->naggs, &G[nl].g), PETSC_COMM_SELF, PETSC_ERR_MEM, "PCPATCHAMG: the induced graph of level %" PetscInt_FMT " failed", nl - 1);
    PetscCall(PetscMalloc1(PetscMax(L->naggs, 1), &L->patch));
    PetscCheck(!PatchworkGraphPartition(&G[nl].g, 1, (unsigned)(pa->seed + 1000 + nl), min_patch, L->patch, &L->npatch), PETSC_COMM_SELF, PETSC_ERR_LIB, "PCPATCHAMG: patch partition of level %" PetscInt_FMT " failed", nl - 1);
    PetscCheck(!PatchworkGraphBalance(&G[nl].g, L->npatch, (int)pa->patch_size, 50, L->patch), PETSC_COMM_SELF, PETSC_ERR_LIB, "PCPATCHAMG: patch balancing of level %" PetscInt_FMT " failed", nl - 1);
  }
  *Gout    = G;
  *nlevels = nl;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Positions: aggregates ordered by patch, vertices by aggregate; the coarsest level keeps its order */
static PetscErrorCode BuildOrder(GraphLevel *L)
{
  int  n = L->g.n;
  int *aorder, *pstart, *apos, *key, *astart;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(PetscMax(n, 1), &L->order, PetscMax(n, 1), &L->pos));
  if (!L->agg) {
    for (int i = 0; i < n; i++) L->order[i] = L->pos[i] = i;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscMalloc5(L->naggs, &aorder, L->npatch + 1, &pstart, L->naggs, &apos, PetscMax(n, 1), &key, L->naggs + 1, &astart));
  PetscCheck(!PatchworkGraphOrder(L->naggs, L->patch, L->npatch, aorder, pstart), PETSC_COMM_SELF, PETSC_ERR_PLIB, "ordering aggregates by patch failed");
  for (int i = 0; i < L->naggs; i++) apos[aorder[i]] = i;
  for (int v = 0; v < n; v++) key[v] = apos[L->agg[v]];
  PetscCheck(!PatchworkGraphOrder(n, key, L->naggs, L->order, astart), PETSC_COMM_SELF, PETSC_ERR_PLIB, "ordering vertices by aggregate failed");
  for (int i = 0; i < n; i++) L->pos[L->order[i]] = i;
  PetscCall(PetscMalloc1(L->npatch + 1, &L->patch_ptr));
  for (int p = 0; p <= L->npatch; p++) L->patch_ptr[p] = astart[pstart[p]];
  PetscCall(PetscFree5(aorder, pstart, apos, key, astart));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The tentative prolongator of level l: row = position at level l, column = the aggregate's position
   at level l+1 (global), value = the near-null-space vector restricted to the aggregate, normalized
   there (constants by default) */
static PetscErrorCode TentativeProlongator(Mat A, GraphLevel *L, GraphLevel *C, Vec nullvec, Mat *Pt)
{
  PetscInt           rstart, cstart, nc = C->g.n;
  PetscReal         *norm2;
  const PetscScalar *z = NULL;
  MatType            type;
  PetscInt          *dnnz, *onnz;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(A, &rstart, NULL));
  PetscCallMPI(MPI_Scan(&nc, &cstart, 1, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)A)));
  cstart -= nc;
  PetscCall(PetscCalloc1(PetscMax(nc, 1), &norm2));
  if (nullvec) PetscCall(VecGetArrayRead(nullvec, &z)); /* in level-0 positions, i.e. permuted already */
  for (int i = 0; i < L->g.n; i++) {
    PetscReal zi = z ? PetscRealPart(z[i]) : 1.0;

    norm2[L->agg[L->order[i]]] += zi * zi;
  }
  PetscCall(MatCreate(PetscObjectComm((PetscObject)A), Pt));
  PetscCall(MatSetSizes(*Pt, L->g.n, nc, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatGetType(A, &type));
  PetscCall(MatSetType(*Pt, type));
  PetscCall(PetscMalloc2(PetscMax(L->g.n, 1), &dnnz, PetscMax(L->g.n, 1), &onnz));
  for (int i = 0; i < L->g.n; i++) {
    dnnz[i] = 1;
    onnz[i] = 0;
  }
  PetscCall(MatXAIJSetPreallocation(*Pt, 1, dnnz, onnz, NULL, NULL));
  PetscCall(PetscFree2(dnnz, onnz));
  for (int i = 0; i < L->g.n; i++) {
    int         a   = L->agg[L->order[i]];
    PetscInt    row = rstart + i, col = cstart + C->pos[a];
    PetscReal   zi  = z ? PetscRealPart(z[i]) : 1.0;
    PetscScalar v   = norm2[a] > 0 ? zi / PetscSqrtReal(norm2[a]) : 0.0;

    PetscCall(MatSetValues(*Pt, 1, &row, 1, &col, &v, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*Pt, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*Pt, MAT_FINAL_ASSEMBLY));
  if (nullvec) PetscCall(VecRestoreArrayRead(nullvec, &z));
  PetscCall(PetscFree(norm2));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* P = (I - w/rho D^{-1} A) P~ (equation 6) */
static PetscErrorCode SmoothProlongator(PC_PatchAMG *pa, Mat A, Vec dinv, Mat Pt, Mat *P, PetscReal *rho_out)
{
  PetscReal rho = 1;

  PetscFunctionBegin;
  PetscCall(SpectralRadiusDinvA(A, dinv, &rho));
  *rho_out = rho;
  PetscCall(MatMatMult(A, Pt, MAT_INITIAL_MATRIX, 2.0, P));
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

/* The damping of the patch relaxation on level L. The inner sweeps are damped by
   inner_omega * 2/rho(D^-1 A): the eigenvalues of a patch block's D^-1 A_p lie below rho(D^-1 A), so
   every sweep polynomial stays positive and the relaxation symmetric positive definite, whatever the
   matrix (heterogeneous coefficients, obtuse tetrahedra). The outer update is damped by
   min(1, 1.5/lambda_max(M^-1 A)) unless -pc_patchamg_omega is given, with lambda_max estimated by
   power iteration of the relaxation itself: keeps the V-cycle positive definite (CG needs it). */
static PetscErrorCode PatchDamping(PC_PatchAMG *pa, PC_PatchAMGLevel *L)
{
  PetscRandom rnd;
  PetscReal   nrm = 1, lam = 0;

  PetscFunctionBegin;
  L->spm.host.inner_omega = L->spm.dev.inner_omega = pa->inner_omega * 2.0 / L->rho_dinv;
  L->spm.host.omega = L->spm.dev.omega = 1.0;
  PetscCall(PetscRandomCreate(PetscObjectComm((PetscObject)L->A), &rnd));
  PetscCall(PetscRandomSetSeed(rnd, 0x5eed + 1));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(VecSetRandom(L->x, rnd));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(VecNormalize(L->x, NULL));
  for (PetscInt it = 0; it < 12; it++) {
    PetscCall(MatMult(L->A, L->x, L->r));
    PetscCall(PCPatchAMGSPMRelax(pa, &L->spm, L->r, L->y, NULL, PETSC_TRUE));
    PetscCall(VecNorm(L->y, NORM_2, &nrm));
    if (nrm == 0) break;
    lam = nrm;
    PetscCall(VecScale(L->y, 1.0 / nrm));
    PetscCall(VecSwap(L->x, L->y));
  }
  L->lambda_relax = 1.1 * lam; /* power iteration approaches from below */
  L->spm.host.omega = L->spm.dev.omega = pa->omega > 0 ? pa->omega : PetscMin(1.0, 1.5 / L->lambda_relax);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SetUpRelaxation(PC pc, PC_PatchAMGLevel *L, const int patch_ptr[], PetscInt npatch, PetscInt l)
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
    PetscCall(PCPatchAMGSPMCreate(pa, L->A, patch_ptr, npatch, &L->spm));
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
  default:
    PetscCall(VecDuplicate(L->x, &L->dscale));
    PetscCall(PointScaling(pa, L->A, L->dscale));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SetUpCoarseSolver(PC pc, Mat A)
{
  PC_PatchAMG *pa = (PC_PatchAMG *)pc->data;
  PC           cpc;
  const char  *prefix;
  char         cprefix[256];
  PetscMPIInt  size;

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
  PetscCall(KSPSetOperators(pa->coarse, A, A));
  PetscCall(KSPSetFromOptions(pa->coarse));
  PetscCall(KSPSetUp(pa->coarse));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Optional checks (-pc_patchamg_check): symmetry, and definiteness by a few CG steps */
static PetscErrorCode CheckMatrix(Mat A)
{
  PetscBool          sym;
  KSP                ksp;
  PC                 none;
  Vec                b, x;
  KSPConvergedReason reason;

  PetscFunctionBegin;
  PetscCall(MatIsSymmetric(A, 1e-10, &sym));
  PetscCheck(sym, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "PCPATCHAMG needs a symmetric positive definite matrix: this one is not symmetric (-pc_patchamg_check)");
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecSet(b, 1.0));
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)A), &ksp));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &none));
  PetscCall(PCSetType(none, PCJACOBI));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetTolerances(ksp, 1e-30, 0, PETSC_DEFAULT, 30));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCheck(reason != KSP_DIVERGED_INDEFINITE_MAT && reason != KSP_DIVERGED_INDEFINITE_PC, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "PCPATCHAMG needs a symmetric positive definite matrix: CG found a direction of negative curvature (-pc_patchamg_check)");
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCSetUp_PatchAMG(PC pc)
{
  PC_PatchAMG   *pa = (PC_PatchAMG *)pc->data;
  Mat            A  = pc->pmat;
  MPI_Comm       comm;
  PetscBool      aij;
  PetscMPIInt    size;
  PatchworkGraph g0;
  GraphLevel    *G;
  PetscInt       nl, rstart, *idx, M, N;
  Vec            u, dinv, nullvec = NULL;
  MatNullSpace   nsp;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(PCReset_PatchAMG(pc));
  PetscCall(PetscObjectGetComm((PetscObject)pc, &comm));
  PetscCall(PetscObjectBaseTypeCompareAny((PetscObject)A, &aij, MATSEQAIJ, MATMPIAIJ, ""));
  PetscCheck(aij, comm, PETSC_ERR_SUP, "PCPATCHAMG needs an assembled AIJ matrix (seqaij, mpiaij, aijcusparse, ...), not %s", ((PetscObject)A)->type_name);
  PetscCall(MatGetSize(A, &M, &N));
  PetscCheck(M == N, comm, PETSC_ERR_ARG_SIZ, "PCPATCHAMG needs a square matrix, got %" PetscInt_FMT " x %" PetscInt_FMT, M, N);
  PetscCallMPI(MPI_Comm_size(comm, &size));
  pa->serial = (PetscBool)(size == 1);
  PetscCall(PatchworkMatVectorsOnDevice(A, &pa->device));
  PetscCall(MatCreateVecs(A, &u, &dinv));
  PetscCall(CheckDiagonal(A, dinv, "matrix"));
  if (pa->check) PetscCall(CheckMatrix(A));
  PetscCall(MatGetNearNullSpace(A, &nsp));
  if (nsp) {
    PetscBool       has_const;
    PetscInt        nvec;
    const Vec      *vecs;

    PetscCall(MatNullSpaceGetVecs(nsp, &has_const, &nvec, &vecs));
    PetscCheck(nvec + (has_const ? 1 : 0) == 1, comm, PETSC_ERR_SUP, "PCPATCHAMG supports a near null space of one vector (scalar problems); this one has %" PetscInt_FMT, nvec + (has_const ? 1 : 0));
    if (nvec) nullvec = vecs[0];
  }

  /* 1. graphs, aggregates, patches, orderings (host, rank-local) */
  PetscCall(PetscTime(&t0));
  PetscCall(PetscLogEventBegin(PATCHWORK_AMGGraph, pc, 0, 0, 0));
  PetscCall(GraphFromMatrix(A, &g0));
  PetscCall(BuildGraphHierarchy(pc, g0, &G, &nl));
  for (PetscInt l = 0; l < nl; l++) PetscCall(BuildOrder(&G[l]));
  PetscCall(PetscLogEventEnd(PATCHWORK_AMGGraph, pc, 0, 0, 0));
  PetscCall(PetscTime(&t1));
  pa->setup_time[0] = t1 - t0;

  /* 2. level 0: the user's matrix with its rows in patch order */
  pa->nlevels = nl;
  PetscCall(PetscCalloc1(nl, &pa->levels));
  PetscCall(MatGetOwnershipRange(A, &rstart, NULL));
  PetscCall(PetscMalloc1(PetscMax(G[0].g.n, 1), &idx));
  for (int i = 0; i < G[0].g.n; i++) idx[i] = rstart + G[0].order[i];
  PetscCall(ISCreateGeneral(comm, G[0].g.n, idx, PETSC_OWN_POINTER, &pa->perm));
  PetscCall(MatCreateSubMatrix(A, pa->perm, pa->perm, MAT_INITIAL_MATRIX, &pa->levels[0].A));
  PetscCall(MatCreateVecs(pa->levels[0].A, &pa->levels[0].x, NULL));
  PetscCall(VecScatterCreate(u, pa->perm, pa->levels[0].x, NULL, &pa->to_patch));
  if (nullvec) { /* into patch order */
    Vec z;

    PetscCall(VecDuplicate(pa->levels[0].x, &z));
    PetscCall(VecScatterBegin(pa->to_patch, nullvec, z, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(pa->to_patch, nullvec, z, INSERT_VALUES, SCATTER_FORWARD));
    nullvec = z;
  }
  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&dinv));

  /* 3. prolongators and Galerkin operators, level by level */
  PetscCall(PetscTime(&t0));
  for (PetscInt l = 0; l < nl; l++) {
    PC_PatchAMGLevel *L = &pa->levels[l];
    Mat               Pt;

    if (!L->x) PetscCall(MatCreateVecs(L->A, &L->x, NULL));
    PetscCall(VecDuplicate(L->x, &L->b));
    PetscCall(VecDuplicate(L->x, &L->r));
    PetscCall(VecDuplicate(L->x, &L->y));
    PetscCall(MatGetSize(L->A, &L->N, NULL));
    PetscCall(MatGetLocalSize(L->A, &L->n, NULL));
    {
      MatInfo info;

      PetscCall(MatGetInfo(L->A, MAT_GLOBAL_SUM, &info));
      L->nnz = info.nz_used;
    }
    if (l > 0) PetscCall(CheckDiagonal(L->A, L->y, "Galerkin operator"));
    if (l == nl - 1) break;
    L->naggs   = G[l].naggs;
    L->agg_min = PETSC_MAX_INT;
    L->agg_max = 0;
    {
      PatchworkGraph *gc = &G[l + 1].g;

      for (int a = 0; a < gc->n; a++) {
        L->agg_min = PetscMin(L->agg_min, gc->weight[a]);
        L->agg_max = PetscMax(L->agg_max, gc->weight[a]);
      }
    }
    PetscCall(PetscLogEventBegin(PATCHWORK_AMGProlong, pc, 0, 0, 0));
    PetscCall(TentativeProlongator(L->A, &G[l], &G[l + 1], l == 0 ? nullvec : NULL, &Pt));
    PetscCall(VecDuplicate(L->x, &dinv));
    PetscCall(MatGetDiagonal(L->A, dinv));
    PetscCall(VecReciprocal(dinv));
    PetscCall(SmoothProlongator(pa, L->A, dinv, Pt, &L->P, &L->rho_dinv));
    PetscCall(VecDestroy(&dinv));
    PetscCall(MatDestroy(&Pt));
    PetscCall(PetscLogEventEnd(PATCHWORK_AMGProlong, pc, 0, 0, 0));
    PetscCall(PetscLogEventBegin(PATCHWORK_AMGGalerkin, pc, 0, 0, 0));
    PetscCall(MatPtAP(L->A, L->P, MAT_INITIAL_MATRIX, 2.0, &pa->levels[l + 1].A));
    PetscCall(PetscLogEventEnd(PATCHWORK_AMGGalerkin, pc, 0, 0, 0));
  }
  PetscCall(VecDestroy(&nullvec));
  PetscCall(PetscTime(&t1));
  pa->setup_time[1] = t1 - t0;

  /* 4. relaxation on every level but the coarsest, the coarse solver */
  PetscCall(PetscTime(&t0));
  PetscCall(PetscLogEventBegin(PATCHWORK_AMGRelaxSetUp, pc, 0, 0, 0));
  for (PetscInt l = 0; l < nl - 1; l++) PetscCall(SetUpRelaxation(pc, &pa->levels[l], G[l].patch_ptr, G[l].npatch, l));
  PetscCall(PetscLogEventEnd(PATCHWORK_AMGRelaxSetUp, pc, 0, 0, 0));
  PetscCall(PetscTime(&t1));
  pa->setup_time[2] = t1 - t0;
  PetscCall(PetscTime(&t0));
  PetscCall(PetscLogEventBegin(PATCHWORK_AMGCoarse, pc, 0, 0, 0));
  PetscCall(SetUpCoarseSolver(pc, pa->levels[nl - 1].A));
  PetscCall(PetscLogEventEnd(PATCHWORK_AMGCoarse, pc, 0, 0, 0));
  PetscCall(PetscTime(&t1));
  pa->setup_time[3] = t1 - t0;

  for (PetscInt l = 0; l < nl; l++) PetscCall(GraphLevelDestroy(&G[l]));
  PetscCall(PetscFree(G));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PCReset_PatchAMG(PC pc)
{
  PC_PatchAMG *pa = (PC_PatchAMG *)pc->data;

  PetscFunctionBegin;
  for (PetscInt l = 0; l < pa->nlevels && pa->levels; l++) {
    PC_PatchAMGLevel *L = &pa->levels[l];

    PetscCall(MatDestroy(&L->A));
    PetscCall(MatDestroy(&L->P));
    PetscCall(VecDestroy(&L->b));
    PetscCall(VecDestroy(&L->x));
    PetscCall(VecDestroy(&L->r));
    PetscCall(VecDestroy(&L->y));
    PetscCall(VecDestroy(&L->dscale));
    PetscCall(KSPDestroy(&L->cheby));
    PetscCall(PCPatchAMGSPMDestroy(&L->spm, pa->device));
  }
  PetscCall(PetscFree(pa->levels));
  pa->nlevels = 0;
  PetscCall(ISDestroy(&pa->perm));
  PetscCall(VecScatterDestroy(&pa->to_patch));
  PetscCall(KSPDestroy(&pa->coarse));
  PetscFunctionReturn(PETSC_SUCCESS);
}
