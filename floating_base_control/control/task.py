"""The task controller ``tau_c`` of the shape controller (seed 002, eq. 52), made safe for a real arm.

Eq. 52 is a PD law about a fixed set-point.  On a real arm three things are
added, none of which changes the equilibrium or Lemma 11's argument once the
reference has arrived (the reference is then constant, the limit potential zero
inside the margins and the integral constant)::

    tau_c = -K (q - q_r) - D_q (qdot - qdot_r) - K_i z - dPhi_lim(q) - D_v(qdot)     (52, extended)

* ``q_r(t)``: a **rate-limited reference** (:func:`reference_step`) that moves from
  the measured start to the set-point ``q_d`` with ``|qdot_r| <= f_v qdot_max``
  (URDF velocity limits) and ``|qddot_r| <= a_r``, arriving at rest.  A set-point
  outside the URDF range is refused (:func:`check_setpoint`); one within the
  margin ``m`` of a limit is approached up to the margin.
* ``K_i z``: **integral action** (PD + I) on ``z_dot = q - q_r`` with
  anti-windup (:func:`integral_step`): ``|K_i z| <= clamp`` (clamping), and ``z`` is
  frozen on a joint whose total torque is saturated in the direction the
  integral pushes (conditional integration).  ``K_i = 0``: eq. 52's PD.
* ``Phi_lim(q) = 1/2 K_lim sum_j ((lo_j + m - q_j)_+^2 + (q_j - hi_j + m)_+^2)``, a
  **limit potential** that is zero inside the margins and gives the full effort
  limit at the hard limit (``K_lim = effort / m``); a potential, so the
  closed loop stays passive.
* ``D_v(qdot) = d_v (|qdot| - f_g qdot_max)_+ sign(qdot)``: **velocity-limit damping**
  above a fraction ``f_g`` of the URDF velocity limit (dissipative).

The controller names of campaigns combine the task law and eq. 45's
compensation: :data:`CONTROLLERS`.
"""
from dataclasses import dataclass

import numpy as np

from ..validation import InputError
from .shape import task_torque

#: name -> (compensation of eq. 45, integral action): the baselines and the paper's controller.
CONTROLLERS = {"pd": ("none", False), "pdi": ("none", True), "tau1": ("tau1", False), "tau1i": ("tau1", True),
               "tau2": ("tau2", False), "tau2i": ("tau2", True)}


def controller_options(name):
    """``(compensation, integral)`` of a controller name of :data:`CONTROLLERS`."""
    if name not in CONTROLLERS:
        raise InputError(f"controller must be one of {sorted(CONTROLLERS)}, got {name!r}")
    return CONTROLLERS[name]


@dataclass(frozen=True)
class TaskLimits:
    """Shaping and limit terms of the extended eq. 52 (see the module docstring)."""

    speed_fraction: float = 0.5        #: f_v: reference speed as a fraction of the URDF velocity limit
    acceleration: float = 2.0          #: a_r: reference acceleration, rad/s^2
    margin: float = 0.1                #: m: the limit potential starts this far inside each limit, rad
    guard_fraction: float = 0.8        #: f_g: velocity damping starts at this fraction of the limit
    integral_clamp: float = 0.1        #: |K_i z| <= this fraction of the effort limit
    shaping: bool = True               #: False: eq. 52 as published (q_r = q_d, no limit terms), e.g. to
                                       #: replay traces recorded before these terms existed


def check_setpoint(q_d, position_limits):
    """``q_d`` if every joint is within its URDF range, else ``InputError`` naming the joints."""
    lo, hi = np.asarray(position_limits).T
    bad = np.flatnonzero((q_d < lo) | (q_d > hi))
    if bad.size:
        raise InputError("set-point outside the joint range: " + ", ".join(
            f"joint {j}: {q_d[j]:.4g} not in [{lo[j]:.4g}, {hi[j]:.4g}]" for j in bad))
    return q_d


def reference_step(q_r, qdot_r, target, v_max, a_max, dt):
    """One tick of the rate-limited reference (in place): toward ``target`` at most ``v_max``, accelerating
    at most ``a_max``, braking to arrive at rest."""
    e = target - q_r
    arrived = (np.abs(e) <= a_max * dt * dt) & (np.abs(qdot_r) <= a_max * dt)
    step = a_max * dt
    # the speed from which braking at a_max, one tick at a time, stops exactly at the target
    v_stop = step * (np.sqrt(0.25 + 2.0 * np.abs(e) / (step * dt)) - 0.5)
    v_des = np.sign(e) * np.minimum(v_max, v_stop)
    qdot_r += np.clip(v_des - qdot_r, -step, step)
    q_r += qdot_r * dt
    q_r[arrived], qdot_r[arrived] = target[arrived], 0.0


def integral_step(z, e, dt, k_i, clamp, tau, tau_limits):
    """One tick of ``z_dot = e`` with anti-windup (in place): frozen where ``tau`` is saturated and ``-K_i e``
    pushes further, then clamped to ``|K_i z| <= clamp``."""
    pushing = (np.abs(tau) >= tau_limits) & (np.sign(-k_i * e) == np.sign(tau))
    z += np.where(pushing, 0.0, e * dt)
    bound = np.divide(clamp, k_i, out=np.zeros_like(clamp), where=k_i > 0)
    np.clip(z, -bound, bound, out=z)


def limit_potential_gradient(q, position_limits, stiffness, margin):
    """``dPhi_lim / dq`` (see the module docstring)."""
    lo, hi = position_limits.T
    return stiffness * (np.maximum(q - (hi - margin), 0.0) - np.maximum((lo + margin) - q, 0.0))


class TaskController:
    """The extended eq. 52 with its state (reference, integral).  The first call, and any call after a gap of
    more than ``restart_after_s`` (or with time going back), starts the reference at the measured ``q`` at rest
    and the integral at zero."""

    def __init__(self, position_limits, velocity_limits, effort_limits, limits=None, restart_after_s=0.1):
        self.position_limits = np.asarray(position_limits, dtype=float)
        self.limits = limits or TaskLimits()
        lo, hi = self.position_limits.T
        span = np.minimum(hi - lo, 2e3)
        self.margin = np.minimum(self.limits.margin, 0.25 * span)
        finite_v = np.where(np.isfinite(velocity_limits) & (np.asarray(velocity_limits) > 0), velocity_limits, np.inf)
        self.v_max = finite_v
        effort = np.where(np.isfinite(effort_limits), effort_limits, 1e3)
        self.limit_stiffness = effort / self.margin
        self.guard_damping = np.where(np.isfinite(finite_v), effort / finite_v, 0.0)
        self.integral_clamp = self.limits.integral_clamp * effort
        self.restart_after_s = restart_after_s
        n = len(lo)
        self.q_r, self.qdot_r, self.z = np.zeros(n), np.zeros(n), np.zeros(n)
        self.t = None
        self._e = np.zeros(n)
        self._dt = 0.0

    def target(self, q_d):
        """Where the reference goes: ``q_d`` kept out of the limit margins."""
        lo, hi = self.position_limits.T
        return np.clip(q_d, lo + self.margin, hi - self.margin)

    def torque(self, t, q, qdot, q_d, gains):
        """``tau_c`` of the extended eq. 52 at time ``t``; ``gains`` is a :class:`~.shape.ShapeGains`."""
        dt = None if self.t is None else t - self.t
        if dt is None or dt <= 0 or dt > self.restart_after_s:     # bumpless (re)start, no stale integral
            self.q_r[:], self.qdot_r[:], self.z[:], dt = q, 0.0, 0.0, 0.0
        else:
            reference_step(self.q_r, self.qdot_r, self.target(q_d), self.limits.speed_fraction * self.v_max,
                           self.limits.acceleration, dt)
        self.t, self._dt = t, dt
        if not self.limits.shaping:
            self._e = q - q_d
            return task_torque(q, qdot, q_d, gains) - gains.integral * self.z
        self._e = q - self.q_r
        over = np.maximum(np.abs(qdot) - self.limits.guard_fraction * self.v_max, 0.0)
        return (task_torque(q, qdot - self.qdot_r, self.q_r, gains) - gains.integral * self.z
                - limit_potential_gradient(q, self.position_limits, self.limit_stiffness, self.margin)
                - self.guard_damping * over * np.sign(qdot))

    def integrate(self, gains, tau, tau_limits):
        """After the torque of this tick is known (and saturated): advance the integral with anti-windup."""
        if gains.integral.any():
            integral_step(self.z, self._e, self._dt, gains.integral, self.integral_clamp, tau, tau_limits)
