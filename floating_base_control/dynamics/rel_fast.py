"""The terms of the REL equations at one state, from Pinocchio's recursive algorithms.

Seed 002, eq. 18, with the Coriolis/centrifugal (CC) forces moved to the left
and split by velocity dependency::

    M_b mu_dot    + base_mu_mu  + base_mu_qdot                    = F1
    Lambda_q qddot + shape_mu_mu + shape_mu_qdot + shape_qdot_qdot = tau - A_l^T F1

    base_mu_mu      = -ad~_(M_b mu) mu
    base_mu_qdot    =  1/2 P(qdot) mu + 1/2 S(mu) qdot + ad~_(M_b mu) A_l qdot
                    =  P(qdot) mu + ad~_(M_b mu) A_l qdot                     (eq. 27)
    shape_mu_mu     = -(1/2 S(mu)^T - A_l^T ad~_(M_b mu)) mu
    shape_mu_qdot   =  B~(mu) qdot
    shape_qdot_qdot =  Gamma~'_q(qdot) qdot

How: the CC forces of Lemma 2 are ``L^T (M L_dot + C L) xi``; their shape row
is ``c_q(V) - A_l^T c_b(V)`` with ``c(V) = C(q, V) V`` (Pinocchio's
``nonLinearEffects`` at zero gravity) and ``V = L xi``, because the ``M L_dot``
part cancels there.  ``c`` is quadratic in ``V``, so the three velocity
dependencies follow from ``c`` at ``V_mu = [mu; 0]``, at
``V_q = [-A_l qdot; qdot]`` and at their sum (polarization).  The base row is
``c_b(V) - M_b A_l_dot qdot``, and ``c_b(V_q) = M_b A_l_dot qdot`` (eq. 23).
Three recursive passes plus one CRBA replace the per-link sums of
``reduced.py``; the tests check one against the other.
"""
from typing import NamedTuple

import numpy as np
import pinocchio as pin
from ..kinematics import inertia_blocks
from ..lie import SWAP, ad_tilde
from ..linalg import spd_solve


class RELTerms(NamedTuple):
    """Inertias and CC forces of the REL equations (seed 002, eq. 18) at ``(q, qdot, mu)``.

    Forces are ``[moment; force]`` for the base rows and joint forces for the shape rows.
    """

    M_b: np.ndarray              #: locked inertia (6x6), eq. 7
    A_l: np.ndarray              #: local mechanical connection (6 x n), Def. 3
    Lambda_q: np.ndarray         #: reduced shape inertia (n x n), eq. 19a
    A_qdot: np.ndarray           #: A_l qdot
    IM_qdot: np.ndarray          #: interaction-matrix term ad~_(M_b mu) A_l qdot, Lemma 8
    base_mu_mu: np.ndarray       #: -ad~_(M_b mu) mu
    base_mu_qdot: np.ndarray     #: P(qdot) mu + ad~_(M_b mu) A_l qdot
    shape_mu_mu: np.ndarray      #: -(1/2 S(mu)^T - A_l^T ad~_(M_b mu)) mu
    shape_mu_qdot: np.ndarray    #: B~(mu) qdot
    shape_qdot_qdot: np.ndarray  #: Gamma~'_q(qdot) qdot

    @property
    def P_mu(self):
        """``P(qdot) mu = S(mu) qdot`` (eqs. 19b, 27)."""
        return self.base_mu_qdot - self.IM_qdot


def rel_terms(model, ws, q, qdot, mu):
    """:class:`RELTerms` at shape ``q``, shape velocity ``qdot`` and locked velocity ``mu``.

    Inner-loop function: inputs are trusted (see ``FloatingBaseModel.rel_terms``
    for the checked entry point).
    """
    pm, pd = model.cc_pin_model, ws.pin_data
    qp, v, c = ws.q_pin, ws.v_cc, ws.cc
    qp[7:] = q
    M, M_b, M_bq, A_l = inertia_blocks(model, ws)
    Lambda_q = M[6:, 6:] - M_bq.T @ A_l
    A_qdot = A_l @ qdot
    v[:3], v[3:6], v[6:] = mu[3:], mu[:3], 0.0                     # V_mu, Pinocchio order
    c[:, 0] = pin.nonLinearEffects(pm, pd, qp, v)
    v[:3], v[3:6], v[6:] = -A_qdot[3:], -A_qdot[:3], qdot          # V_q
    c[:, 1] = pin.nonLinearEffects(pm, pd, qp, v)
    v[:3] += mu[3:]
    v[3:6] += mu[:3]                                                # V_mu + V_q
    c[:, 2] = pin.nonLinearEffects(pm, pd, qp, v)
    c[:, 2] -= c[:, 0] + c[:, 1]                                    # the (mu, qdot) cross terms
    base = c[SWAP]
    shape = c[6:] - A_l.T @ base
    adt = ad_tilde(M_b @ mu)
    IM_qdot = adt @ A_qdot
    return RELTerms(M_b, A_l, Lambda_q, A_qdot, IM_qdot, base[:, 0], base[:, 2],
                    shape[:, 0], shape[:, 2], shape[:, 1])


def forward_dynamics(terms, tau, F1):
    """``(mu_dot, qddot)``: the REL equations (seed 002, eq. 18) solved at one state.

    ``tau`` joint forces and ``F1`` base body wrench ``[moment; force]``,
    including potential forces.
    """
    mu_dot = spd_solve(terms.M_b, F1 - terms.base_mu_mu - terms.base_mu_qdot)
    rhs = tau - terms.A_l.T @ F1 - terms.shape_mu_mu - terms.shape_mu_qdot - terms.shape_qdot_qdot
    return mu_dot, spd_solve(terms.Lambda_q, rhs)
