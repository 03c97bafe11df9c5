"""Shape (joint) control of a free-floating robot with non-zero momentum: [Mishra2023] Sec. V-A3.

``tau = tau_c + tau_hat_i`` (eq. 45): a task controller ``tau_c`` plus a
feed-forward torque that cancels the momentum-dependent CC forces of the shape
row of eq. 18.  Eq. 45 lost its brackets in the PDF conversion; derived from
eq. 18 (and checked by ``test_rel_fast.py``: they remove every momentum term from the shape row, and the
tick's equal the paper's link-frame sums)::

    tau_hat_2(mu)       = -(1/2 S(mu)^T - A_l^T ad~_(M_b mu)) mu
    tau_hat_1(mu, qdot) = tau_hat_2(mu) + B~(mu) qdot

with ``mu`` replaced by the observer's ``mu_hat_o``.  ``B~`` is skew-symmetric,
so the extra term of ``tau_hat_1`` does no work.  Both are evaluated on the control tick's
kernels (``dynamics/rel_fast.py``): the shape row of the ``(mu, mu)`` CC forces is ``tau_hat_2``,
that of the ``(mu, qdot)`` cross terms is ``B~(mu) qdot`` (:class:`CompensationTorques`).

Which of them the controller adds is a :class:`CompensationLaw`, registered by name in
:data:`COMPENSATIONS` (:func:`register_compensation`): the controller, its ROS node and the demos
accept any registered name.  The task controller is the PD law of eq. 52 with the quadratic
potential ``Phi = 1/2 dq^T K dq``; ``control/setpoint.py`` extends it for a real arm
(rate-limited reference, integral action, limit terms).
"""
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Callable

import numpy as np

from floating_base_control import validation as check
from floating_base_control.dynamics.rel_fast import mu_qdot_cc_forces, shape_row
from floating_base_control.validation import InputError


@dataclass
class ShapeGains:
    """Gains of the task controller (eq. 52, extended in ``control/setpoint.py``), one per joint."""

    stiffness: np.ndarray      #: K >= 0, N m/rad (rad for revolute, N/m for prismatic joints)
    damping: np.ndarray        #: D_q > 0 (Lemma 11), N m s/rad
    integral: np.ndarray = field(default=None)   #: K_i >= 0, N m/(rad s); None: zeros (eq. 52's PD)

    def __post_init__(self):
        self.stiffness = check.array("shape gain stiffness", self.stiffness, np.shape(self.stiffness))
        self.damping = check.array("shape gain damping", self.damping, np.shape(self.damping))
        if (self.stiffness < 0).any():
            raise InputError(f"shape gain stiffness must be finite and >= 0, got {self.stiffness.tolist()}")
        if (self.damping <= 0).any():
            raise InputError(f"shape gain damping must be finite and > 0, got {self.damping.tolist()}")
        if self.stiffness.shape != self.damping.shape:
            raise InputError("shape gains stiffness and damping must have the same length")
        self.integral = (np.zeros_like(self.stiffness) if self.integral is None else
                         check.array("shape gain integral", self.integral, self.stiffness.shape))
        if (self.integral < 0).any():
            raise InputError(f"shape gain integral must be finite and >= 0, got {self.integral.tolist()}")


def task_torque(q, qdot, q_d, gains, out=None, scratch=None):
    """``tau_c = -dPhi(q - q_d) - D_q qdot`` with ``Phi = 1/2 dq^T K dq`` ([Mishra2023] eq. 52); ``out`` and
    ``scratch``: buffers of a control loop (``scratch`` may be ``qdot``)."""
    damping = np.multiply(gains.damping, qdot, out=scratch)
    out = np.subtract(q_d, q, out=out)              # -(q - q_d), exactly
    out *= gains.stiffness
    return np.subtract(out, damping, out=out)


class CompensationTorques:
    """The torques of eq. 45 at one tick's state, on the tick's workspace ``ws`` (``rel_fast``'s kernel,
    factored at the tick's shape; ``ws.A_qdot`` is ``A_l qdot``), for the locked velocity ``mu`` (the kernels'
    order), ``qdot`` and the ``(mu, mu)`` CC forces ``c_mu = c(V_mu)`` (``rel_fast.mu_mu_cc_forces``):
    :attr:`tau_hat_2` is evaluated at once, :attr:`tau_hat_1` when a law first reads it (within the tick)."""

    __slots__ = ("_model", "_ws", "_mu", "_qdot", "_c_mu", "tau_hat_2", "evaluated_tau_hat_1")

    def __init__(self, model, ws, mu, qdot, c_mu):
        self._model, self._ws, self._mu, self._qdot, self._c_mu = model, ws, mu, qdot, c_mu
        self.tau_hat_2 = np.empty(model.n)                  # eq. 45, i = 2
        shape_row(c_mu, ws.A, self.tau_hat_2)
        self.evaluated_tau_hat_1 = None

    @property
    def tau_hat_1(self):
        """Eq. 45, ``i = 1``: ``tau_hat_2`` plus ``B~(mu) qdot``, the shape row of the ``(mu, qdot)`` cross
        terms of the CC forces (evaluated once)."""
        if self.evaluated_tau_hat_1 is None:
            model, ws = self._model, self._ws
            cross = mu_qdot_cc_forces(model, ws, self._mu, self._qdot, ws.A_qdot, self._c_mu)[1]
            B_qdot = np.empty(model.n)
            shape_row(cross, ws.A, B_qdot)
            self.evaluated_tau_hat_1 = self.tau_hat_2 + B_qdot
        return self.evaluated_tau_hat_1

    @property
    def zeros(self):
        """No feed-forward."""
        return np.zeros(self._model.n)


@dataclass(frozen=True)
class CompensationLaw:
    """A feed-forward torque of eq. 45: what :class:`~..robots.orbital.controller.OrbitalController` adds
    to ``tau_c``, and what the motion tasks may assume it cancels."""

    name: str
    torque: Callable[[CompensationTorques], np.ndarray]   #: the feed-forward from the tick's eq. 45 torques
    cancels_mu_mu: bool = True      #: the (mu, mu) CC torques are cancelled (else motion tasks use no mu)
    cancels_mu_qdot: bool = False   #: so is B~(mu) qdot (else motion tasks compensate it on their reference)
    true_mu: bool = False           #: evaluated at the simulator's true mu (a simulation-only baseline)


#: name -> :class:`CompensationLaw`, in the order the controllers list them.
COMPENSATIONS = {}


def register_compensation(law):
    """Make ``law`` (a :class:`CompensationLaw`) available by its name; returns it."""
    if not isinstance(law, CompensationLaw):
        raise InputError(f"a compensation law must be a CompensationLaw, got {type(law).__name__}")
    COMPENSATIONS[law.name] = law
    return law


def compensation_law(name):
    """The registered :class:`CompensationLaw` called ``name``."""
    if name not in COMPENSATIONS:
        raise InputError(f"compensation must be one of {tuple(COMPENSATIONS)}, got {name!r}")
    return COMPENSATIONS[name]


# eq. 45 with the observer's mu; PD only; tau_hat_2 with the simulator's true mu (a full-state baseline)
register_compensation(CompensationLaw("tau1", attrgetter("tau_hat_1"), cancels_mu_qdot=True))
register_compensation(CompensationLaw("tau2", attrgetter("tau_hat_2")))
register_compensation(CompensationLaw("none", attrgetter("zeros"), cancels_mu_mu=False))
register_compensation(CompensationLaw("truth", attrgetter("tau_hat_2"), true_mu=True))
