"""Handing the arm from one motion task to another without a torque step (bumpless transfer).

A motion task is anything with ``torque(t, q, qdot, terms, mu, compensation, g_hat) -> tau_c``
(:class:`~floating_base_control.control.tracking.JointTask`,
:class:`~floating_base_control.control.end_effector.EndEffectorTask`).  :class:`Handover`
runs ``first`` until ``t_switch`` and then blends to ``second`` over ``blend_s`` seconds with
the smooth step ``a(x) = x^3 (10 - 15 x + 6 x^2)``: the command changes by at most
``max|a'| dt |tau_2 - tau_1| = 15/8 dt / blend_s |tau_2 - tau_1|`` per tick.  Both tasks
are evaluated during the blend; :attr:`Handover.max_step` is the largest change of the command
that the blend made from one tick to the next (at the same state), per joint.
"""
import numpy as np


def smooth_step(x):
    """``a(x) = x^3 (10 - 15 x + 6 x^2)`` on ``[0, 1]`` (0 and 1 outside): zero slope at both ends."""
    x = min(max(x, 0.0), 1.0)
    return x**3 * (10 - 15 * x + 6 * x * x)


class Handover:
    """``first`` until ``t_switch``, then ``second``, blended over ``blend_s`` seconds (module doc)."""

    def __init__(self, first, second, t_switch, blend_s=0.5):
        if blend_s <= 0:
            raise ValueError(f"blend_s must be > 0, got {blend_s}")
        self.first, self.second = first, second
        self.t_switch, self.blend_s = float(t_switch), float(blend_s)
        self.active = first
        self._a = 0.0
        self.max_step = None     #: largest per-tick change of the command the blend itself made, per joint

    @property
    def name(self):
        return self.active.name

    @property
    def error(self):
        return self.active.error

    def torque(self, t, q, qdot, terms, mu, compensation, g_hat=None):
        a = smooth_step((t - self.t_switch) / self.blend_s)
        if t < self.t_switch:
            return self.first.torque(t, q, qdot, terms, mu, compensation, g_hat)
        self.active = self.second
        tau = self.second.torque(t, q, qdot, terms, mu, compensation, g_hat)
        if self._a < 1.0:
            tau_first = self.first.torque(t, q, qdot, terms, mu, compensation, g_hat)
            step = (a - self._a) * np.abs(tau - tau_first)    # at this tick's state: what the switch changed
            self.max_step = step if self.max_step is None else np.maximum(self.max_step, step)
            tau = a * tau + (1.0 - a) * tau_first
            self._a = a
        return np.asarray(tau)
