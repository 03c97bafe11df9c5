"""Small dense linear algebra for the inner loops (LAPACK directly: numpy's wrappers cost
several microseconds per call on 6x6 systems)."""
from scipy.linalg.lapack import dposv

from .validation import FloatingBaseError


def spd_solve(A, b):
    """``A^-1 b`` by Cholesky for a symmetric positive definite ``A`` (its upper triangle is read)."""
    _, x, info = dposv(A, b)
    if info != 0:
        raise FloatingBaseError(f"matrix is not positive definite (LAPACK dposv info {info})")
    return x
