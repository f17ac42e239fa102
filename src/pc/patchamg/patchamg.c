/* PCPATCHAMG: creation, options, viewing and setters. pasetup.c builds the hierarchy, paspm.c the
   patchSPM layout, pacycle.c applies the V-cycle. */
#include "paimpl.h"

const char *const PatchworkAMGRelaxes[]     = {"patch", "jacobi", "l1jacobi", "spai0", "chebyshev", "spai1", "PatchworkAMGRelax", "PATCHWORK_AMG_RELAX_", NULL};
const char *const PatchworkAMGHierarchies[] = {"algebraic", "geometric", "PatchworkAMGHierarchy", "PATCHWORK_AMG_HIERARCHY_", NULL};

static PetscBool  cited      = PETSC_FALSE;
static const char citation[] = "@article{FuLewisKirbyWhitaker2014,\n"
                               "  title   = {Architecting the finite element method pipeline for the {GPU}},\n"
                               "  author  = {Fu, Zhisong and Lewis, T. James and Kirby, Robert M. and Whitaker, Ross T.},\n"
                               "  journal = {Journal of Computational and Applied Mathematics},\n"
                               "  volume  = {257},\n"
                               "  pages   = {195--211},\n"
                               "  year    = {2014}\n}\n";

/* The ranges of the numerical options (the -help text says them, PCSetFromOptions_PatchAMG() refuses
   values outside). k: fd7 32^3 needs 17, 12, 20, 21, 24 CG iterations at k = 1, 2, 4, 8, 10 and 36, 49
   at k = 16, 32, while the k-MIS's passes over the graph grow with k (k = 10^6 ran for minutes).
   omega: x += w M^-1 (b - A x) converges for 0 < w < 2/lambda_max(M^-1 A), and lambda_max(M^-1 A) >= 1
   for (block) Jacobi (the Rayleigh quotient of a vector inside one block is 1), so w >= 2 diverges.
   inner_omega multiplies 2/rho(D^-1 A), the limit of a convergent Jacobi sweep. prolong_omega: the
   smoother I - w/rho(D^-1 A) D^-1 A of the prolongator has its spectrum in [1 - w, 1], within [-1, 1]
   for w <= 2. threshold: a symmetric positive definite matrix has |a_ij| < sqrt(a_ii a_jj), so a
   threshold of 1 or more leaves no coupling. */
#define PATCHAMG_K_MAX 10

static PetscErrorCode PCSetFromOptions_PatchAMG(PC pc, PatchworkOptionItems PetscOptionsObject)
{
  PC_PatchAMG          *pa = (PC_PatchAMG *)pc->data;
  PatchworkAMGHierarchy h  = pa->geometric ? PATCHWORK_AMG_HIERARCHY_GEOMETRIC : PATCHWORK_AMG_HIERARCHY_ALGEBRAIC;
  MPI_Comm              comm = PetscObjectComm((PetscObject)pc);
  const char           *pre  = ((PetscObject)pc)->prefix ? ((PetscObject)pc)->prefix : "";
  PetscBool             set;
  char                  type[256];

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Patch-based smoothed-aggregation AMG options");
  PetscCall(PetscOptionsEnum("-pc_patchamg_hierarchy", "Levels by smoothed aggregation (algebraic) or from the DM's refinement hierarchy (geometric)", "PCPatchAMGSetHierarchy", PatchworkAMGHierarchies, (PetscEnum)h, (PetscEnum *)&h, &set));
  if (set) PetscCall(PCPatchAMGSetHierarchy(pc, h));
  PetscCall(PetscOptionsEnum("-pc_patchamg_relax", "Relaxation: patch block Jacobi with inner Jacobi sweeps, or a point method (geometric hierarchy: spai1 by default, no patch)", "PCPatchAMGSetRelax", PatchworkAMGRelaxes, (PetscEnum)pa->relax, (PetscEnum *)&pa->relax, &set));
  if (set) pa->relax_set = PETSC_TRUE;
  PetscCall(PetscOptionsEnum("-pc_patchamg_renumber", "Geometric hierarchy: numbering of every level's dofs", "", PC_PatchAMGRenumbers, (PetscEnum)pa->renumber, (PetscEnum *)&pa->renumber, NULL));
  PetscCall(PetscOptionsBool("-pc_patchamg_dm_interpolation", "Geometric hierarchy: DMCreateInterpolation() also for P1 (slower; for tetrahedra it needs a PETSc newer than 3.18)", "", pa->dm_interp, &pa->dm_interp, NULL));
  PetscCall(PetscOptionsFList("-pc_patchamg_mat_type", "Geometric hierarchy: format of the level matrices, transfers and SPAI matrices (sell, seqsellcuda, aijcusparse, ...)", "", MatList, pa->mat_type ? pa->mat_type : "", type, sizeof(type), &set));
  if (set) {
    PetscCall(PetscFree(pa->mat_type));
    if (type[0]) PetscCall(PetscStrallocpy(type, &pa->mat_type));
  }
  PetscCall(PetscOptionsEnum("-pc_patchamg_precision", "Precision of the patch blocks' values and, on one GPU, of the transfers P and P^T (vectors and the coarse operators stay double)", "PCPatchAMGSetPrecision", PatchworkPrecisions, (PetscEnum)pa->precision, (PetscEnum *)&pa->precision, NULL));
  PetscCall(PetscOptionsInt("-pc_patchamg_dim", "Dimension of the problem, 2 or 3, that chooses the defaults of k and min_aggregate (2D: 1 and 4, 3D: 2 and 9); 0: from PCSetCoordinates(), the DM, or the matrix graph's neighbourhood growth", "PCPatchAMGSetDimension", pa->dim, &pa->dim, NULL));
  PetscCall(PetscOptionsInt("-pc_patchamg_k", "Aggregates grow around the vertices of a k-MIS (distance k between roots), 1 <= k <= 10 (default: 1 in 2D, 2 in 3D)", "", pa->k, &pa->k, &set));
  if (set) pa->k_set = PETSC_TRUE;
  PetscCall(PetscOptionsReal("-pc_patchamg_threshold", "Strength of connection: aggregates and patches grow only along couplings with max(|a_ij|, |a_ji|) >= threshold sqrt(|a_ii a_jj|), 0 <= threshold < 1 (0: every coupling)", "", pa->threshold, &pa->threshold, NULL));
  PetscCall(PetscOptionsInt("-pc_patchamg_min_aggregate", "Aggregates with fewer rows are dissolved and their rows reassigned, at least 1 (1: none is; default: 4 in 2D, 9 in 3D)", "", pa->min_agg, &pa->min_agg, &set));
  if (set) pa->min_agg_set = PETSC_TRUE;
  PetscCall(PetscOptionsInt("-pc_patchamg_patch_size", "Largest patch (rows) of the block-Jacobi relaxation, 1 to 1024 (a patch is one GPU thread block)", "PCPatchAMGSetPatchSize", pa->patch_size, &pa->patch_size, NULL));
  PetscCall(PetscOptionsInt("-pc_patchamg_inner_sweeps", "Jacobi sweeps that approximate each patch block's inverse, at least 1", "", pa->inner, &pa->inner, NULL));
  PetscCall(PetscOptionsReal("-pc_patchamg_omega", "Damping w of the relaxation, 0 <= w < 2 (0: min(1, 1.5/lambda_max(M^-1 A)) per level, by power iteration, for patch and spai1; 2/3 for jacobi; 1 for l1jacobi and spai0)", "", pa->omega, &pa->omega, NULL));
  PetscCall(PetscOptionsReal("-pc_patchamg_inner_omega", "Damping of the inner Jacobi sweeps, times 2/rho(D^-1 A), 0 < w <= 1", "", pa->inner_omega, &pa->inner_omega, NULL));
  PetscCall(PetscOptionsReal("-pc_patchamg_prolong_omega", "P = (I - w/rho(D^-1 A) D^-1 A) P_tentative: w, 0 <= w <= 2 (0: P_tentative)", "", pa->prolong_omega, &pa->prolong_omega, NULL));
  PetscCall(PetscOptionsInt("-pc_patchamg_smooth_steps", "Pre- and post-relaxation steps per level, at least 1", "", pa->smooth_steps, &pa->smooth_steps, NULL));
  PetscCall(PetscOptionsInt("-pc_patchamg_coarse_size", "Stop coarsening at this many rows (global), at least 1", "", pa->coarse_size, &pa->coarse_size, NULL));
  PetscCall(PetscOptionsInt("-pc_patchamg_redistribute", "Several ranks: gather a coarse level onto fewer ranks (consecutive ones merged) when it has fewer rows per rank than this, at least 0 (0: never)", "", pa->redistribute, &pa->redistribute, NULL));
  PetscCall(PetscOptionsInt("-pc_patchamg_levels", "Most levels, at least 0 (0: as many as the coarse size needs)", "", pa->max_levels, &pa->max_levels, NULL));
  PetscCall(PetscOptionsInt("-pc_patchamg_seed", "Seed of the k-MIS priorities (the same seed gives the same hierarchy)", "", pa->seed, &pa->seed, NULL));
  PetscCall(PetscOptionsBool("-pc_patchamg_product_kernels", "Prolongators and Galerkin operators by Patchwork's kernels, on several ranks with the neighbours' rows fetched (else PETSc's MatMatMult and MatPtAP)", "", pa->product_kernels, &pa->product_kernels, NULL));
  PetscCall(PetscOptionsBool("-pc_patchamg_block_products", "Several ranks: the product kernels on each rank's block, the prolongator kept block diagonal (a faster set-up, more iterations)", "", pa->block_products, &pa->block_products, NULL));
  PetscCall(PetscOptionsBool("-pc_patchamg_use_coordinates", "Geometry-informed aggregation: rows left over by the k-MIS join the neighbouring aggregate with the nearest root (coordinates from PCSetCoordinates() or the DM)", "", pa->use_coords, &pa->use_coords, NULL));
  PetscCall(PetscOptionsBool("-pc_patchamg_check", "Check symmetry and definiteness of the matrix at setup", "", pa->check, &pa->check, NULL));
  PetscOptionsHeadEnd();
  PetscCheck(pa->dim == 0 || pa->dim == 2 || pa->dim == 3, comm, PETSC_ERR_ARG_OUTOFRANGE, "-%spc_patchamg_dim %" PetscInt_FMT " is out of range: it must be 2, 3, or 0 (inferred from the coordinates, the DM or the matrix)", pre, pa->dim);
  PetscCheck(pa->k >= 1 && pa->k <= PATCHAMG_K_MAX, comm, PETSC_ERR_ARG_OUTOFRANGE, "-%spc_patchamg_k %" PetscInt_FMT " is out of range: k must be in [1, %d] (larger k only cost iterations and set-up time)", pre, pa->k, PATCHAMG_K_MAX);
  PetscCheck(pa->threshold >= 0 && pa->threshold < 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-%spc_patchamg_threshold %g is out of range: it must be in [0, 1) (0: every coupling; 1 or more leaves none of a positive definite matrix)", pre, (double)pa->threshold);
  PetscCheck(pa->min_agg >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-%spc_patchamg_min_aggregate %" PetscInt_FMT " is out of range: it must be at least 1 (1: no aggregate is dissolved)", pre, pa->min_agg);
  PetscCheck(pa->patch_size >= 1 && pa->patch_size <= 1024, comm, PETSC_ERR_ARG_OUTOFRANGE, "-%spc_patchamg_patch_size %" PetscInt_FMT " is out of range: it must be in [1, 1024] (a patch is one GPU thread block)", pre, pa->patch_size);
  PetscCheck(pa->inner >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-%spc_patchamg_inner_sweeps %" PetscInt_FMT " is out of range: it must be at least 1", pre, pa->inner);
  PetscCheck(pa->omega >= 0 && pa->omega < 2, comm, PETSC_ERR_ARG_OUTOFRANGE, "-%spc_patchamg_omega %g is out of range: it must be in [0, 2) (0: the default damping; from 2 on no relaxation here converges)", pre, (double)pa->omega);
  PetscCheck(pa->inner_omega > 0 && pa->inner_omega <= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-%spc_patchamg_inner_omega %g is out of range: it must be in (0, 1] (it multiplies 2/rho(D^-1 A), the limit of a convergent Jacobi sweep)", pre, (double)pa->inner_omega);
  PetscCheck(pa->prolong_omega >= 0 && pa->prolong_omega <= 2, comm, PETSC_ERR_ARG_OUTOFRANGE, "-%spc_patchamg_prolong_omega %g is out of range: it must be in [0, 2] (0: the tentative prolongator)", pre, (double)pa->prolong_omega);
  PetscCheck(pa->smooth_steps >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-%spc_patchamg_smooth_steps %" PetscInt_FMT " is out of range: it must be at least 1", pre, pa->smooth_steps);
  PetscCheck(pa->coarse_size >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-%spc_patchamg_coarse_size %" PetscInt_FMT " is out of range: it must be at least 1", pre, pa->coarse_size);
  PetscCheck(pa->redistribute >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-%spc_patchamg_redistribute must be 0 (never) or positive, got %" PetscInt_FMT, pre, pa->redistribute);
  PetscCheck(pa->max_levels >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-%spc_patchamg_levels %" PetscInt_FMT " is out of range: it must be at least 0 (0: as many as the coarse size needs)", pre, pa->max_levels);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Rows and nonzeros summed over the levels (the grid and operator complexities) */
static void LevelTotals(const PC_PatchAMG *pa, PetscReal *rows, PetscReal *nnz)
{
  *rows = *nnz = 0;
  for (PetscInt l = 0; l < pa->nlevels; l++) {
    *nnz += pa->levels[l].nnz;
    *rows += pa->levels[l].N;
  }
}

/* The levels where SPAI(1)'s symmetric part needed a diagonal shift to be positive definite */
static PetscErrorCode ViewSPAIShifts(PC_PatchAMG *pa, PetscViewer viewer)
{
  PetscBool any = PETSC_FALSE;

  PetscFunctionBegin;
  for (PetscInt l = 0; l < pa->nlevels - 1; l++) any = (PetscBool)(any || pa->levels[l].spai_shift > 0);
  if (pa->relax != PATCHWORK_AMG_RELAX_SPAI1 || !any) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerASCIIPrintf(viewer, "  SPAI(1)'s (M + M^T)/2 was indefinite, shifted by tau diag(S) on level (tau):"));
  PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_FALSE));
  for (PetscInt l = 0; l < pa->nlevels - 1; l++)
    if (pa->levels[l].spai_shift > 0) PetscCall(PetscViewerASCIIPrintf(viewer, " %" PetscInt_FMT " (%g)", l, (double)pa->levels[l].spai_shift));
  PetscCall(PetscViewerASCIIPrintf(viewer, "\n"));
  PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Singular matrices: the null space carried through the levels and how the coarse level solves (pasingular.c) */
static PetscErrorCode ViewNullSpace(PC_PatchAMG *pa, PetscViewer viewer)
{
  PetscBool  has_const;
  PetscInt   nvec;
  const Vec *vecs;

  PetscFunctionBegin;
  if (!pa->levels || !pa->nullsp) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatNullSpaceGetVecs(pa->nullsp, &has_const, &nvec, &vecs));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  null space of the matrix (MatSetNullSpace()): %s, carried to every level and removed from the V-cycle's output\n", has_const ? "the constants" : "one vector"));
  if (pa->coarse_nullsp) PetscCall(PetscViewerASCIIPrintf(viewer, "  coarsest level singular with its image z_c (||A_c z_c|| = %.1e max|a_ii| ||z_c||): solved on the complement of z_c (row %" PetscInt_FMT " pinned, right-hand side and solution projected)\n", (double)pa->coarse_null_residual, pa->coarse_pin));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "  coarsest level regular (||A_c z_c|| = %.1e max|a_ii| ||z_c||): solved as it is\n", (double)pa->coarse_null_residual));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The geometric mode: the DM's levels, their sizes, the format and numbering of the SpMVs */
static PetscErrorCode PCView_PatchAMG_Geometric(PC pc, PetscViewer viewer)
{
  PC_PatchAMG *pa = (PC_PatchAMG *)pc->data;
  PetscReal    nnz, rows;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "  geometric multigrid on the DM's refinement hierarchy: interpolation %s and its transpose stored, Galerkin coarse operators; numbering %s, format %s\n", pa->levels && pa->geo_p1 ? "of P1 by vertex and edge-midpoint matching" : "by DMCreateInterpolation()", PC_PatchAMGRenumbers[pa->renumber], pa->mat_type ? pa->mat_type : "the matrix's"));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  relaxation: %s, %" PetscInt_FMT " pre and post step(s)\n", PatchworkAMGRelaxes[pa->relax], pa->smooth_steps));
  if (!pa->levels) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "  not set up\n"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  LevelTotals(pa, &rows, &nnz);
  PetscCall(PetscViewerASCIIPrintf(viewer, "  %" PetscInt_FMT " levels, operator complexity %.3f, grid complexity %.3f, on the %s; setup %.3g s (interpolation %.3g, Galerkin %.3g, renumbering %.3g, relaxation %.3g, coarse %.3g, formats %.3g)\n", pa->nlevels, nnz / pa->levels[0].nnz, rows / pa->levels[0].N, pa->device ? "GPU" : "CPU",
                                   pa->setup_time[0] + pa->setup_time[1] + pa->geo_time[0] + pa->setup_time[2] + pa->setup_time[3] + pa->geo_time[1], pa->setup_time[0], pa->setup_time[1], pa->geo_time[0], pa->setup_time[2], pa->setup_time[3], pa->geo_time[1]));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  level       rows     nonzeros   bandwidth  matrix type\n"));
  for (PetscInt l = 0; l < pa->nlevels; l++) {
    PC_PatchAMGLevel *L = &pa->levels[l];

    PetscCall(PetscViewerASCIIPrintf(viewer, "  %5" PetscInt_FMT " %10" PetscInt_FMT " %12.0f  %10" PetscInt_FMT "  %s%s\n", l, L->N, L->nnz, pa->bandwidth ? pa->bandwidth[l] : -1, ((PetscObject)L->A)->type_name, l == pa->nlevels - 1 ? ", coarse solve" : ""));
  }
  PetscCall(ViewSPAIShifts(pa, viewer));
  PetscCall(ViewNullSpace(pa, viewer));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  coarse solver (options prefix %spc_patchamg_coarse_):\n", ((PetscObject)pc)->prefix ? ((PetscObject)pc)->prefix : ""));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscCall(KSPView(pa->coarse, viewer));
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCView_PatchAMG(PC pc, PetscViewer viewer)
{
  PC_PatchAMG *pa = (PC_PatchAMG *)pc->data;
  PetscBool    ascii, kernels;
  PetscReal    nnz, rows;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (!ascii) PetscFunctionReturn(PETSC_SUCCESS);
  if (pa->geometric) {
    PetscCall(PCView_PatchAMG_Geometric(pc, viewer));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (pa->levels && pa->agg_dim_source) {
    char growth[64] = "";

    if (pa->agg_growth > 0) PetscCall(PetscSNPrintf(growth, sizeof(growth), ", neighbourhood growth |S_3|/|S_2| = %.2f", (double)pa->agg_growth));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  smoothed aggregation: aggregates around a %" PetscInt_FMT "-MIS, at least %" PetscInt_FMT " rows (%s; %" PetscInt_FMT "D defaults, dimension from %s%s), prolongator smoothed by one Jacobi step (w = %g/rho)\n", pa->agg_k, pa->agg_min,
                                     pa->k_set && pa->min_agg_set ? "both given" : pa->k_set ? "k given" : pa->min_agg_set ? "minimum given" : "defaults", pa->agg_dim, pa->agg_dim_source, growth, (double)pa->prolong_omega));
  } else {
    char k[32] = "1 (2D) or 2 (3D)", m[32] = "4 (2D) or 9 (3D)";

    if (pa->k_set) PetscCall(PetscSNPrintf(k, sizeof(k), "%" PetscInt_FMT, pa->k));
    if (pa->min_agg_set) PetscCall(PetscSNPrintf(m, sizeof(m), "%" PetscInt_FMT, pa->min_agg));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  smoothed aggregation: aggregates around a k-MIS, k = %s, at least %s rows, prolongator smoothed by one Jacobi step (w = %g/rho)\n", k, m, (double)pa->prolong_omega));
  }
  if (pa->threshold > 0) PetscCall(PetscViewerASCIIPrintf(viewer, "  strength of connection: aggregates and patches follow the couplings with max(|a_ij|, |a_ji|) >= %g sqrt(|a_ii a_jj|) only\n", (double)pa->threshold));
  if (pa->levels && pa->coord_source) PetscCall(PetscViewerASCIIPrintf(viewer, "  geometry-informed: left-over rows join the neighbouring aggregate with the nearest root (coordinates from %s; coarse points: aggregate centroids, also across a gathering; %" PetscInt_FMT " of %" PetscInt_FMT " aggregation levels)\n", pa->coord_source, pa->coord_levels, pa->nlevels - 1));
  else if (pa->levels) PetscCall(PetscViewerASCIIPrintf(viewer, "  algebraic: left-over rows join the aggregate they are most connected to (no coordinates: PCSetCoordinates() or a DM gives them)\n"));
  if (pa->relax == PATCHWORK_AMG_RELAX_PATCH) {
    char omega[64] = "min(1, 1.5/lambda_max(M^-1 A)) per level";

    if (pa->omega > 0) PetscCall(PetscSNPrintf(omega, sizeof(omega), "%g", (double)pa->omega));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  relaxation: patch block Jacobi (patches balanced towards %" PetscInt_FMT " rows, omega %s), each block by %" PetscInt_FMT " Jacobi sweeps (omega %g x 2/rho(D^-1 A)), values in %s, %" PetscInt_FMT " pre and post step(s)\n", pa->patch_size, omega, pa->inner, (double)pa->inner_omega, PatchworkPrecisions[pa->precision], pa->smooth_steps));
  } else PetscCall(PetscViewerASCIIPrintf(viewer, "  relaxation: %s, %" PetscInt_FMT " pre and post step(s)\n", PatchworkAMGRelaxes[pa->relax], pa->smooth_steps));
  PetscCall(PCPatchAMGUseProductKernels(pc, &kernels));
  if (pa->levels && pa->device && kernels) PetscCall(PetscViewerASCIIPrintf(viewer, "  prolongators (with their transposes) and coarse operators in device memory; the transfers' values in %s\n", PatchworkPrecisions[pa->precision]));
  if (!pa->levels) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "  not set up\n"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  LevelTotals(pa, &rows, &nnz);
  PetscCall(PetscViewerASCIIPrintf(viewer, "  %" PetscInt_FMT " levels, operator complexity %.3f, grid complexity %.3f, on the %s; setup %.3g s (graphs %.3g, operators %.3g, relaxation %.3g, coarse %.3g)\n", pa->nlevels, nnz / pa->levels[0].nnz, rows / pa->levels[0].N, pa->device ? "GPU" : "CPU",
                                   pa->setup_time[0] + pa->setup_time[1] + pa->setup_time[2] + pa->setup_time[3], pa->setup_time[0], pa->setup_time[1], pa->setup_time[2], pa->setup_time[3]));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  level       rows     nonzeros  aggregates (rows)      patches (rows)   in-patch nnz (rank 0)  omega (inner)\n"));
  for (PetscInt l = 0; l < pa->nlevels; l++) {
    PC_PatchAMGLevel *L = &pa->levels[l];

    if (l == pa->nlevels - 1) {
      PetscCall(PetscViewerASCIIPrintf(viewer, "  %5" PetscInt_FMT " %10" PetscInt_FMT " %12.0f  coarse solve\n", l, L->N, L->nnz));
      break;
    }
    if (L->spm.desc.patch_ptr)
      PetscCall(PetscViewerASCIIPrintf(viewer, "  %5" PetscInt_FMT " %10" PetscInt_FMT " %12.0f  %7" PetscInt_FMT " (%" PetscInt_FMT "..%" PetscInt_FMT ")  %7d (%" PetscInt_FMT "..%d)  %5.1f%%   %.3f (%.3f)\n", l, L->N, L->nnz, L->naggs, L->agg_min, L->agg_max, L->spm.desc.npatch, L->spm.min_patch,
                                       L->spm.desc.max_patch, 100.0 * (L->spm.nnz_ai + L->spm.desc.n) / PetscMax(1.0, (PetscReal)(L->spm.nnz_ai + L->spm.nnz_ab + L->spm.desc.n)), L->spm.desc.omega, L->spm.desc.inner_omega));
    else PetscCall(PetscViewerASCIIPrintf(viewer, "  %5" PetscInt_FMT " %10" PetscInt_FMT " %12.0f  %7" PetscInt_FMT " (%" PetscInt_FMT "..%" PetscInt_FMT ")\n", l, L->N, L->nnz, L->naggs, L->agg_min, L->agg_max));
  }
  PetscCall(ViewSPAIShifts(pa, viewer));
  if (pa->levels[0].nranks > 1) { /* where -pc_patchamg_redistribute gathered the levels */
    PetscCall(PetscViewerASCIIPrintf(viewer, "  ranks holding rows, by level (-pc_patchamg_redistribute %" PetscInt_FMT "):", pa->redistribute));
    PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_FALSE));
    for (PetscInt l = 0; l < pa->nlevels; l++) PetscCall(PetscViewerASCIIPrintf(viewer, " %d", pa->levels[l].nranks));
    PetscCall(PetscViewerASCIIPrintf(viewer, "\n"));
    PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_TRUE));
  }
  PetscCall(ViewNullSpace(pa, viewer));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  coarse solver (options prefix %spc_patchamg_coarse_):\n", ((PetscObject)pc)->prefix ? ((PetscObject)pc)->prefix : ""));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscCall(KSPView(pa->coarse, viewer));
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCSetUp_PatchAMG_Cite(PC pc)
{
  PetscFunctionBegin;
  PetscCall(PetscCitationsRegister(citation, &cited));
  PetscCall(PCSetUp_PatchAMG(pc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PCReset_PatchAMG (pasetup.c) frees the levels; the geometric mode's level-0 scatter goes here */
static PetscErrorCode PCReset_PatchAMG_All(PC pc)
{
  PetscFunctionBegin;
  PetscCall(PCReset_PatchAMG(pc));
  PetscCall(PCPatchAMGResetGeometric(pc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCDestroy_PatchAMG(PC pc)
{
  PetscFunctionBegin;
  PetscCall(PCReset_PatchAMG_All(pc));
  PetscCall(PetscFree(((PC_PatchAMG *)pc->data)->mat_type));
  PetscCall(PetscFree(((PC_PatchAMG *)pc->data)->coords));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCSetCoordinates_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCPatchAMGSetRelax_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCPatchAMGSetPrecision_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCPatchAMGSetPatchSize_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCPatchAMGSetDimension_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCPatchAMGGetNumberLevels_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCPatchAMGSetHierarchy_C", NULL));
  PetscCall(PetscFree(pc->data));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PCSetCoordinates(): nloc points of dim coordinates, interlaced, one per local row of the matrix */
static PetscErrorCode PCSetCoordinates_PatchAMG(PC pc, PetscInt dim, PetscInt nloc, PetscReal coords[])
{
  PC_PatchAMG *pa = (PC_PatchAMG *)pc->data;

  PetscFunctionBegin;
  PetscCheck(dim >= 1 && dim <= 3, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "PCSetCoordinates: PCPATCHAMG takes 1 to 3 coordinates per point, not %" PetscInt_FMT, dim);
  PetscCheck(nloc >= 0 && (nloc == 0 || coords), PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "PCSetCoordinates: %" PetscInt_FMT " points but no coordinates", nloc);
  for (PetscInt i = 0; i < dim * nloc; i++) PetscCheck(!PetscIsInfOrNanReal(coords[i]), PETSC_COMM_SELF, PETSC_ERR_FP, "PCSetCoordinates: coordinate %" PetscInt_FMT " of point %" PetscInt_FMT " is NaN or Inf", i % dim, i / dim);
  PetscCall(PetscFree(pa->coords));
  PetscCall(PetscMalloc1(dim * nloc, &pa->coords));
  for (PetscInt i = 0; i < dim * nloc; i++) pa->coords[i] = (double)coords[i];
  pa->coord_dim = dim;
  pa->ncoords   = nloc;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCPatchAMGSetRelax_PatchAMG(PC pc, PatchworkAMGRelax relax)
{
  PC_PatchAMG *pa = (PC_PatchAMG *)pc->data;

  PetscFunctionBegin;
  pa->relax     = relax;
  pa->relax_set = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCPatchAMGSetHierarchy_PatchAMG(PC pc, PatchworkAMGHierarchy h)
{
  PC_PatchAMG *pa = (PC_PatchAMG *)pc->data;

  PetscFunctionBegin;
  pa->geometric = (PetscBool)(h == PATCHWORK_AMG_HIERARCHY_GEOMETRIC);
  /* the default relaxation follows: patches need aggregates */
  if (!pa->relax_set) pa->relax = pa->geometric ? PATCHWORK_AMG_RELAX_SPAI1 : PATCHWORK_AMG_RELAX_PATCH;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCPatchAMGSetPrecision_PatchAMG(PC pc, PatchworkPrecision p)
{
  PetscFunctionBegin;
  ((PC_PatchAMG *)pc->data)->precision = p;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCPatchAMGSetPatchSize_PatchAMG(PC pc, PetscInt size)
{
  PetscFunctionBegin;
  PetscCheck(size >= 1 && size <= 1024, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "patch size must be in [1, 1024], got %" PetscInt_FMT, size);
  ((PC_PatchAMG *)pc->data)->patch_size = size;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCPatchAMGSetDimension_PatchAMG(PC pc, PetscInt dim)
{
  PetscFunctionBegin;
  PetscCheck(dim == 0 || dim == 2 || dim == 3, PetscObjectComm((PetscObject)pc), PETSC_ERR_ARG_OUTOFRANGE, "The dimension must be 2, 3, or 0 (inferred), got %" PetscInt_FMT, dim);
  ((PC_PatchAMG *)pc->data)->dim = dim;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode PCPatchAMGGetNumberLevels_PatchAMG(PC pc, PetscInt *n)
{
  PetscFunctionBegin;
  *n = ((PC_PatchAMG *)pc->data)->nlevels;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCPatchAMGSetRelax - Choose the relaxation of `PCPATCHAMG`

  Logically Collective

  Input Parameters:
+ pc    - the `PCPATCHAMG`
- relax - `PATCHWORK_AMG_RELAX_PATCH` (default: weighted block Jacobi over patches, each block by inner
          Jacobi sweeps), `PATCHWORK_AMG_RELAX_JACOBI`, `PATCHWORK_AMG_RELAX_L1JACOBI`, `PATCHWORK_AMG_RELAX_SPAI0`,
          `PATCHWORK_AMG_RELAX_CHEBYSHEV` or `PATCHWORK_AMG_RELAX_SPAI1`

  Options Database Key:
. -pc_patchamg_relax <patch,jacobi,l1jacobi,spai0,chebyshev,spai1> - the relaxation

  Level: intermediate

.seealso: `PCPATCHAMG`, `PCPatchAMGSetPatchSize()`
@*/
PetscErrorCode PCPatchAMGSetRelax(PC pc, PatchworkAMGRelax relax)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscTryMethod(pc, "PCPatchAMGSetRelax_C", (PC, PatchworkAMGRelax), (pc, relax));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCPatchAMGSetHierarchy - Choose where the levels of `PCPATCHAMG` come from

  Logically Collective

  Input Parameters:
+ pc - the `PCPATCHAMG`
- h  - `PATCHWORK_AMG_HIERARCHY_ALGEBRAIC` (default: smoothed aggregation on the matrix) or
       `PATCHWORK_AMG_HIERARCHY_GEOMETRIC` (the refinement hierarchy of the PC's `DMPLEX`)

  Options Database Keys:
+ -pc_patchamg_hierarchy <algebraic,geometric>                      - the hierarchy
. -pc_patchamg_renumber <natural,rcm,coordinate,hierarchical>        - geometric: the numbering of every level's dofs
- -pc_patchamg_mat_type <type>                                       - geometric: the format of the level matrices, transfers and SPAI matrices

  Notes:
  The geometric hierarchy (Geveler, Ribbrock, Goeddeke, Turek) needs the `DMPLEX` the matrix was
  assembled on, given with `PCSetDM()` (or `KSPSetDM()` with `KSPSetDMActive()` switching the KSP's use off), whose
  coarse meshes are kept (`DMGetCoarseDM()`: -dm_refine_hierarchy, `DMRefineHierarchy()`, or
  `DMRefine()` and `DMSetCoarseDM()`), with vertex coordinates. The finest DM's discretization
  (scalar P1 when it has none) is copied to coarse DMs without one. Every level is used (at most
  -pc_patchamg_levels); the interpolations come from `DMCreateInterpolation()` and are stored with
  their transposes, the coarse operators are Galerkin products, the relaxation is a point or SPAI
  one (default spai1; patch is not available) and the coarsest level is solved by the coarse solver:
  every operation of the cycle is an SpMV, in the format -pc_patchamg_mat_type names (e.g. sell on the
  CPU, sellcuda on the GPU; the coarsest matrix stays AIJ for its factorization). The renumberings are
  rank-local and applied once at setup: natural (the DM's), rcm (reverse Cuthill-McKee of each level's
  matrix), coordinate (vertices sorted by z, y, x), hierarchical (the coarsest level by RCM, each finer
  level every coarse vertex in the coarse order followed by the new vertices it is the first parent of).

  Level: intermediate

.seealso: `PCPATCHAMG`, `PCPatchAMGSetRelax()`, `DMRefineHierarchy()`, `DMCreateInterpolation()`
@*/
PetscErrorCode PCPatchAMGSetHierarchy(PC pc, PatchworkAMGHierarchy h)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveEnum(pc, h, 2);
  PetscTryMethod(pc, "PCPatchAMGSetHierarchy_C", (PC, PatchworkAMGHierarchy), (pc, h));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCPatchAMGSetPrecision - Choose the precision of the patch blocks' matrix values in `PCPATCHAMG`

  Logically Collective

  Input Parameters:
+ pc - the `PCPATCHAMG`
- p  - `PATCHWORK_PRECISION_SINGLE` (default) or `PATCHWORK_PRECISION_DOUBLE`

  Options Database Key:
. -pc_patchamg_precision <single,double> - the precision

  Note:
  The level vectors, the transfers and the Krylov method stay in double precision; single
  precision halves the bytes the relaxation reads, which is what bounds it.

  Level: intermediate

.seealso: `PCPATCHAMG`
@*/
PetscErrorCode PCPatchAMGSetPrecision(PC pc, PatchworkPrecision p)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscTryMethod(pc, "PCPatchAMGSetPrecision_C", (PC, PatchworkPrecision), (pc, p));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCPatchAMGSetPatchSize - Set the largest patch (in rows) of the block-Jacobi relaxation of `PCPATCHAMG`

  Logically Collective

  Input Parameters:
+ pc   - the `PCPATCHAMG`
- size - rows, 1 to 1024 (default 400, the paper's)

  Options Database Key:
. -pc_patchamg_patch_size <size> - the cap

  Level: intermediate

.seealso: `PCPATCHAMG`, `PCPatchAMGSetRelax()`
@*/
PetscErrorCode PCPatchAMGSetPatchSize(PC pc, PetscInt size)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveInt(pc, size, 2);
  PetscTryMethod(pc, "PCPatchAMGSetPatchSize_C", (PC, PetscInt), (pc, size));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCPatchAMGSetDimension - Tell `PCPATCHAMG` the dimension of the problem, which chooses the defaults of
  its aggregation (2D: a 1-MIS with aggregates of at least 4 rows; 3D: a 2-MIS and 9 rows)

  Logically Collective

  Input Parameters:
+ pc  - the `PCPATCHAMG`
- dim - 2 or 3; 0: inferred from `PCSetCoordinates()`, the PC's DM, or the matrix graph (the default)

  Options Database Key:
. -pc_patchamg_dim <dim> - the dimension

  Note:
  `PCLOR` tells its inner `PCPATCHAMG` the operator's dimension (its device matrix has no host pattern to
  infer it from).

  Level: intermediate

.seealso: `PCPATCHAMG`, `PCSetCoordinates()`
@*/
PetscErrorCode PCPatchAMGSetDimension(PC pc, PetscInt dim)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  PetscValidLogicalCollectiveInt(pc, dim, 2);
  PetscTryMethod(pc, "PCPatchAMGSetDimension_C", (PC, PetscInt), (pc, dim));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  PCPatchAMGGetNumberLevels - The number of levels of a set-up `PCPATCHAMG` (0 before `PCSetUp()`)

  Not Collective

  Input Parameter:
. pc - the `PCPATCHAMG`

  Output Parameter:
. n - the levels, the finest included

  Level: intermediate

.seealso: `PCPATCHAMG`
@*/
PetscErrorCode PCPatchAMGGetNumberLevels(PC pc, PetscInt *n)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(pc, PC_CLASSID, 1);
  *n = 0;
  PetscTryMethod(pc, "PCPatchAMGGetNumberLevels_C", (PC, PetscInt *), (pc, n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
  PCPATCHAMG - smoothed-aggregation algebraic multigrid for assembled symmetric positive definite
  matrices (unstructured P1 finite elements above all), whose relaxation is a weighted block Jacobi
  over patches of a few hundred rows, each block solved approximately by Jacobi sweeps in on-chip
  memory (Fu, Lewis, Kirby, Whitaker 2014)

  Options Database Keys:
+ -pc_patchamg_hierarchy <algebraic,geometric>                  - smoothed aggregation, or the DM's refinement hierarchy (`PCPatchAMGSetHierarchy()`)
. -pc_patchamg_relax <patch,jacobi,l1jacobi,spai0,chebyshev,spai1> - relaxation (default patch; geometric: spai1)
. -pc_patchamg_renumber <natural,rcm,coordinate,hierarchical>   - geometric: numbering of every level (default natural)
. -pc_patchamg_mat_type <type>                                  - geometric: format of the level matrices, transfers, SPAI (default the matrix's)
. -pc_patchamg_precision <single,double>                       - precision of the patch blocks' values (default single)
. -pc_patchamg_dim <d>                                          - 2 or 3: the dimension whose defaults k and min_aggregate take (default 0: from `PCSetCoordinates()`, the DM, or the matrix graph)
. -pc_patchamg_k <k>                                            - aggregate roots form a k-MIS, 1 to 10 (default 1 in 2D, 2 in 3D)
. -pc_patchamg_threshold <t>                                    - strength of connection: weaker couplings are left out of the graph of aggregates and patches, 0 <= t < 1 (default 0: none)
. -pc_patchamg_min_aggregate <n>                                - smaller aggregates are dissolved, n >= 1 (default 4 in 2D, 9 in 3D)
. -pc_patchamg_patch_size <n>                                   - largest patch in rows, 1 to 1024 (default 400)
. -pc_patchamg_inner_sweeps <n>                                 - Jacobi sweeps per patch block, n >= 1 (default 3)
. -pc_patchamg_omega <w>                                        - damping of the relaxation, 0 <= w < 2 (default 0: min(1, 1.5/lambda_max(M^-1 A)) per level for patch and spai1, 2/3 for jacobi, 1 for l1jacobi and spai0)
. -pc_patchamg_inner_omega <w>                                  - damping of the inner sweeps, times 2/rho(D^-1 A), 0 < w <= 1 (default 0.8)
. -pc_patchamg_prolong_omega <w>                                - prolongator smoothing factor, 0 <= w <= 2 (default 4/3)
. -pc_patchamg_smooth_steps <n>                                 - pre- and post-relaxation steps, n >= 1 (default 1)
. -pc_patchamg_coarse_size <n>                                  - coarsening stops below this many rows, n >= 1 (default 500)
. -pc_patchamg_redistribute <n>                                 - several ranks: a level with fewer rows per rank is gathered onto fewer ranks (default 1000; 0: never)
. -pc_patchamg_levels <n>                                       - most levels (default 0: as many as the coarse size needs)
. -pc_patchamg_seed <s>                                         - seed of the k-MIS (same seed, same hierarchy)
. -pc_patchamg_product_kernels <bool>                           - P and the Galerkin operators by Patchwork's kernels, on several ranks from each rank's rows and its neighbours' (default true; false: PETSc's MatMatMult and MatPtAP)
. -pc_patchamg_block_products <bool>                            - several ranks: the product kernels on each rank's block, the prolongator smoothed with the couplings to other ranks lumped into its diagonal so that it stays block diagonal (default false: a faster set-up, but more iterations as the grid grows)
. -pc_patchamg_use_coordinates <bool>                           - geometry-informed aggregation where coordinates are known (default true)
. -pc_patchamg_check                                            - check symmetry and definiteness at setup
- -pc_patchamg_coarse_ksp_type, -pc_patchamg_coarse_pc_type      - the coarse solver (default preonly + LU, redundant on several ranks)

  Notes:
  The matrix must be an assembled AIJ matrix (also aijcusparse); a near null space of one vector
  (`MatSetNearNullSpace()`) replaces the constants, and every coarser level gets the vector its
  tentative prolongator maps to the finer level's (the aggregate norms). Aggregates and patches are
  rank-local; a coarse level with fewer rows per rank than -pc_patchamg_redistribute is gathered onto
  fewer ranks, and aggregation goes on there. With device matrices the setup (graphs, on one rank
  also the products) and the relaxation run in CUDA kernels.

  A singular matrix whose null space is attached (`MatSetNullSpace()`; one vector: the constants of a pure
  Neumann problem, or any other) is supported: the null vector replaces the near null space, every level
  carries its image (exactly: P z_c = z when A z = 0), the coarsest level is solved by its pseudo-inverse
  (the matrix pinned in one row, right-hand side and solution projected), and the output of `PCApply()` has
  the null space removed. `PCSetUp()` refuses a null space of several vectors (pure-traction elasticity:
  use `PCGAMG`), an attached vector that is not a null vector, and a coarse solver that fails (a singular
  matrix without its null space attached), each with what to do instead.

  The coarse graphs are induced from the finest one (after a gathering, from the gathered level's
  matrix), so -pc_patchamg_threshold filters the couplings once, where the matrix's values are read.
  For strongly varying coefficients it keeps aggregates from crossing the jumps (blobs with a sigma
  ratio of 100: 38 -> 28-32 iterations with 0.05), but it may cost iterations elsewhere (the 2D
  annulus: 39 -> 46), and the smaller aggregates raise the operator complexity.

  With -pc_patchamg_hierarchy geometric (`PCPatchAMGSetHierarchy()`) the levels are the meshes of the
  refinement hierarchy of the PC's `DMPLEX` instead (Geveler, Ribbrock, Goeddeke, Turek): stored
  interpolations and restrictions, Galerkin operators, point or SPAI relaxation, so that the cycle is
  SpMVs only, in the format and DoF numbering the options choose.

  Level: beginner

.seealso: `PCGAMG`, `PCPatchAMGSetRelax()`, `PCPatchAMGSetPatchSize()`
M*/
PETSC_EXTERN PetscErrorCode PCCreate_PatchAMG(PC pc)
{
  PC_PatchAMG *pa;

  PetscFunctionBegin;
  PetscCall(PetscNew(&pa));
  pc->data          = pa;
  pa->k             = 2;
  pa->min_agg       = 9;
  pa->patch_size    = 400;
  pa->inner         = 3;
  pa->omega         = 0;
  pa->inner_omega   = 0.8;
  pa->prolong_omega = 4.0 / 3.0;
  pa->relax         = PATCHWORK_AMG_RELAX_PATCH;
  pa->smooth_steps  = 1;
  pa->coarse_size   = 500;
  pa->redistribute  = 1000;
  pa->max_levels    = 0;
  pa->precision     = PATCHWORK_PRECISION_SINGLE;
  pa->seed          = 1;
  pa->renumber      = PC_PATCHAMG_RENUMBER_NATURAL;
  pa->product_kernels = PETSC_TRUE;
  pa->use_coords      = PETSC_TRUE;

  pc->ops->setup          = PCSetUp_PatchAMG_Cite;
  pc->ops->apply          = PCApply_PatchAMG;
  pc->ops->applytranspose = PCApply_PatchAMG; /* the V-cycle is symmetric: the same relaxation before and after */
  pc->ops->reset          = PCReset_PatchAMG_All;
  pc->ops->destroy        = PCDestroy_PatchAMG;
  pc->ops->setfromoptions = PCSetFromOptions_PatchAMG;
  pc->ops->view           = PCView_PatchAMG;
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCPatchAMGSetRelax_C", PCPatchAMGSetRelax_PatchAMG));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCPatchAMGSetPrecision_C", PCPatchAMGSetPrecision_PatchAMG));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCPatchAMGSetPatchSize_C", PCPatchAMGSetPatchSize_PatchAMG));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCPatchAMGSetDimension_C", PCPatchAMGSetDimension_PatchAMG));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCPatchAMGGetNumberLevels_C", PCPatchAMGGetNumberLevels_PatchAMG));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCPatchAMGSetHierarchy_C", PCPatchAMGSetHierarchy_PatchAMG));
  PetscCall(PetscObjectComposeFunction((PetscObject)pc, "PCSetCoordinates_C", PCSetCoordinates_PatchAMG));
  PetscFunctionReturn(PETSC_SUCCESS);
}
