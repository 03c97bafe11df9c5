"""Plausibility of measurements against the robot's limits and the clock (ROS-free; the controller
nodes report what these find, and refuse what would be wrong to use).

* Joint positions outside the URDF's limits, and velocities above them, are reported: a real arm
  can be slightly beyond a soft limit, and the control law still applies.  A velocity beyond
  ``velocity_factor`` times the URDF's limit is not a motion but a fault (an encoder glitch, a
  unit error): the joint state is refused, and with it the control law and the observer's update.
* A time stamp in the future by more than a tolerance, or older than a bound, says the clocks
  disagree (or the message waited somewhere): the sample is refused.
"""
import numpy as np


class JointLimitCheck:
    """The URDF's position and velocity limits of the controller's joints; ``violations`` counts
    the joint states that broke one."""

    def __init__(self, names, position_limits, velocity_limits, velocity_factor=3.0):
        self.names = list(names)
        self.lo, self.hi = np.asarray(position_limits, dtype=float).T
        v = np.asarray(velocity_limits, dtype=float)
        self.v_max = np.where(np.isfinite(v) & (v > 0), v, np.inf)      # no limit given: none checked
        self.velocity_factor = velocity_factor
        self.violations = 0

    def check(self, q, qdot):
        """``(refusal, report)`` for one joint state: why it must not be used (``None`` if it may),
        and what to report (``None`` if it is within every limit).  Stable texts (no values)."""
        speed = np.abs(qdot)
        masks = speed > self.velocity_factor * self.v_max, (q < self.lo) | (q > self.hi), speed > self.v_max
        if not any(mask.any() for mask in masks):      # the usual case, at every control tick
            return None, None
        absurd, outside, fast = (self._names(mask) for mask in masks)
        report = "; ".join(text for text in (
            outside and f"joint position outside the URDF limits: {outside}",
            fast and f"joint velocity above the URDF limit: {fast}") if text) or None
        if report:
            self.violations += 1
        refusal = absurd and f"implausible joint velocity (over {self.velocity_factor:g} x the URDF limit): {absurd}"
        return refusal or None, report

    def _names(self, mask):
        return [n for n, bad in zip(self.names, mask) if bad]


def stamp_problem(t_stamp, now, max_age, future_tolerance):
    """Why a sample stamped ``t_stamp`` must not be used at ``now`` (``None`` if it may)."""
    if t_stamp - now > future_tolerance:
        return f"stamp in the future (by more than {future_tolerance:g} s)"
    if now - t_stamp > max_age:
        return f"stamp older than {max_age:g} s"
    return None
