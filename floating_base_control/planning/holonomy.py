"""The base rotation of [Mishra2023] eq. 9 along joint paths, compiled, and its gradient from curvature.

Eq. 9, ``g1_dot = g1 (mu - A_l(q) qdot)^``, has the rotation part ``R1_dot = R1 omega1^`` with

    ``omega1 = omega_mu - (A_l qdot)_omega``.

``(A_l qdot)_omega`` does not depend on where the base frame's origin is, and for a conserved momentum
the angular part of the locked velocity is ``omega_mu = I_c(q)^-1 R1^T k_c``: the locked system is a
rigid body whose angular momentum about its CoM, ``k_c`` (world axes), is conserved, and ``I_c`` is its
inertia about the CoM in base axes ([Saccon2017]'s average angular velocity, which equals the angular
part of ``mu``).  So the attitude needs neither the base's position nor its linear momentum: three
states instead of six.  (``analysis/locomotion.reconstruct`` integrates the whole SE(3) eq. 9 on a
sampled path in Python; it is the tests' independent check of this module.)

The integrator is the same fourth-order Runge-Kutta-Munthe-Kaas step as ``reconstruct``'s, on SO(3),
with the connection sampled at the step ends and midpoints of the exact path (not a polyline); the
samples come from one CRBA each (``dynamics.rel_fast.locked_inertia_factor``), and the steps run in a
compiled kernel.

Gradient (zero momentum).  For a closed loop ``q(s)`` based at ``q(0) = q(2 pi)`` and a variation
``dq(s)`` vanishing at the base, the holonomy ``H = R1(2 pi)`` varies by (integrating by parts the
``A_l dq'`` term of ``d omega1``)

    ``H^-1 dH = ( H^T int_0^2pi R1(s) DA_l(q(s))(q'(s), dq(s))_omega ds )^``

with ``DA_l(x) y = dA_l(x) y - ad_(A_l x) A_l y`` the curvature ([Mishra2023] Theorem 2, eq. 35): the
first variation of the holonomy is the curvature transported along the loop, the differential form of
eq. 11's Stokes estimate [Hatton2011].  :func:`loop_holonomy_gradient` evaluates it with Simpson's rule
on the integrator's nodes.
"""
import math

import numpy as np

from ..compiled import R1, R2, R3, T3, W3, W2, kernel
from ..dynamics.curvature import curvature_pairs
from ..dynamics.rel_fast import connection_velocity, locked_inertia_factor
from ..kinematics import shape_kinematics
from ..dynamics.centroidal import center_of_mass
from ..lie import _exp_coefficients, _lincomb3, _hat3, _log3, _log_coefficients, mm3

_IDENTITY = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)


@kernel(T3)
def _exp3(w):
    """``exp(w^)`` in SO(3) as a row-major 9-tuple."""
    A, B, _ = _exp_coefficients(math.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]))
    W = _hat3(w)
    return _lincomb3(A, W, B, mm3(W, W), 1.0)


@kernel(T3, T3)
def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@kernel(T3, T3)
def _dexpinv3(W, x):
    """``dexp^-1_W x`` truncated after the double bracket (enough for order 4), as in ``reconstruct``."""
    c = _cross(W, x)
    cc = _cross(W, c)
    return (x[0] + 0.5 * c[0] + cc[0] / 12.0, x[1] + 0.5 * c[1] + cc[1] / 12.0, x[2] + 0.5 * c[2] + cc[2] / 12.0)


@kernel(R2, R3, R1, R1, W3, W3)
def _rkmk4_rotations(xi, Icinv, k, h, R, R_mid):
    """RKMK4 steps of ``R_dot = R (xi(t) + I_c^-1(t) R^T k)^`` from ``R(0) = I`` into ``R`` (S+1, 3, 3).

    ``xi`` (2S+1, 3) and ``Icinv`` (2S+1, 3, 3, or empty for zero momentum) are sampled at the step
    ends and midpoints, ``h`` (S,) are the steps.  ``R_mid`` (S, 3, 3, or empty) gets the rotation at
    each step's midpoint for the gradient's quadrature (zero momentum: the quadratic interpolant of
    ``xi`` integrated over the half step, third order, enough for Simpson's rule).
    """
    momentum = Icinv.shape[0] > 0
    Rc = _IDENTITY
    for a in range(3):
        for b in range(3):
            R[0, a, b] = Rc[3 * a + b]

    def rate(node, Rg):
        w = (xi[node, 0], xi[node, 1], xi[node, 2])
        if not momentum:
            return w
        kb = (Rg[0] * k[0] + Rg[3] * k[1] + Rg[6] * k[2], Rg[1] * k[0] + Rg[4] * k[1] + Rg[7] * k[2],
              Rg[2] * k[0] + Rg[5] * k[1] + Rg[8] * k[2])
        m = Icinv[node]
        return (w[0] + m[0, 0] * kb[0] + m[0, 1] * kb[1] + m[0, 2] * kb[2],
                w[1] + m[1, 0] * kb[0] + m[1, 1] * kb[1] + m[1, 2] * kb[2],
                w[2] + m[2, 0] * kb[0] + m[2, 1] * kb[1] + m[2, 2] * kb[2])

    for i in range(len(h)):
        hi = h[i]
        r1 = rate(2 * i, Rc)
        k1 = (hi * r1[0], hi * r1[1], hi * r1[2])
        half1 = (0.5 * k1[0], 0.5 * k1[1], 0.5 * k1[2])
        r2 = _dexpinv3(half1, rate(2 * i + 1, mm3(Rc, _exp3(half1))))
        k2 = (hi * r2[0], hi * r2[1], hi * r2[2])
        half2 = (0.5 * k2[0], 0.5 * k2[1], 0.5 * k2[2])
        r3 = _dexpinv3(half2, rate(2 * i + 1, mm3(Rc, _exp3(half2))))
        k3 = (hi * r3[0], hi * r3[1], hi * r3[2])
        r4 = _dexpinv3(k3, rate(2 * i + 2, mm3(Rc, _exp3(k3))))
        k4 = (hi * r4[0], hi * r4[1], hi * r4[2])
        if R_mid.shape[0] > 0:
            f = hi / 24.0
            half = (f * (5.0 * xi[2 * i, 0] + 8.0 * xi[2 * i + 1, 0] - xi[2 * i + 2, 0]),
                    f * (5.0 * xi[2 * i, 1] + 8.0 * xi[2 * i + 1, 1] - xi[2 * i + 2, 1]),
                    f * (5.0 * xi[2 * i, 2] + 8.0 * xi[2 * i + 1, 2] - xi[2 * i + 2, 2]))
            Rm = mm3(Rc, _exp3(half))
            for a in range(3):
                for b in range(3):
                    R_mid[i, a, b] = Rm[3 * a + b]
        Rc = mm3(Rc, _exp3(((k1[0] + 2.0 * k2[0] + 2.0 * k3[0] + k4[0]) / 6.0,
                            (k1[1] + 2.0 * k2[1] + 2.0 * k3[1] + k4[1]) / 6.0,
                            (k1[2] + 2.0 * k2[2] + 2.0 * k3[2] + k4[2]) / 6.0)))
        for a in range(3):
            for b in range(3):
                R[i + 1, a, b] = Rc[3 * a + b]


@kernel(R2, W2)
def _centroidal_inertia_inverse(M, out):
    """``I_c^-1``: the locked system's inertia about its CoM in base axes, inverted (3x3), from the CRBA
    matrix ``M`` in Pinocchio's order (``M[:3, :3] = m 1``, ``M[3:6, 3:6] = I_O``, ``M[3:6, :3] = m c^``),
    ``I_c = I_O + m c^ c^`` (``dynamics.centroidal.inertia_at_com``)."""
    m = M[0, 0]
    c = (M[5, 1] / m, M[3, 2] / m, M[4, 0] / m)
    C = _hat3(c)
    CC = mm3(C, C)
    I = (M[3, 3] + m * CC[0], M[3, 4] + m * CC[1], M[3, 5] + m * CC[2],
         M[4, 3] + m * CC[3], M[4, 4] + m * CC[4], M[4, 5] + m * CC[5],
         M[5, 3] + m * CC[6], M[5, 4] + m * CC[7], M[5, 5] + m * CC[8])
    c00, c01, c02 = I[4] * I[8] - I[5] * I[7], I[5] * I[6] - I[3] * I[8], I[3] * I[7] - I[4] * I[6]
    det = I[0] * c00 + I[1] * c01 + I[2] * c02
    out[0, 0], out[1, 0], out[2, 0] = c00 / det, c01 / det, c02 / det
    out[0, 1] = (I[2] * I[7] - I[1] * I[8]) / det
    out[1, 1] = (I[0] * I[8] - I[2] * I[6]) / det
    out[2, 1] = (I[1] * I[6] - I[0] * I[7]) / det
    out[0, 2] = (I[1] * I[5] - I[2] * I[4]) / det
    out[1, 2] = (I[2] * I[3] - I[0] * I[5]) / det
    out[2, 2] = (I[0] * I[4] - I[1] * I[3]) / det


def connection_samples(model, ws, q, dq, momentum=False):
    """``(xi, Icinv)``: ``xi_i = -(A_l(q_i) dq_i)_omega`` (N, 3) and, with ``momentum``, ``I_c(q_i)^-1``
    (N, 3, 3; else empty), one CRBA per sample."""
    xi = np.empty((len(q), 3))
    Icinv = np.empty((len(q) if momentum else 0, 3, 3))
    out = np.empty(6)
    for i in range(len(q)):
        locked_inertia_factor(model, ws, q[i])
        connection_velocity(ws.A, dq[i], out)          # Pinocchio's order: [v; omega]
        xi[i] = -out[3:]
        if momentum:
            _centroidal_inertia_inverse(ws.M, Icinv[i])
    return xi, Icinv


def rotations_along(xi, Icinv, k, h):
    """``R1`` at the step ends (S+1, 3, 3) of RKMK4 steps ``h`` (S,), samples from :func:`connection_samples`
    at the step ends and midpoints, ``k`` the angular momentum about the CoM (world axes)."""
    R = np.empty((len(h) + 1, 3, 3))
    _rkmk4_rotations(xi, Icinv, k, h, R, np.empty((0, 3, 3)))
    return R


def path_rotation(model, ws, path, steps):
    """The base rotation (3x3) at the end of the joint path ``path`` (``s`` from 0 to ``path.length``)
    at zero momentum (eq. 9: it depends on the path, not on its timing); for a loop, its holonomy.
    RKMK4 in ``steps`` equal steps of ``s`` (fourth order)."""
    q, dq, _ = path.derivatives(np.linspace(0.0, path.length, 2 * steps + 1))
    xi, Icinv = connection_samples(model, ws, q, dq)
    return rotations_along(xi, Icinv, np.zeros(3), np.full(steps, path.length / steps))[-1]


def loop_holonomy_gradient(model, ws, loop, steps):
    """``(H, G)``: the holonomy of one cycle of ``loop`` (zero momentum) and ``G`` (3, 2K x J), the
    body-frame derivative ``(H^-1 dH)^vee`` with respect to the loop's coefficients (raveled row-major):
    the curvature along the loop (module doc), Simpson's rule on the RKMK4 nodes."""
    s = np.linspace(0.0, 2 * np.pi, 2 * steps + 1)
    q, dq, _ = loop.derivatives(s)
    B = loop.basis(s)[0]
    E = np.zeros((model.n, len(loop.joints)))
    E[loop.joints, np.arange(len(loop.joints))] = 1.0
    xi, F = np.empty((len(s), 3)), np.empty((len(s), 3, len(loop.joints)))
    for i in range(len(s)):
        kin = shape_kinematics(model, ws, q[i])
        xi[i] = -(kin.A_l[:3] @ dq[i])
        F[i] = curvature_pairs(kin, dq[i][:, None], E)[:3, 0]
    h = 2 * np.pi / steps
    R, R_mid = np.empty((steps + 1, 3, 3)), np.empty((steps, 3, 3))
    _rkmk4_rotations(xi, np.empty((0, 3, 3)), np.zeros(3), np.full(steps, h), R, R_mid)
    Rn = np.empty((len(s), 3, 3))
    Rn[0::2], Rn[1::2] = R, R_mid
    w = np.full(len(s), h / 3)                         # Simpson: h/6 (1, 4, 1) per step
    w[1::2] = 2 * h / 3
    w[0] = w[-1] = h / 6
    P = np.einsum("m,mab,mbj->maj", w, Rn, F)          # R1(s) DA_l(q', e_j)_omega ds
    G = R[-1].T @ np.einsum("maj,mk->akj", P, B).reshape(3, -1)
    return R[-1], G


def rotation_vector(R):
    """``log(R)`` as a 3-vector (angle in ``[0, pi]``)."""
    return np.array(_log3(tuple(np.asarray(R, dtype=float).ravel()))[0])


def rotation_matrix(phi):
    """``exp(phi^)``: the rotation matrix of a rotation vector."""
    return np.array(_exp3((float(phi[0]), float(phi[1]), float(phi[2])))).reshape(3, 3)


def right_jacobian_inverse(phi):
    """``J_r(phi)^-1 = 1 + phi^/2 + D phi^ phi^``: ``log(exp(phi) exp(eta)) = phi + J_r^-1 eta + O(eta^2)``."""
    P = np.array(_hat3((phi[0], phi[1], phi[2]))).reshape(3, 3)
    return np.eye(3) + 0.5 * P + _log_coefficients(float(np.linalg.norm(phi)))[0] * P @ P


def centroidal_angular_momentum(model, q0, mu0):
    """``k_c``: the angular momentum about the CoM (world axes = base axes at the start, ``g1(0) = I``) of
    the system at shape ``q0`` with locked velocity ``mu0`` (the arm at rest): ``J = M_b mu0``
    ([Mishra2023] Def. 2) moved from the base origin to the CoM ``c``: ``J_omega - c x J_v``."""
    kin = model.kinematics(q0)
    J = kin.M_b @ mu0
    return J[:3] - np.cross(center_of_mass(kin), J[3:])


def attitudes_along(model, trajectory, times, k=None):
    """Predicted base attitude ``R1(t)`` (len(times), 3, 3), ``R1(times[0]) = I``, along a timed joint
    trajectory, eq. 9 with the conserved angular momentum ``k`` about the CoM (world axes; ``None``: zero
    momentum).  ``trajectory.evaluate(t)`` gives ``(q, qdot, qddot)``; the steps also end at its ``knots``
    (where the accelerations jump), so the integration stays fourth order."""
    times = np.asarray(times, dtype=float)
    knots = trajectory.knots
    grid = np.unique(np.concatenate([times, knots[(knots > times[0]) & (knots < times[-1])]]))
    nodes = np.empty(2 * len(grid) - 1)
    nodes[0::2], nodes[1::2] = grid, 0.5 * (grid[:-1] + grid[1:])
    q, qdot, _ = trajectory.evaluate(nodes)
    momentum = k is not None and bool(np.any(k))
    xi, Icinv = connection_samples(model, model.create_data(), q, qdot, momentum)
    R = rotations_along(xi, Icinv, np.asarray(k, float) if momentum else np.zeros(3), np.diff(grid))
    return R[np.searchsorted(grid, times)]
