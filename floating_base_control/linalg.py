"""Small dense linear algebra for the inner loops (LAPACK directly: numpy's wrappers cost
several microseconds per call on 6x6 systems)."""
import math

import numpy as np
from scipy.linalg.lapack import dposv

from floating_base_control.compiled import R2, W1, kernel
from floating_base_control.validation import FloatingBaseError


def spd_solve(A, b):
    """``A^-1 b`` by Cholesky for a symmetric positive definite ``A`` (its upper triangle is read).

    Raises :class:`FloatingBaseError` if ``A`` is not positive definite or the result is not
    finite (a NaN in ``A`` or ``b`` passes the factorization).
    """
    _, x, info = dposv(A, b)
    if info != 0 or not np.isfinite(x).all():
        raise FloatingBaseError(f"matrix is not positive definite or not finite (LAPACK dposv info {info})")
    return x


def norm(x):
    """Euclidean norm of a float vector, computed as ``np.linalg.norm`` does (``sqrt(x . x)``, the same
    bits) without its dispatch, which costs more than the arithmetic on a 6- or 7-vector."""
    return math.sqrt(x.dot(x))


@kernel(R2, W1)
def cholesky_solve(U, b):
    """``M^-1 b`` in place, ``M = U^T U`` with ``U`` the upper triangle of LAPACK's ``dposv`` factor."""
    n = len(b)
    for i in range(n):                      # U^T y = b
        for k in range(i):
            b[i] -= U[k, i] * b[k]
        b[i] /= U[i, i]
    for i in range(n - 1, -1, -1):          # U x = y
        for k in range(i + 1, n):
            b[i] -= U[i, k] * b[k]
        b[i] /= U[i, i]
    return b
