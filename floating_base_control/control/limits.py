"""Limits: every controller's command is brought within the actuator limits here, in the core
(:func:`saturate`); and the joint limits as a robot's safety monitor sees them, margins, overruns
and saturation over a run (:class:`LimitMonitor`, for the scenario's ``summary.json`` and the
controller node's ``/diagnostics``).  Overruns are how far beyond the URDF's position range (rad)
and velocity limit (rad/s) a joint went; the goal is zero.
"""
import numpy as np

from floating_base_control.compiled import R1, W1, kernel


def saturate(tau, limits):
    """``tau`` clipped to ``[-limits, limits]``, and whether any entry was clipped."""
    clipped = clip(tau, limits, -limits)
    return clipped, bool((clipped != tau).any())


def clip(tau, limits, neg_limits, out=None):
    """``tau`` clipped to ``[neg_limits, limits]`` (``neg_limits = -limits``, kept by a control loop), into
    ``out`` if given (which may be ``tau``)."""
    return np.minimum(np.maximum(tau, neg_limits, out=out), limits, out=out)     # np.clip's wrapper costs more


@kernel(R1, R1, R1, W1)
def saturated_sum(tau_c, feedforward, limits, out):
    """``tau_c + feedforward`` clipped to ``[-limits, limits]`` into ``out`` (the command of eq. 45); a NaN
    stays NaN (``min``/``max`` return their first argument when it is NaN), for the caller to refuse."""
    for j in range(len(out)):
        out[j] = min(max(tau_c[j] + feedforward[j], -limits[j]), limits[j])


@kernel(R1, R1, W1, W1, W1)
def running_extremes(q, qdot, q_min, q_max, speed_max):
    """``q_min``, ``q_max`` and ``speed_max`` (of ``|qdot|``) updated with one tick's ``q`` and ``qdot`` (a NaN
    stays, as numpy's ``minimum`` and ``maximum`` keep it)."""
    for j in range(len(q)):
        q_min[j] = np.minimum(q_min[j], q[j])
        q_max[j] = np.maximum(q_max[j], q[j])
        speed_max[j] = np.maximum(speed_max[j], np.abs(qdot[j]))


class LimitMonitor:
    """Running extremes of the joint limits' margins and the torque saturation.

    A tick keeps only the extremes of ``q`` and ``|qdot|``: the margins are monotonic in them (and so are
    their floating-point roundings), so the worst margins follow exactly at :meth:`report`.
    """

    def __init__(self, position_limits, velocity_limits):
        self.position_limits = np.asarray(position_limits, dtype=float)
        v = np.asarray(velocity_limits, dtype=float)
        self.velocity_limits = np.where(v > 0, v, np.inf)
        n = len(v)
        self.q_min, self.q_max, self.speed_max = np.full(n, np.inf), np.full(n, -np.inf), np.zeros(n)
        self.ticks = self.saturated_ticks = 0

    def update(self, q, qdot, saturated=False):
        running_extremes(q, qdot, self.q_min, self.q_max, self.speed_max)
        self.ticks += 1
        self.saturated_ticks += bool(saturated)

    def report(self):
        """The numbers of ``summary.json`` and ``/diagnostics`` (per joint where a list): the position margin
        ``min(q - lo, hi - q)`` and the velocity margin ``qdot_max - |qdot|`` (negative: beyond the limit)
        at their worst, and the largest ``|qdot| / qdot_max``."""
        lo, hi = self.position_limits.T
        position_margin = np.minimum(self.q_min - lo, hi - self.q_max)
        velocity_margin = self.velocity_limits - self.speed_max
        return {"max_position_limit_overrun_rad": float(max(0.0, -position_margin.min())),
                "max_velocity_limit_overrun_rad_s": float(max(0.0, -velocity_margin.min())),
                "min_position_limit_margin_rad": position_margin.tolist(),
                "max_velocity_limit_ratio": (self.speed_max / self.velocity_limits).tolist(),
                "torque_saturated_ticks_fraction": self.saturated_ticks / max(self.ticks, 1)}
