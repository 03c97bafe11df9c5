"""SE(3) tools in the notation of Mishra et al. [Mishra2023], Appendix A.

Twists are body twists ordered ``[omega; v]`` and wrenches are ordered
``[moment; force]`` (the dual pairing of ``[omega; v]``).  Poses are 4x4
homogeneous matrices ``g = [[R, p], [0, 1]]``.

Pinocchio orders twists ``[v; omega]``; the exponential, logarithm and the
Jacobian of the logarithm are taken from Pinocchio and reordered (``conventions.py``), so
that the package's interfaces never see Pinocchio's ordering.  Only the
control tick's kernels (``rel_fast``, the observer's inner loop) work in it,
with the compiled helpers at the end of this module (among them ``exp6_parts`` and
``log6_jlog6`` on 4x4 arrays), and convert at their edges.

One coherent module: the maps of SE(3) of Appendix A, for the package's interfaces and, at the end,
compiled for the control tick (tested against Pinocchio's and scipy's), in one place.
"""
import math

import numpy as np
import pinocchio as pin

from floating_base_control.compiled import F, R1, R2, T3, T9, W1, W2, kernel
from floating_base_control.conventions import swap_halves, swap_rows_and_columns


def skew(w):
    """``w_x``: the 3x3 cross-product matrix of a 3-vector."""
    return np.array([[0.0, -w[2], w[1]],
                     [w[2], 0.0, -w[0]],
                     [-w[1], w[0], 0.0]])


def hat(V):
    """``V^`` in se(3) ([Mishra2023] eq. 60): 4x4 matrix of a twist ``[omega; v]``."""
    out = np.zeros((4, 4))
    out[:3, :3] = skew(V[:3])
    out[:3, 3] = V[3:]
    return out


def vee(X):
    """Inverse of :func:`hat`: the twist ``[omega; v]`` of a 4x4 element of se(3)."""
    return np.array([X[2, 1], X[0, 2], X[1, 0], X[0, 3], X[1, 3], X[2, 3]])


def Ad(g):
    """``Ad_g`` ([Mishra2023] eq. 60): 6x6 adjoint of a pose, ``[[R, 0], [p_x R, R]]``."""
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
    """``ad_V`` ([Mishra2023] eq. 60): ``[[omega_x, 0], [v_x, omega_x]]``, so ``ad_V W = [V, W]``."""
    return (V @ _AD_TABLE).reshape(6, 6)


def ad_tilde(h):
    """``ad~_h`` ([Mishra2023] eqs. 3 and 61) of a momentum ``h = [h_omega; h_v]``.

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
    return pin.exp6(swap_halves(np.asarray(V, dtype=float))).homogeneous


def log(g):
    """SE(3) logarithm: the twist ``[omega; v]`` with ``exp(log(g)) = g``.

    Defined for rotation angles below pi; at pi (``trace(R) = -1``) the
    logarithm is not unique.
    """
    return swap_halves(pin.log6(pin.SE3(g[:3, :3], g[:3, 3])).vector)


def H(eps):
    """SE(3) Jacobian ``H(eps)`` of the exponential coordinates ([Mishra2023] eq. 39).

    Maps the body twist ``(eta^-1 eta_dot)^v`` to ``eps_dot`` where
    ``eps = log(eta)``; it satisfies ``H(eps) eps = eps``.  It is Pinocchio's
    ``Jlog6`` at ``exp(eps)`` in the ``[omega; v]`` ordering.
    """
    return swap_rows_and_columns(pin.Jlog6(pin.exp6(swap_halves(np.asarray(eps, dtype=float)))))


def log_and_H(g):
    """``(log(g), H(log(g)))`` from one pose (what an SE(3) observer needs at every tick)."""
    M = pin.SE3(g[:3, :3], g[:3, 3])
    return swap_halves(pin.log6(M).vector), swap_rows_and_columns(pin.Jlog6(M))


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

# Inside the kernels a 3x3 matrix is a row-major 9-tuple and a 3-vector a 3-tuple (T9, T3): values on
# the stack, so the kernels allocate nothing.


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


@kernel(T3)
def hat3(w):
    """``w^``: SO(3)'s hat map, the cross-product matrix of a 3-vector."""
    return (0.0, -w[2], w[1], w[2], 0.0, -w[0], -w[1], w[0], 0.0)


@kernel(T9, T9)
def mm3(a, b):
    """``a b`` of 3x3 matrices (row-major 9-tuples)."""
    return (a[0] * b[0] + a[1] * b[3] + a[2] * b[6], a[0] * b[1] + a[1] * b[4] + a[2] * b[7],
            a[0] * b[2] + a[1] * b[5] + a[2] * b[8], a[3] * b[0] + a[4] * b[3] + a[5] * b[6],
            a[3] * b[1] + a[4] * b[4] + a[5] * b[7], a[3] * b[2] + a[4] * b[5] + a[5] * b[8],
            a[6] * b[0] + a[7] * b[3] + a[8] * b[6], a[6] * b[1] + a[7] * b[4] + a[8] * b[7],
            a[6] * b[2] + a[7] * b[5] + a[8] * b[8])


@kernel(T9, T3)
def mv3(a, x):
    """``a x`` of a 3x3 matrix (row-major 9-tuple) and a 3-vector (3-tuple)."""
    return (a[0] * x[0] + a[1] * x[1] + a[2] * x[2], a[3] * x[0] + a[4] * x[1] + a[5] * x[2],
            a[6] * x[0] + a[7] * x[1] + a[8] * x[2])


@kernel(T9, T3)
def mtv3(a, x):
    """``a^T x`` of a 3x3 matrix (row-major 9-tuple) and a 3-vector (3-tuple)."""
    return (a[0] * x[0] + a[3] * x[1] + a[6] * x[2], a[1] * x[0] + a[4] * x[1] + a[7] * x[2],
            a[2] * x[0] + a[5] * x[1] + a[8] * x[2])


@kernel(T3, T3)
def dot3(a, b):
    """``a . b`` of two 3-vectors (3-tuples)."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@kernel(T3, T3)
def cross3(a, b):
    """``a x b`` of two 3-vectors (3-tuples)."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@kernel(F, T9, F, T9, F)
def _lincomb3(alpha, A, beta, B, gamma):
    """``alpha A + beta B + gamma I`` of two 3x3 matrices (row-major 9-tuples): a linear combination with I."""
    return (gamma + alpha * A[0] + beta * B[0], alpha * A[1] + beta * B[1], alpha * A[2] + beta * B[2],
            alpha * A[3] + beta * B[3], gamma + alpha * A[4] + beta * B[4], alpha * A[5] + beta * B[5],
            alpha * A[6] + beta * B[6], alpha * A[7] + beta * B[7], gamma + alpha * A[8] + beta * B[8])


@kernel(R2)
def rotation_of(g):
    """The rotation of a 4x4 pose as a row-major 9-tuple."""
    return (g[0, 0], g[0, 1], g[0, 2], g[1, 0], g[1, 1], g[1, 2], g[2, 0], g[2, 1], g[2, 2])


@kernel(T3)
def exp3(w):
    """SO(3) exponential ``exp(w^) = I + A w^ + B w^ w^`` (Rodrigues; the coefficients of
    :func:`_exp_coefficients` at ``t = |w|``) as a row-major 9-tuple."""
    A, B, _ = _exp_coefficients(math.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]))
    W = hat3(w)
    return _lincomb3(A, W, B, mm3(W, W), 1.0)


@kernel(T3, T3)
def exp_twist(v, w):
    """``(R, p)`` of the SE(3) exponential of the twist with linear part ``v`` and angular part ``w``
    (3-tuples): ``R = exp3(w)``, ``p = (I + B w^ + C w^ w^) v`` (coefficients of :func:`_exp_coefficients`
    at ``t = |w|``)."""
    A, B, C = _exp_coefficients(math.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]))
    W = hat3(w)
    WW = mm3(W, W)
    return _lincomb3(A, W, B, WW, 1.0), mv3(_lincomb3(B, W, C, WW, 1.0), v)


@kernel(R1, F)
def exp6_parts(V, s):
    """``(R, p)`` of ``exp(s V^)`` for a twist ``V = [v; omega]`` (Pinocchio's ``exp6`` of ``s V``):
    :func:`exp_twist` of the parts of ``s V``."""
    return exp_twist((s * V[0], s * V[1], s * V[2]), (s * V[3], s * V[4], s * V[5]))


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


@kernel(T9)
def log3(R):
    """``(phi, theta)``: SO(3) logarithm of ``R`` as a 3-vector and its angle in ``[0, pi]``."""
    u = (R[7] - R[5], R[2] - R[6], R[3] - R[1])                   # 2 sin(theta) axis
    c = 0.5 * (R[0] + R[4] + R[8] - 1.0)
    s = 0.5 * math.sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2])
    theta = math.atan2(s, c)
    if c > -0.9:
        f = 0.5 * theta / s if s > 0.0 else 0.5
        return (f * u[0], f * u[1], f * u[2]), theta
    # near pi, u loses the axis: read it off the symmetric part (R + R^T)/2 = c I + (1 - c) a a^T, in
    # the column of its largest diagonal entry
    k = 0 if R[0] >= R[4] and R[0] >= R[8] else 1 if R[4] >= R[8] else 2
    a0 = 0.5 * (R[k] + R[3 * k]) - (c if k == 0 else 0.0)
    a1 = 0.5 * (R[3 + k] + R[3 * k + 1]) - (c if k == 1 else 0.0)
    a2 = 0.5 * (R[6 + k] + R[3 * k + 2]) - (c if k == 2 else 0.0)
    f = theta / math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
    if a0 * u[0] + a1 * u[1] + a2 * u[2] < 0.0:
        f = -f
    return (f * a0, f * a1, f * a2), theta


@kernel(T3, F)
def jlog3(phi, theta):
    """``J_r(phi)^-1 = I + phi^/2 + D phi^ phi^`` (Barfoot, Sec. 7.1; Pinocchio's ``Jlog3`` at ``exp(phi)``), the
    inverse of SO(3)'s right Jacobian: ``log(exp(phi) exp(eta)) = phi + J_r^-1 eta + O(eta^2)``; ``theta = |phi|``
    (as :func:`log3` returns it); a row-major 9-tuple."""
    P = hat3(phi)
    return _lincomb3(0.5, P, _log_coefficients(theta)[0], mm3(P, P), 1.0)


@kernel(R2, W1, W2)
def log6_jlog6(g, eps, J):
    """SE(3) logarithm of the 4x4 pose ``g`` into ``eps = [rho; phi]`` (Pinocchio's ``log6``) and its
    Jacobian into the 6x6 ``J`` (Pinocchio's ``Jlog6``: ``d log(g exp(d)) / dd``), the inverse of the
    right Jacobian ``J_r(eps) = J_l(-eps)``: ``[[Jr3^-1, -Jr3^-1 Q(-eps) Jr3^-1], [0, Jr3^-1]]``
    with ``Jr3^-1 = I + phi^/2 + D phi^ phi^`` (Barfoot, Sec. 7.1); and ``rho = Jl3(phi)^-1 p``."""
    phi, theta = log3(rotation_of(g))
    D, a, b, c = _log_coefficients(theta)
    P = hat3(phi)
    PP = mm3(P, P)
    Jr = jlog3(phi, theta)
    rho = mv3(_lincomb3(-0.5, P, D, PP, 1.0), (g[0, 3], g[1, 3], g[2, 3]))
    Rh = hat3(rho)
    PR, RP = mm3(P, Rh), mm3(Rh, P)
    PRP, PPR, RPP = mm3(PR, P), mm3(PP, Rh), mm3(RP, P)
    PRPP, PPRP = mm3(PRP, P), mm3(PP, RP)
    Q = _lincomb3(-0.5, Rh, a, _lincomb3(1.0, _lincomb3(1.0, PR, 1.0, RP, 0.0), -1.0, PRP, 0.0), 0.0)
    Q = _lincomb3(1.0, Q, -b, _lincomb3(1.0, _lincomb3(1.0, PPR, 1.0, RPP, 0.0), -3.0, PRP, 0.0), 0.0)
    Q = _lincomb3(1.0, Q, c, _lincomb3(1.0, PRPP, 1.0, PPRP, 0.0), 0.0)
    TR = mm3(mm3(Jr, Q), Jr)
    for i in range(3):
        eps[i], eps[3 + i] = rho[i], phi[i]
        for j in range(3):
            J[i, j] = J[3 + i, 3 + j] = Jr[3 * i + j]
            J[i, 3 + j] = -TR[3 * i + j]
            J[3 + i, j] = 0.0


@kernel(R2, R1, W1)
def se3_action(g, V, out):
    """``Ad_g V`` for a 4x4 pose ``g`` and a twist ``V = [v; omega]`` (Pinocchio's ``SE3.act``):
    ``[R v + p x R omega; R omega]``."""
    for i in range(3):
        out[3 + i] = g[i, 0] * V[3] + g[i, 1] * V[4] + g[i, 2] * V[5]
        out[i] = g[i, 0] * V[0] + g[i, 1] * V[1] + g[i, 2] * V[2]
    p0, p1, p2 = g[0, 3], g[1, 3], g[2, 3]
    out[0] += p1 * out[5] - p2 * out[4]
    out[1] += p2 * out[3] - p0 * out[5]
    out[2] += p0 * out[4] - p1 * out[3]
    return out


@kernel(R2, R1, W1)
def se3_action_inverse(g, V, out):
    """``Ad_g^-1 V = [R^T (v - p x omega); R^T omega]`` (Pinocchio's ``SE3.actInv`` on a twist)."""
    p0, p1, p2 = g[0, 3], g[1, 3], g[2, 3]
    u0 = V[0] - (p1 * V[5] - p2 * V[4])
    u1 = V[1] - (p2 * V[3] - p0 * V[5])
    u2 = V[2] - (p0 * V[4] - p1 * V[3])
    for i in range(3):
        out[i] = g[0, i] * u0 + g[1, i] * u1 + g[2, i] * u2
        out[3 + i] = g[0, i] * V[3] + g[1, i] * V[4] + g[2, i] * V[5]
    return out


@kernel(W2, T9, T3, T9, T3)
def _set_product(out, Ra, pa, Rb, pb):
    """``out = (Ra, pa) (Rb, pb)``: ``[Ra Rb, Ra pb + pa]`` (4x4, rotations as row-major 9-tuples)."""
    R, p = mm3(Ra, Rb), mv3(Ra, pb)
    for i in range(3):
        for j in range(3):
            out[i, j] = R[3 * i + j]
        out[i, 3] = p[i] + pa[i]


@kernel(R2, R2, W2)
def se3_compose(a, b, out):
    """``a b`` of 4x4 poses into ``out`` (which may be ``a`` or ``b``)."""
    _set_product(out, rotation_of(a), (a[0, 3], a[1, 3], a[2, 3]), rotation_of(b), (b[0, 3], b[1, 3], b[2, 3]))


@kernel(W2, T9, T3)
def se3_right_multiply(g, R, p):
    """``g <- g (R, p)`` in place (the rotation a row-major 9-tuple, as :func:`exp6_parts` gives)."""
    _set_product(g, rotation_of(g), (g[0, 3], g[1, 3], g[2, 3]), R, p)


@kernel(R2, R2, W2)
def se3_between(a, b, out):
    """``a^-1 b`` of 4x4 poses into ``out`` (which may be ``a`` or ``b``): ``[R_a^T R_b, R_a^T (p_b - p_a)]``."""
    Ra = rotation_of(a)
    Ra_T = (Ra[0], Ra[3], Ra[6], Ra[1], Ra[4], Ra[7], Ra[2], Ra[5], Ra[8])
    _set_product(out, Ra_T, (0.0, 0.0, 0.0), rotation_of(b), (b[0, 3] - a[0, 3], b[1, 3] - a[1, 3], b[2, 3] - a[2, 3]))
    out[3, 0] = out[3, 1] = out[3, 2] = 0.0
    out[3, 3] = 1.0


@kernel(F)
def rotation_angle(trace):
    """The angle (rad, in ``[0, pi]``) of a rotation whose trace is ``trace = 1 + 2 cos(angle)``."""
    return math.acos(min(max(0.5 * (trace - 1.0), -1.0), 1.0))


@kernel(R2, R2)
def rotation_trace_between(a, b):
    """``tr(R_a^T R_b)`` of 4x4 poses: ``1 + 2 cos`` of the angle of ``a^-1 b``."""
    trace = 0.0
    for i in range(3):
        for j in range(3):
            trace += a[i, j] * b[i, j]
    return trace
