"""The orbital robot's controller, as in the block diagram of [Mishra2023] Fig. 5.

One :meth:`OrbitalController.step` per control tick: advance the observer
(eqs. 37-42), restart it if its state is implausible, fold in the new base pose
samples the innovation gate admits (``estimation/health.py``), evaluate the REL terms once at
``(q, qdot, mu_hat_o)``, and return ``tau = tau_c + tau_hat_i`` (eqs. 45, 52)
within the torque limits.  The same REL terms feed the observer's rates for
the next tick.  The ROS 2 node and the ROS-free scenario runner both call this.

The tick is a kernel in the style of Pinocchio's algorithms: it fills the
controller's workspace (``model.create_data()``) in Pinocchio's ordering, factorizes
``M_b`` once (:func:`~..dynamics.rel_fast.locked_inertia_factor`) and evaluates only
the CC forces the compensation and the observer need.  Its outputs are in the
paper's notation; the rest of the REL terms at the tick's state are evaluated on
demand (:attr:`ControlOutput.terms`).
"""
from typing import NamedTuple

import numpy as np

from floating_base_control.dynamics.rel_fast import (connection_velocity, locked_inertia_factor, mu_mu_cc_forces,
                                                     rel_terms)
from floating_base_control.dynamics.rel_matrices import spatial_momentum
from floating_base_control.estimation.health import EstimatorHealth
from floating_base_control.estimation.observer import MomentumObserver, ObserverGains
from floating_base_control.estimation.pose_samples import observe
from floating_base_control.conventions import swap_halves
from floating_base_control import validation as check
from floating_base_control.validation import InputError
from floating_base_control.control.limits import saturated_sum
from floating_base_control.control.motion_task import MotionTask
from floating_base_control.control.setpoint import TaskController, check_setpoint
from floating_base_control.control.shape import CompensationTorques, compensation_law
from floating_base_control.control.stability import smallest_joint_inertias

_ZERO_TWIST = np.zeros(6)
_ZERO_TWIST.flags.writeable = False


class ControlOutput:
    """What one control tick returns (the paper's ordering).

    ``tau``, ``tau_c``, ``tau_hat_2`` and ``mu_hat_o`` come from the tick; ``saturated``,
    ``tau_hat_1`` (unless the tick compensated with it), ``terms``, ``V1_hat`` and ``momentum`` are
    evaluated when first read, at the tick's inputs (the ``q`` and ``qdot`` arrays passed to
    :meth:`OrbitalController.step`: read these before changing those arrays in place).
    """

    __slots__ = ("tau", "tau_c", "tau_hat_2", "_mu_o", "_mu_hat_o", "_feedforward", "_tau_hat_1", "_model", "_q",
                 "_qdot", "_mu_c", "_V1_hat", "_g_hat", "_terms")

    def __init__(self, tau, tau_c, feedforward, tau_hat_1, tau_hat_2, mu_o, model, q, qdot, mu_c, V1_hat,
                 g_hat):
        self.tau = tau                  #: commanded joint torques (within limits)
        self.tau_c = tau_c              #: task torque, eq. 52
        self.tau_hat_2 = tau_hat_2      #: eq. 45, i = 2, at the mu used for compensation
        self._feedforward, self._tau_hat_1, self._model, self._q, self._qdot = feedforward, tau_hat_1, model, q, qdot
        self._mu_o, self._mu_c, self._V1_hat, self._g_hat = mu_o, mu_c, V1_hat, g_hat     # mu_o: [v; omega]
        self._mu_hat_o = self._terms = None

    @property
    def mu_hat_o(self):
        """Observer's estimate of mu in the base frame, ``[omega; v]`` (zero before it starts)."""
        if self._mu_hat_o is None:
            self._mu_hat_o = swap_halves(self._mu_o)
        return self._mu_hat_o

    @property
    def saturated(self):
        """A torque limit was hit."""
        return bool(np.count_nonzero(self.tau != self.tau_c + self._feedforward))   # the sum clipped, recomputed

    @property
    def tau_hat_1(self):
        """Eq. 45, ``i = 1``, at the mu used for compensation."""
        if self._tau_hat_1 is None:       # the tick's kernel on the model's scratch workspace
            model, ws, qdot = self._model, self._model.scratch, self._qdot
            mu = self._mu_o if self._mu_c is None else swap_halves(self._mu_c)
            locked_inertia_factor(model, ws, self._q)
            c_mu = mu_mu_cc_forces(model, ws, mu)
            connection_velocity(ws.A, qdot, ws.A_qdot)
            self._tau_hat_1 = CompensationTorques(model, ws, mu, qdot, c_mu).tau_hat_1
        return self._tau_hat_1

    @property
    def terms(self):
        """:class:`~..dynamics.rel_fast.RELTerms` at ``(q, qdot, mu_hat_o)`` of the tick."""
        if self._terms is None:
            self._terms = self._model.rel_terms(self._q, self._qdot, self.mu_hat_o)
        return self._terms

    @property
    def V1_hat(self):
        """Estimated base body twist ``mu_hat_o - A_l qdot`` (eq. 9), ``[omega; v]``."""
        return swap_halves(self._V1_hat)

    @property
    def momentum(self):
        """Estimated momentum ``Ad_g_hat^-T M_b mu_hat_o``: the spatial momentum about the world
        origin in world axes, ``[moment; force]`` (``None`` before the observer starts)."""
        if self._g_hat is None:
            return None
        return spatial_momentum(self._g_hat, self.terms.M_b @ self.mu_hat_o)


class Estimates(NamedTuple):
    """The controller's estimates of the free-floating base at one tick (what a node publishes)."""

    g_hat: np.ndarray           #: base pose estimate (4x4)
    V1_hat: np.ndarray          #: base body twist, eq. 9: mu_hat_o - A_l qdot
    mu_hat_o: np.ndarray        #: locked velocity estimate in the base frame
    momentum: np.ndarray        #: spatial momentum of mu_hat_o, Def. 2: Ad_g_hat^-T M_b mu_hat_o


class OrbitalController:
    """Observer + momentum-compensating shape controller of [Mishra2023] Lemma 11.

    ``compensation`` names a registered law of eq. 45 (:data:`~..control.shape.COMPENSATIONS`); one
    evaluated at the true locked velocity (``"truth"``, a simulation-only baseline) needs it at every
    step.  ``motion`` (default ``None``: eq. 52 about ``q_d``) is a
    :class:`~floating_base_control.control.motion_task.MotionTask` providing ``tau_c``; it may be
    replaced between ticks.
    """

    def __init__(self, model, q_d, shape_gains, observer_gains=None, compensation="tau2",
                 torque_limits=None, motion=None, control_period=1e-3):
        self.model = model
        self.ws = model.create_data()
        self.task = TaskController(model.position_limits, model.velocity_limits, model.effort_limits,
                                   inertia=smallest_joint_inertias(model), control_period=control_period)
        self.q_d = q_d
        self.shape_gains = shape_gains
        self.observer = MomentumObserver(observer_gains or ObserverGains())
        self.health = EstimatorHealth()
        self.compensation = compensation
        self.torque_limits = model.effort_limits if torque_limits is None else torque_limits
        self.motion = motion
        self._motion_ws = model.create_data()      # the motion task's REL terms (not the tick's workspace)

    # Checked when set (the ROS node replaces them between ticks): sizes must match the model.
    @property
    def q_d(self):
        return self._q_d

    @q_d.setter
    def q_d(self, q_d):
        self._q_d = check_setpoint(check.vector("q_d", q_d, self.model.n), self.model.position_limits)

    @property
    def shape_gains(self):
        return self._shape_gains

    @shape_gains.setter
    def shape_gains(self, gains):
        if gains.stiffness.shape != (self.model.n,):
            raise InputError(f"shape gains need one value per joint ({self.model.n}), got {gains.stiffness.shape}")
        self._shape_gains = gains

    @property
    def torque_limits(self):
        return self._torque_limits

    @torque_limits.setter
    def torque_limits(self, limits):
        # +inf: no limit (a URDF without an effort limit, see urdf_loader)
        limits = check.vector("torque_limits", np.minimum(np.asarray(limits, dtype=float), np.finfo(float).max),
                              self.model.n)
        if (limits < 0).any():           # 0: that joint gets no torque
            raise InputError(f"torque_limits must be >= 0, got {limits.tolist()}")
        self._torque_limits = limits

    @property
    def compensation(self):
        """The name of the :class:`~..control.shape.CompensationLaw` the tick adds."""
        return self._law.name

    @compensation.setter
    def compensation(self, name):
        self._law = compensation_law(name)

    @property
    def motion(self):
        return self._motion

    @motion.setter
    def motion(self, motion):
        if motion is not None and not isinstance(motion, MotionTask):
            raise InputError(f"motion must be a MotionTask (torque, name, error) or None, got {type(motion).__name__}")
        self._motion = motion

    def estimates(self, out):
        """:class:`Estimates` of the tick whose :class:`ControlOutput` is ``out`` (observer initialized)."""
        return Estimates(self.observer.g_hat, out.V1_hat, out.mu_hat_o, out.momentum)

    def hold(self, t, pose_samples=()):
        """A tick at ``t`` without usable joint states: keep the pose samples, do not
        integrate the observer across the gap."""
        self._observe(t, pose_samples)
        self.observer.resync(t)

    def _motion_torque(self, t, q, qdot, mu):
        """``tau_c`` of the motion task, from the REL terms at ``(q, qdot, mu)`` (its own workspace)."""
        terms = rel_terms(self.model, self._motion_ws, q, qdot, mu)
        return self._motion.torque(t, q, qdot, terms, mu, self._law,
                                   self.observer.g_hat if self.observer.initialized else None)

    def _observe(self, t, pose_samples):
        """The observer's error at ``t`` after the tick's pose samples (``estimation/pose_samples.py``)."""
        return observe(self.observer, self.health, t, pose_samples)

    def step(self, t, q, qdot, pose_samples=(), mu_true=None):
        """One control tick at time ``t`` with measured ``q``, ``qdot`` and new pose samples
        ``[(t_taken, g_meas), ...]``.  Returns a :class:`ControlOutput`."""
        obs, model, ws, law = self.observer, self.model, self.ws, self._law
        locked_inertia_factor(model, ws, q)               # first: CRBA's returned copy is freed at once
        if obs.initialized:
            obs.advance(t)
        error = self._observe(t, pose_samples)
        A_qdot = ws.A_qdot
        connection_velocity(ws.A, qdot, A_qdot)
        mu_o = _ZERO_TWIST if error is None else error.mu_hat_o
        c_mu = mu_mu_cc_forces(model, ws, mu_o)
        if error is not None:
            V1_hat = obs.update_rates(error, ws, A_qdot, c_mu[:6])
            del error
        else:
            V1_hat = -A_qdot
        mu_c, mu = None, mu_o           # the compensation's mu (the kernels' order): the observer's, or mu_c's
        if law.true_mu:
            if mu_true is None:
                raise InputError(f"compensation {law.name!r} needs mu_true (the true locked velocity) at every step")
            mu_c = check.vector("mu_true", mu_true, 6)
            mu = swap_halves(mu_c)
            c_mu = mu_mu_cc_forces(model, ws, mu)
        eq45 = CompensationTorques(model, ws, mu, qdot, c_mu)
        feedforward = law.torque(eq45)
        del c_mu
        if self._motion is None:
            tau_c = self.task.torque(t, q, qdot, self._q_d, self._shape_gains)
        else:
            tau_c = self._motion_torque(t, q, qdot, swap_halves(mu_o) if mu_c is None else mu_c)
        tau = np.empty(model.n)
        saturated_sum(tau_c, feedforward, self._torque_limits, tau)
        if self._motion is None:
            self.task.integrate(self._shape_gains, tau, self._torque_limits)
        return ControlOutput(tau, tau_c, feedforward, eq45.evaluated_tau_hat_1, eq45.tau_hat_2, mu_o, model, q, qdot,
                             mu_c, V1_hat, obs.g_hat)
