"""Sensor models of the orbital robot: what a controller may read.

* joint encoders: ``q`` and ``qdot`` at every control tick, with optional
  Gaussian noise;
* a base pose sensor (e.g. a camera tracking the spacecraft, or a motion
  capture system on a testbed): a noisy ``g1`` at a slow rate, delivered after a
  latency, stamped with the time it was taken;
* no base velocity.

All randomness comes from a ``numpy.random.Generator`` owned by the sensor, so
a scenario with a seed is reproducible.
"""
from collections import deque
from dataclasses import dataclass

import numpy as np

from ..lie import exp


@dataclass
class JointEncoders:
    """Joint positions and velocities with white Gaussian noise (standard deviations)."""

    q_noise: float = 0.0           #: rad
    qdot_noise: float = 0.0        #: rad/s
    seed: int = 1

    def __post_init__(self):
        self._rng = np.random.default_rng(self.seed)

    def read(self, q, qdot):
        """Measured ``(q, qdot)`` from the true ones."""
        return (q + self.q_noise * self._rng.standard_normal(q.shape),
                qdot + self.qdot_noise * self._rng.standard_normal(qdot.shape))


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

    def __post_init__(self):
        if not self.rate_hz > 0 or self.latency_s < 0:
            raise ValueError(f"pose sensor needs rate_hz > 0 and latency_s >= 0, got "
                             f"{self.rate_hz}, {self.latency_s}")
        self._rng = np.random.default_rng(self.seed)
        self._pending = deque()
        self._next_sample = 0.0

    def due(self, t):
        """Whether a sample is due at time ``t`` (so that the true pose need only be read then)."""
        return t + 1e-12 >= self._next_sample

    def sample(self, t, g1):
        """Take a sample of the true pose ``g1`` if one is due at time ``t``."""
        if self.due(t):
            noise = np.concatenate([self.rotation_noise * self._rng.standard_normal(3),
                                    self.position_noise * self._rng.standard_normal(3)])
            self._pending.append((t, g1 @ exp(noise)))
            self._next_sample += 1.0 / self.rate_hz

    def deliver(self, t):
        """Samples whose latency has elapsed by time ``t``: a list of ``(t_taken, g_meas)``."""
        out = []
        while self._pending and self._pending[0][0] + self.latency_s <= t + 1e-12:
            out.append(self._pending.popleft())
        return out
