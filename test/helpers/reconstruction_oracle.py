"""Eq. 9 written out in numpy, the tests' oracle of the compiled integrator (``analysis/reconstruction.py``):
``g1_dot = g1 (mu - A_l(q) qdot)^`` ([Mishra2023] eq. 9) along the polyline through joint samples, one
RKMK4 step on SE(3) per segment (``substeps`` per segment), ``mu`` any function ``mu(t, g1, q)``.  Plain
operators of ``lie.py`` and the connection of ``kinematics.py``, no kernel: an independent implementation."""
import numpy as np

from floating_base_control.kinematics import mechanical_connection
from floating_base_control.lie import ad, exp


def reconstruct(model, qs, mu=None, t=None, substeps=1):
    """Base poses (N x 4 x 4) from ``g1(0) = I``; ``mu``: ``None``, a constant (6,) or a callable
    ``mu(t, g1, q)`` (then ``t``, the sample times, is needed)."""
    qs = np.asarray(qs, dtype=float)
    if mu is not None and not callable(mu):
        constant = np.asarray(mu, dtype=float)
        mu = lambda s, g, q: constant          # noqa: E731
    ws = model.create_data()
    poses = np.empty((len(qs), 4, 4))
    poses[0] = np.eye(4)
    for k in range(len(qs) - 1):
        g = poses[k]
        dq = (qs[k + 1] - qs[k]) / substeps
        h = 1.0 if t is None else (t[k + 1] - t[k]) / substeps
        for j in range(substeps):
            q0, t0 = qs[k] + j * dq, (0.0 if t is None else t[k] + j * h)

            def xi(c, g_c, q0=q0, t0=t0):
                q = q0 + c * dq
                twist = -mechanical_connection(model, ws, q) @ dq / h
                return twist if mu is None else twist + mu(t0 + c * h, g_c, q)
            g = rkmk4_step(g, h, xi)
        poses[k + 1] = g
    return poses


def rkmk4_step(g, h, xi):
    """One RKMK4 step of ``g_dot = g xi(t, g)`` (body form): ``g exp(Omega)``, ``Omega_dot = dexp^-1_(-Omega) xi``
    truncated after the double bracket (enough for order 4); ``xi(c, g_c)`` is the twist at fraction ``c``
    of the step and pose ``g_c``."""
    def dexpinv(W, x):
        adW = ad(W)
        return x + 0.5 * adW @ x + adW @ adW @ x / 12.0
    k1 = h * xi(0.0, g)
    k2 = h * dexpinv(k1 / 2, xi(0.5, g @ exp(k1 / 2)))
    k3 = h * dexpinv(k2 / 2, xi(0.5, g @ exp(k2 / 2)))
    k4 = h * dexpinv(k3, xi(1.0, g @ exp(k3)))
    return g @ exp((k1 + 2 * k2 + 2 * k3 + k4) / 6)
