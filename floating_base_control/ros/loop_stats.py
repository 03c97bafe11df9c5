"""A control loop's statistics: tick period, compute time, input age and saturation over the last
ticks (``/diagnostics``), and optionally every tick's timings (the ``timing_log`` parameter's CSV).

Plain Python and NumPy (no rclpy): what :class:`~.controller_base.ControlNode` records around each tick.
"""
from collections import deque

import numpy as np

from floating_base_control.results import write_csv

class LoopStats:
    """Tick period, compute time, input age and saturation over the last ticks (and, if
    ``keep_all``, of every tick, for a timing log)."""

    def __init__(self, window=2000, keep_all=False):
        self.times, self.ages, self.sat, self.compute = (deque(maxlen=window) for _ in range(4))
        self.all = [] if keep_all else None

    def record(self, t, age, saturated, compute):
        self.times.append(t)
        self.ages.append(age)
        self.sat.append(saturated)
        self.compute.append(compute)
        if self.all is not None:
            self.all.append([t, compute, age, 0.0, 0.0])

    def record_after(self, after, gc_pause):
        """Time spent after the last tick's command: ``after_tick`` and garbage collection (s)."""
        if self.all is not None:
            self.all[-1][3:] = after, gc_pause

    def write(self, path):
        """CSV of every tick: time, compute time (to the command), input age, time after the command
        (estimates, ...) and garbage collection after the tick (s)."""
        t, compute, age, after, gc_pause = np.array(self.all).reshape(-1, 5).T
        write_csv(path, {"t": t, "compute_s": compute, "joint_state_age_s": age, "after_tick_s": after,
                         "gc_s": gc_pause})

    def summary(self):
        if len(self.times) < 3:
            return dict(rate_hz=0.0, period_p99_ms=float("nan"), period_max_ms=float("nan"),
                        compute_p99_ms=float("nan"), age_ms=float("nan"), saturated=0.0)
        periods = np.diff(self.times) * 1e3
        ages = np.array(self.ages)
        ages = ages[np.isfinite(ages)]
        span = self.times[-1] - self.times[0]
        return dict(rate_hz=(len(self.times) - 1) / span if span > 0 else 0.0,
                    period_p99_ms=float(np.percentile(periods, 99)), period_max_ms=float(periods.max()),
                    compute_p99_ms=float(np.percentile(self.compute, 99)) * 1e3,
                    age_ms=float(ages.mean()) * 1e3 if ages.size else float("nan"),
                    saturated=float(np.mean(self.sat)))
