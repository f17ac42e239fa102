"""Poisson problem -div(grad u) = f on the unit box with the Patchwork matrix-free Q_k operator, from
Python (petsc4py and the patchwork module): the Python twin of examples/poisson.c, with the same
options, solver defaults and 'summary:' line, so that both give the same iterations and L2 error.

The manufactured solution u = prod_d sin(pi x_d) vanishes on the boundary.
  -dim <3>     spatial dimension, 2 or 3
  -degree <4>  polynomial degree k of the Q_k elements
  -cells <8>   cells per direction
  -rhs <sine>  sine: the manufactured solution above; one: f = 1 (no exact solution)
  -fmg         start from one full multigrid cycle of -pc_type vertexpatch
  -pc_type mg  PETSc's PCMG on the Patchwork hierarchy, -pc_mg_levels of it
Every PETSc option works too: -ksp_type, -pc_type, -dm_vec_type cuda, -log_view, ...
Default: CG + Jacobi to a relative residual of 1e-10. The preconditioners:
  -pc_type jacobi | vertexpatch | lor | mg, and PCPATCHAMG (which needs an assembled matrix) on the
  low-order-refined matrix: -pc_type lor -lor_pc_type patchamg

    python3 examples/poisson.py -dim 3 -degree 4 -cells 8 -pc_type vertexpatch
    mpiexec -n 2 python3 examples/poisson.py -pc_type lor -lor_pc_type patchamg -dm_vec_type cuda
"""

import os
import sys
import time

START = time.monotonic()  # before petsc4py: the start-up (MPI, PETSc, the device) counts in the total

import numpy
import petsc4py

petsc4py.init(sys.argv)  # before PETSc is imported: the options reach PETSc
from petsc4py import PETSc  # noqa: E402

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import patchwork  # noqa: E402


def exact_factor(x):
    """One factor sin(pi x) of the exact solution."""
    return numpy.sin(numpy.pi * x)


def interpolate(dm, scale, v):
    """v = the nodal interpolant of scale * prod_d sin(pi x_d) (scale dim*pi^2: f)."""
    dim = dm.getDim()
    x = dm.getCoordinates().getArray(readonly=True).reshape(-1, dim)
    v.setArray(scale * numpy.prod(exact_factor(x), axis=1))


def load_one(dm, degree, b):
    """b = M 1 with zero Dirichlet rows: the load vector of f = 1 (examples/poisson.h)."""
    Mnat = patchwork.tensor_create(dm, degree)
    patchwork.tensor_set_coefficients(Mnat, 1.0, 0.0)
    patchwork.tensor_set_bc(Mnat, "natural")
    one = b.duplicate()
    one.set(1.0)
    Mnat.mult(one, b)
    dim, sizes = dm.getDim(), dm.getSizes()
    (start, width) = dm.getCorners()
    idx = numpy.meshgrid(*[numpy.arange(start[d], start[d] + width[d]) for d in reversed(range(dim))], indexing="ij")
    boundary = numpy.zeros(idx[0].shape, dtype=bool)
    for d in range(dim):  # idx[dim-1-d] is the index along direction d
        boundary |= (idx[dim - 1 - d] == 0) | (idx[dim - 1 - d] == sizes[d] - 1)
    a = b.getArray(readonly=True).copy()
    a[boundary.ravel()] = 0
    b.setArray(a)
    one.destroy()
    Mnat.destroy()


def lagrange(nodes, t):
    """phi[c, q, i]: the Lagrange polynomial i through nodes[c, :] at t[c, q], for every cell c."""
    n = nodes.shape[1]
    phi = numpy.ones(t.shape + (n,))
    for i in range(n):
        for j in range(n):
            if j != i:
                phi[:, :, i] *= (t - nodes[:, j, None]) / (nodes[:, i, None] - nodes[:, j, None])
    return phi


def l2_error(dm, k, u):
    """||u_h - u||_L2 by (k+2)-point Gauss quadrature per direction on every cell this rank owns
    (a cell belongs to the rank owning its first node), summed over the ranks; sum factorization
    over the cells of one layer at a time. The node positions of a cell along direction d are read
    from the DM's coordinates on the grid line through the rank's first ghosted node (a tensor grid)."""
    dim, n, nq = dm.getDim(), k + 1, k + 2
    sizes = list(dm.getSizes()) + [1] * (3 - dim)
    xs = list(dm.getCorners()[0]) + [0] * (3 - dim)
    xm = list(dm.getCorners()[1]) + [1] * (3 - dim)
    gs = list(dm.getGhostCorners()[0]) + [0] * (3 - dim)
    gm = list(dm.getGhostCorners()[1]) + [1] * (3 - dim)
    qx, qw = numpy.polynomial.legendre.leggauss(nq)
    qx, qw = (qx + 1) / 2, qw / 2  # on [0, 1]
    uloc = dm.getLocalVec()
    dm.globalToLocal(u, uloc)
    ua = uloc.getArray(readonly=True).reshape(gm[2], gm[1], gm[0])
    ca = dm.getCoordinatesLocal().getArray(readonly=True).reshape(gm[2], gm[1], gm[0], dim)
    B, S, W, idx = [], [], [], []  # per direction: basis, exact factor, weights at the quadrature points; node indices
    for d in range(3):
        if d < dim:
            first = numpy.arange((xs[d] + k - 1) // k, min((sizes[d] - 1) // k, (xs[d] + xm[d] + k - 1) // k))
            ind = (first * k - gs[d])[:, None] + numpy.arange(n)[None, :]  # ghosted node indices of each cell
            line = numpy.moveaxis(ca[..., d], 2 - d, 0)[:, 0, 0]  # coordinate d along axis 2 - d of the array
            nodes = line[ind]
            lo, hi = nodes[:, :1], nodes[:, -1:]
            t = lo + qx[None, :] * (hi - lo)
            B.append(lagrange(nodes, t))
            S.append(exact_factor(t))
            W.append(qw[None, :] * (hi - lo))
            idx.append(ind)
        else:  # 2D: one layer of one node, weight 1
            B.append(numpy.ones((1, 1, 1)))
            S.append(numpy.ones((1, 1)))
            W.append(numpy.ones((1, 1)))
            idx.append(numpy.zeros((1, 1), dtype=int))
    err2 = 0.0
    for ez in range(idx[2].shape[0]):
        U = ua[idx[2][ez][:, None, None, None, None], idx[1][None, :, None, :, None], idx[0][None, None, :, None, :]]
        # U[l, ey, ex, j, i] -> values at the quadrature points uh[qz, ey, ex, qy, qx]
        T = numpy.einsum("xqi,lyxji->lyxjq", B[0], U)
        T = numpy.einsum("ypj,lyxjq->lyxpq", B[1], T)
        uh = numpy.einsum("rl,lyxpq->ryxpq", B[2][ez], T)
        ex = S[2][ez][:, None, None, None, None] * S[1][None, :, None, :, None] * S[0][None, None, :, None, :]
        w = W[2][ez][:, None, None, None, None] * W[1][None, :, None, :, None] * W[0][None, None, :, None, :]
        err2 += numpy.sum(w * (uh - ex) ** 2)
    dm.restoreLocalVec(uloc)
    return numpy.sqrt(allreduce_sum(dm.getComm(), err2))


def allreduce_sum(comm, value):
    """The sum of value over the ranks of comm, through a Vec of one entry per rank (no mpi4py)."""
    v = PETSc.Vec().createMPI((1, PETSc.DECIDE), comm=comm)
    v.set(value)
    total = v.sum()
    v.destroy()
    return total


def reason_name(reason):
    """KSPConvergedReasons[reason] of C: the name of a KSP converged reason."""
    names = {getattr(PETSc.KSP.ConvergedReason, a): a for a in dir(PETSc.KSP.ConvergedReason)
             if a.startswith(("CONVERGED_", "DIVERGED_"))}
    return names.get(reason, str(reason))


def main():
    opts = PETSc.Options()
    dim, degree, ncells = opts.getInt("dim", 3), opts.getInt("degree", 4), opts.getInt("cells", 8)
    fmg, rhs = opts.getBool("fmg", False), opts.getString("rhs", "sine")
    if rhs not in ("sine", "one"):
        raise SystemExit("Unknown -rhs %s: use sine or one" % rhs)
    sine = rhs == "sine"
    comm = PETSc.COMM_WORLD
    last, wall = START, {}

    def phase(name):  # the seconds since the last phase, every rank there
        nonlocal last
        comm.barrier()
        now = time.monotonic()
        wall[name], last = now - last, now

    phase("startup")
    dm = patchwork.dmda_create_qk(dim, degree, [ncells] * dim)
    phase("dm")
    A = patchwork.tensor_create(dm, degree)
    A.setFromOptions()
    u = dm.createGlobalVec()
    b = u.duplicate()
    N = u.getSize()

    # b = M f with the exact mass matrix; f vanishes on the boundary, so the Dirichlet rows give b = 0 there
    Mass = patchwork.tensor_create(dm, degree)
    patchwork.tensor_set_coefficients(Mass, 1.0, 0.0)
    if sine:
        f = u.duplicate()
        interpolate(dm, dim * numpy.pi ** 2, f)
        Mass.mult(f, b)
        f.destroy()
    else:
        load_one(dm, degree, b)
    phase("op")

    ksp = PETSc.KSP().create()
    ksp.setOperators(A, A)
    ksp.setType(PETSc.KSP.Type.CG)
    pc = ksp.getPC()
    pc.setType(PETSc.PC.Type.JACOBI)
    ksp.setTolerances(rtol=1e-10, max_it=10000)
    ksp.setFromOptions()
    if pc.getType() == PETSc.PC.Type.MG:  # PCMG on the Patchwork hierarchy, -pc_mg_levels of it
        patchwork.mg_set_hierarchy(pc, PETSc.Options(pc.getOptionsPrefix()).getInt("pc_mg_levels", PETSc.DECIDE))
    ksp.setUp()
    u.set(0.0)
    phase("pc_setup")
    if fmg:  # the full multigrid solver of Cui et al.: FMG, then V-cycles until |b - A u| <= rtol |b|
        patchwork.vertexpatch_fmg(pc, b, u)
        ksp.setInitialGuessNonzero(True)
    ksp.solve(b, u)
    phase("solve")
    its, reason = ksp.getIterationNumber(), reason_name(ksp.getConvergedReason())
    err = l2_error(dm, degree, u) if sine else -1.0
    ktype, ptype = ksp.getType(), pc.getType()

    pr = PETSc.Sys.Print
    pr("Poisson, %dD, Q%d, %d^%d cells, %d DoFs, vectors %s (Python)" % (dim, degree, ncells, dim, N, u.getType()))
    if ptype == patchwork.VERTEXPATCH:
        pr("PCVERTEXPATCH: %d levels, %s precision" % (patchwork.vertexpatch_get_levels(pc), patchwork.vertexpatch_get_precision(pc)))
    if ptype == patchwork.LOR:
        L, inner = patchwork.lor_get_matrix(pc), patchwork.lor_get_inner_pc(pc)
        pr("PCLOR: LOR matrix %s of %d rows, inner PC %s" % (L.getType(), L.getSize()[0], inner.getType()))
    pr("KSP %s + PC %s: %d iterations, %s" % (ktype, ptype, its, reason))
    if sine:
        pr("L2 error %.6e, solve time %.4f s" % (err, wall["solve"]))
    else:
        pr("f = 1: no exact solution; solve time %.4f s" % wall["solve"])
    total = last - START
    pr("wall time: start-up %.3f s, DM %.3f s, operator and right-hand side %.3f s, PC set-up %.3f s, solve %.3f s; "
       "total %.3f s from the start of the script" % (wall["startup"], wall["dm"], wall["op"], wall["pc_setup"], wall["solve"], total))
    pr("summary: dim=%d degree=%d cells=%d dofs=%d ksp=%s pc=%s its=%d reason=%s l2err=%.6e solve_s=%.6f startup_s=%.6f "
       "dm_s=%.6f op_s=%.6f pc_setup_s=%.6f total_s=%.6f"
       % (dim, degree, ncells, N, ktype, ptype, its, reason, err, wall["solve"], wall["startup"], wall["dm"], wall["op"],
          wall["pc_setup"], total))
    if ksp.getConvergedReason() <= 0:
        raise SystemExit("KSPSolve did not converge: %s" % reason)
    for obj in (ksp, u, b, A, Mass, dm):
        obj.destroy()


if __name__ == "__main__":
    main()
