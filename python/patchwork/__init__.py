"""Patchwork from Python: the public C API of libpatchwork.so through ctypes, on petsc4py objects.

Initialize petsc4py first (so that command-line options reach PETSc), then use the module::

    import sys, petsc4py
    petsc4py.init(sys.argv)
    from petsc4py import PETSc
    import patchwork

    dm = patchwork.dmda_create_qk(3, 4, [8, 8, 8])   # Q4 node grid of [0,1]^3 (a PETSc.DMDA)
    A = patchwork.tensor_create(dm, 4)                # matrix-free -lap (a PETSc.Mat of type shell)
    ksp = PETSc.KSP().create()
    ksp.setOperators(A)
    ksp.getPC().setType(patchwork.VERTEXPATCH)

Functions take and return petsc4py objects; the C handles travel as `obj.handle` one way and through
petsc4py's own C API (the `PyPetsc<Class>_New` functions in `PETSc.__pyx_capi__`) the other way, so
returned objects are ordinary petsc4py objects that own one reference. Enumerations are given and
returned as the lower-case names PETSc's options use ('single', 'natural', 'jacobi', ...), read
from the library's own name arrays. A failing C call raises `PETSc.Error`; PETSc prints its message.

The library is looked up at the first call: $PATCHWORK_LIB (the path of libpatchwork.so), then
lib/libpatchwork.so of the repository this file lies in, then libpatchwork.so on the loader's path.
"""

import ctypes
import functools
import os

__all__ = [
    "VERTEXPATCH", "LOR", "PATCHAMG", "load", "library_path", "enum_names",
    "dmda_create_qk", "dmda_set_coordinates_qk",
    "tensor_create", "tensor_set_coefficients", "tensor_set_quadrature", "tensor_set_bc",
    "tensor_get_info", "is_tensor", "transfer_create", "mg_set_hierarchy",
    "vertexpatch_set_levels", "vertexpatch_get_levels", "vertexpatch_set_type",
    "vertexpatch_set_smooth_steps", "vertexpatch_set_precision", "vertexpatch_get_precision",
    "vertexpatch_fmg",
    "lor_set_degree", "lor_set_coefficients", "lor_set_bc", "lor_set_quadrature",
    "lor_get_matrix", "lor_get_inner_pc",
    "patchamg_set_relax", "patchamg_set_hierarchy", "patchamg_set_precision",
    "patchamg_set_patch_size", "patchamg_get_number_levels", "dmplex_assemble_p1",
]

VERTEXPATCH = "vertexpatch"  #: PC type of PCVERTEXPATCH
LOR = "lor"                  #: PC type of PCLOR
PATCHAMG = "patchamg"        #: PC type of PCPATCHAMG

# Which name array of the library lists the values of each enumeration
_ENUMS = {
    "quadrature": "PatchworkTensorQuadratures",
    "bc": "PatchworkTensorBCs",
    "mesh": "PatchworkTensorMeshes",
    "vp_type": "PatchworkVPTypes",
    "precision": "PatchworkPrecisions",
    "relax": "PatchworkAMGRelaxes",
    "hierarchy": "PatchworkAMGHierarchies",
}

_lib = None   # the loaded library
_path = None  # where it was found
_T = None     # ctypes types of PetscInt and PetscReal


def _candidates():
    """The paths load() tries, in order."""
    here = os.path.dirname(os.path.abspath(__file__))
    paths = []
    if os.environ.get("PATCHWORK_LIB"):
        paths.append(os.environ["PATCHWORK_LIB"])
    paths.append(os.path.normpath(os.path.join(here, "..", "..", "lib", "libpatchwork.so")))
    paths.append("libpatchwork.so")  # LD_LIBRARY_PATH, ld.so.cache (an installed copy)
    return paths


@functools.lru_cache(maxsize=None)
def _capi(name, restype, argtype):
    """A function of petsc4py's C API (e.g. PyPetscMat_New), called through ctypes."""
    from petsc4py import PETSc
    capsule = PETSc.__pyx_capi__[name]
    getname = ctypes.pythonapi.PyCapsule_GetName
    getname.restype, getname.argtypes = ctypes.c_char_p, [ctypes.py_object]
    getptr = ctypes.pythonapi.PyCapsule_GetPointer
    getptr.restype, getptr.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return ctypes.PYFUNCTYPE(restype, argtype)(getptr(capsule, getname(capsule)))


def load(path=None):
    """Load libpatchwork.so (once) and call PatchworkInitializePackage(); return the ctypes library.

    path: the library to load; by default $PATCHWORK_LIB, the repository's lib/libpatchwork.so, then
    the loader's search path. Raises OSError naming every path tried when none loads, and
    RuntimeError when the library was linked against another PETSc than the one petsc4py runs.
    """
    global _lib, _path, _T
    if _lib is not None:
        return _lib
    import numpy
    from petsc4py import PETSc  # initializes PETSc (with petsc4py.init()'s arguments, if given)
    if numpy.dtype(PETSc.ScalarType).kind == "c":
        raise RuntimeError("patchwork: petsc4py runs a complex-scalar PETSc; Patchwork needs real scalars")
    tried = []
    for p in [path] if path else _candidates():
        if os.sep in p and not os.path.exists(p):
            tried.append(p + " (no such file)")
            continue
        try:
            lib = ctypes.CDLL(p)
        except OSError as e:
            tried.append("%s (%s)" % (p, e))
            continue
        break
    else:
        raise OSError("patchwork: libpatchwork.so not found; tried:\n  " + "\n  ".join(tried) +
                      "\nBuild it with 'make lib' or set PATCHWORK_LIB=/path/to/libpatchwork.so")
    # The PETSc this library resolves must be the one petsc4py initialized (not a second copy)
    if not ctypes.c_int.in_dll(lib, "PetscInitializeCalled").value:
        raise RuntimeError("patchwork: %s is linked against another PETSc than petsc4py's (%s, PETSc %s):"
                           " build Patchwork with PETSC_DIR of that PETSc" %
                           (p, PETSc.__file__, ".".join(map(str, PETSc.Sys.getVersion()))))
    _T = {"int": {4: ctypes.c_int32, 8: ctypes.c_int64}[numpy.dtype(PETSc.IntType).itemsize],
          "real": {4: ctypes.c_float, 8: ctypes.c_double}[numpy.dtype(PETSc.RealType).itemsize]}
    _lib, _path = lib, p
    _call("PatchworkInitializePackage")
    return lib


def library_path():
    """The path the library was loaded from (loading it if needed)."""
    load()
    return _path


def _call(name, *args):
    """Call a C function of the library that returns a PetscErrorCode; raise PETSc.Error on failure."""
    from petsc4py import PETSc
    f = getattr(_lib, name)
    f.restype = ctypes.c_int
    ierr = f(*args)
    if ierr:
        raise PETSc.Error(ierr)


def _handle(obj, cls, what):
    """The C handle of a petsc4py object of class cls (PETSc.Mat, ...), checked."""
    load()
    if not isinstance(obj, cls):
        raise TypeError("patchwork: %s must be a petsc4py %s, not %s" % (what, cls.__name__, type(obj).__name__))
    if not obj.handle:
        raise ValueError("patchwork: %s is an empty (never created or destroyed) %s" % (what, cls.__name__))
    return ctypes.c_void_p(obj.handle)


def _wrap(cls, handle, owned):
    """A petsc4py object of class cls (PETSc.Mat, PETSc.DM, ...) for a C handle, or None for NULL.

    owned: the handle carries a reference the caller must give up (a new object from a Create
    function); petsc4py's wrapper takes its own reference, so ours is dropped. A borrowed handle
    (from a Get function) is referenced once more by the wrapper and stays alive with it.
    """
    if not handle:
        return None
    new = _capi("PyPetsc%s_New" % cls.__name__, ctypes.py_object, ctypes.c_void_p)
    obj = new(handle)
    if owned:
        _call("PetscObjectDereference", ctypes.c_void_p(handle))
    if not isinstance(obj, cls):
        raise RuntimeError("patchwork: petsc4py wrapped a %s as %s" % (cls.__name__, type(obj).__name__))
    return obj


def enum_names(kind):
    """The names of an enumeration ('quadrature', 'bc', 'mesh', 'vp_type', 'precision', 'relax',
    'hierarchy') in the order of its C values, read from the library."""
    load()
    first = ctypes.c_char_p.in_dll(_lib, _ENUMS[kind])
    array = ctypes.cast(ctypes.addressof(first), ctypes.POINTER(ctypes.c_char_p))
    names = []
    while array[len(names)] is not None:
        names.append(array[len(names)].decode())
    return names[:-2]  # PETSc's arrays end with the type name and the prefix


def _enum(kind, value):
    """The C value of an enumeration given by name (any case) or by number."""
    names = enum_names(kind)
    if isinstance(value, str) and value.lower() in names:
        return ctypes.c_int(names.index(value.lower()))
    if isinstance(value, int) and 0 <= value < len(names):
        return ctypes.c_int(value)
    raise ValueError("patchwork: %r is not a %s; use one of %s" % (value, kind, ", ".join(names)))


def _int(v):
    return _T["int"](int(v))


def _real(v):
    return _T["real"](float(v))


def _reals(values, what, dim):
    """A C array of dim PetscReals, or None."""
    if values is None:
        return None
    if len(values) != dim:
        raise ValueError("patchwork: %s needs %d values, got %d" % (what, dim, len(values)))
    return (_T["real"] * dim)(*map(float, values))


# ------------------------------------------------------------------------ DMDA node grids, operator
def dmda_create_qk(dim, degree, cells, lower=None, upper=None, comm=None):
    """PatchworkDMDACreateQk(): the PETSc.DMDA node grid of Q_k elements on the box [lower, upper]
    (default the unit box) with cells[d] cells in direction d; Gauss-Lobatto node coordinates.
    comm: a PETSc.Comm (default PETSc.COMM_WORLD). DMSetFromOptions() has been called on it."""
    from petsc4py import PETSc
    load()
    if len(cells) != dim:
        raise ValueError("patchwork: cells needs %d values, got %d" % (dim, len(cells)))
    comm = PETSc.COMM_WORLD if comm is None else comm
    comm_get = _capi("PyPetscComm_Get", ctypes.c_void_p, ctypes.py_object)  # an MPI_Comm (a machine word)
    dm = ctypes.c_void_p()
    _call("PatchworkDMDACreateQk", ctypes.c_void_p(comm_get(comm)), _int(dim), _int(degree),
          (_T["int"] * dim)(*map(int, cells)), _reals(lower, "lower", dim), _reals(upper, "upper", dim),
          ctypes.byref(dm))
    return _wrap(PETSc.DM, dm.value, owned=True)


def dmda_set_coordinates_qk(dm, degree, lower, upper):
    """PatchworkDMDASetCoordinatesQk(): Gauss-Lobatto node coordinates of the box [lower, upper]."""
    from petsc4py import PETSc
    h = _handle(dm, PETSc.DM, "dm")
    _call("PatchworkDMDASetCoordinatesQk", h, _int(degree), _reals(lower, "lower", dm.getDim()),
          _reals(upper, "upper", dm.getDim()))


def tensor_create(dm, degree):
    """MatCreatePatchworkTensor(): the matrix-free Q_k operator alpha*M + beta*K (default 0*M + 1*K,
    Dirichlet, Gauss quadrature) on a node grid from dmda_create_qk() or a DMPlex with a Q_k field;
    a PETSc.Mat of type shell. Call setFromOptions() on it for the -mat_patchwork_* options."""
    from petsc4py import PETSc
    h = _handle(dm, PETSc.DM, "dm")
    A = ctypes.c_void_p()
    _call("MatCreatePatchworkTensor", h, _int(degree), ctypes.byref(A))
    return _wrap(PETSc.Mat, A.value, owned=True)


def tensor_set_coefficients(A, alpha, beta):
    """MatPatchworkTensorSetCoefficients(): the operator becomes alpha*M + beta*K."""
    from petsc4py import PETSc
    _call("MatPatchworkTensorSetCoefficients", _handle(A, PETSc.Mat, "A"), _real(alpha), _real(beta))


def tensor_set_quadrature(A, quadrature):
    """MatPatchworkTensorSetQuadrature(): 'gauss' (k+1 Gauss points) or 'gausslobatto' (collocated)."""
    from petsc4py import PETSc
    _call("MatPatchworkTensorSetQuadrature", _handle(A, PETSc.Mat, "A"), _enum("quadrature", quadrature))


def tensor_set_bc(A, bc):
    """MatPatchworkTensorSetBC(): 'dirichlet' (homogeneous; identity rows) or 'natural'."""
    from petsc4py import PETSc
    _call("MatPatchworkTensorSetBC", _handle(A, PETSc.Mat, "A"), _enum("bc", bc))


def is_tensor(A):
    """MatIsPatchworkTensor(): whether A is a Patchwork tensor-product operator."""
    from petsc4py import PETSc
    flag = ctypes.c_int()
    _call("MatIsPatchworkTensor", _handle(A, PETSc.Mat, "A"), ctypes.byref(flag))
    return bool(flag.value)


def tensor_get_info(A):
    """MatPatchworkTensorGetInfo(): what the operator is, as a dict with the keys of the C struct
    PatchworkTensorInfo (dm: a PETSc.DM; mesh, quadrature, bc: names; cells, lower, upper: lists)."""
    from petsc4py import PETSc
    h = _handle(A, PETSc.Mat, "A")
    I, R, E = _T["int"], _T["real"], ctypes.c_int

    class Info(ctypes.Structure):
        _fields_ = [("dm", ctypes.c_void_p), ("mesh", E), ("variable", E), ("dim", I), ("degree", I),
                    ("cells", I * 3), ("lower", R * 3), ("upper", R * 3), ("qpoints", I),
                    ("alpha", R), ("beta", R), ("quadrature", E), ("bc", E)]
    info = Info()
    _call("MatPatchworkTensorGetInfo", h, ctypes.byref(info))
    return {"dm": _wrap(PETSc.DM, info.dm, owned=False), "mesh": enum_names("mesh")[info.mesh],
            "variable": bool(info.variable), "dim": info.dim, "degree": info.degree,
            "cells": list(info.cells), "lower": list(info.lower), "upper": list(info.upper),
            "qpoints": info.qpoints, "alpha": info.alpha, "beta": info.beta,
            "quadrature": enum_names("quadrature")[info.quadrature], "bc": enum_names("bc")[info.bc]}


def transfer_create(coarse, fine):
    """MatCreatePatchworkTransfer(): the Q_k interpolation (a fine x coarse PETSc.Mat of type shell)
    from the grid of the operator coarse to that of fine, which refines it by two."""
    from petsc4py import PETSc
    P = ctypes.c_void_p()
    _call("MatCreatePatchworkTransfer", _handle(coarse, PETSc.Mat, "coarse"), _handle(fine, PETSc.Mat, "fine"),
          ctypes.byref(P))
    return _wrap(PETSc.Mat, P.value, owned=True)


def mg_set_hierarchy(pc, nlevels=-1):
    """PCMGSetPatchworkHierarchy(): PETSc's PCMG on the operator's grid hierarchy (matrix-free
    levels and transfers); nlevels -1 (PETSC_DECIDE): as many as the grid allows."""
    from petsc4py import PETSc
    _call("PCMGSetPatchworkHierarchy", _handle(pc, PETSc.PC, "pc"), _int(nlevels))


# ------------------------------------------------------------------------ PCVERTEXPATCH
def vertexpatch_set_levels(pc, n):
    """PCVertexPatchSetLevels(): number of multigrid levels (1: the smoother alone)."""
    from petsc4py import PETSc
    _call("PCVertexPatchSetLevels", _handle(pc, PETSc.PC, "pc"), _int(n))


def vertexpatch_get_levels(pc):
    """PCVertexPatchGetLevels(): the number of levels (after set-up: the levels built)."""
    from petsc4py import PETSc
    n = _T["int"]()
    _call("PCVertexPatchGetLevels", _handle(pc, PETSc.PC, "pc"), ctypes.byref(n))
    return n.value


def vertexpatch_set_type(pc, vp_type):
    """PCVertexPatchSetType(): 'multiplicative' (default) or 'additive'."""
    from petsc4py import PETSc
    _call("PCVertexPatchSetType", _handle(pc, PETSc.PC, "pc"), _enum("vp_type", vp_type))


def vertexpatch_set_smooth_steps(pc, steps):
    """PCVertexPatchSetSmoothSteps(): pre- and post-smoothing steps."""
    from petsc4py import PETSc
    _call("PCVertexPatchSetSmoothSteps", _handle(pc, PETSc.PC, "pc"), _int(steps))


def vertexpatch_set_precision(pc, precision):
    """PCVertexPatchSetPrecision(): 'single' (default) or 'double' V-cycle."""
    from petsc4py import PETSc
    _call("PCVertexPatchSetPrecision", _handle(pc, PETSc.PC, "pc"), _enum("precision", precision))


def vertexpatch_get_precision(pc):
    """PCVertexPatchGetPrecision(): 'single' or 'double'."""
    from petsc4py import PETSc
    p = ctypes.c_int()
    _call("PCVertexPatchGetPrecision", _handle(pc, PETSc.PC, "pc"), ctypes.byref(p))
    return enum_names("precision")[p.value]


def vertexpatch_fmg(pc, b, x):
    """PCVertexPatchFMG(): x = one full multigrid cycle for b (an initial guess for KSPSolve)."""
    from petsc4py import PETSc
    _call("PCVertexPatchFMG", _handle(pc, PETSc.PC, "pc"), _handle(b, PETSc.Vec, "b"), _handle(x, PETSc.Vec, "x"))


# ------------------------------------------------------------------------ PCLOR
def lor_set_degree(pc, degree):
    """PCLORSetDegree(): degree of the node grid given by pc.setDM() (without a Patchwork operator)."""
    from petsc4py import PETSc
    _call("PCLORSetDegree", _handle(pc, PETSc.PC, "pc"), _int(degree))


def lor_set_coefficients(pc, alpha, beta):
    """PCLORSetCoefficients(): alpha*M + beta*K (without a Patchwork operator)."""
    from petsc4py import PETSc
    _call("PCLORSetCoefficients", _handle(pc, PETSc.PC, "pc"), _real(alpha), _real(beta))


def lor_set_bc(pc, bc):
    """PCLORSetBC(): 'dirichlet' or 'natural' (without a Patchwork operator)."""
    from petsc4py import PETSc
    _call("PCLORSetBC", _handle(pc, PETSc.PC, "pc"), _enum("bc", bc))


def lor_set_quadrature(pc, quadrature):
    """PCLORSetQuadrature(): quadrature of the Q1 sub-elements, 'gausslobatto' or 'gauss'."""
    from petsc4py import PETSc
    _call("PCLORSetQuadrature", _handle(pc, PETSc.PC, "pc"), _enum("quadrature", quadrature))


def lor_get_matrix(pc):
    """PCLORGetMatrix(): the assembled low-order-refined PETSc.Mat (None before set-up)."""
    from petsc4py import PETSc
    A = ctypes.c_void_p()
    _call("PCLORGetMatrix", _handle(pc, PETSc.PC, "pc"), ctypes.byref(A))
    return _wrap(PETSc.Mat, A.value, owned=False)


def lor_get_inner_pc(pc):
    """PCLORGetInnerPC(): the PETSc.PC on the LOR matrix, options prefix -lor_ (None before set-up)."""
    from petsc4py import PETSc
    inner = ctypes.c_void_p()
    _call("PCLORGetInnerPC", _handle(pc, PETSc.PC, "pc"), ctypes.byref(inner))
    return _wrap(PETSc.PC, inner.value, owned=False)


# ------------------------------------------------------------------------ PCPATCHAMG, P1 assembly
def patchamg_set_relax(pc, relax):
    """PCPatchAMGSetRelax(): 'patch' (default), 'jacobi', 'l1jacobi', 'spai0', 'chebyshev' or 'spai1'."""
    from petsc4py import PETSc
    _call("PCPatchAMGSetRelax", _handle(pc, PETSc.PC, "pc"), _enum("relax", relax))


def patchamg_set_hierarchy(pc, hierarchy):
    """PCPatchAMGSetHierarchy(): 'algebraic' (default) or 'geometric' (the PC's DMPlex hierarchy)."""
    from petsc4py import PETSc
    _call("PCPatchAMGSetHierarchy", _handle(pc, PETSc.PC, "pc"), _enum("hierarchy", hierarchy))


def patchamg_set_precision(pc, precision):
    """PCPatchAMGSetPrecision(): 'single' (default) or 'double'."""
    from petsc4py import PETSc
    _call("PCPatchAMGSetPrecision", _handle(pc, PETSc.PC, "pc"), _enum("precision", precision))


def patchamg_set_patch_size(pc, size):
    """PCPatchAMGSetPatchSize(): rows per patch of the patch relaxation."""
    from petsc4py import PETSc
    _call("PCPatchAMGSetPatchSize", _handle(pc, PETSc.PC, "pc"), _int(size))


def patchamg_get_number_levels(pc):
    """PCPatchAMGGetNumberLevels(): levels of the hierarchy (after set-up)."""
    from petsc4py import PETSc
    n = _T["int"]()
    _call("PCPatchAMGGetNumberLevels", _handle(pc, PETSc.PC, "pc"), ctypes.byref(n))
    return n.value


def dmplex_assemble_p1(dm, lam, sigma=None):
    """PatchworkDMPlexAssembleP1(): the P1 matrix of -div(sigma grad u) + lam u (natural conditions)
    on a DMPlex of triangles or tetrahedra; sigma: a PETSc.Vec of one value per local cell, or None
    for 1. A PETSc.Mat of the DM's matrix type (assembled on the GPU for a CUDA type)."""
    from petsc4py import PETSc
    A = ctypes.c_void_p()
    s = None if sigma is None else _handle(sigma, PETSc.Vec, "sigma")
    _call("PatchworkDMPlexAssembleP1", _handle(dm, PETSc.DM, "dm"), _real(lam), s, ctypes.byref(A))
    return _wrap(PETSc.Mat, A.value, owned=True)
