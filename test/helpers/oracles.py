"""Oracles: equations of the package written out once more, plainly, for the tests to check the compiled
control tick against (never called by the package).  Each says what it is computed from."""
import numpy as np


def compensation_oracle(terms, name):
    """The feed-forward torque of the compensation law ``name`` ([Mishra2023] eq. 45) read off the REL terms of
    eq. 18 (:class:`~floating_base_control.dynamics.rel_fast.RELTerms`, the paper's order, which
    ``test_rel_fast.py`` checks against the Theorem 1 matrices): ``tau_hat_2 = shape_mu_mu``,
    ``tau_hat_1 = tau_hat_2 + B~(mu) qdot``."""
    return {"tau1": terms.shape_mu_mu + terms.shape_mu_qdot, "tau2": terms.shape_mu_mu, "truth": terms.shape_mu_mu,
            "none": np.zeros_like(terms.shape_mu_mu)}[name]


def limit_potential_gradient_oracle(q, position_limits, stiffness, margin):
    """``dPhi_lim / dq = K_lim ((q - hi + m)_+ - (lo + m - q)_+)``: the gradient of the limit potential of
    ``control/setpoint.py``, term by term from its definition."""
    lo, hi = np.asarray(position_limits).T
    return stiffness * (np.maximum(q - hi + margin, 0.0) - np.maximum(lo + margin - q, 0.0))
