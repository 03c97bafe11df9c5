"""Shape (joint) control of a free-floating robot with non-zero momentum: [Mishra2023] Sec. V-A3.

``tau = tau_c + tau_hat_i`` (eq. 45): a task controller ``tau_c`` plus a
feed-forward torque that cancels the momentum-dependent CC forces of the shape
row of eq. 18.  Eq. 45 lost its brackets in the PDF conversion; derived from
eq. 18 (and checked by ``test_rel_fast.py``: they remove every momentum term from the shape row):

    tau_hat_2(mu)       = -(1/2 S(mu)^T - A_l^T ad~_(M_b mu)) mu
    tau_hat_1(mu, qdot) = tau_hat_2(mu) + B~(mu) qdot

with ``mu`` replaced by the observer's ``mu_hat_o``.  ``B~`` is skew-symmetric,
so the extra term of ``tau_hat_1`` does no work.  The task controller is the PD
law of eq. 52 with the quadratic potential ``Phi = 1/2 dq^T K dq``; ``control/setpoint.py``
extends it for a real arm (rate-limited reference, integral action, limit terms).
"""
from dataclasses import dataclass, field

import numpy as np

from floating_base_control import validation as check
from floating_base_control.validation import InputError

#: Compensation variants: eq. 45 with the observer's mu (tau1, tau2), PD only (none),
#: and tau_hat_2 with the simulator's true mu (truth: a full-state baseline).
COMPENSATIONS = ("tau1", "tau2", "none", "truth")


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


def tau_hat_2(terms):
    """Compensation of the (mu, mu) CC torques ([Mishra2023] eq. 45, ``i = 2``), from
    :class:`~floating_base_control.dynamics.rel_fast.RELTerms` at ``(q, qdot, mu_hat_o)``."""
    return terms.shape_mu_mu


def tau_hat_1(terms):
    """Compensation of the (mu, mu) and (mu, qdot) CC torques ([Mishra2023] eq. 45, ``i = 1``)."""
    return terms.shape_mu_mu + terms.shape_mu_qdot


def compensation_torque(terms, compensation):
    """The feed-forward torque of the named variant (see :data:`COMPENSATIONS`)."""
    if compensation == "tau1":
        return tau_hat_1(terms)
    if compensation in ("tau2", "truth"):
        return tau_hat_2(terms)
    if compensation == "none":
        return np.zeros_like(terms.shape_mu_mu)
    raise InputError(f"compensation must be one of {COMPENSATIONS}, got {compensation!r}")
