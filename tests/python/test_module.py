"""Checks of the patchwork Python module (python/patchwork): every function returns the petsc4py
object it promises (class, type, sizes, reference count, the C handle it wraps), the objects act as
the C API says (numbers checked against exact values), and every setter reaches the C code: a solve
configured by the setter equals, iteration for iteration and to the last bit of the solution, one
configured by the equivalent command-line option, and differs from the default. Runs on any number
of ranks; prints one line per check and exits 1 when one fails.
"""

import os
import sys

import numpy
import petsc4py

petsc4py.init(sys.argv)
from petsc4py import PETSc  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import patchwork as pw  # noqa: E402

failures = []
count = 0


def global_min(value):
    """The minimum of value over the ranks of PETSC_COMM_WORLD (a Vec of one entry per rank)."""
    v = PETSc.Vec().createMPI((1, PETSc.DECIDE), comm=PETSc.COMM_WORLD)
    v.set(value)
    m = v.min()[1]
    v.destroy()
    return m


def check(cond, what):
    """Record and print one check (collective: it passes when it passes on every rank)."""
    global count
    count += 1
    cond = global_min(1.0 if cond else 0.0) == 1.0
    PETSc.Sys.Print("%s %s" % ("ok  " if cond else "FAIL", what))
    if not cond:
        failures.append(what)


def raises(exc, text, f, *args):
    """Whether f(*args) raises exc whose message contains text."""
    try:
        f(*args)
    except exc as e:
        return text in str(e)
    return False


def solve(A, b, pctype, setup=None, prefix=None, options=()):
    """CG on A (rtol 1e-10) with PC pctype; setup(pc) runs before KSPSetFromOptions, options are set
    under the KSP's prefix. Returns (iterations, solution)."""
    ksp = PETSc.KSP().create(comm=A.getComm())
    if prefix:
        ksp.setOptionsPrefix(prefix)
        for k, v in options:
            PETSc.Options().setValue(prefix + k, v)
    ksp.setOperators(A, A)
    ksp.setType("cg")
    ksp.setTolerances(rtol=1e-10, max_it=500)
    ksp.getPC().setType(pctype)
    if setup:
        setup(ksp.getPC())
    ksp.setFromOptions()
    x = b.duplicate()
    ksp.solve(b, x)
    its = ksp.getIterationNumber() if ksp.getConvergedReason() > 0 else -1
    ksp.destroy()
    return its, x


def same(r1, r2):
    """Same iterations and bitwise the same solution."""
    return r1[0] == r2[0] and r1[0] > 0 and (r1[1] - r2[1]).norm(PETSc.NormType.INFINITY) == 0


def owned_coordinates(dm):
    """The coordinates of this rank's nodes, one row per node."""
    return dm.getCoordinates().getArray(readonly=True).reshape(-1, dm.getDim())


def load_vector(A, f):
    """A Vec of A's layout filled by f(coordinates) at the nodes of A's DM (pw.tensor_get_info)."""
    dm = pw.tensor_get_info(A)["dm"]
    v = dm.createGlobalVec()
    v.setArray(f(owned_coordinates(dm)))
    return v


def main():
    comm = PETSc.COMM_WORLD
    # --- loading and registration
    check(os.path.exists(pw.library_path()), "library loaded from %s" % pw.library_path())
    pc = PETSc.PC().create(comm=PETSc.COMM_SELF)
    for t in (pw.VERTEXPATCH, pw.LOR, pw.PATCHAMG):
        pc.setType(t)
        check(pc.getType() == t, "PatchworkInitializePackage() registered PC type %s" % t)
    pc.destroy()
    check(pw.enum_names("relax") == ["patch", "jacobi", "l1jacobi", "spai0", "chebyshev", "spai1"] and
          pw.enum_names("bc") == ["dirichlet", "natural"], "enum names read from the library")

    # --- the node grid
    k, lower, upper = 3, [0.0, -1.0], [2.0, 1.0]
    dm = pw.dmda_create_qk(2, k, [4, 5], lower, upper)
    check(isinstance(dm, PETSc.DMDA) and dm.getDim() == 2 and dm.getSizes() == (13, 16) and
          dm.getStencilWidth() == k, "dmda_create_qk: a PETSc.DMDA of 13 x 16 nodes, stencil width k")
    check(dm.getRefCount() == 1, "dmda_create_qk: the Python object holds the only reference")
    gl = numpy.array([0, (1 - 5 ** -0.5) / 2, (1 + 5 ** -0.5) / 2])  # Gauss-Lobatto nodes of Q3 on [0, 1)
    (xs, ys), (xm, ym) = dm.getCorners()
    i, j = numpy.meshgrid(numpy.arange(xs, xs + xm), numpy.arange(ys, ys + ym), indexing="xy")
    expect = numpy.stack([lower[0] + 0.5 * (i // k + gl[i % k]), lower[1] + 0.4 * (j // k + gl[j % k])], -1).reshape(-1, 2)
    check(numpy.abs(owned_coordinates(dm) - expect).max() < 1e-14, "dmda_create_qk: Gauss-Lobatto coordinates of the box")
    check(raises(PETSc.Error, "Degree 0 not supported", pw.dmda_create_qk, 2, 0, [4, 5]), "a C error raises PETSc.Error with PETSc's message")
    check(raises(ValueError, "cells needs 2 values", pw.dmda_create_qk, 2, 3, [4]), "cells of the wrong length: ValueError")

    # --- the operator
    A = pw.tensor_create(dm, k)
    N = dm.getSizes()[0] * dm.getSizes()[1]
    check(isinstance(A, PETSc.Mat) and A.getType() == "shell" and A.getSize() == (N, N), "tensor_create: a PETSc.Mat of type shell, %d x %d" % (N, N))
    check(A.getRefCount() == 1 and pw.is_tensor(A), "tensor_create: one reference, is_tensor() true")
    info = pw.tensor_get_info(A)
    check(info["dm"].handle == dm.handle and isinstance(info["dm"], PETSc.DMDA), "tensor_get_info: dm is the grid's DMDA")
    check((info["dim"], info["degree"], info["cells"], info["qpoints"]) == (2, 3, [4, 5, 1], 4) and info["lower"][:2] == lower and
          info["upper"][:2] == upper and (info["alpha"], info["beta"], info["mesh"], info["quadrature"], info["bc"], info["variable"]) ==
          (0.0, 1.0, "cartesian", "gauss", "dirichlet", False), "tensor_get_info: %s" % {k_: v for k_, v in info.items() if k_ != "dm"})
    one, y = A.createVecs()
    one.set(1.0)
    pw.tensor_set_coefficients(A, 1.0, 0.0)
    pw.tensor_set_bc(A, "natural")
    A.mult(one, y)
    check(abs(y.sum() - 4.0) < 1e-12, "natural mass matrix: 1^T M 1 = area of [0,2]x[-1,1] = 4 (got %.15g)" % y.sum())
    pw.tensor_set_quadrature(A, "GaussLobatto")
    A.mult(one, y)
    check(abs(y.sum() - 4.0) < 1e-12 and pw.tensor_get_info(A)["quadrature"] == "gausslobatto", "Gauss-Lobatto mass: 1^T M 1 = 4 as well")
    pw.tensor_set_coefficients(A, 0.0, 1.0)
    A.mult(one, y)
    check(y.norm() < 1e-12 and pw.tensor_get_info(A)["bc"] == "natural", "natural stiffness: K 1 = 0 (|K 1| = %.2e)" % y.norm())
    pw.tensor_set_bc(A, "dirichlet")
    check(pw.tensor_get_info(A)["bc"] == "dirichlet", "tensor_set_bc back to dirichlet")
    check(raises(ValueError, "use one of dirichlet, natural", pw.tensor_set_bc, A, "periodic"), "a bad enum name: ValueError naming the choices")
    check(raises(TypeError, "must be a petsc4py Mat", pw.tensor_set_bc, one, "natural"), "a Vec where a Mat is expected: TypeError")
    check(raises(ValueError, "empty", pw.is_tensor, PETSc.Mat()), "an empty Mat: ValueError")
    aij = PETSc.Mat().createAIJ([4, 4], comm=comm)
    aij.setUp()
    aij.assemble()
    check(not pw.is_tensor(aij), "is_tensor() false for an AIJ matrix")
    for o in (aij, one, y, A, dm):
        o.destroy()

    # --- a 2D Q2 Dirichlet problem for the PCs: A u = M 1
    k = 2
    dm = pw.dmda_create_qk(2, k, [8, 8])
    A = pw.tensor_create(dm, k)
    M = pw.tensor_create(dm, k)
    pw.tensor_set_coefficients(M, 1.0, 0.0)
    b, one = A.createVecs()
    one.set(1.0)
    M.mult(one, b)

    # PCVERTEXPATCH
    ksp = PETSc.KSP().create(comm=comm)
    ksp.setOperators(A)
    pc = ksp.getPC()
    pc.setType(pw.VERTEXPATCH)
    pw.vertexpatch_set_levels(pc, 2)
    pw.vertexpatch_set_precision(pc, "double")
    ksp.setUp()
    check(pw.vertexpatch_get_levels(pc) == 2 and pw.vertexpatch_get_precision(pc) == "double", "vertexpatch_set/get_levels, _precision")
    x = b.duplicate()
    pw.vertexpatch_fmg(pc, b, x)
    r = b.duplicate()
    A.mult(x, r)
    r.aypx(-1.0, b)
    check(r.norm() < 1e-2 * b.norm(), "vertexpatch_fmg: one FMG cycle reduces the residual to %.1e of |b|" % (r.norm() / b.norm()))
    ksp.destroy()

    def vp_setters(pc):
        pw.vertexpatch_set_type(pc, "additive")
        pw.vertexpatch_set_smooth_steps(pc, 2)
        pw.vertexpatch_set_precision(pc, "double")
        pw.vertexpatch_set_levels(pc, 2)
    a = solve(A, b, pw.VERTEXPATCH, vp_setters)
    o = solve(A, b, pw.VERTEXPATCH, prefix="vp_", options=[("pc_vertexpatch_type", "additive"), ("pc_vertexpatch_smooth_steps", "2"),
                                                              ("pc_vertexpatch_precision", "double"), ("pc_vertexpatch_levels", "2")])
    d = solve(A, b, pw.VERTEXPATCH)
    check(same(a, o) and not same(a, d), "vertexpatch setters = options (%d its), default differs (%d its)" % (a[0], d[0]))

    # PCLOR: on the Patchwork operator, and on a user's shell with the grid from PCSetDM() and the setters
    ksp = PETSc.KSP().create(comm=comm)
    ksp.setOperators(A)
    pc = ksp.getPC()
    pc.setType(pw.LOR)
    check(pw.lor_get_matrix(pc) is None, "lor_get_matrix before set-up: None")
    ksp.setUp()
    L, inner = pw.lor_get_matrix(pc), pw.lor_get_inner_pc(pc)
    check(isinstance(L, PETSc.Mat) and L.getType() in ("seqaij", "mpiaij") and L.getSize() == A.getSize(),
          "lor_get_matrix: the PC's AIJ matrix (%s, %d rows)" % (L.getType(), L.getSize()[0]))
    refs = L.getRefCount()
    L2 = pw.lor_get_matrix(pc)
    more = L.getRefCount()
    L2.destroy()
    check(L2.handle == 0 and more == refs + 1 and L.getRefCount() == refs, "lor_get_matrix: a borrowed Mat, one reference per wrapper (%d -> %d -> %d)" % (refs, more, L.getRefCount()))
    check(isinstance(inner, PETSc.PC) and inner.getType() in ("hypre", "gamg") and inner.getOptionsPrefix() == "lor_" and
          inner.getOperators()[1].handle == L.handle, "lor_get_inner_pc: a PETSc.PC (%s, prefix lor_) on that matrix" % inner.getType())
    ksp.destroy()
    a = solve(A, b, pw.LOR, lambda pc: pw.lor_set_quadrature(pc, "gauss"))
    o = solve(A, b, pw.LOR, prefix="lorq_", options=[("pc_lor_quadrature", "gauss")])
    d = solve(A, b, pw.LOR)
    check(same(a, o) and not same(a, d), "lor_set_quadrature = -pc_lor_quadrature (%d its), default differs (%d its)" % (a[0], d[0]))
    pw.tensor_set_coefficients(A, 2.0, 3.0)

    class Shell:
        """A user's matrix-free operator that is no Patchwork Mat (it calls one)."""
        def mult(self, mat, x, y):
            A.mult(x, y)
    S = PETSc.Mat().createPython(A.getSizes(), Shell(), comm=comm)
    S.setUp()

    def lor_user(pc):
        pc.setDM(dm)
        pw.lor_set_degree(pc, k)
        pw.lor_set_coefficients(pc, 2.0, 3.0)
        pw.lor_set_bc(pc, "dirichlet")
    t = solve(A, b, pw.LOR)
    u = solve(S, b, pw.LOR, lor_user)
    check(t[0] == u[0] and t[0] > 0 and (t[1] - u[1]).norm() <= 1e-12 * t[1].norm(),
          "PCLOR on a user's shell with lor_set_degree/_coefficients/_bc = on the Patchwork operator (%d its)" % t[0])
    pw.tensor_set_coefficients(A, 0.0, 1.0)
    S.destroy()

    # PCMG on the Patchwork hierarchy
    ksp = PETSc.KSP().create(comm=comm)
    ksp.setOperators(A)
    ksp.getPC().setType("mg")
    pw.mg_set_hierarchy(ksp.getPC(), 3)
    ksp.setTolerances(rtol=1e-10)
    ksp.solve(b, x)
    check(ksp.getPC().getMGLevels() == 3 and ksp.getConvergedReason() > 0 and ksp.getIterationNumber() < 20,
          "mg_set_hierarchy: PCMG with 3 levels, %d iterations" % ksp.getIterationNumber())
    ksp.destroy()

    # The Q_k transfer reproduces a function of Q_k that vanishes on the boundary (Dirichlet nodes are not read)
    dmc = dm.coarsen()
    pw.dmda_set_coordinates_qk(dmc, k, [0, 0], [1, 1])
    Ac = pw.tensor_create(dmc, k)
    P = pw.transfer_create(Ac, A)
    check(isinstance(P, PETSc.Mat) and P.getType() == "shell" and P.getSize() == (A.getSize()[0], Ac.getSize()[0]) and P.getRefCount() == 1,
          "transfer_create: a fine x coarse shell, one reference")
    def poly(xy):
        return xy[:, 0] * (1 - xy[:, 0]) * xy[:, 1] * (1 - xy[:, 1])
    uc, uf = load_vector(Ac, poly), load_vector(A, poly)
    Pu = uf.duplicate()
    P.mult(uc, Pu)
    xy = owned_coordinates(dm)
    interior = numpy.all((xy > 1e-12) & (xy < 1 - 1e-12), axis=1)
    diff = numpy.abs(Pu.getArray(readonly=True) - uf.getArray(readonly=True))[interior].max(initial=0)
    check(diff < 1e-13 and interior.sum() > 0, "transfer_create: interpolates x(1-x)y(1-y) exactly (max error %.1e at rank 0's %d interior nodes)" % (diff, interior.sum()))
    for o in (P, Ac, dmc, uc, uf, Pu):
        o.destroy()

    for o in (x, r, b, one, A, M, dm):
        o.destroy()

    # PCPATCHAMG: inside PCLOR (-lor_pc_type patchamg), then on the LOR matrix with setters = options
    # (2D Q2 on 24^2 cells: 2401 rows, more than PCPATCHAMG's coarse size of 500)
    dm = pw.dmda_create_qk(2, 2, [24, 24])
    A = pw.tensor_create(dm, 2)
    b = dm.createGlobalVec()
    b.setArray(numpy.sin(7 * owned_coordinates(dm)).prod(axis=1))
    ksp = PETSc.KSP().create(comm=comm)
    ksp.setOptionsPrefix("amg_")
    PETSc.Options().setValue("amg_lor_pc_type", "patchamg")
    ksp.setOperators(A)
    ksp.getPC().setType(pw.LOR)
    ksp.setFromOptions()
    ksp.setUp()
    inner = pw.lor_get_inner_pc(ksp.getPC())
    check(inner.getType() == pw.PATCHAMG and pw.patchamg_get_number_levels(inner) >= 2,
          "patchamg inside PCLOR: %d levels" % pw.patchamg_get_number_levels(inner))
    ksp.destroy()
    ksp = PETSc.KSP().create(comm=comm)
    ksp.setOperators(A)
    ksp.getPC().setType(pw.LOR)
    ksp.setUp()
    L = pw.lor_get_matrix(ksp.getPC())
    ksp.destroy()  # L lives on: the Python object holds a reference
    check(L.getRefCount() == 1 and L.getSize() == A.getSize(), "lor_get_matrix's Mat outlives its PC (one reference left)")

    def amg_setters(pc):
        pw.patchamg_set_relax(pc, "jacobi")
        pw.patchamg_set_precision(pc, "double")
        pw.patchamg_set_hierarchy(pc, "algebraic")
    a = solve(L, b, pw.PATCHAMG, amg_setters)
    o = solve(L, b, pw.PATCHAMG, prefix="pa_", options=[("pc_patchamg_relax", "jacobi"), ("pc_patchamg_precision", "double")])
    d = solve(L, b, pw.PATCHAMG)
    check(same(a, o) and not same(a, d), "patchamg setters = options (%d its), default differs (%d its)" % (a[0], d[0]))
    a = solve(L, b, pw.PATCHAMG, lambda pc: pw.patchamg_set_patch_size(pc, 16))
    o = solve(L, b, pw.PATCHAMG, prefix="ps_", options=[("pc_patchamg_patch_size", "16")])
    check(same(a, o) and not same(a, d), "patchamg_set_patch_size = -pc_patchamg_patch_size (%d its; default %d)" % (a[0], d[0]))
    for o in (L, b, A, dm):
        o.destroy()

    # P1 assembly on the unit cube cut into 6 tetrahedra (Kuhn), refined once: 27 vertices, 48 cells
    corners = numpy.array([[i & 1, (i >> 1) & 1, i >> 2] for i in range(8)], dtype=float)
    tets = []
    for a_, b_ in ((1, 3), (1, 5), (2, 3), (2, 6), (4, 5), (4, 6)):
        t = [0, a_, b_, 7]
        if numpy.linalg.det(corners[t[1:]] - corners[0]) < 0:
            t[1], t[2] = t[2], t[1]
        tets.append(t)
    rank0 = comm.getRank() == 0
    plex = PETSc.DMPlex().createFromCellList(3, numpy.array(tets if rank0 else [], dtype=PETSc.IntType).reshape(-1, 4),
                                             corners if rank0 else numpy.zeros((0, 3)), comm=comm)
    plex = plex.refine()
    plex.distribute()
    P1 = pw.dmplex_assemble_p1(plex, 2.0)
    ones, z = P1.createVecs()
    ones.set(1.0)
    P1.mult(ones, z)
    check(isinstance(P1, PETSc.Mat) and P1.getRefCount() == 1 and P1.getSize()[0] == 27 and abs(z.sum() - 2.0) < 1e-12 and P1.isSymmetric(1e-13),
          "dmplex_assemble_p1: %s 27 x 27, one reference, symmetric, 1^T A 1 = 2 |[0,1]^3| (got %.15g)" % (P1.getType(), z.sum()))
    for o in (P1, ones, z, plex):
        o.destroy()

    PETSc.Sys.Print("%d checks, %d failed" % (count, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
