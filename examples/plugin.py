"""A plain petsc4py program that reaches Patchwork through PETSc's -dll_append only: it never imports
the patchwork module, yet after

    python3 examples/plugin.py -dll_append /path/to/lib/libpetscpatchwork.so

PETSc has called PetscDLLibraryRegister_petscpatchwork() and the PC types vertexpatch, lor and
patchamg exist. This route covers the preconditioners on a user's own matrix; the matrix-free
operator (which PCVERTEXPATCH needs, and PCLOR reads its grid from) is created through the C API,
i.e. the patchwork module (examples/poisson.py).

The problem is the 7-point finite-difference Laplacian + lambda/n^2 on an n^3 grid with natural
boundary conditions (tests/mat/test_patchamg.c's fd7: the same matrix, b = 1), solved by CG to
||b - Ax|| <= 1e-8 ||b|| with the PC the options give (default patchamg):
  -n <32>        grid points per direction
  -lambda <1>    reaction coefficient
Every PETSc option works: -pc_type gamg, -pc_patchamg_relax jacobi, -dm_mat_type aijcusparse
-dm_vec_type cuda, -ksp_view, ... The last line is 'summary: key=value ...' for scripts.
"""

import sys

import numpy
import petsc4py

petsc4py.init(sys.argv)
from petsc4py import PETSc  # noqa: E402


def registered_types():
    """The Patchwork PC types PETSc knows (all three once the plugin is loaded)."""
    found = []
    for t in ("vertexpatch", "lor", "patchamg"):
        pc = PETSc.PC().create(comm=PETSc.COMM_SELF)
        try:
            pc.setType(t)
            found.append(t)
        except PETSc.Error:
            pass
        pc.destroy()
    return found


def fd7_matrix(n, lam):
    """The 7-point Laplacian with natural boundary conditions plus lam/n^2 on the diagonal, on a DMDA
    of n^3 points (DMSetFromOptions: -dm_mat_type applies); rows set by local (ghosted) indices."""
    da = PETSc.DMDA().create([n, n, n], stencil_type=PETSc.DMDA.StencilType.STAR, stencil_width=1, setup=False)
    da.setFromOptions()
    da.setUp()
    A = da.createMatrix()
    (xs, ys, zs), (xm, ym, zm) = da.getCorners()
    (gxs, gys, gzs), (gxm, gym, gzm) = da.getGhostCorners()

    def local(i, j, k):
        return ((k - gzs) * gym + (j - gys)) * gxm + (i - gxs)
    for k in range(zs, zs + zm):
        for j in range(ys, ys + ym):
            for i in range(xs, xs + xm):
                cols = [local(i + a, j + b, k + c) for a, b, c in
                        ((-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), (0, 0, -1), (0, 0, 1))
                        if 0 <= i + a < n and 0 <= j + b < n and 0 <= k + c < n]
                vals = [-1.0] * len(cols) + [len(cols) + lam / (n * n)]
                A.setValuesLocal([local(i, j, k)], cols + [local(i, j, k)], vals)
    A.assemble()
    return da, A


def main():
    found = registered_types()
    PETSc.Sys.Print("Patchwork PC types registered: %s" % (" ".join(found) or "none"))
    if not found:
        PETSc.Sys.Print("Patchwork is not loaded: run with -dll_append /path/to/lib/libpetscpatchwork.so")
        raise SystemExit(2)
    opts = PETSc.Options()
    n, lam = opts.getInt("n", 32), opts.getReal("lambda", 1.0)
    da, A = fd7_matrix(n, lam)
    x, b = A.createVecs()
    b.set(1.0)
    ksp = PETSc.KSP().create()
    ksp.setType(PETSc.KSP.Type.CG)
    ksp.setOperators(A, A)
    ksp.setTolerances(rtol=1e-8, max_it=500)
    ksp.setNormType(PETSc.KSP.NormType.UNPRECONDITIONED)  # ||r|| / ||b|| < 1e-8
    ksp.getPC().setType("patchamg")
    ksp.setFromOptions()
    try:
        ksp.solve(b, x)
    except PETSc.Error as e:  # e.g. -pc_type vertexpatch, which needs the Patchwork operator
        PETSc.Sys.Print("PC %s failed on this %s matrix:\n%s" % (ksp.getPC().getType(), A.getType(), e))
        raise SystemExit(1)
    r = b.duplicate()
    A.mult(x, r)
    r.aypx(-1.0, b)
    relres = r.norm() / b.norm()
    its, ptype = ksp.getIterationNumber(), ksp.getPC().getType()
    PETSc.Sys.Print("fd7 n=%d: CG + %s, %d iterations, relative residual %.2e" % (n, ptype, its, relres))
    PETSc.Sys.Print("summary: n=%d rows=%d mat=%s pc=%s its=%d relres=%.2e converged=%d"
                    % (n, A.getSize()[0], A.getType(), ptype, its, relres, ksp.getConvergedReason() > 0))
    if not (ksp.getConvergedReason() > 0 and numpy.isfinite(relres) and relres <= 1e-8):
        raise SystemExit(1)
    for obj in (ksp, r, x, b, A, da):
        obj.destroy()


if __name__ == "__main__":
    main()
