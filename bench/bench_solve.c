static const char help[] = "Time to solution of the Q_k Poisson problem -div(grad u) = f on the unit box, homogeneous Dirichlet,\n"
                           "exact solution u = prod_d sin(pi x_d), b = M f (Cui et al. 2024, section 4.2 and table 7), to a\n"
                           "relative residual reduction ||b - A u|| <= rtol ||b||, with PCVERTEXPATCH in single and double\n"
                           "precision beside the PETSc solvers a user would pick instead.\n"
                           "  -dim <3>               spatial dimension, 2 or 3\n"
                           "  -degrees <1,3,7>       polynomial degrees k\n"
                           "  -cells <n1,n2,...>     cells per direction, one per degree (table 7: -degrees 1,3,7 -cells 512,256,128)\n"
                           "  -dofs <1e7>            without -cells: target DoF counts, each run for every degree; cells per\n"
                           "                         direction are the nearest 2^j or 3*2^j (>= 4) so that the grid coarsens deeply\n"
                           "  -solvers <vp-single,vp-double,mg-cheb,gamg>  solvers to run, in order; also cg-jacobi:\n"
                           "     vp-single  FGMRES(restart), right preconditioned, PCVERTEXPATCH with a single-precision V-cycle\n"
                           "     vp-double  the same with a double-precision V-cycle\n"
                           "     mg-cheb    CG, PCMG on the same matrix-free hierarchy, Chebyshev/Jacobi smoothing\n"
                           "     gamg       CG, PCGAMG on the assembled AIJ matrix (AIJCUSPARSE with CUDA vectors; one rank)\n"
                           "     cg-jacobi  CG, PCJACOBI on the matrix-free operator\n"
                           "     lor        CG, PCLOR on the matrix-free operator (AMG on the low-order-refined matrix)\n"
                           "  -restart <5>           FGMRES restart of vp-single and vp-double\n"
                           "  -fmg <true>            vp-*: start from one full multigrid cycle (PCVertexPatchFMG), timed with the solve\n"
                           "  -rtol <1e-9>           relative residual reduction (CG solvers measure the unpreconditioned residual too)\n"
                           "  -max_it <10000>        iteration limit\n"
                           "  -reps <2>              timed solves per run from a zero initial guess; the fastest is reported;\n"
                           "                         0: set-up only (the host work before a solve, on machines too slow to solve)\n"
                           "  -max_nnz <1e9>         gamg only when the assembled matrix has at most this many nonzeros\n"
                           "  -cells_z_factor <1>    3D: the last direction gets this many times the cells (weak scaling along z)\n"
                           "  -breakdown             vp-*: where the timed solves spend their time, per component and level (the\n"
                           "                         paper's figures 10 and 11), from Patchwork's log events; turns logging on, and\n"
                           "                         with CUDA vectors PETSc's GPU timers (each kernel synchronized: slower solves)\n"
                           "Each solver's KSP has an options prefix for tuning: -vp_ (vp-single and vp-double; the precision is\n"
                           "the solver's), -mgcheb_, -gamg_, -cgj_, -cglor_ (its AMG: -cglor_lor_pc_type ...); e.g. -gamg_pc_gamg_threshold 0.01 -vp_ksp_view.\n"
                           "-dm_vec_type cuda runs everything on the GPU; -log_view has one stage per solver. -dm_patchwork_coordinates false: the DM\n"
                           "without node coordinates (dm_s is then PETSc's DMDA alone; the solution is interpolated from the box).\n"
                           "One 'run:' line per run as it finishes, then a table. The error is ||u_h - I_h u||_M = sqrt(e^T M e),\n"
                           "e = u_h minus the nodal interpolant of u, M the matrix-free mass operator (Dirichlet rows: identity).\n";

#include "benchutil.h"

typedef enum {
  SOLVER_VP_SINGLE,
  SOLVER_VP_DOUBLE,
  SOLVER_MG_CHEB,
  SOLVER_GAMG,
  SOLVER_CG_JACOBI,
  SOLVER_LOR,
  SOLVER_COUNT
} Solver;
static const char *const SolverNames[]    = {"vp-single", "vp-double", "mg-cheb", "gamg", "cg-jacobi", "lor"};
static const char *const SolverPrefixes[] = {"vp_", "vp_", "mgcheb_", "gamg_", "cgj_", "cglor_"};

typedef struct {
  PetscInt  restart, maxit, reps;
  PetscReal rtol, maxnnz;
  PetscBool fmg, breakdown;
} Settings;

typedef struct {
  PetscInt           dim, k, cells, N, its;
  Solver             solver;
  PetscBool          skipped;
  char               note[96]; /* why skipped, or what ran differently from what was asked */
  KSPConvergedReason reason;
  PetscLogDouble     tdm, top, tasm, tsetup, tsolve, tfirst, nnz; /* DM, operator, gamg's assembly; nnz: of gamg's matrix */
  PetscLogDouble     tpcsetup; /* the PCSetUp() part of tsetup (the rest: the KSP's work vectors) */
  PetscLogDouble     tsetup2;  /* KSPSetUp again after the operator got new coefficients (the same values) */
  PetscReal          err;
} Result;

/* What a user waits for in this run: the DM (made once per grid; every solver's run counts it), the
   operator, gamg's assembly, the set-up and the first solve */
static PetscLogDouble EndToEnd(const Result *r)
{
  return r->tdm + r->top + r->tasm + r->tsetup + r->tfirst;
}

/* Device idle and all ranks here: the time between two marks is what a user waits */
static PetscErrorCode Mark(MPI_Comm comm, PetscLogDouble *t)
{
  PetscFunctionBeginUser;
  PetscCall(Sync());
  PetscCallMPI(MPI_Barrier(comm));
  PetscCall(PetscTime(t));
  PetscFunctionReturn(0);
}

/* The node positions along each direction of this rank's owned nodes: the DM's coordinates, or
   without them (-dm_patchwork_coordinates false) the Gauss-Lobatto nodes of the unit box's cells */
static PetscErrorCode OwnedPositions(DM dm, PetscInt k, PetscReal *x[3])
{
  PetscInt dim, xs[3], xm[3];
  Vec      c;

  PetscFunctionBeginUser;
  PetscCall(DMGetDimension(dm, &dim));
  PetscCall(DMDAGetCorners(dm, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
  PetscCall(DMGetCoordinates(dm, &c));
  PetscCall(PetscMalloc3(xm[0], &x[0], xm[1], &x[1], xm[2], &x[2]));
  if (c) {
    const PetscScalar *ca;

    PetscCall(VecGetArrayRead(c, &ca)); /* owned nodes, x fastest, dim coordinates interlaced */
    for (PetscInt d = 0; d < dim; d++) {
      const PetscInt stride = d == 0 ? 1 : d == 1 ? xm[0] : xm[0] * xm[1];

      for (PetscInt i = 0; i < xm[d]; i++) x[d][i] = PetscRealPart(ca[i * stride * dim + d]);
    }
    PetscCall(VecRestoreArrayRead(c, &ca));
  } else {
    PetscInt M[3];
    double   gll[16], w[16];

    PetscCall(DMDAGetInfo(dm, NULL, &M[0], &M[1], &M[2], NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    PetscCheck(!PatchworkGaussLobatto((int)k + 1, gll, w), PETSC_COMM_SELF, PETSC_ERR_LIB, "No Gauss-Lobatto rule of %" PetscInt_FMT " points", k + 1);
    for (PetscInt d = 0; d < dim; d++) {
      const PetscInt cells = (M[d] - 1) / k;

      for (PetscInt i = 0; i < xm[d]; i++) {
        const PetscInt g = xs[d] + i, e = PetscMin(g / k, cells - 1);

        x[d][i] = ((PetscReal)e + (PetscReal)gll[g - k * e]) / (PetscReal)cells;
      }
    }
  }
  for (PetscInt d = dim; d < 3; d++) x[d][0] = 0;
  PetscFunctionReturn(0);
}

/* v = scale * u (INSERT_VALUES) or v += scale * u (ADD_VALUES) at the nodes, u = prod_d sin(pi x_d).
   The grid is Cartesian, so the sines are tabulated per direction. */
static PetscErrorCode Interpolate(DM dm, PetscInt k, PetscReal scale, InsertMode mode, Vec v)
{
  PetscInt     dim, xs[3], xm[3], n = 0;
  PetscReal   *s[3];
  PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCall(DMGetDimension(dm, &dim));
  PetscCall(DMDAGetCorners(dm, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
  PetscCall(OwnedPositions(dm, k, s));
  for (PetscInt d = 0; d < 3; d++)
    for (PetscInt i = 0; i < xm[d]; i++) s[d][i] = d < dim ? PetscSinReal(PETSC_PI * s[d][i]) : 1;
  if (mode == INSERT_VALUES) PetscCall(VecGetArrayWrite(v, &a));
  else PetscCall(VecGetArray(v, &a));
  for (PetscInt l = 0; l < xm[2]; l++)
    for (PetscInt j = 0; j < xm[1]; j++)
      for (PetscInt i = 0; i < xm[0]; i++, n++) {
        const PetscReal val = scale * s[2][l] * s[1][j] * s[0][i];

        a[n] = mode == INSERT_VALUES ? val : a[n] + val;
      }
  if (mode == INSERT_VALUES) PetscCall(VecRestoreArrayWrite(v, &a));
  else PetscCall(VecRestoreArray(v, &a));
  PetscCall(PetscFree3(s[0], s[1], s[2]));
  PetscFunctionReturn(0);
}

/* The Patchwork mass operator (alpha = 1, beta = 0, Dirichlet rows as the identity); a shell, cheap to
   make, so it is made when needed instead of being held through a solve */
static PetscErrorCode CreateMass(DM dm, PetscInt k, Mat *M)
{
  PetscFunctionBeginUser;
  PetscCall(MatCreatePatchworkTensor(dm, k, M));
  PetscCall(MatPatchworkTensorSetCoefficients(*M, 1.0, 0.0));
  PetscFunctionReturn(0);
}

/* b = M f, f = dim pi^2 u at the nodes, as examples/poisson.c; work (any vector of the DM) holds f */
static PetscErrorCode FormRHS(DM dm, PetscInt k, Vec work, Vec b)
{
  PetscInt dim;
  Mat      M;

  PetscFunctionBeginUser;
  PetscCall(DMGetDimension(dm, &dim));
  PetscCall(Interpolate(dm, k, dim * PETSC_PI * PETSC_PI, INSERT_VALUES, work));
  PetscCall(CreateMass(dm, k, &M));
  PetscCall(MatMult(M, work, b));
  PetscCall(MatDestroy(&M));
  PetscFunctionReturn(0);
}

/* ||u - I_h u||_M; overwrites u with the error and work with M times it (no extra vectors) */
static PetscErrorCode ErrorM(DM dm, PetscInt k, Vec u, Vec work, PetscReal *err)
{
  Mat         M;
  PetscScalar e2;

  PetscFunctionBeginUser;
  PetscCall(Interpolate(dm, k, -1.0, ADD_VALUES, u));
  PetscCall(CreateMass(dm, k, &M));
  PetscCall(MatMult(M, u, work));
  PetscCall(MatDestroy(&M));
  PetscCall(VecDot(u, work, &e2));
  *err = PetscSqrtReal(PetscMax(PetscRealPart(e2), 0));
  PetscFunctionReturn(0);
}

/* Cells per direction for about dofs nodes: the nearest 2^j or 3*2^j from 4 up, whose hierarchy
   coarsens down to 2 or 3 cells (a multiple of 4 alone might stop after two levels) */
static PetscInt ChooseCells(PetscInt dim, PetscInt k, PetscReal dofs)
{
  const PetscReal want = (PetscPowReal(dofs, 1.0 / dim) - 1) / k;
  PetscInt        best = 4;

  for (PetscInt p = 4; p <= (1 << 20); p *= 2)
    for (PetscInt m = 0; m < 2; m++) {
      const PetscInt c = m ? 3 * p / 2 : p;

      if (c >= 4 && PetscAbsReal(c - want) < PetscAbsReal(best - want)) best = c;
    }
  return best;
}

static PetscErrorCode IsCudaVecType(DM dm, PetscBool *cuda)
{
  VecType vtype;

  PetscFunctionBeginUser;
  PetscCall(DMGetVecType(dm, &vtype));
  *cuda = (vtype && strstr(vtype, "cuda")) ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* The assembled operator for gamg, or the reason it is not made */
static PetscErrorCode AssembleForGAMG(DM dm, PetscInt dim, PetscInt k, PetscInt cells, const Settings *set, Mat *S, PetscLogDouble *tasm, PetscLogDouble *nnz, char note[], size_t len)
{
  MPI_Comm       comm = PetscObjectComm((PetscObject)dm);
  PetscMPIInt    size;
  PetscLogDouble t0, t1;
  PetscBool      cuda = PETSC_FALSE;

  PetscFunctionBeginUser;
  *S   = NULL;
  *nnz = KronNonzeros(dim, k, cells);
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (size > 1) { /* the Kronecker assembly is sequential and in the natural ordering */
    PetscCall(PetscSNPrintf(note, len, "skipped: the AIJ assembly runs on one MPI rank only"));
    PetscFunctionReturn(0);
  }
  if (*nnz > set->maxnnz) {
    PetscCall(PetscSNPrintf(note, len, "skipped: AIJ would have %.3g nonzeros > -max_nnz %.3g", (double)*nnz, (double)set->maxnnz));
    PetscFunctionReturn(0);
  }
  PetscCall(IsCudaVecType(dm, &cuda));
  PetscCall(Mark(comm, &t0));
  PetscCall(AssembleKron(dim, k, cells, S));
  if (cuda) PetscCall(MatConvert(*S, MATSEQAIJCUSPARSE, MAT_INPLACE_MATRIX, S));
  PetscCall(Mark(comm, &t1));
  *tasm = t1 - t0;
  PetscFunctionReturn(0);
}

/* Time of the event called name in stage (device time with CUDA vectors, where the kernels run); 0
   for an event never registered */
static PetscErrorCode EventTime(PetscLogStage stage, const char name[], PetscBool device, PetscLogDouble *t)
{
  PetscLogEvent      ev = -1;
  PetscEventPerfInfo info;
  PetscErrorCode     ierr;

  PetscFunctionBeginUser;
  *t = 0;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL)); /* unknown names: an error on some versions, -1 on others */
  ierr = PetscLogEventGetId(name, &ev);
  PetscCall(PetscPopErrorHandler());
  if (ierr || ev < 0) PetscFunctionReturn(0);
  PetscCall(PetscLogEventGetPerfInfo(stage, ev, &info));
  *t = info.time;
#if defined(PETSC_HAVE_CUDA)
  if (device) *t = info.GpuTime;
#else
  (void)device;
#endif
  PetscFunctionReturn(0);
}

/* -breakdown: the components of the timed vp-* solves (stage), per solve, against the mean measured
   wall time of one solve (wall): smoothing, residual and transfers per level, the coarse solve, and the rest
   (the outer Krylov method, FMG's vector work, launches and synchronization) */
static PetscErrorCode PrintBreakdown(PC pc, PetscLogStage stage, PetscInt reps, PetscBool device, PetscLogDouble wall)
{
  static const char *const parts[] = {"PWVPSmooth", "PWVPResidual", "PWVPTransfer"};
  PetscInt                 nlevels;
  PetscLogDouble           sum[3] = {0, 0, 0}, coarse, total = 0;

  PetscFunctionBeginUser;
  PetscCall(PCVertexPatchGetLevels(pc, &nlevels));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "breakdown (rank 0's %s time per solve, %" PetscInt_FMT " solves; %% of the wall time %.4f s):\n", device ? "GPU" : "CPU", reps, wall));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %-6s %12s %12s %12s\n", "level", "smooth s", "residual s", "transfer s"));
  for (PetscInt l = nlevels - 1; l >= 0; l--) {
    PetscLogDouble t[3];

    for (int i = 0; i < 3; i++) {
      char name[64];

      PetscCall(PetscSNPrintf(name, sizeof(name), "%s L%" PetscInt_FMT, parts[i], l));
      PetscCall(EventTime(stage, name, device, &t[i]));
      t[i] /= reps;
      sum[i] += t[i];
    }
    if (t[0] + t[1] + t[2] > 0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  L%-5" PetscInt_FMT " %12.5f %12.5f %12.5f\n", l, t[0], t[1], t[2]));
  }
  PetscCall(EventTime(stage, "PWVPCoarse", device, &coarse));
  coarse /= reps;
  for (int i = 0; i < 3; i++) total += sum[i];
  total += coarse;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  smoothing %.5f s (%.1f%%), residuals %.5f s (%.1f%%), transfers %.5f s (%.1f%%), coarse %.5f s (%.1f%%), rest %.5f s (%.1f%%)\n", sum[0], 100 * sum[0] / wall, sum[1], 100 * sum[1] / wall, sum[2], 100 * sum[2] / wall, coarse, 100 * coarse / wall, wall - total, 100 * (wall - total) / wall));
  PetscFunctionReturn(0);
}

/* The set-up a time-dependent or nonlinear solve repeats: the operator gets new coefficients (here the
   same values, so that nothing else changes) and the KSP is set up again, as after KSPSetOperators()
   with SAME_NONZERO_PATTERN */
static PetscErrorCode SetUpAgain(KSP ksp, Mat A, PetscLogDouble *t)
{
  MPI_Comm            comm = PetscObjectComm((PetscObject)ksp);
  PatchworkTensorInfo info;
  PetscLogDouble      t0, t1;

  PetscFunctionBeginUser;
  PetscCall(MatPatchworkTensorGetInfo(A, &info));
  PetscCall(MatPatchworkTensorSetCoefficients(A, info.alpha, info.beta));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(Mark(comm, &t0));
  PetscCall(KSPSetUp(ksp));
  PetscCall(Mark(comm, &t1));
  *t = t1 - t0;
  PetscFunctionReturn(0);
}

/* One solver on one problem, everything made and destroyed here */
static PetscErrorCode RunOne(DM dm, PetscInt k, Solver solver, const Settings *set, PetscLogStage stage, Result *res)
{
  MPI_Comm       comm = PetscObjectComm((PetscObject)dm);
  PetscInt       dim;
  Mat            A = NULL, S = NULL;
  Vec            u, b;
  KSP            ksp;
  PC             pc;
  PetscBool      isvp = PETSC_FALSE, vpsolver = (PetscBool)(solver == SOLVER_VP_SINGLE || solver == SOLVER_VP_DOUBLE);
  PetscLogDouble t0, t1;
  PetscLogStage  solves = -1; /* -breakdown: the timed solves' stage */
  PetscLogDouble tsum   = 0;  /* of the timed solves */

  PetscFunctionBeginUser;
  PetscCall(DMGetDimension(dm, &dim));
  if (solver == SOLVER_GAMG) {
    PetscCall(AssembleForGAMG(dm, dim, k, res->cells, set, &S, &res->tasm, &res->nnz, res->note, sizeof(res->note)));
    if (!S) {
      res->skipped = PETSC_TRUE;
      PetscFunctionReturn(0);
    }
  }
  PetscCall(PetscLogStagePush(stage));
  if (!S) { /* gamg needs only its assembled matrix */
    PetscCall(Mark(comm, &t0));
    PetscCall(MatCreatePatchworkTensor(dm, k, &A));
    PetscCall(MatSetFromOptions(A));
    PetscCall(Mark(comm, &t1));
    res->top = t1 - t0;
  }
  PetscCall(DMCreateGlobalVector(dm, &u));
  PetscCall(VecDuplicate(u, &b));
  PetscCall(FormRHS(dm, k, u, b));

  PetscCall(KSPCreate(comm, &ksp));
  PetscCall(KSPSetOptionsPrefix(ksp, SolverPrefixes[solver]));
  PetscCall(KSPSetOperators(ksp, A ? A : S, A ? A : S));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(KSPSetTolerances(ksp, set->rtol, PETSC_DEFAULT, PETSC_DEFAULT, set->maxit));
  if (vpsolver) {
    PetscCall(KSPSetType(ksp, KSPFGMRES)); /* flexible: the float V-cycle is linear only to rounding (PCVertexPatchSetPrecision()) */
    PetscCall(KSPGMRESSetRestart(ksp, set->restart));
    PetscCall(KSPSetPCSide(ksp, PC_RIGHT)); /* GMRES minimizes the true residual, the one tested */
    PetscCall(PCSetType(pc, PCVERTEXPATCH));
  } else {
    PetscCall(KSPSetType(ksp, KSPCG));
    PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED)); /* the same stopping test as GMRES */
    PetscCall(PCSetType(pc, solver == SOLVER_MG_CHEB ? PCMG : solver == SOLVER_GAMG ? PCGAMG : solver == SOLVER_LOR ? PCLOR : PCJACOBI));
  }
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCVERTEXPATCH, &isvp));
  if (isvp) PetscCall(PCVertexPatchSetPrecision(pc, solver == SOLVER_VP_DOUBLE ? PATCHWORK_PRECISION_DOUBLE : PATCHWORK_PRECISION_SINGLE)); /* the solver's name wins over -vp_pc_vertexpatch_precision */
  if (solver == SOLVER_MG_CHEB) {
    PetscBool ismg;

    PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCMG, &ismg));
    if (ismg) PetscCall(PCMGSetPatchworkHierarchy(pc, PETSC_DECIDE));
  }

  PetscCall(Mark(comm, &t0));
  PetscCall(PCSetUp(pc)); /* the PC alone first; KSPSetUp() adds the Krylov method's work vectors */
  PetscCall(Mark(comm, &t1));
  res->tpcsetup = t1 - t0;
  PetscCall(KSPSetUp(ksp));
  PetscCall(Mark(comm, &t1));
  res->tsetup = t1 - t0;
  if (isvp && solver == SOLVER_VP_SINGLE) {
    PatchworkPrecision p;

    PetscCall(PCVertexPatchGetPrecision(pc, &p));
    if (p != PATCHWORK_PRECISION_SINGLE) PetscCall(PetscSNPrintf(res->note, sizeof(res->note), "the V-cycle ran in double (single unavailable here)"));
  }
  if (vpsolver && !isvp) PetscCall(PetscSNPrintf(res->note, sizeof(res->note), "PC overridden by options: no FMG, precision not set"));

  if (set->breakdown && isvp) { /* a stage of their own for the timed solves */
    char name[64];

    PetscCall(PetscSNPrintf(name, sizeof(name), "%s k=%" PetscInt_FMT " N=%" PetscInt_FMT " solves", SolverNames[solver], k, res->N));
    PetscCall(PetscLogStageRegister(name, &solves));
    PetscCall(PetscLogStagePush(solves));
  }
  for (PetscInt r = 0; r < set->reps; r++) { /* none with -reps 0 */
    PetscCall(VecSet(u, 0.0));
    PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_FALSE));
    PetscCall(Mark(comm, &t0));
    if (isvp && set->fmg) { /* the full multigrid solver of table 7: FMG, then GMRES from there */
      PetscCall(PCVertexPatchFMG(pc, b, u));
      PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_TRUE));
    }
    PetscCall(KSPSolve(ksp, b, u));
    PetscCall(Mark(comm, &t1));
    tsum += t1 - t0;
    if (!r) res->tfirst = t1 - t0;
    res->tsolve = r ? PetscMin(res->tsolve, t1 - t0) : t1 - t0;
  }
  if (solves >= 0) {
    PetscBool device;

    PetscCall(PetscLogStagePop());
    PetscCall(PetscObjectTypeCompareAny((PetscObject)u, &device, VECSEQCUDA, VECMPICUDA, ""));
    PetscCall(PrintBreakdown(pc, solves, set->reps, device, tsum / set->reps));
  }
  PetscCall(KSPGetIterationNumber(ksp, &res->its));
  PetscCall(KSPGetConvergedReason(ksp, &res->reason));
  if (A) PetscCall(SetUpAgain(ksp, A, &res->tsetup2));
  if (!set->reps) PetscCall(PetscSNPrintf(res->note, sizeof(res->note), "set-up only (-reps 0): no solve, no error"));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(MatDestroy(&S));
  if (set->reps) PetscCall(ErrorM(dm, k, u, b, &res->err));
  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscLogStagePop());
  PetscFunctionReturn(0);
}

static PetscErrorCode PrintRun(const Result *r)
{
  PetscFunctionBeginUser;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "run: dim=%" PetscInt_FMT " k=%" PetscInt_FMT " cells=%" PetscInt_FMT " dofs=%" PetscInt_FMT " solver=%s", r->dim, r->k, r->cells, r->N, SolverNames[r->solver]));
  if (r->skipped) PetscCall(PetscPrintf(PETSC_COMM_WORLD, " %s\n", r->note));
  else {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, " its=%" PetscInt_FMT " reason=%s dm_s=%.4f op_s=%.4f assemble_s=%.4f setup_s=%.4f pc_setup_s=%.4f setup2_s=%.4f solve_s=%.4f first_solve_s=%.4f total_s=%.4f ns_per_dof=%.3f mdof_per_s=%.2f err_M=%.3e", r->its, KSPConvergedReasons[r->reason], r->tdm, r->top, r->tasm, r->tsetup, r->tpcsetup, r->tsetup2, r->tsolve, r->tfirst, EndToEnd(r), r->tsolve > 0 ? 1e9 * r->tsolve / r->N : 0, r->tsolve > 0 ? 1e-6 * r->N / r->tsolve : 0, (double)r->err));
    if (r->nnz > 0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, " nnz=%.4g", (double)r->nnz));
    if (r->note[0]) PetscCall(PetscPrintf(PETSC_COMM_WORLD, " (%s)", r->note));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
  }
  (void)fflush(stdout); /* show each run as it finishes, also when piped */
  PetscFunctionReturn(0);
}

/* The table; vp-single's speedup over every other solver of the same problem, solve alone and with setup */
static PetscErrorCode PrintTable(PetscInt nres, const Result res[], PetscBool fmg)
{
  PetscFunctionBeginUser;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n%-3s %-2s %11s %-10s %5s %8s %10s %9s %9s %9s %9s %9s %10s %11s %11s\n", "dim", "k", "DoFs", "solver", "its", "DM s", "assemble s", "setup s", "setup2 s", "solve s", "total s", "ns/DoF", "err_M", "vp-single", "speedup"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-3s %-2s %11s %-10s %5s %8s %10s %9s %9s %9s %9s %9s %10s %11s %11s\n", "", "", "", "", "", "", "", "", "", "", "", "(solve)", "", "solve", "setup+solve"));
  for (PetscInt i = 0; i < nres; i++) {
    const Result *r = &res[i], *vps = NULL;
    char          its[16], spd[2][24] = {"-", "-"};

    if (r->skipped) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-3" PetscInt_FMT " %-2" PetscInt_FMT " %11" PetscInt_FMT " %-10s %s\n", r->dim, r->k, r->N, SolverNames[r->solver], r->note));
      continue;
    }
    for (PetscInt j = 0; j < nres; j++)
      if (res[j].solver == SOLVER_VP_SINGLE && !res[j].skipped && res[j].dim == r->dim && res[j].k == r->k && res[j].N == r->N) vps = &res[j];
    if (r->solver != SOLVER_VP_SINGLE && vps && vps->reason > 0 && r->reason > 0) {
      PetscCall(PetscSNPrintf(spd[0], sizeof(spd[0]), "%.2fx", r->tsolve / vps->tsolve));
      PetscCall(PetscSNPrintf(spd[1], sizeof(spd[1]), "%.2fx", (r->tasm + r->tsetup + r->tsolve) / (vps->tsetup + vps->tsolve)));
    }
    /* '!': not converged, '*': see the notes below */
    PetscCall(PetscSNPrintf(its, sizeof(its), "%" PetscInt_FMT "%s%s", r->its, r->reason > 0 ? "" : "!", r->note[0] ? "*" : ""));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-3" PetscInt_FMT " %-2" PetscInt_FMT " %11" PetscInt_FMT " %-10s %5s %8.3f %10.4f %9.4f %9.4f %9.4f %9.3f %9.2f %10.3e %11s %11s\n", r->dim, r->k, r->N, SolverNames[r->solver], its, r->tdm, r->tasm, r->tsetup, r->tsetup2, r->tsolve, EndToEnd(r), 1e9 * r->tsolve / r->N, (double)r->err, spd[0], spd[1]));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "vp-single speedup = that row's time over vp-single's (setup+solve includes gamg's assembly); its with '!': not converged.\n"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "total s = DM + operator + assembly + setup + the first solve (DM s: made once per grid, counted in each of its rows).\n"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "setup2 s = KSPSetUp again after MatPatchworkTensorSetCoefficients() and KSPSetOperators() (the same values).\n"));
  for (PetscInt i = 0; i < nres; i++)
    if (!res[i].skipped && res[i].note[0]) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "* k=%" PetscInt_FMT " DoFs=%" PetscInt_FMT " %s: %s\n", res[i].k, res[i].N, SolverNames[res[i].solver], res[i].note));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "err_M = ||u_h - I_h u||_M with the matrix-free mass operator; solve s = best of -reps%s.\n", fmg ? ", vp-*: FMG included" : ""));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscInt       zf = 1, dim = 3, degrees[16] = {1, 3, 7}, ndeg = 3, cells[16] = {0}, ncells = 16, ndofs = 16, nsolvers = 16, nsizes, nres = 0;
  PetscReal      dofs[16] = {1e7};
  char          *names[16];
  Solver         solvers[16] = {SOLVER_VP_SINGLE, SOLVER_VP_DOUBLE, SOLVER_MG_CHEB, SOLVER_GAMG};
  Settings       set = {5, 10000, 2, 1e-9, 1e9, PETSC_TRUE, PETSC_FALSE};
  PetscBool      flg, cellsset, dofsset, solversset, hashelp;
  PetscLogStage  stages[SOLVER_COUNT];
  Result        *res;
  PetscMPIInt    size;
  VecType        vtype;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PatchworkInitializePackage());
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Time-to-solution benchmark", NULL);
  PetscCall(PetscOptionsInt("-dim", "Spatial dimension (2 or 3)", NULL, dim, &dim, NULL));
  ndeg = 16;
  PetscCall(PetscOptionsIntArray("-degrees", "Polynomial degrees k", NULL, degrees, &ndeg, &flg));
  if (!flg) ndeg = 3;
  PetscCall(PetscOptionsIntArray("-cells", "Cells per direction, one per degree", NULL, cells, &ncells, &cellsset));
  PetscCall(PetscOptionsRealArray("-dofs", "Target DoF counts (without -cells)", NULL, dofs, &ndofs, &dofsset));
  if (!dofsset) ndofs = 1;
  PetscCall(PetscOptionsStringArray("-solvers", "Solvers: vp-single, vp-double, mg-cheb, gamg, cg-jacobi, lor", NULL, names, &nsolvers, &solversset));
  if (!solversset) nsolvers = 4;
  PetscCall(PetscOptionsInt("-restart", "FGMRES restart of the vp-* solvers", NULL, set.restart, &set.restart, NULL));
  PetscCall(PetscOptionsBool("-fmg", "vp-*: initial guess by one full multigrid cycle, timed with the solve", NULL, set.fmg, &set.fmg, NULL));
  PetscCall(PetscOptionsBool("-breakdown", "vp-*: time per component and level of the timed solves", NULL, set.breakdown, &set.breakdown, NULL));
  PetscCall(PetscOptionsReal("-rtol", "Relative residual reduction", NULL, set.rtol, &set.rtol, NULL));
  PetscCall(PetscOptionsInt("-max_it", "Iteration limit", NULL, set.maxit, &set.maxit, NULL));
  PetscCall(PetscOptionsInt("-reps", "Timed solves per run (the fastest is reported; 0: set-up only)", NULL, set.reps, &set.reps, NULL));
  PetscCall(PetscOptionsReal("-max_nnz", "gamg only up to this many nonzeros of the assembled matrix", NULL, set.maxnnz, &set.maxnnz, NULL));
  PetscCall(PetscOptionsInt("-cells_z_factor", "3D: the last direction gets this many times the cells (weak scaling along z)", NULL, zf, &zf, NULL));
  PetscOptionsEnd();
  PetscCheck(zf >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-cells_z_factor %" PetscInt_FMT ": need at least 1", zf);
  if (set.breakdown) { /* the events need logging; on the GPU, kernel times need PETSc's GPU timers */
    PetscCall(PetscLogDefaultBegin());
#if defined(PETSC_HAVE_CUDA)
    PetscCall(PetscLogGpuTime());
#endif
  }

  PetscCheck(dim == 2 || dim == 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-dim %" PetscInt_FMT ": use 2 or 3", dim);
  PetscCheck(ndeg >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-degrees needs at least one degree");
  PetscCheck(!cellsset || ncells == ndeg, PETSC_COMM_WORLD, PETSC_ERR_ARG_SIZ, "-cells has %" PetscInt_FMT " entries for %" PetscInt_FMT " degrees: give one per degree", ncells, ndeg);
  PetscCheck(!cellsset || !dofsset, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "Give -cells or -dofs, not both");
  PetscCheck(set.reps >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-reps %" PetscInt_FMT ": need at least 0 (0: set-up only)", set.reps);
  PetscCheck(set.restart >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-restart %" PetscInt_FMT ": need at least 1", set.restart);
  for (PetscInt i = 0; i < ndofs; i++) PetscCheck(dofs[i] >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-dofs %g: need a positive DoF count", (double)dofs[i]);
  if (solversset) {
    PetscBool bad = PETSC_FALSE;

    for (PetscInt i = 0; i < nsolvers; i++) {
      PetscInt s;

      for (s = 0; s < SOLVER_COUNT; s++) {
        PetscBool same;

        PetscCall(PetscStrcmp(names[i], SolverNames[s], &same));
        if (same) break;
      }
      if (s == SOLVER_COUNT) {
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Unknown solver '%s' in -solvers: use vp-single, vp-double, mg-cheb, gamg, cg-jacobi, lor\n", names[i]));
        bad = PETSC_TRUE;
      } else solvers[i] = (Solver)s;
      PetscCall(PetscFree(names[i]));
    }
    PetscCheck(!bad, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "Unknown solver in -solvers");
  }
  PetscCall(PetscOptionsHasHelp(NULL, &hashelp));
  if (hashelp && !cellsset && !dofsset) { /* not the default 1e7-DoF runs just to list options */
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "(add -cells or -dofs to -help to run, listing the solvers' options too)\n"));
    PetscCall(PetscFinalize());
    return 0;
  }
  for (PetscInt s = 0; s < SOLVER_COUNT; s++) PetscCall(PetscLogStageRegister(SolverNames[s], &stages[s]));

  nsizes = cellsset ? 1 : ndofs; /* sizes per degree */
  PetscCall(PetscMalloc1(ndeg * nsizes * nsolvers, &res));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  {
    DM       dm;
    PetscInt four[3] = {4, 4, 4};

    /* the vector type that -dm_vec_type gives, for the header */
    PetscCall(PatchworkDMDACreateQk(PETSC_COMM_WORLD, dim, 1, four, NULL, NULL, &dm));
    PetscCall(DMGetVecType(dm, &vtype));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Poisson %" PetscInt_FMT "D, Q_k, homogeneous Dirichlet, u = prod sin(pi x_d); rtol %g; vectors %s; %d MPI rank(s); PETSc %d.%d.%d\n", dim, (double)set.rtol, vtype, size, PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR));
    PetscCall(DMDestroy(&dm));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "vp-*: FGMRES(%" PetscInt_FMT "), right preconditioned, PCVERTEXPATCH%s; CG solvers: unpreconditioned residual norm; best of %" PetscInt_FMT " solve(s)\n", set.restart, set.fmg ? ", FMG initial guess" : "", set.reps));

  for (PetscInt d = 0; d < ndeg; d++)
    for (PetscInt s = 0; s < nsizes; s++) {
      const PetscInt k = degrees[d], nc = cellsset ? cells[d] : ChooseCells(dim, k, dofs[s]), c[3] = {nc, nc, dim == 3 ? zf * nc : nc};
      DM             dm;
      PetscInt       N;
      PetscLogDouble t0, t1;

      PetscCheck(PetscPowReal((PetscReal)(k * nc + 1), dim) * (dim == 3 ? zf : 1) < (PetscReal)PETSC_MAX_INT, PETSC_COMM_WORLD, PETSC_ERR_SUP, "Q%" PetscInt_FMT " on %" PetscInt_FMT "^%" PetscInt_FMT " cells has more DoFs than PetscInt holds: use a PETSc configured with 64-bit indices", k, nc, dim);
      PetscCall(Mark(PETSC_COMM_WORLD, &t0));
      PetscCall(PatchworkDMDACreateQk(PETSC_COMM_WORLD, dim, k, c, NULL, NULL, &dm));
      PetscCall(Mark(PETSC_COMM_WORLD, &t1));
      N = dim == 3 ? (k * nc + 1) * (k * nc + 1) * (k * c[2] + 1) : (k * nc + 1) * (k * nc + 1);
      for (PetscInt i = 0; i < nsolvers; i++) {
        Result *r = &res[nres++];

        PetscCall(PetscMemzero(r, sizeof(*r)));
        r->dim    = dim;
        r->k      = k;
        r->cells  = nc;
        r->N      = N;
        r->solver = solvers[i];
        r->tdm    = t1 - t0;
        PetscCall(RunOne(dm, k, solvers[i], &set, stages[solvers[i]], r));
        PetscCall(PrintRun(r));
      }
      PetscCall(DMDestroy(&dm));
    }
  PetscCall(PrintTable(nres, res, set.fmg));
  PetscCall(PetscFree(res));
  PetscCall(PetscFinalize());
  return 0;
}
