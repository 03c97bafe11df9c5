"""Compiled kernels of the control tick (numba), with plain Python as the fallback.

The tick's small-matrix work (6-vectors, 4x4 poses, 6x6 factors) costs little arithmetic but, written
with numpy, one Python call per operation: about 1-2 us each, ~80 per tick.  A function decorated with
:func:`kernel` is compiled to a single call over preallocated arrays, in the style of Pinocchio's
algorithms; the Python source stays the one implementation (``fn.py_func`` runs it uncompiled; the
tests compare the two).  Without numba (a Python it does not support yet) the functions run as written:
slower, with the same results.

* **Compiled when imported**, for the argument types given to :func:`kernel`, never later: a control
  loop must not stop for the compiler at its first pose sample or first rejection.  Arrays are of any
  layout; those a kernel only reads are typed read-only (``R1``..``R3``), so read-only arrays are
  accepted too; those it writes are ``W1``..``W3`` (``RI1``, ``WI1``: integers); ``C1``, ``C2`` are
  C-contiguous arrays it reads with ``np.dot``; ``F`` is a float, ``I`` an integer, ``B`` a boolean,
  ``T3``, ``T9`` tuples of floats (a 3-vector, a row-major 3x3), values on the stack;
  :func:`records` types an array of records (a structured dtype: named fields, arrays among them), which
  bundles what a kernel reads or updates together in one argument.  Kernels that a
  tick calls from Python return nothing or scalars: a returned array would be a new Python object at
  every call.
* **Cached on disk** (numba's ``cache=True``: ``__pycache__`` beside the sources, or the user's cache
  directory if that is read-only).  Compiling every kernel takes about 30 s once, which ``make setup``
  does (:func:`compile_all`); later imports load them in a fraction of a second.
* **Without fast-math**: IEEE arithmetic in the order written, no reassociation (LLVM does not contract
  ``a * b + c`` to a fused multiply-add without it).
"""
try:
    import numba
except ImportError:                     # pragma: no cover - numba is in install_requires
    numba = None

#: numba compiles the kernels (False: they run as plain Python).
COMPILED = numba is not None

if COMPILED:
    F, B, I = numba.float64, numba.boolean, numba.int64
    R1, R2, R3 = (numba.types.Array(numba.float64, d, "A", readonly=True) for d in (1, 2, 3))
    W1, W2, W3 = (numba.types.Array(numba.float64, d, "A") for d in (1, 2, 3))
    RI1, WI1 = (numba.types.Array(numba.int64, 1, "A", readonly=readonly) for readonly in (True, False))
    T3, T9 = numba.types.UniTuple(numba.float64, 3), numba.types.UniTuple(numba.float64, 9)
    # numba's np.dot calls BLAS, as numpy's ``@`` does, only on contiguous arrays (on others it sums in a
    # loop of its own, in another order): a kernel that must add up as numpy does takes these
    C1, C2 = (numba.types.Array(numba.float64, d, "C", readonly=True) for d in (1, 2))
else:                                   # pragma: no cover
    F = B = I = R1 = R2 = R3 = W1 = W2 = W3 = RI1 = WI1 = T3 = T9 = C1 = C2 = None


def records(dtype, readonly=False):
    """The type of a 1-d array of records of the structured ``dtype`` (``None`` without numba).  Kernels read a
    field as ``rows[i]["name"]`` (which numpy runs as written too)."""
    if not COMPILED:                    # pragma: no cover
        return None
    return numba.types.Array(numba.from_dtype(dtype), 1, "A", readonly=readonly)


def kernel(*arg_types):
    """Compile the decorated function for ``arg_types`` (nopython, cached, no fast-math); its
    ``py_func`` is the Python source."""
    def compile_(fn):
        if not COMPILED:                # pragma: no cover
            fn.py_func = fn
            return fn
        return numba.njit(arg_types, cache=True, nogil=True)(fn)
    return compile_


def kernel_modules():
    """The names of the package's modules that define kernels."""
    import pkgutil
    import re
    from pathlib import Path

    decorated = re.compile(r"^\s*@kernel\(", re.MULTILINE)
    return [info.name for info in pkgutil.walk_packages([str(Path(__file__).parent)], f"{__package__}.")
            if not info.ispkg
            and decorated.search((Path(info.module_finder.path) / f"{info.name.rsplit('.', 1)[1]}.py").read_text())]


def compile_all():
    """Import every module that defines kernels, so that numba's cache holds them all: run once (``make setup``),
    no process compiles one later, and processes that start together (a simulator and its controller, the test
    processes) do not each compile the same ones."""
    import importlib
    for name in kernel_modules():
        importlib.import_module(name)
