"""[Mishra2023] eq. 9 compiled: the base pose along a sampled joint path (the one integrator of eq. 9).

``g1_dot = g1 V1^`` with the base body twist ``V1 = mu - A_l(q) qdot``, integrated by fourth-order
Runge-Kutta-Munthe-Kaas (RKMK4) steps on SE(3): ``g1 <- g1 exp(Omega)``, the stages' ``Omega_dot =
dexp^-1_Omega V1`` truncated after the double bracket (enough for order 4), so the poses stay exactly in
SE(3).  The caller samples the twist at every step's ends and midpoint (:func:`step_twists`): on a
smooth path at its own points (the planner's loops, ``planning/holonomy.py``), on a polyline at its
segments' (``analysis/locomotion.reconstruct``).  The locked velocity ``mu`` is either part of the samples
(given as a function of time) or that of a conserved momentum ``J`` ([Mishra2023] Def. 2: ``J =
Ad_g1^-T M_b mu`` about the world origin in world axes, so ``mu = M_b(q)^-1 Ad_g1^T J``), evaluated at
each stage's pose: the geometric plus the dynamic phase ([Muller2023] eq. 6.5).  Each step takes its own
three twists (start, middle, end): a polyline's velocity jumps at its vertices, where the connection
``A_l(q)`` (one CRBA per sampled shape, :func:`connections`) is shared.

Inside the kernel twists are in Pinocchio's order ``[v; omega]`` and momenta ``[force; moment]``, as
the CRBA factor of ``dynamics/rel_fast.py`` gives them; :func:`connections` returns them so.
"""
import numpy as np

from ..compiled import R1, R2, R3, T3, T9, W2, W3, kernel
from ..dynamics.rel_fast import locked_inertia_factor
from ..conventions import swap_halves
from ..lie import cross3, exp3, exp_twist, mm3, mv3


@kernel(T3, T3, T3, T3)
def _bracket(Wv, Ww, xv, xw):
    """``[W, x] = ad_W x`` of twists ``(v, omega)``: ``(omega x x_v + v x x_omega, omega x x_omega)``."""
    a, b, c = cross3(Ww, xv), cross3(Wv, xw), cross3(Ww, xw)
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2]), c


@kernel(T3, T3, T3, T3)
def _dexpinv(Wv, Ww, xv, xw):
    """``dexp^-1_W x = x + [W, x] / 2 + [W, [W, x]] / 12`` (the RKMK4 truncation)."""
    cv, cw = _bracket(Wv, Ww, xv, xw)
    ccv, ccw = _bracket(Wv, Ww, cv, cw)
    return ((xv[0] + 0.5 * cv[0] + ccv[0] / 12.0, xv[1] + 0.5 * cv[1] + ccv[1] / 12.0,
             xv[2] + 0.5 * cv[2] + ccv[2] / 12.0),
            (xw[0] + 0.5 * cw[0] + ccw[0] / 12.0, xw[1] + 0.5 * cw[1] + ccw[1] / 12.0,
             xw[2] + 0.5 * cw[2] + ccw[2] / 12.0))


@kernel(T9, T3, T3, T3)
def _moved(R, p, v, w):
    """``g exp((v, w)^)`` of ``g = (R, p)``."""
    Re, pe = exp_twist(v, w)
    q = mv3(R, pe)
    return mm3(R, Re), (p[0] + q[0], p[1] + q[1], p[2] + q[2])


@kernel(R2, T9, T3, R1)
def _locked_velocity(Minv, R, p, J):
    """``mu = M_b^-1 Ad_g^T J`` of the momentum ``J = [f; n]`` at the pose ``g = (R, p)``:
    ``Ad_g^T J = [R^T f; R^T (n - p x f)]``; ``(v, omega)``."""
    f = (J[0], J[1], J[2])
    pf = cross3(p, f)
    n = (J[3] - pf[0], J[4] - pf[1], J[5] - pf[2])
    b = (R[0] * f[0] + R[3] * f[1] + R[6] * f[2], R[1] * f[0] + R[4] * f[1] + R[7] * f[2],
         R[2] * f[0] + R[5] * f[1] + R[8] * f[2],
         R[0] * n[0] + R[3] * n[1] + R[6] * n[2], R[1] * n[0] + R[4] * n[1] + R[7] * n[2],
         R[2] * n[0] + R[5] * n[1] + R[8] * n[2])
    m = Minv
    r = [m[a, 0] * b[0] + m[a, 1] * b[1] + m[a, 2] * b[2] + m[a, 3] * b[3] + m[a, 4] * b[4] + m[a, 5] * b[5]
         for a in range(6)]
    return (r[0], r[1], r[2]), (r[3], r[4], r[5])


@kernel(R3, R3, R1, R1, W3, W2, W3)
def rkmk4_poses(xi, Minv, J, h, R, p, R_mid):
    """RKMK4 steps of eq. 9 from ``g1(0) = I`` into ``R`` (S+1, 3, 3) and ``p`` (S+1, 3).

    ``xi`` (S, 3, 6): the twist ``mu - A_l qdot`` (without momentum) or ``-A_l qdot`` (with it) at each
    step's start, middle and end, ``[v; omega]``; ``Minv`` (2S+1, 6, 6, or empty: no momentum): ``M_b^-1``
    at the step ends and midpoints,
    Pinocchio's order; ``J`` (6,): the momentum ``[force; moment]`` about the world origin, world axes;
    ``h`` (S,): the steps.  ``R_mid`` (S, 3, 3, or empty): the rotation at each step's midpoint, from the
    quadratic interpolant of ``omega`` over the half step (third order, enough for Simpson's rule; without
    momentum only).
    """
    momentum = Minv.shape[0] > 0
    Rc = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    pc = (0.0, 0.0, 0.0)

    def rate(step, stage, Rg, pg):
        x = xi[step, stage]
        v, w = (x[0], x[1], x[2]), (x[3], x[4], x[5])
        if not momentum:
            return v, w
        mv, mw = _locked_velocity(Minv[2 * step + stage], Rg, pg, J)
        return (v[0] + mv[0], v[1] + mv[1], v[2] + mv[2]), (w[0] + mw[0], w[1] + mw[1], w[2] + mw[2])

    def scaled(s, x):
        return (s * x[0], s * x[1], s * x[2])

    for a in range(3):
        p[0, a] = 0.0
        for b in range(3):
            R[0, a, b] = Rc[3 * a + b]
    for i in range(len(h)):
        hi = h[i]
        r1v, r1w = rate(i, 0, Rc, pc)
        k1v, k1w = scaled(hi, r1v), scaled(hi, r1w)
        R2_, p2_ = _moved(Rc, pc, scaled(0.5, k1v), scaled(0.5, k1w))
        r2v, r2w = rate(i, 1, R2_, p2_)
        r2v, r2w = _dexpinv(scaled(0.5, k1v), scaled(0.5, k1w), r2v, r2w)
        k2v, k2w = scaled(hi, r2v), scaled(hi, r2w)
        R3_, p3_ = _moved(Rc, pc, scaled(0.5, k2v), scaled(0.5, k2w))
        r3v, r3w = rate(i, 1, R3_, p3_)
        r3v, r3w = _dexpinv(scaled(0.5, k2v), scaled(0.5, k2w), r3v, r3w)
        k3v, k3w = scaled(hi, r3v), scaled(hi, r3w)
        R4_, p4_ = _moved(Rc, pc, k3v, k3w)
        r4v, r4w = rate(i, 2, R4_, p4_)
        r4v, r4w = _dexpinv(k3v, k3w, r4v, r4w)
        k4v, k4w = scaled(hi, r4v), scaled(hi, r4w)
        if R_mid.shape[0] > 0:
            f = hi / 24.0
            half = (f * (5.0 * xi[i, 0, 3] + 8.0 * xi[i, 1, 3] - xi[i, 2, 3]),
                    f * (5.0 * xi[i, 0, 4] + 8.0 * xi[i, 1, 4] - xi[i, 2, 4]),
                    f * (5.0 * xi[i, 0, 5] + 8.0 * xi[i, 1, 5] - xi[i, 2, 5]))
            Rm = mm3(Rc, exp3(half))
            for a in range(3):
                for b in range(3):
                    R_mid[i, a, b] = Rm[3 * a + b]
        Rc, pc = _moved(Rc, pc, ((k1v[0] + 2.0 * k2v[0] + 2.0 * k3v[0] + k4v[0]) / 6.0,
                                 (k1v[1] + 2.0 * k2v[1] + 2.0 * k3v[1] + k4v[1]) / 6.0,
                                 (k1v[2] + 2.0 * k2v[2] + 2.0 * k3v[2] + k4v[2]) / 6.0),
                        ((k1w[0] + 2.0 * k2w[0] + 2.0 * k3w[0] + k4w[0]) / 6.0,
                         (k1w[1] + 2.0 * k2w[1] + 2.0 * k3w[1] + k4w[1]) / 6.0,
                         (k1w[2] + 2.0 * k2w[2] + 2.0 * k3w[2] + k4w[2]) / 6.0))
        for a in range(3):
            p[i + 1, a] = pc[a]
            for b in range(3):
                R[i + 1, a, b] = Rc[3 * a + b]


def connections(model, ws, q, momentum=False):
    """``(A, Minv)`` at the shapes ``q`` (N, n): the connections ``A_l(q_i)`` (N, 6, n) and, with ``momentum``,
    ``M_b(q_i)^-1`` (N, 6, 6; else empty), Pinocchio's order, one CRBA each."""
    A = np.empty((len(q), 6, model.n))
    Minv = np.empty((len(q) if momentum else 0, 6, 6))
    for i in range(len(q)):
        locked_inertia_factor(model, ws, q[i])
        A[i] = ws.A
        if momentum:
            Minv[i] = np.linalg.inv(ws.M[:6, :6])
    return A, Minv


def step_twists(A, dq):
    """``-A_l qdot`` at each step's start, middle and end (S, 3, 6) of a smooth path sampled at its step ends and
    midpoints: ``A`` (2S+1, 6, n) from :func:`connections`, ``dq`` (2S+1, n) the path's velocities there."""
    x = -np.einsum("kij,kj->ki", A, dq)
    return np.stack([x[0:-1:2], x[1::2], x[2::2]], axis=1)


def poses_along(xi, Minv, J, h, R_mid=None):
    """``(R, p)``: the base attitudes (S+1, 3, 3) and positions (S+1, 3) at the ends of the RKMK4 steps ``h``
    (S,) of :func:`rkmk4_poses`, from the twists ``xi`` (S, 3, 6), ``Minv`` and the momentum ``J``
    (``[angular; linear]`` about the world origin, world axes, the package's order; ignored without
    ``Minv``).  ``R_mid``: see :func:`rkmk4_poses`."""
    R, p = np.empty((len(h) + 1, 3, 3)), np.empty((len(h) + 1, 3))
    J = np.zeros(6) if J is None else swap_halves(np.asarray(J, dtype=float))
    rkmk4_poses(xi, Minv, J, np.asarray(h, dtype=float), R, p, np.empty((0, 3, 3)) if R_mid is None else R_mid)
    return R, p
