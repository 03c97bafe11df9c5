"""Small dense linear algebra for the inner loops (LAPACK directly: numpy's wrappers cost
several microseconds per call on 6x6 systems)."""
import numpy as np
from scipy.linalg.lapack import dposv

from .validation import FloatingBaseError


def spd_solve(A, b):
    """``A^-1 b`` by Cholesky for a symmetric positive definite ``A`` (its upper triangle is read).

    Raises :class:`FloatingBaseError` if ``A`` is not positive definite or the result is not
    finite (a NaN in ``A`` or ``b`` passes the factorization).
    """
    _, x, info = dposv(A, b)
    if info != 0 or not np.isfinite(x).all():
        raise FloatingBaseError(f"matrix is not positive definite or not finite (LAPACK dposv info {info})")
    return x
