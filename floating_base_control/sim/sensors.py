"""Sensor models of the orbital robot: what a controller may read.

* joint encoders: ``q`` and ``qdot`` at every control tick, with optional
  Gaussian noise; or (``resolution > 0``) ``q`` quantized to the encoder's
  resolution and ``qdot`` from its filtered differentiation, as a drive reports them;
* a base pose sensor (e.g. a camera tracking the spacecraft, a motion
  capture system on a testbed, or a star tracker): a noisy ``g1`` at a slow rate,
  delivered after a latency, stamped with the time it was taken; optionally
  with a slowly varying attitude bias (first-order Gauss-Markov), jitter of the
  sample period and of the latency, dropped samples, and attitude only (the
  translation of an attitude-only sample is NaN: the observer keeps its own);
* no base velocity.

A pose sensor model is a class taking :class:`PoseSensor`'s parameters, with its ``due``, ``sample`` and
``deliver``; registered (:func:`register_pose_sensor`), a scenario names it (``OrbitalScenario.pose_sensor``).

All randomness comes from ``numpy.random.Generator``s owned by the sensor, so
a scenario with a seed is reproducible; the optional effects draw from a
generator of their own, so that the default sensors' noise does not change.
"""
from collections import deque
from dataclasses import dataclass

import numpy as np

from floating_base_control.compiled import B, F, R1, W1, kernel
from floating_base_control.lie import exp
from floating_base_control.validation import InputError

#: name -> pose sensor model (a class, see the module docstring), in the order they were registered.
POSE_SENSORS = {}


def register_pose_sensor(cls):
    """Class decorator: make the pose sensor model ``cls`` available by its class name; returns it."""
    POSE_SENSORS[cls.__name__] = cls
    return cls


def pose_sensor_model(name):
    """The registered pose sensor model called ``name``."""
    if name not in POSE_SENSORS:
        raise InputError(f"pose_sensor must be one of {tuple(POSE_SENSORS)}, got {name!r}")
    return POSE_SENSORS[name]


@dataclass
class JointEncoders:
    """Joint positions and velocities with white Gaussian noise (standard deviations)."""

    q_noise: float = 0.0           #: rad
    qdot_noise: float = 0.0        #: rad/s
    seed: int = 1
    resolution: float = 0.0        #: rad per count; > 0: quantized q, qdot by filtered differentiation
    dt: float = 1e-3               #: read period (s), for the differentiation
    velocity_filter_hz: float = 50.0   #: cut-off of the first-order filter of the differentiated q

    def __post_init__(self):
        self._rng = np.random.default_rng(self.seed)
        self._q_prev = self._qdot = None
        w = 2 * np.pi * self.velocity_filter_hz * self.dt
        self._alpha = w / (1.0 + w)

    def read(self, q, qdot):
        """Measured ``(q, qdot)`` from the true ones."""
        if not self.resolution:       # one draw of both noises: the same stream as two, at every tick
            noise = self._rng.standard_normal(q.size + qdot.size)
            return q + self.q_noise * noise[:q.size], qdot + self.qdot_noise * noise[q.size:]
        if self.q_noise:
            q = q + self.q_noise * self._rng.standard_normal(q.shape)
        q_m = np.empty(q.shape)         # a new array at every read: what the caller gets is never changed
        first = self._q_prev is None
        if first:
            self._qdot = np.zeros(q.shape)
        quantized_differentiation(q, self.resolution, self.dt, self._alpha, q_m if first else self._q_prev,
                                  first, q_m, self._qdot)
        self._q_prev = q_m
        return q_m, self._qdot.copy()


@kernel(R1, F, F, F, R1, B, W1, W1)
def quantized_differentiation(q, resolution, dt, alpha, q_prev, first, q_m, qdot):
    """``q`` quantized to ``resolution`` into ``q_m``, and its filtered difference from ``q_prev`` (the
    previous read) added to ``qdot``: ``qdot += alpha ((q_m - q_prev) / dt - qdot)``, a first-order filter
    of the differentiated position as a drive computes it (``first``: the first read, ``qdot`` kept)."""
    for j in range(len(q)):
        q_m[j] = np.rint(q[j] / resolution) * resolution
        if not first:
            qdot[j] += (((q_m[j] - q_prev[j]) / dt) - qdot[j]) * alpha


@register_pose_sensor
@dataclass
class PoseSensor:
    """Slow, noisy, delayed base pose: ``g_meas = g1 exp([n_rot; n_pos])`` (body-frame noise).

    A sample is taken every ``1 / rate_hz`` seconds and becomes available
    ``latency_s`` later, stamped with the time it was taken.
    """

    rate_hz: float = 10.0
    rotation_noise: float = 1e-3    #: rad, standard deviation per axis
    position_noise: float = 1e-3    #: m, standard deviation per axis
    latency_s: float = 0.02
    seed: int = 2
    attitude_bias: float = 0.0      #: rad, stationary standard deviation per axis of the bias
    bias_time_s: float = 600.0      #: correlation time of the bias (s)
    position: bool = True           #: False: attitude only (translation NaN)
    rate_jitter: float = 0.0        #: each period is 1/rate_hz times 1 + U(-rate_jitter, rate_jitter)
    latency_jitter_s: float = 0.0   #: each latency is latency_s + U(0, latency_jitter_s)
    dropout: float = 0.0            #: probability that a sample is lost

    def __post_init__(self):
        if not self.rate_hz > 0 or self.latency_s < 0:
            raise ValueError(f"pose sensor needs rate_hz > 0 and latency_s >= 0, got "
                             f"{self.rate_hz}, {self.latency_s}")
        self._rng = np.random.default_rng(self.seed)
        self._extra = np.random.default_rng([self.seed, 1])
        self._bias = self.attitude_bias * self._extra.standard_normal(3)
        self._bias_t = 0.0
        self._pending = deque()
        self._next_sample = 0.0
        self._next_delivery = np.inf    # the earliest arrival pending: a tick without one does nothing more

    def due(self, t):
        """Whether a sample is due at time ``t`` (so that the true pose need only be read then)."""
        return t + 1e-12 >= self._next_sample

    def sample(self, t, g1):
        """Take a sample of the true pose ``g1`` if one is due at time ``t``."""
        if self.due(t):
            noise = np.concatenate([self.rotation_noise * self._rng.standard_normal(3),
                                    self.position_noise * self._rng.standard_normal(3)])
            self._next_sample += (1.0 + self.rate_jitter * self._extra.uniform(-1, 1)) / self.rate_hz
            if self.dropout and self._extra.random() < self.dropout:
                return
            if self.attitude_bias:
                noise[:3] += self._bias_at(t)
            g = g1 @ exp(noise)
            if not self.position:
                g[:3, 3] = np.nan
            latency = self.latency_s + self.latency_jitter_s * self._extra.random()
            self._pending.append((t + latency, t, g))
            self._next_delivery = min(self._next_delivery, t + latency)

    def _bias_at(self, t):
        """The first-order Gauss-Markov bias, propagated exactly from the last sample to ``t``."""
        decay = np.exp(-(t - self._bias_t) / self.bias_time_s)
        self._bias = decay * self._bias + self.attitude_bias * np.sqrt(1 - decay ** 2) * self._extra.standard_normal(3)
        self._bias_t = t
        return self._bias

    def deliver(self, t):
        """Samples whose latency has elapsed by time ``t``: a list of ``(t_taken, g_meas)``, oldest first."""
        if self._next_delivery > t + 1e-12:     # the usual tick: none due
            return []
        out = sorted((s for s in self._pending if s[0] <= t + 1e-12), key=lambda s: s[1])
        self._pending = deque(s for s in self._pending if s[0] > t + 1e-12)
        self._next_delivery = min((s[0] for s in self._pending), default=np.inf)
        return [(t_taken, g) for _, t_taken, g in out]
