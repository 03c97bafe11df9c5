"""Limits: every controller's command is brought within the actuator limits here, in the core
(:func:`saturate`); and the joint limits as a robot's safety monitor sees them, margins, overruns
and saturation over a run (:class:`LimitMonitor`, for the scenario's ``summary.json`` and the
controller node's ``/diagnostics``).  Overruns are how far beyond the URDF's position range (rad)
and velocity limit (rad/s) a joint went; the goal is zero.
"""
import numpy as np


def saturate(tau, limits):
    """``tau`` clipped to ``[-limits, limits]``, and whether any entry was clipped."""
    clipped = clip(tau, limits, -limits)
    return clipped, bool((clipped != tau).any())


def clip(tau, limits, neg_limits, out=None):
    """``tau`` clipped to ``[neg_limits, limits]`` (``neg_limits = -limits``, kept by a control loop), into
    ``out`` if given (which may be ``tau``)."""
    return np.minimum(np.maximum(tau, neg_limits, out=out), limits, out=out)     # np.clip's wrapper costs more


class LimitMonitor:
    """Running extremes of the joint limits' margins and the torque saturation."""

    def __init__(self, position_limits, velocity_limits):
        self.position_limits = np.asarray(position_limits, dtype=float)
        v = np.asarray(velocity_limits, dtype=float)
        self.velocity_limits = np.where(v > 0, v, np.inf)
        n = len(v)
        self.min_position_margin = np.full(n, np.inf)
        self.min_velocity_margin = np.full(n, np.inf)
        self.max_velocity_ratio = np.zeros(n)
        self.ticks = self.saturated_ticks = 0
        self._lo, self._hi = (np.ascontiguousarray(x) for x in self.position_limits.T)
        self._a, self._b = np.zeros(n), np.zeros(n)

    def update(self, q, qdot, saturated=False):
        """One tick: the position margin ``min(q - lo, hi - q)`` and the velocity margin ``qdot_max - |qdot|``
        per joint (negative: beyond the limit), in preallocated buffers (the monitor runs at every tick)."""
        a, b = self._a, self._b
        np.minimum(np.subtract(q, self._lo, out=a), np.subtract(self._hi, q, out=b), out=a)
        np.minimum(self.min_position_margin, a, out=self.min_position_margin)
        speed = np.abs(qdot, out=a)
        np.minimum(self.min_velocity_margin, np.subtract(self.velocity_limits, speed, out=b),
                   out=self.min_velocity_margin)
        np.maximum(self.max_velocity_ratio, np.divide(speed, self.velocity_limits, out=b), out=self.max_velocity_ratio)
        self.ticks += 1
        self.saturated_ticks += bool(saturated)

    def report(self):
        """The numbers of ``summary.json`` and ``/diagnostics`` (per joint where a list)."""
        return {"max_position_limit_overrun_rad": float(max(0.0, -self.min_position_margin.min())),
                "max_velocity_limit_overrun_rad_s": float(max(0.0, -self.min_velocity_margin.min())),
                "min_position_limit_margin_rad": self.min_position_margin.tolist(),
                "max_velocity_limit_ratio": self.max_velocity_ratio.tolist(),
                "torque_saturated_ticks_fraction": self.saturated_ticks / max(self.ticks, 1)}
