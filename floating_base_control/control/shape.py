"""Shape (joint) control of a free-floating robot with non-zero momentum: seed 002, Sec. V-A.

``tau = tau_c + tau_hat_i`` (eq. 45): a task controller ``tau_c`` plus a
feed-forward torque that cancels the momentum-dependent CC forces of the shape
row of eq. 18.  Eq. 45 lost its brackets in the PDF conversion; derived from
eq. 18 (and checked by the tests against the closed loop):

    tau_hat_2(mu)       = -(1/2 S(mu)^T - A_l^T ad~_(M_b mu)) mu
    tau_hat_1(mu, qdot) = tau_hat_2(mu) + B~(mu) qdot

with ``mu`` replaced by the observer's ``mu_hat_o``.  ``B~`` is skew-symmetric,
so the extra term of ``tau_hat_1`` does no work.
"""


def tau_hat_2(terms):
    """Compensation of the (mu, mu) CC torques (seed 002, eq. 45, ``i = 2``), from
    :class:`~floating_base_control.dynamics.rel_terms.RELTerms` at ``(q, qdot, mu_hat_o)``."""
    return terms.shape_mu_mu


def tau_hat_1(terms):
    """Compensation of the (mu, mu) and (mu, qdot) CC torques (seed 002, eq. 45, ``i = 1``)."""
    return terms.shape_mu_mu + terms.shape_mu_qdot
