"""The orbital robot's controller, as in the block diagram of seed 002, Fig. 5.

One :meth:`OrbitalController.step` per control tick: advance the observer
(eqs. 37-42), fold in any new base pose sample, evaluate the REL terms once at
``(q, qdot, mu_hat_o)``, and return ``tau = tau_c + tau_hat_i`` (eqs. 45, 52)
within the torque limits.  The same REL terms feed the observer's rates for
the next tick.  The ROS 2 node and the ROS-free scenario runner both call this.
"""
from typing import NamedTuple

import numpy as np

from ..dynamics.rel_fast import RELTerms, rel_terms
from ..dynamics.rel_matrices import spatial_momentum
from ..estimation.observer import MomentumObserver, ObserverGains
from .. import validation as check
from ..validation import InputError
from ..control import shape
from ..control.limits import saturate


class ControlOutput(NamedTuple):
    tau: np.ndarray             #: commanded joint torques (within limits)
    tau_c: np.ndarray           #: task torque, eq. 52
    tau_hat_1: np.ndarray       #: eq. 45, i = 1, at the mu used for compensation
    tau_hat_2: np.ndarray       #: eq. 45, i = 2
    mu_hat_o: np.ndarray        #: observer's estimate of mu in the base frame
    saturated: bool             #: a torque limit was hit
    terms: RELTerms             #: REL terms at ``(q, qdot, mu_hat_o)`` (M_b, A_l qdot, ... for outputs)


class Estimates(NamedTuple):
    """The controller's estimates of the free-floating base at one tick (what a node publishes)."""

    g_hat: np.ndarray           #: base pose estimate (4x4)
    V1_hat: np.ndarray          #: base body twist, eq. 9: mu_hat_o - A_l qdot
    mu_hat_o: np.ndarray        #: locked velocity estimate in the base frame
    momentum: np.ndarray        #: spatial momentum of mu_hat_o, Def. 2: Ad_g_hat^-T M_b mu_hat_o


class OrbitalController:
    """Observer + momentum-compensating shape controller of seed 002, Lemma 11.

    ``compensation`` is one of :data:`shape.COMPENSATIONS`; ``"truth"`` needs
    the true locked velocity at every step (a simulation-only baseline).
    """

    def __init__(self, model, q_d, shape_gains, observer_gains=None, compensation="tau2",
                 torque_limits=None):
        self.model = model
        self.ws = model.create_data()
        self.q_d = q_d
        self.shape_gains = shape_gains
        self.observer = MomentumObserver(observer_gains or ObserverGains())
        self.compensation = compensation
        self.torque_limits = model.effort_limits if torque_limits is None else torque_limits

    # Checked when set (the ROS node replaces them between ticks): sizes must match the model.
    @property
    def q_d(self):
        return self._q_d

    @q_d.setter
    def q_d(self, q_d):
        self._q_d = check.vector("q_d", q_d, self.model.n)

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
        if (limits <= 0).any():
            raise InputError(f"torque_limits must be > 0, got {limits.tolist()}")
        self._torque_limits = limits

    @property
    def compensation(self):
        return self._compensation

    @compensation.setter
    def compensation(self, compensation):
        if compensation not in shape.COMPENSATIONS:
            raise InputError(f"compensation must be one of {shape.COMPENSATIONS}, got {compensation!r}")
        self._compensation = compensation

    def estimates(self, out):
        """:class:`Estimates` of the tick whose :class:`ControlOutput` is ``out`` (observer initialized)."""
        return Estimates(self.observer.g_hat, out.mu_hat_o - out.terms.A_qdot, out.mu_hat_o,
                         spatial_momentum(self.observer.g_hat, out.terms.M_b @ out.mu_hat_o))

    def hold(self, t, pose_samples=()):
        """A tick at ``t`` without usable joint states: keep the pose samples, do not
        integrate the observer across the gap; a diverged (non-finite) estimate starts over
        from the next pose sample."""
        if not self.observer.healthy():
            self.observer.reset()
        for t_taken, g in pose_samples:
            self.observer.add_pose(g, t_taken, t)
        self.observer.resync(t)

    def step(self, t, q, qdot, pose_samples=(), mu_true=None):
        """One control tick at time ``t`` with measured ``q``, ``qdot`` and new pose samples
        ``[(t_taken, g_meas), ...]``.  Returns a :class:`ControlOutput`."""
        obs = self.observer
        if obs.initialized:
            obs.advance(t)
        for t_taken, g in pose_samples:
            obs.add_pose(g, t_taken, t)
        estimate = obs.estimate() if obs.initialized else None
        mu_hat_o = np.zeros(6) if estimate is None else estimate.mu_hat_o
        terms = rel_terms(self.model, self.ws, q, qdot, mu_hat_o)
        if estimate is not None:
            obs.update(estimate, terms)
        compensated = terms
        if self.compensation == "truth":
            if mu_true is None:
                raise InputError("compensation 'truth' needs mu_true (the true locked velocity) at every step")
            compensated = rel_terms(self.model, self.ws, q, qdot, check.vector("mu_true", mu_true, 6))
        tau_c = shape.task_torque(q, qdot, self.q_d, self.shape_gains)
        tau, saturated = saturate(tau_c + shape.compensation_torque(compensated, self.compensation),
                                 self.torque_limits)
        return ControlOutput(tau, tau_c, shape.tau_hat_1(compensated), shape.tau_hat_2(compensated), mu_hat_o,
                             saturated, terms)
