"""SE(3) tools in the notation of seed 002 (Mishra et al.), Appendix A.

Twists are body twists ordered ``[omega; v]`` and wrenches are ordered
``[moment; force]`` (the dual pairing of ``[omega; v]``).  Poses are 4x4
homogeneous matrices ``g = [[R, p], [0, 1]]``.

Pinocchio orders twists ``[v; omega]``; the exponential, logarithm and the
Jacobian of the logarithm are taken from Pinocchio and reordered here, so
that the package's interfaces never see Pinocchio's ordering.  Only the
control tick's kernels (``rel_fast``, the observer's inner loop) work in it,
with the helpers at the end of this module (among them compiled ``exp6`` and
``log6_jlog6`` on 4x4 arrays), and convert at their edges.
"""
import math

import numpy as np
import pinocchio as pin

from .compiled import F, R1, R2, W1, W2, kernel

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


# --- compiled kernels on 4x4 poses, Pinocchio's ordering (the observer's tick) ---
# The closed forms of SE(3)'s exponential, logarithm and Jacobians in Barfoot, "State Estimation for
# Robotics" (2017), Sec. 7.1, checked against Pinocchio's exp6, log6 and Jlog6 and against central
# differences in test_lie.py.  Below SMALL_ANGLE the coefficients are their Taylor series to theta^8 (the
# closed forms lose digits to cancellation there).

SMALL_ANGLE = 0.1


@kernel(F)
def _exp_coefficients(t):
    """``sin t / t``, ``(1 - cos t) / t^2``, ``(t - sin t) / t^3``."""
    t2 = t * t
    if t < SMALL_ANGLE:
        return (1.0 - t2 / 6.0 * (1.0 - t2 / 20.0 * (1.0 - t2 / 42.0 * (1.0 - t2 / 72.0))),
                0.5 - t2 / 24.0 * (1.0 - t2 / 30.0 * (1.0 - t2 / 56.0 * (1.0 - t2 / 90.0))),
                1.0 / 6.0 - t2 / 120.0 * (1.0 - t2 / 42.0 * (1.0 - t2 / 72.0 * (1.0 - t2 / 110.0))))
    s, h = math.sin(t), math.sin(0.5 * t)
    return s / t, 2.0 * h * h / t2, (t - s) / (t2 * t)


@kernel(R1)
def _hat3(w):
    """``w^``: the 3x3 cross-product matrix."""
    out = np.zeros((3, 3))
    out[0, 1], out[0, 2], out[1, 2] = -w[2], w[1], -w[0]
    out[1, 0], out[2, 0], out[2, 1] = w[2], -w[1], w[0]
    return out


@kernel(R2, R2)
def _mm3(a, b):
    """``a b`` of 3x3 matrices (a loop: numpy's product of small matrices goes through BLAS)."""
    out = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            out[i, j] = a[i, 0] * b[0, j] + a[i, 1] * b[1, j] + a[i, 2] * b[2, j]
    return out


@kernel(R1, W2)
def exp6(V, out):
    """SE(3) exponential of a twist ``V = [v; omega]`` (Pinocchio's ``exp6``) into the 4x4 ``out``:
    ``R = I + A w^ + B w^ w^``, ``p = (I + B w^ + C w^ w^) v`` with the coefficients of
    :func:`_exp_coefficients` at ``t = |w|``."""
    w = V[3:]
    A, B, C = _exp_coefficients(math.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]))
    W = _hat3(w)
    WW = _mm3(W, W)
    for i in range(3):
        for j in range(3):
            out[i, j] = A * W[i, j] + B * WW[i, j]
        out[i, i] += 1.0
        out[i, 3] = V[i] + B * (W[i, 0] * V[0] + W[i, 1] * V[1] + W[i, 2] * V[2]) \
            + C * (WW[i, 0] * V[0] + WW[i, 1] * V[1] + WW[i, 2] * V[2])
        out[3, i] = 0.0
    out[3, 3] = 1.0
    return out


@kernel(F)
def _log_coefficients(t):
    """``1/t^2 - (1 + cos t) / (2 t sin t)`` (the ``w^ w^`` coefficient of the inverse of SO(3)'s
    Jacobians) and the three coefficients of the coupling block ``Q`` of SE(3)'s Jacobian:
    ``(t - sin t) / t^3``, ``(t^2 + 2 cos t - 2) / (2 t^4)``, ``(2 t - 3 sin t + t cos t) / (2 t^5)``."""
    t2 = t * t
    if t < SMALL_ANGLE:
        return (1.0 / 12.0 + t2 / 720.0 * (1.0 + t2 / 42.0 * (1.0 + t2 / 40.0 * (1.0 + t2 / 39.6))),
                _exp_coefficients(t)[2],
                1.0 / 24.0 - t2 / 720.0 * (1.0 - t2 / 56.0 * (1.0 - t2 / 90.0 * (1.0 - t2 / 132.0))),
                1.0 / 120.0 - t2 / 2520.0 * (1.0 - t2 / 48.0 * (1.0 - t2 / 82.5 * (1.0 - t2 / 124.8))))
    s, c, h = math.sin(t), math.cos(t), math.sin(0.5 * t)
    return (1.0 / t2 - s / (4.0 * t * h * h), (t - s) / (t2 * t), (t2 - 4.0 * h * h) / (2.0 * t2 * t2),
            (2.0 * t - 3.0 * s + t * c) / (2.0 * t2 * t2 * t))


@kernel(R2)
def _log3(R):
    """``(phi, theta)``: SO(3) logarithm of ``R`` as a 3-vector and its angle in ``[0, pi]``."""
    u = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])      # 2 sin(theta) axis
    c = 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)
    s = 0.5 * math.sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2])
    theta = math.atan2(s, c)
    if c > -0.9:
        return u * (0.5 * theta / s if s > 0.0 else 0.5), theta
    # near pi, u loses the axis: read it off the symmetric part (R + R^T)/2 = c I + (1 - c) a a^T
    k = 0
    for i in range(1, 3):
        if R[i, i] > R[k, k]:
            k = i
    a = np.empty(3)
    for i in range(3):
        a[i] = 0.5 * (R[i, k] + R[k, i]) - (c if i == k else 0.0)
    a *= 1.0 / math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])
    if a[0] * u[0] + a[1] * u[1] + a[2] * u[2] < 0.0:
        a = -a
    return a * theta, theta


@kernel(R2, W1, W2)
def log6_jlog6(g, eps, J):
    """SE(3) logarithm of the 4x4 pose ``g`` into ``eps = [rho; phi]`` (Pinocchio's ``log6``) and its
    Jacobian into the 6x6 ``J`` (Pinocchio's ``Jlog6``: ``d log(g exp(d)) / dd``), the inverse of the
    right Jacobian ``J_r(eps) = J_l(-eps)``: ``[[Jr3^-1, -Jr3^-1 Q(-eps) Jr3^-1], [0, Jr3^-1]]``
    with ``Jr3^-1 = I + phi^/2 + D phi^ phi^`` (Barfoot, Sec. 7.1); and ``rho = Jl3(phi)^-1 p``."""
    phi, theta = _log3(g[:3, :3])
    D, a, b, c = _log_coefficients(theta)
    P = _hat3(phi)
    PP = _mm3(P, P)
    Jr = np.empty((3, 3))
    Jl = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            Jr[i, j] = D * PP[i, j] + 0.5 * P[i, j]
            Jl[i, j] = D * PP[i, j] - 0.5 * P[i, j]
        Jr[i, i] += 1.0
        Jl[i, i] += 1.0
    for i in range(3):
        eps[i] = Jl[i, 0] * g[0, 3] + Jl[i, 1] * g[1, 3] + Jl[i, 2] * g[2, 3]
        eps[3 + i] = phi[i]
    Rh = _hat3(eps[:3])
    PR, RP = _mm3(P, Rh), _mm3(Rh, P)
    PRP, PPR, RPP = _mm3(PR, P), _mm3(PP, Rh), _mm3(RP, P)
    PRPP, PPRP = _mm3(PRP, P), _mm3(PP, RP)
    Q = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            Q[i, j] = (-0.5 * Rh[i, j] + a * (PR[i, j] + RP[i, j] - PRP[i, j])
                       - b * (PPR[i, j] + RPP[i, j] - 3.0 * PRP[i, j]) + c * (PRPP[i, j] + PPRP[i, j]))
    TR = _mm3(_mm3(Jr, Q), Jr)
    for i in range(3):
        for j in range(3):
            J[i, j] = J[3 + i, 3 + j] = Jr[i, j]
            J[i, 3 + j] = -TR[i, j]
            J[3 + i, j] = 0.0
    return eps, J
