"""The base rotation of [Mishra2023] eq. 9 along the planner's joint paths, and its gradient from curvature.

Eq. 9, ``g1_dot = g1 (mu - A_l(q) qdot)^``, is integrated by the package's one integrator of it
(``analysis/reconstruction.py``, compiled RKMK4 on SE(3)), here with the connection sampled at the step
ends and midpoints of the exact path (a Fourier loop, a timed trajectory; not a polyline), one CRBA each.
At zero momentum the rotation depends on the path only, not on its timing; with a conserved momentum
``J`` the locked velocity ``mu = M_b^-1 Ad_g1^T J`` adds the drift (the dynamic phase).

Gradient (zero momentum).  For a closed loop ``q(s)`` based at ``q(0) = q(2 pi)`` and a variation
``dq(s)`` vanishing at the base, the holonomy ``H = R1(2 pi)`` varies by (integrating by parts the
``A_l dq'`` term of ``d omega1``)

    ``H^-1 dH = ( H^T int_0^2pi R1(s) DA_l(q(s))(q'(s), dq(s))_omega ds )^``

with ``DA_l(x) y = dA_l(x) y - ad_(A_l x) A_l y`` the curvature ([Mishra2023] Theorem 2, eq. 35): the
first variation of the holonomy is the curvature transported along the loop, the differential form of
eq. 11's Stokes estimate [Hatton2011].  :func:`loop_holonomy_gradient` evaluates it with Simpson's rule
on the integrator's nodes.
"""
import numpy as np

from ..analysis.reconstruction import connections, poses_along, step_twists
from ..dynamics.curvature import curvature_pairs
from ..kinematics import shape_kinematics
from ..conventions import swap_halves
from ..lie import exp3, jlog3, log3


def path_rotation(model, ws, path, steps):
    """The base rotation (3x3) at the end of the joint path ``path`` (``s`` from 0 to ``path.length``)
    at zero momentum (eq. 9: it depends on the path, not on its timing); for a loop, its holonomy.
    RKMK4 in ``steps`` equal steps of ``s`` (fourth order)."""
    q, dq, _ = path.derivatives(np.linspace(0.0, path.length, 2 * steps + 1))
    A, Minv = connections(model, ws, q)
    return poses_along(step_twists(A, dq), Minv, None, np.full(steps, path.length / steps))[0][-1]


def loop_holonomy_gradient(model, ws, loop, steps):
    """``(H, G)``: the holonomy of one cycle of ``loop`` (zero momentum) and ``G`` (3, 2K x J), the
    body-frame derivative ``(H^-1 dH)^vee`` with respect to the loop's coefficients (raveled row-major):
    the curvature along the loop (module doc), Simpson's rule on the RKMK4 nodes."""
    s = np.linspace(0.0, 2 * np.pi, 2 * steps + 1)
    q, dq, _ = loop.derivatives(s)
    B = loop.basis(s)[0]
    E = np.zeros((model.n, len(loop.joints)))
    E[loop.joints, np.arange(len(loop.joints))] = 1.0
    A, F = np.empty((len(s), 6, model.n)), np.empty((len(s), 3, len(loop.joints)))
    for i in range(len(s)):
        kin = shape_kinematics(model, ws, q[i])
        A[i] = swap_halves(kin.A_l)                             # the kernel's order
        F[i] = curvature_pairs(kin, dq[i][:, None], E)[:3, 0]
    h = 2 * np.pi / steps
    R_mid = np.empty((steps, 3, 3))
    R = poses_along(step_twists(A, dq), np.empty((0, 6, 6)), None, np.full(steps, h), R_mid)[0]
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
    return np.array(log3(tuple(np.asarray(R, dtype=float).ravel()))[0])


def rotation_matrix(phi):
    """``exp(phi^)``: the rotation matrix of a rotation vector."""
    return np.array(exp3((float(phi[0]), float(phi[1]), float(phi[2])))).reshape(3, 3)


def right_jacobian_inverse(phi):
    """``J_r(phi)^-1``: ``log(exp(phi) exp(eta)) = phi + J_r^-1 eta + O(eta^2)`` (``lie.jlog3``)."""
    phi = (float(phi[0]), float(phi[1]), float(phi[2]))
    return np.array(jlog3(phi, float(np.linalg.norm(phi)))).reshape(3, 3)


def momentum_at_rest(model, q0, mu0):
    """``J = M_b(q0) mu0``: the spatial momentum ([Mishra2023] Def. 2, ``[angular; linear]`` about the world
    origin in world axes with ``g1(0) = I``) of the system at shape ``q0`` with locked velocity ``mu0``."""
    return model.kinematics(q0).M_b @ mu0


def attitudes_along(model, trajectory, times, J=None):
    """Predicted base attitude ``R1(t)`` (len(times), 3, 3), ``R1(times[0]) = I``, along a timed joint
    trajectory, eq. 9 with the conserved momentum ``J`` (:func:`momentum_at_rest`; ``None``: zero
    momentum).  ``trajectory.evaluate(t)`` gives ``(q, qdot, qddot)``; the steps also end at its ``knots``
    (where the accelerations jump), so the integration stays fourth order."""
    times = np.asarray(times, dtype=float)
    knots = trajectory.knots
    grid = np.unique(np.concatenate([times, knots[(knots > times[0]) & (knots < times[-1])]]))
    nodes = np.empty(2 * len(grid) - 1)
    nodes[0::2], nodes[1::2] = grid, 0.5 * (grid[:-1] + grid[1:])
    q, qdot, _ = trajectory.evaluate(nodes)
    momentum = J is not None and bool(np.any(J))
    A, Minv = connections(model, model.create_data(), q, momentum)
    R = poses_along(step_twists(A, qdot), Minv, J, np.diff(grid))[0]
    return R[np.searchsorted(grid, times)]
