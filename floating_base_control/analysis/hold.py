"""How long an end effector can be held still in the inertial frame while the system carries momentum.

A free-floating system conserves its spatial momentum ``h`` (world axes, about the world origin).
With the end effector {e} held at a fixed world pose ``g_e``, the base pose is ``g1 = g_e g_1e(q)^-1``
and the locked velocity is fixed by the momentum, ``mu = M_b(q)^-1 Ad_g1^T h`` (Def. 2 and 3), so
the shape must move as (``J*``: the generalized Jacobian, ``control/end_effector.py``)::

    J*(q) qdot = -Ad_1e^-1 mu(q)          (V_e = 0)

six equations for the ``n`` joints: with a 7-joint arm the shape motion is determined up to the
1-dim null space of ``J*``.  :func:`hold_motion` integrates it from a shape ``q`` until a joint
reaches its position or velocity limit (a singularity of ``J*`` shows as a velocity limit): the
longest a world-fixed pose can be held, by any controller, with the minimum-norm ``qdot`` or with
the redundancy steered away from the limits (``steer > 0``: the null-space component of the
gradient of ``-1/2 sum ((q - q_mid) / half_range)^2``).

The linear momentum alone bounds it too: the system's centre of mass moves at ``p / m`` for ever,
so the distance between it and a world-fixed end effector changes at that speed
(:func:`com_speed`).
"""
from typing import NamedTuple

import numpy as np

from floating_base_control.control.end_effector import FrameWorkspace, frame_id, shape_velocity_for


class Hold(NamedTuple):
    """Result of :func:`hold_motion`."""

    duration_s: float           #: time until a limit (or ``horizon_s`` if none was reached)
    reason: str                 #: which limit ended it ("position limit <joint>", "velocity limit <joint>", "horizon")
    t: np.ndarray               #: sample times
    q: np.ndarray               #: shapes along the hold
    qdot: np.ndarray            #: shape velocities along the hold
    sigma_min: np.ndarray       #: smallest singular value of J* along the hold


def hold_velocity(model, ws, fid, q, g_e, h, steer=0.0):
    """``(qdot, sigma_min(J*))`` that keeps {e} at ``g_e`` with spatial momentum ``h`` (module doc)."""
    qdot, s, Vt = shape_velocity_for(model, ws, fid, q, g_e, np.zeros(6), h)
    if steer and Vt.shape[0] > 6:
        lo, hi = model.position_limits.T
        gradient = -(q - (lo + hi) / 2) / ((hi - lo) / 2) ** 2
        N = Vt[6:].T
        qdot = qdot + steer * N @ (N.T @ gradient)
    return qdot, s[-1]


def hold_motion(model, frame, q, g_e, h, horizon_s=30.0, dt=2e-3, steer=0.0, margin=0.0):
    """Integrate the held end effector's shape motion (RK4) from ``q`` at pose ``g_e`` with momentum ``h``
    until a joint comes within ``margin`` (rad) of a position limit or exceeds its velocity limit."""
    ws, fid = FrameWorkspace(model), frame_id(model, frame)
    lo, hi = model.position_limits.T + np.array([margin, -margin])[:, None]
    f = lambda x: hold_velocity(model, ws, fid, x, g_e, h, steer)      # noqa: E731
    q = np.array(q, dtype=float)
    ts, qs, qdots, sigmas = [], [], [], []
    t, reason = 0.0, "horizon"
    while t < horizon_s:
        k1, sigma = f(q)
        ts.append(t), qs.append(q.copy()), qdots.append(k1), sigmas.append(sigma)
        over = np.abs(k1) > model.velocity_limits
        outside = (q < lo) | (q > hi)
        if outside.any() or over.any():
            j = int(np.argmax(outside if outside.any() else over))
            reason = f"{'position' if outside.any() else 'velocity'} limit {model.joint_names[j]}"
            break
        k2 = f(q + dt / 2 * k1)[0]
        k3 = f(q + dt / 2 * k2)[0]
        k4 = f(q + dt * k3)[0]
        q = q + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t += dt
    return Hold(t, reason, np.array(ts), np.array(qs), np.array(qdots), np.array(sigmas))


def com_speed(model, h):
    """Speed of the system's centre of mass, ``|p| / m`` (``p``: the linear part of ``h``)."""
    return float(np.linalg.norm(h[3:]) / model.mass)
