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

The gate decides from what it is given: the estimate's norms (:func:`state_verdict`), a sample's age and
the size of its innovation (:func:`sample_verdict`).  The observer (``observer.py``) measures those and
consumes an admitted sample; the verdicts are compiled, and its tick calls them.  :class:`EstimatorHealth`
keeps the counts and the reasons, and decides on a re-initialization from the run of rejections; it never
calls the observer (the controller does what the verdicts say).
"""
import math
from dataclasses import dataclass

import numpy as np

from floating_base_control.compiled import F, R1, kernel
from floating_base_control.lie import rotation_angle, rotation_trace_between
from floating_base_control.validation import InputError

#: Verdicts.  On the estimate (:func:`state_verdict`): plausible, non-finite, too fast.  On a sample
#: (:func:`sample_verdict`): admitted, older than the observer's history, above the innovation gate.
#: ``NO_SAMPLE`` (= ``PLAUSIBLE``): nothing to say of a tick without a sample.
PLAUSIBLE, NON_FINITE, TOO_FAST, ADMITTED, TOO_OLD, ABOVE_GATE = range(6)
NO_SAMPLE = PLAUSIBLE
IMPLAUSIBLE = (NON_FINITE, TOO_FAST)
#: The order of :attr:`HealthConfig.limits`.
MAX_ANGULAR_RATE, MAX_SPEED, THRESHOLD, LENGTH = range(4)


@kernel(F, F, F)
def innovation_size(theta, distance, length):
    """The size of a pose sample's residual against the prediction: ``sqrt(theta^2 + (distance / length)^2)``
    of its rotation angle ``theta`` and translation length ``distance``, ``length`` the robot's characteristic
    length (``distance`` NaN: an attitude-only sample, whose rotation is all it says)."""
    if not math.isfinite(distance):
        return theta if math.isfinite(theta) else math.inf
    return math.hypot(theta, distance / length)


@kernel(F, F, F, R1)
def state_verdict(total, omega2, v2, limits):
    """:data:`NON_FINITE` if ``total`` (the sum of every entry of the estimate) or the squared norms
    ``omega2``, ``v2`` of its locked velocity are not (their sum is not finite), :data:`TOO_FAST` if one of
    those exceeds its bound squared, else :data:`PLAUSIBLE`."""
    if not math.isfinite(total + omega2 + v2):
        return NON_FINITE
    max_angular_rate, max_speed = limits[MAX_ANGULAR_RATE], limits[MAX_SPEED]
    if omega2 > max_angular_rate * max_angular_rate or v2 > max_speed * max_speed:
        return TOO_FAST
    return PLAUSIBLE


@kernel(F, F, F, R1)
def sample_verdict(age, history_s, size, limits):
    """:data:`TOO_OLD` if the sample is older than the observer's history ``history_s`` (it cannot be carried
    forward), :data:`ABOVE_GATE` if the ``size`` of its innovation exceeds the threshold, else
    :data:`ADMITTED`."""
    if age > history_s:
        return TOO_OLD
    if size > limits[THRESHOLD]:
        return ABOVE_GATE
    return ADMITTED


def pose_innovation(g_pred, g_meas, length):
    """Size of the residual ``g_pred^-1 g_meas`` of a pose measurement against its prediction:
    ``sqrt(theta^2 + (|p| / length)^2)`` with ``theta`` the rotation angle (rad) and ``|p|`` the
    distance (m) between the two poses, ``length`` (m) the characteristic length."""
    g_pred, g_meas = np.asarray(g_pred, dtype=float), np.asarray(g_meas, dtype=float)
    theta = rotation_angle(rotation_trace_between(g_pred, g_meas))
    return innovation_size(theta, float(np.linalg.norm(g_meas[:3, 3] - g_pred[:3, 3])), length)


@dataclass(frozen=True)
class HealthConfig:
    """Thresholds of :class:`EstimatorHealth` (see the module docstring).  Immutable: ``limits`` is derived
    once; to change them, set a new ``HealthConfig`` (as the ROS node does)."""

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
        limits = np.array([self.max_angular_rate, self.max_speed, self.threshold, self.length], dtype=float)
        limits.setflags(write=False)
        object.__setattr__(self, "limits", limits)          #: what the verdicts read (MAX_ANGULAR_RATE, ...)


class EstimatorHealth:
    """The counts of the health checks of a :class:`~.observer.MomentumObserver`'s estimate, and the rule that
    re-initializes its pose after a run of consistent rejections.

    Counters: ``rejected`` samples, ``reinitializations`` after a run of rejections,
    ``restarts`` after an implausible state; ``last_rejection`` and ``last_restart`` say why.
    """

    def __init__(self, config=None):
        self.config = config or HealthConfig()
        self.rejected = self.reinitializations = self.restarts = 0
        self.last_rejection = self.last_restart = None
        self._run = []                  # the current run of consistent rejected samples (raw poses)

    def restarted(self, verdict):
        """The estimate got the :func:`state_verdict` ``verdict`` (not plausible): the observer restarts."""
        self.restarts += 1
        c = self.config
        self.last_restart = ("non-finite estimate" if verdict == NON_FINITE else
                             f"locked velocity estimate beyond {c.max_angular_rate:g} rad/s or {c.max_speed:g} m/s")

    def judged(self, verdict, sample, history_s):
        """Count the verdict on a ``sample`` ``(t_taken, g_meas)`` of an observer whose history is ``history_s``
        long (:func:`sample_verdict`'s, or ``NO_SAMPLE`` or one on the estimate: nothing to count).  Whether it
        ends a run of ``reinit_after`` rejected samples that agree with each other: the robot really is
        elsewhere, re-initialize the pose on it."""
        if verdict == ADMITTED:
            self._run.clear()
        if verdict != TOO_OLD and verdict != ABOVE_GATE:
            return False
        self.rejected += 1
        if verdict == TOO_OLD:
            self.last_rejection = f"pose sample older than the observer's history ({history_s:g} s)"
            return False
        self.last_rejection = f"innovation above the gate ({self.config.threshold:g})"
        g_meas = sample[1]
        if self._run and pose_innovation(self._run[-1], g_meas, self.config.length) > self.config.threshold:
            self._run.clear()           # the rejected samples disagree: outliers, not a jump
        self._run.append(g_meas)
        if len(self._run) < self.config.reinit_after:
            return False
        self._run.clear()
        self.reinitializations += 1
        return True
