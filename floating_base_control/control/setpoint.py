"""The task controller ``tau_c`` of the shape controller ([Mishra2023] eq. 52), made safe for a real arm.

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
  above a fraction ``f_g`` of the URDF velocity limit (dissipative); beyond a limit margin, ``d_v qdot``
  instead (the wall's damping: dissipative too).

With one control period of loop delay (``sim/loop.py``) the wall and the guard are themselves a loop on the
joint: the effort limit over the margin (joint 7 of a Panda: 120 N m/rad on 0.004 kg m^2) with the PD's
damping is unstable at any scale of the two, and the effort over the velocity limit as a damping (4.6 N m
s/rad) is a velocity loop at the stability boundary.  Given the joints' smallest inertias, ``K_lim`` and
``d_v`` are capped so that the wall's own loop has the required margins (``control/stability.py``,
``limit_term_gains``; docs/results/stability.md): a light joint's wall then stops less than the full effort at the hard
limit.  Without the inertias (``TaskController(inertia=None)``) the terms are the uncapped ones and the wall
has no damping of its own, as before the cap.

The controller names of campaigns combine the task law and eq. 45's
compensation: :data:`CONTROLLERS`.
"""
import math
from dataclasses import dataclass

import numpy as np

from floating_base_control.compiled import F, R1, W1, kernel
from floating_base_control.validation import InputError
from floating_base_control.control.shape import task_torque
from floating_base_control.control.stability import limit_term_gains

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


@kernel(W1, W1, R1, R1, R1, R1, F, F)
def reference_step(q_r, qdot_r, q_d, lower, upper, v_max, a_max, dt):
    """One tick of the rate-limited reference (in place): toward the target ``q_d`` kept within
    ``[lower, upper]`` (the limit margins), at most ``v_max``, accelerating at most ``a_max``, braking to
    arrive at rest."""
    step = a_max * dt
    step_dt = step * dt
    for j in range(len(q_r)):
        target = min(max(q_d[j], lower[j]), upper[j])
        e = target - q_r[j]
        if e == 0.0 and qdot_r[j] == 0.0:       # at rest on the target: stays there
            continue
        if abs(e) <= step_dt and abs(qdot_r[j]) <= step:
            q_r[j], qdot_r[j] = target, 0.0
            continue
        # the speed from which braking at a_max, one tick at a time, stops exactly at the target
        v = (math.sqrt(2.0 * abs(e) / step_dt + 0.25) - 0.5) * step
        v = min(v, v_max[j]) * (1.0 if e > 0.0 else -1.0 if e < 0.0 else 0.0)      # v_des
        qdot_r[j] += min(max(v - qdot_r[j], -step), step)
        q_r[j] += qdot_r[j] * dt


def integral_step(z, e, dt, k_i, clamp, tau, tau_limits):
    """One tick of ``z_dot = e`` with anti-windup (in place): frozen where ``tau`` is saturated and ``-K_i e``
    pushes further, then clamped to ``|K_i z| <= clamp``."""
    pushing = (np.abs(tau) >= tau_limits) & (np.sign(-k_i * e) == np.sign(tau))
    z += np.where(pushing, 0.0, e * dt)
    bound = np.divide(clamp, k_i, out=np.zeros_like(clamp), where=k_i > 0)
    np.clip(z, -bound, bound, out=z)


@kernel(F, F, F)
def _overrun(x, lower, upper):
    """``x - clip(x, lower, upper)``: how far ``x`` is beyond ``[lower, upper]`` (signed).  With the margins
    ``lower = lo + m <= upper = hi - m`` at most one side is beyond its margin, and ``q - lower`` is exactly
    ``-(lower - q)``: ``K_lim`` times it is ``dPhi_lim / dq``, the two-sided sum of the module docstring."""
    return x - min(max(x, lower), upper)


@kernel(R1, R1, R1, R1, R1, R1, R1, R1, R1, W1, W1)
def shaped_task_torque(q, qdot, r, x_lower, x_upper, limit_gains, pd_gains, integral, z, e, out):
    """``tau_c`` of the extended eq. 52 into ``out`` (see the module docstring), on stacked ``x = [q; qdot]``
    about the reference ``r = [q_r; qdot_r]``: ``-([K; D_q] (x - r) + [K_lim; d_v] (x - clip(x, ...)))``
    summed over the two halves, ``- K_i z``; ``e = q - q_r`` (what the integral integrates).  ``limit_gains`` is
    ``[K_lim; d_v; d_wall]``: beyond a position margin, a ``d_wall`` above zero damps the whole velocity
    (``d_wall qdot`` in place of the guard's term)."""
    n = len(q)
    for j in range(n):
        e[j] = q[j] - r[j]
        beyond = _overrun(q[j], x_lower[j], x_upper[j])
        position = limit_gains[j] * beyond + pd_gains[j] * e[j]
        if beyond != 0.0 and limit_gains[2 * n + j] > 0.0:
            limit = limit_gains[2 * n + j] * qdot[j]
        else:
            limit = limit_gains[n + j] * _overrun(qdot[j], x_lower[n + j], x_upper[n + j])
        velocity = limit + pd_gains[n + j] * (qdot[j] - r[n + j])
        out[j] = -(position + velocity) - integral[j] * z[j]


class TaskController:
    """The extended eq. 52 with its state (reference, integral).  The first call, and any call after a gap of
    more than ``restart_after_s`` or ten control periods, whichever is longer (or with time going back), starts
    the reference at the measured ``q`` at rest and the integral at zero.  (Ten periods: at a 10 Hz control rate
    an ordinary late tick is longer than 0.1 s, and each restart took the command back to zero.)

    What the limits imply (margins, reference speed, gains of the limit terms) is derived once here, and a
    tick is two compiled kernels over preallocated buffers: :meth:`torque` allocates only the ``tau_c`` it
    returns.
    """

    def __init__(self, position_limits, velocity_limits, effort_limits, limits=None, restart_after_s=0.1,
                 inertia=None, control_period=1e-3):
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
        self.wall_damping = np.zeros(len(lo))
        if inertia is not None:          # capped for the loop's delay (module doc)
            uncapped = np.where(np.isfinite(finite_v), effort / finite_v, np.inf)    # no velocity limit: a damped wall
            self.limit_stiffness, self.wall_damping = limit_term_gains(inertia, self.limit_stiffness, uncapped,
                                                                       control_period)
            self.guard_damping = np.where(np.isfinite(finite_v), self.wall_damping, 0.0)
        self.integral_clamp = self.limits.integral_clamp * effort
        self.restart_after_s = max(restart_after_s, 10.0 * control_period)
        # The tick works on stacked [q; qdot] (shaped_task_torque): the PD terms are [K; D_q] * ([q; qdot] -
        # [q_r; qdot_r]) and the two limit terms are [K_lim; d_v] * (x - clip(x, lower, upper)) with the margins
        # lo + m <= hi - m and the guard speeds -f_g qdot_max <= f_g qdot_max (see _overrun).
        self._lower, self._upper = lo + self.margin, hi - self.margin
        self._reference_speed = self.limits.speed_fraction * self.v_max
        guard_speed = self.limits.guard_fraction * self.v_max
        self._x_lower, self._x_upper = np.concatenate((self._lower, -guard_speed)), np.concatenate((self._upper,
                                                                                                  guard_speed))
        self._limit_gains = np.concatenate((self.limit_stiffness, self.guard_damping, self.wall_damping))
        n = len(lo)
        self._r = np.zeros(2 * n)           # [q_r; qdot_r]
        self.q_r, self.qdot_r, self.z = self._r[:n], self._r[n:], np.zeros(n)
        self.t = None
        self._e = np.zeros(n)               # q - q_r (or q - q_d): what the integral integrates
        self._dt = 0.0
        self._pd_gains = self._pd_gains_of = None
        self._tau, self._term = np.zeros(n), np.zeros(n)

    def torque(self, t, q, qdot, q_d, gains):
        """``tau_c`` of the extended eq. 52 at time ``t``; ``gains`` is a :class:`~.shape.ShapeGains`."""
        dt = None if self.t is None else t - self.t
        if dt is None or dt <= 0 or dt > self.restart_after_s:     # bumpless (re)start, no stale integral
            self.q_r[:], self.qdot_r[:], self.z[:], dt = q, 0.0, 0.0, 0.0
        else:
            reference_step(self.q_r, self.qdot_r, q_d, self._lower, self._upper, self._reference_speed,
                           self.limits.acceleration, dt)
        self.t, self._dt = t, dt
        tau, term = self._tau, self._term
        if not self.limits.shaping:
            np.subtract(q, q_d, out=self._e)
            task_torque(q, qdot, q_d, gains, tau, term)
            return tau - np.multiply(gains.integral, self.z, out=term)
        tau = np.empty(len(q))
        shaped_task_torque(q, qdot, self._r, self._x_lower, self._x_upper, self._limit_gains,
                           self._stacked_gains(gains), gains.integral, self.z, self._e, tau)
        return tau

    def _stacked_gains(self, gains):
        """``[K; D_q]`` of ``gains`` (stacked once per gains object: the node replaces them, never edits)."""
        if gains is not self._pd_gains_of:
            self._pd_gains, self._pd_gains_of = np.concatenate((gains.stiffness, gains.damping)), gains
        return self._pd_gains

    def integrate(self, gains, tau, tau_limits):
        """After the torque of this tick is known (and saturated): advance the integral with anti-windup."""
        if np.count_nonzero(gains.integral):
            integral_step(self.z, self._e, self._dt, gains.integral, self.integral_clamp, tau, tau_limits)
