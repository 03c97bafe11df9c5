"""SE(3) tools in the notation of seed 002 (Mishra et al.), Appendix A.

Twists are body twists ordered ``[omega; v]`` and wrenches are ordered
``[moment; force]`` (the dual pairing of ``[omega; v]``).  Poses are 4x4
homogeneous matrices ``g = [[R, p], [0, 1]]``.

Pinocchio orders twists ``[v; omega]``; the exponential, logarithm and the
Jacobian of the logarithm are taken from Pinocchio and reordered here, so
that the package's interfaces never see Pinocchio's ordering.  Only the
control tick's kernels (``rel_fast``, the observer's inner loop) work in it,
with the helpers at the end of this module, and convert at their edges.
"""
import numpy as np
import pinocchio as pin

#: Index permutation between ``[omega; v]`` and Pinocchio's ``[v; omega]``
#: (its own inverse).
SWAP = np.array([3, 4, 5, 0, 1, 2])
SWAP_BOTH = np.ix_(SWAP, SWAP)


def skew(w):
    """``w_x``: the 3x3 cross-product matrix of a 3-vector."""
    return np.array([[0.0, -w[2], w[1]],
                     [w[2], 0.0, -w[0]],
                     [-w[1], w[0], 0.0]])


def hat(V):
    """``V^`` in se(3) (seed 002, eq. 60): 4x4 matrix of a twist ``[omega; v]``."""
    out = np.zeros((4, 4))
    out[:3, :3] = skew(V[:3])
    out[:3, 3] = V[3:]
    return out


def vee(X):
    """Inverse of :func:`hat`: the twist ``[omega; v]`` of a 4x4 element of se(3)."""
    return np.array([X[2, 1], X[0, 2], X[1, 0], X[0, 3], X[1, 3], X[2, 3]])


def Ad(g):
    """``Ad_g`` (seed 002, eq. 60): 6x6 adjoint of a pose, ``[[R, 0], [p_x R, R]]``."""
    R, p = g[:3, :3], g[:3, 3]
    out = np.zeros((6, 6))
    out[:3, :3] = R
    out[3:, 3:] = R
    out[3:, :3] = skew(p) @ R
    return out


def Ad_inv(g):
    """``Ad_g^-1 = Ad_(g^-1)``: ``[[R^T, 0], [-R^T p_x, R^T]]``."""
    R, p = g[:3, :3], g[:3, 3]
    out = np.zeros((6, 6))
    out[:3, :3] = R.T
    out[3:, 3:] = R.T
    out[3:, :3] = -R.T @ skew(p)
    return out


def inv(g):
    """Inverse of a pose: ``[[R^T, -R^T p], [0, 1]]``."""
    out = np.eye(4)
    out[:3, :3] = g[:3, :3].T
    out[:3, 3] = -g[:3, :3].T @ g[:3, 3]
    return out


def _ad_definition(V):
    out = np.zeros((6, 6))
    out[:3, :3] = skew(V[:3])
    out[3:, 3:] = out[:3, :3]
    out[3:, :3] = skew(V[3:])
    return out


def _ad_tilde_definition(h):
    out = np.zeros((6, 6))
    out[:3, :3] = skew(h[:3])
    out[:3, 3:] = skew(h[3:])
    out[3:, :3] = out[:3, 3:]
    return out


def _linear_operator_table(op):
    """Table ``T`` with ``op(x) == (x @ T).reshape(6, 6)``, for batched evaluation."""
    return np.stack([op(e).ravel() for e in np.eye(6)])


# Both operators are linear in their argument: one matrix product evaluates them
# (much cheaper than filling blocks), and for a whole batch at once.
_AD_TABLE = _linear_operator_table(_ad_definition)
_AD_TILDE_TABLE = _linear_operator_table(_ad_tilde_definition)


def ad(V):
    """``ad_V`` (seed 002, eq. 60): ``[[omega_x, 0], [v_x, omega_x]]``, so ``ad_V W = [V, W]``."""
    return (V @ _AD_TABLE).reshape(6, 6)


def ad_tilde(h):
    """``ad~_h`` (seed 002, eqs. 3 and 61) of a momentum ``h = [h_omega; h_v]``.

    ``[[h_omega_x, h_v_x], [h_v_x, 0]]``: the skew-symmetric operator that swaps
    the arguments of the coadjoint action, ``ad_v^T (M w) = ad~_(M w) v``.
    """
    return (h @ _AD_TILDE_TABLE).reshape(6, 6)


def ad_batch(V):
    """:func:`ad` of each twist in an array ``(..., 6)``: returns ``(..., 6, 6)``."""
    return (V @ _AD_TABLE).reshape(V.shape[:-1] + (6, 6))


def ad_tilde_batch(h):
    """:func:`ad_tilde` of each momentum in an array ``(..., 6)``: returns ``(..., 6, 6)``."""
    return (h @ _AD_TILDE_TABLE).reshape(h.shape[:-1] + (6, 6))


def exp(V):
    """SE(3) exponential of a twist ``[omega; v]``: the 4x4 pose ``exp(V^)``."""
    return pin.exp6(np.asarray(V, dtype=float)[SWAP]).homogeneous


def log(g):
    """SE(3) logarithm: the twist ``[omega; v]`` with ``exp(log(g)) = g``.

    Defined for rotation angles below pi; at pi (``trace(R) = -1``) the
    logarithm is not unique.
    """
    return pin.log6(pin.SE3(g[:3, :3], g[:3, 3])).vector[SWAP]


def H(eps):
    """SE(3) Jacobian ``H(eps)`` of the exponential coordinates (seed 002, eq. 39).

    Maps the body twist ``(eta^-1 eta_dot)^v`` to ``eps_dot`` where
    ``eps = log(eta)``; it satisfies ``H(eps) eps = eps``.  It is Pinocchio's
    ``Jlog6`` at ``exp(eps)`` in the ``[omega; v]`` ordering.
    """
    return pin.Jlog6(pin.exp6(np.asarray(eps, dtype=float)[SWAP]))[SWAP_BOTH]


def log_and_H(g):
    """``(log(g), H(log(g)))`` from one pose (what an SE(3) observer needs at every tick)."""
    M = pin.SE3(g[:3, :3], g[:3, 3])
    return pin.log6(M).vector[SWAP], pin.Jlog6(M)[SWAP_BOTH]


# --- Pinocchio's ordering, for the inner loops (the control tick works in it; see CONVENTIONS) ---

def se3(g):
    """``pin.SE3`` of a 4x4 pose."""
    return pin.SE3(np.asarray(g, dtype=float))


_AD_PIN_TABLE = _linear_operator_table(lambda V: _ad_definition(V[SWAP])[SWAP_BOTH])


def ad_pin(V, out=None):
    """``ad_V`` for a twist ``V = [v; omega]`` in Pinocchio's order (the matrix of ``Motion.cross``);
    ``out``: a 6x6 array to fill."""
    if out is None:
        return V.dot(_AD_PIN_TABLE).reshape(6, 6)      # ndarray.dot: half of np.matmul's overhead
    V.dot(_AD_PIN_TABLE, out=out.reshape(36))
    return out
