"""Health of the base estimate without ground truth (ROS-free; the controller node reports it).

A motion-capture or odometry stream can deliver a sample metres away (a swapped marker, a
re-localisation), and a joint state can carry an absurd velocity for a while: neither may
drag the observer of [Mishra2023] somewhere it cannot come back from.  Three checks:

* **Innovation gate.**  A pose sample, carried forward to now with the observer's own twists
  (its latency compensation), is compared with the observer's prediction ``g1_pred`` of the
  measurement: the residual ``g1_pred^-1 g_meas`` has a rotation angle ``theta`` and a
  translation ``p``, and its size is :func:`pose_innovation`
  ``sqrt(theta^2 + (|p| / length)^2)``, where ``length`` is a characteristic length of the robot
  (a translation of ``length`` weighs as much as a rotation of one radian; an attitude-only
  sample, with a NaN translation, is gated on ``theta`` alone).  A sample whose
  innovation exceeds ``threshold`` is rejected (counted, not used).  A run of ``reinit_after``
  rejected samples that agree with each other means the robot really is elsewhere (a
  re-localisation jump): the pose estimate is re-initialized on the newest of them (counted),
  the locked velocity estimate is kept (a jump of the pose measurement says nothing about it).
* **Age.**  A sample older than the observer's history (``history_s``) cannot be carried
  forward: rejected, with that reason.
* **Plausible state.**  A non-finite estimate, or a locked velocity beyond
  ``max_angular_rate`` / ``max_speed``, restarts the observer: it forgets the estimate and
  starts again from the next sample (counted), whatever state it was in.
"""
from dataclasses import dataclass

import numpy as np

from floating_base_control.lie import rotation_angle, rotation_trace_between
from floating_base_control.estimation.observer import NON_FINITE, TOO_FAST, innovation_size
from floating_base_control.validation import InputError


def pose_innovation(g_pred, g_meas, length):
    """Size of the residual ``g_pred^-1 g_meas`` of a pose measurement against its prediction:
    ``sqrt(theta^2 + (|p| / length)^2)`` with ``theta`` the rotation angle (rad) and ``|p|`` the
    distance (m) between the two poses, ``length`` (m) the characteristic length."""
    g_pred, g_meas = np.asarray(g_pred, dtype=float), np.asarray(g_meas, dtype=float)
    theta = rotation_angle(rotation_trace_between(g_pred, g_meas))
    return innovation_size(theta, float(np.linalg.norm(g_meas[:3, 3] - g_pred[:3, 3])), length)


@dataclass
class HealthConfig:
    """Thresholds of :class:`EstimatorHealth` (see the module docstring)."""

    threshold: float = 0.5            #: largest accepted innovation (rad, or m / length)
    length: float = 1.0               #: characteristic length of the robot (m)
    reinit_after: int = 5             #: consecutive consistent rejected samples that re-initialize
    max_angular_rate: float = 10.0    #: plausible |omega| of the locked velocity (rad/s)
    max_speed: float = 10.0           #: plausible |v| of the locked velocity (m/s)

    def __post_init__(self):
        for name in ("threshold", "length", "max_angular_rate", "max_speed"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value > 0):
                raise InputError(f"health {name} must be finite and > 0, got {value}")
        if int(self.reinit_after) < 1:
            raise InputError(f"health reinit_after must be >= 1, got {self.reinit_after}")


class EstimatorHealth:
    """The innovation gate and the plausibility check of a :class:`~.observer.MomentumObserver`.

    Counters: ``rejected`` samples, ``reinitializations`` after a run of rejections,
    ``restarts`` after an implausible state; ``last_rejection`` and ``last_restart`` say why.
    """

    def __init__(self, config=None):
        self.config = config or HealthConfig()
        self.rejected = self.reinitializations = self.restarts = 0
        self.last_rejection = self.last_restart = None
        self._run = []                  # the current run of consistent rejected samples (raw poses)

    def admit(self, observer, g_meas, t_meas, t_now):
        """Whether the sample may be used (``None``) or why not; re-initializes the observer's
        pose estimate after a run of consistent rejections (the sample is then used for that)."""
        reason = self._rejection(observer, g_meas, t_meas, t_now)
        if reason is None:
            self._run.clear()
            return None
        self.rejected += 1
        self.last_rejection = reason
        if reason.startswith("innovation"):
            self._extend_run(g_meas)
            if len(self._run) >= self.config.reinit_after:
                self._reinitialize(observer, observer.carry_forward(g_meas, t_meas), t_now)
        return reason

    def screened_error(self, observer, sample, t_now):
        """The common tick in one compiled call (``MomentumObserver.screened_error``): the state plausible,
        the sample ``(t_taken, g_meas)`` (or ``None``) admitted and folded in, the observer's error returned;
        ``None`` if anything is unusual, with nothing changed, for :meth:`check_state`, :meth:`admit` and
        ``add_pose`` to take with their counts and reasons."""
        c = self.config
        error = observer.screened_error(sample, t_now, c.max_angular_rate, c.max_speed, c.threshold, c.length)
        if error is not None and sample is not None:
            self._run.clear()
        return error

    def _rejection(self, observer, g_meas, t_meas, t_now):
        if t_now - t_meas > observer.history_s:
            return f"pose sample older than the observer's history ({observer.history_s:g} s)"
        if not observer.initialized:
            return None
        innovation = innovation_size(*observer.innovation(g_meas, t_meas), self.config.length)
        if innovation > self.config.threshold:
            return f"innovation above the gate ({self.config.threshold:g})"
        return None

    def _extend_run(self, g_meas):
        if self._run and pose_innovation(self._run[-1], g_meas, self.config.length) > self.config.threshold:
            self._run.clear()           # the rejected samples disagree: outliers, not a jump
        self._run.append(g_meas)

    def _reinitialize(self, observer, g, t_now):
        self._run.clear()
        self.reinitializations += 1
        observer.g_pred = g
        observer.initialize(g, observer.mu_hat, t_now)
        observer.resync(t_now)

    def check_state(self, observer):
        """Restart the observer if its state is non-finite or implausible; whether it did."""
        reason = self.implausible(observer)
        if reason is None:
            return False
        observer.reset()
        self.restarts += 1
        self.last_restart = reason
        return True

    def implausible(self, observer):
        """Why the observer's state cannot be right (``None`` if it may be)."""
        if not observer.initialized:
            return None
        code = observer.implausibility(self.config.max_angular_rate, self.config.max_speed)
        if code == NON_FINITE:
            return "non-finite estimate"
        if code == TOO_FAST:
            return (f"locked velocity estimate beyond {self.config.max_angular_rate:g} rad/s or "
                    f"{self.config.max_speed:g} m/s")
        return None
