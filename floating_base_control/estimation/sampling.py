"""Discrete-time stability of the observer ([Mishra2023] eqs. 37, 42, 51) with slow pose samples.

The continuous analysis (Lemma 11) assumes a pose at every instant.  The
observer of ``observer.py`` integrates with a Lie-Euler step at the control
period ``dt`` and sees a pose every ``T`` seconds, ``latency`` late.
Linearized about a constant locked velocity, each generalized eigen-direction
of ``(L, M_b)`` (``L v = a M_b v``) behaves like one axis with ``a = l / M``.
With the true pose ``x``, velocity ``v``, the estimates ``x_hat``, ``v_hat`` and
the prediction ``p`` of the measurement, one control tick is (eqs. 37, 42, 51
with ``eps = p - x_hat``)::

    x_hat+ = x_hat + (v_hat + k eps) dt      v_hat+ = v_hat + a eps dt      p+ = p + v_hat dt

and a sample resets ``p`` onto the measurement carried forward with ``v_hat``, so
that the prediction error ``x - p`` becomes ``(v - v_hat) latency``.  In the errors
``e = (x - x_hat, v - v_hat, x - p)`` one tick is ``e+ = E e`` and one sample
period ``e+ = E^N P e`` (``N = T / dt``).  The observer's error converges iff the
spectral radius of ``E^N P`` is below one: with the default gains
(``k = 2``, ``l_rot = 70``) and the orbital robot's 60-80 kg m^2 this holds up to
``T`` of a few seconds; ten times the stiffness diverges at 1-2 Hz.
"""
import warnings
from typing import NamedTuple

import numpy as np
from scipy.linalg import eigh

from floating_base_control.validation import InputError


class ObserverGainWarning(UserWarning):
    """Observer gains that converge, but slowly, for the configured pose rate."""


class SamplingCheck(NamedTuple):
    radius: float              #: largest spectral radius of the sampled error map (< 1: stable)
    time_constant_s: float     #: slowest error time constant, -T / ln(radius) (inf if radius >= 1)
    natural_frequency: float   #: sqrt of the largest a = eig(M_b^-1 L), rad/s (the observer's bandwidth)


#: Warn when the slowest observer error decays slower than this (s).
SLOW_TIME_CONSTANT_S = 60.0


def sampled_error_map(k, a, dt, period, latency=0.0):
    """``E^N P``: the observer's error ``(x - x_hat, v - v_hat, x - p)`` from one sample to the next,
    for one direction of stiffness-to-inertia ratio ``a`` (see the module docstring)."""
    E = np.array([[1.0 - k * dt, dt, k * dt],
                  [-a * dt, 1.0, a * dt],
                  [0.0, dt, 1.0]])
    P = np.array([[1.0, 0.0, 0.0],
                  [0.0, 1.0, 0.0],
                  [0.0, latency, 0.0]])
    return np.linalg.matrix_power(E, max(1, int(round(period / dt)))) @ P


def sampling_check(gains, M_b, dt, period, latency=0.0):
    """:class:`SamplingCheck` of observer ``gains`` for locked inertia ``M_b``, control period ``dt``,
    pose period ``period`` and latency."""
    a = eigh(gains.L, M_b, eigvals_only=True)
    radius = max(float(np.abs(np.linalg.eigvals(sampled_error_map(gains.k, ai, dt, period, latency))).max())
                 for ai in a)
    tau = -period / np.log(radius) if 0 < radius < 1 else (0.0 if radius == 0 else np.inf)
    return SamplingCheck(radius, float(tau), float(np.sqrt(a.max())))


def check_observer_sampling(gains, M_b, dt, period, latency=0.0, on_unstable="error"):
    """Refuse (``InputError``) observer gains whose error diverges at this pose rate; warn
    (:class:`ObserverGainWarning`) when it converges slower than :data:`SLOW_TIME_CONSTANT_S`.
    ``on_unstable="warn"`` only warns (to study a diverging run).  Returns the :class:`SamplingCheck`."""
    check = sampling_check(gains, M_b, dt, period, latency)
    if check.radius >= 1.0:
        message = (f"observer gains k = {gains.k:g}, l_rot = {gains.l_rot:g}, l_trans = {gains.l_trans:g} are "
                   f"unstable with a pose every {period:g} s at a {dt:g} s control period (sampled error map "
                   f"spectral radius {check.radius:.3g} >= 1): lower l_rot / l_trans or raise the pose rate")
        if on_unstable == "error":
            raise InputError(message)
        warnings.warn(message, ObserverGainWarning, stacklevel=2)
    elif check.time_constant_s > SLOW_TIME_CONSTANT_S:
        warnings.warn(f"observer error decays with a {check.time_constant_s:.0f} s time constant at a pose every "
                      f"{period:g} s (spectral radius {check.radius:.4f})", ObserverGainWarning, stacklevel=2)
    return check
