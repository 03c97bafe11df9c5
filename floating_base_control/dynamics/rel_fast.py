"""The terms of the REL equations at one state, from Pinocchio's recursive algorithms.

[Mishra2023] eq. 18, with the Coriolis/centrifugal (CC) forces moved to the left
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
``dynamics/rel_matrices.py``; the tests check one against the other.
"""
from typing import NamedTuple

import numpy as np
import pinocchio as pin
from scipy.linalg.lapack import dposv

from floating_base_control.compiled import R1, R2, W1, W2, kernel
from floating_base_control.conventions import SWAP, swap_halves
from floating_base_control.linalg import spd_solve
from floating_base_control.validation import FloatingBaseError


class RELTerms(NamedTuple):
    """Inertias and CC forces of the REL equations ([Mishra2023] eq. 18) at ``(q, qdot, mu)``.

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


# -- the kernel: Pinocchio's ordering ([v; omega] twists, [force; moment] wrenches), buffers in ws --

def locked_inertia_factor(model, ws, q):
    """CRBA at shape ``q`` (``ws.M``, with views ``ws.M_b``, ``ws.M_bq``); the Cholesky factor of
    ``M_b`` in ``ws.M_b_chol`` and the local mechanical connection ``A_l = M_b^-1 M_bq`` in ``ws.A``
    ([Mishra2023] eq. 7 and Def. 3), all in Pinocchio's order: the tick's one factorization of ``M_b``.
    (Inverting CRBA's composite inertia of the base in closed form costs more, measured: the
    Python objects it goes through outweigh the LAPACK wrapper.)"""
    ws.q_pin[7:] = q
    pin.crba(model.pin_model, ws.pin_data, ws.q_pin)
    # one LAPACK call, factor and solve, in place in ws's Fortran-ordered buffers (allocates nothing)
    _copy_locked_blocks(ws.M, ws.M_b_chol, ws.A)
    info = dposv(ws.M_b_chol, ws.A, overwrite_a=1, overwrite_b=1)[2]
    if info != 0:
        raise FloatingBaseError(f"locked inertia M_b is not positive definite (LAPACK dposv info {info})")


@kernel(R2, W2, W2)
def _copy_locked_blocks(M, M_b, M_bq):
    """``M``'s blocks ``M_b`` and ``M_bq`` ([Mishra2023] eq. 7; Pinocchio's order) into the factor's buffers."""
    for i in range(6):
        for j in range(6):
            M_b[i, j] = M[i, j]
        for j in range(M_bq.shape[1]):
            M_bq[i, j] = M[i, 6 + j]


def cc_forces(model, ws, V):
    """Pinocchio's CC forces ``c(V) = C(q, V) V`` (zero gravity) at the shape of the last
    :func:`locked_inertia_factor`, for velocities ``V`` (a new array)."""
    return pin.nonLinearEffects(model.cc_pin_model, ws.pin_data, ws.q_pin, V)


def mu_mu_cc_forces(model, ws, mu):
    """``c(V_mu)``, ``V_mu = [mu; 0]``: the ``(mu, mu)`` CC forces of eq. 18, base and joint rows."""
    ws.v_mu[:6] = mu                                # ws.v_mu[6:] is zero
    return cc_forces(model, ws, ws.v_mu)


@kernel(R2, R1, W1)
def connection_velocity(A, qdot, out):
    """``A_l qdot`` (Def. 3; ``A`` in Pinocchio's rows, ``ws.A``) into ``out``."""
    for i in range(6):
        x = 0.0
        for j in range(len(qdot)):
            x += A[i, j] * qdot[j]
        out[i] = x


@kernel(R1, R1, R1, W1, W1)
def shape_velocities(A_qdot, qdot, mu, v_q, v_sum):
    """``V_q = [-A_l qdot; qdot]`` and ``V_mu + V_q`` (``V_mu = [mu; 0]``) into ``v_q`` and ``v_sum``."""
    for i in range(6):
        v_q[i] = -A_qdot[i]
        v_sum[i] = v_q[i] + mu[i]
    for j in range(len(qdot)):
        v_q[6 + j] = v_sum[6 + j] = qdot[j]


def qdot_cc_forces(model, ws, mu, qdot, A_qdot):
    """``(c(V_q), c(V_mu + V_q))``: the CC forces at ``V_q = [-A_l qdot; qdot]`` and at ``V_mu + V_q``."""
    shape_velocities(A_qdot, qdot, mu, ws.v_cc, ws.v_cc_sum)
    return cc_forces(model, ws, ws.v_cc), cc_forces(model, ws, ws.v_cc_sum)


@kernel(R1, R1, R1, W1)
def polarization(c_sum, c_mu, c_q, out):
    """The ``(mu, qdot)`` cross terms of the CC forces, ``c(V_mu + V_q) - (c(V_mu) + c(V_q))``, into ``out``
    (which may be ``c_sum``): ``c`` is quadratic in the velocity (module doc)."""
    for i in range(len(out)):
        out[i] = c_sum[i] - (c_mu[i] + c_q[i])


def mu_qdot_cc_forces(model, ws, mu, qdot, A_qdot, c_mu):
    """``(c(V_q), cross)``: the ``(qdot, qdot)`` CC forces at ``V_q = [-A_l qdot; qdot]`` and the
    ``(mu, qdot)`` cross terms (:func:`polarization`); ``c_mu = c(V_mu)``."""
    c_q, cross = qdot_cc_forces(model, ws, mu, qdot, A_qdot)
    polarization(cross, c_mu, c_q, cross)
    return c_q, cross


@kernel(R1, R2, W1)
def shape_row(c, A, out):
    """Shape row of CC forces ``c`` (Pinocchio's order) into ``out``: ``c_q - A_l^T c_b`` (Lemma 2; the
    compensation of eq. 45), ``A = ws.A``."""
    for j in range(len(out)):
        x = c[6 + j]
        for i in range(6):
            x -= c[i] * A[i, j]
        out[j] = x


# -- the public form: the paper's ordering --

def rel_terms(model, ws, q, qdot, mu):
    """:class:`RELTerms` at shape ``q``, shape velocity ``qdot`` and locked velocity ``mu``.

    Inner-loop function: inputs are trusted (see ``FloatingBaseModel.rel_terms``
    for the checked entry point).
    """
    locked_inertia_factor(model, ws, q)
    A_qdot = ws.A_qdot
    connection_velocity(ws.A, qdot, A_qdot)
    mu_pin = swap_halves(mu)
    c_mu = mu_mu_cc_forces(model, ws, mu_pin)
    c_q, c_sum = qdot_cc_forces(model, ws, mu_pin, qdot, A_qdot)
    return RELTerms._make(_paper_order_terms(ws.M, ws.A, A_qdot, mu, c_mu, c_sum, c_q))


@kernel(R2, R2, R1, R1, R1, R1, R1)
def _paper_order_terms(M, A, A_qdot, mu, c_mu, c_sum, c_q):
    """The fields of :class:`RELTerms` (new arrays, the paper's order) from the kernel's Pinocchio-ordered
    CRBA ``M``, ``A_l``, ``A_l qdot`` and CC forces ``c(V_mu)``, ``c(V_mu + V_q)`` and ``c(V_q)``."""
    n = A.shape[1]
    cross = np.empty(6 + n)
    polarization(c_sum, c_mu, c_q, cross)
    M_b, A_l, Lambda_q = np.empty((6, 6)), np.empty((6, n)), np.empty((n, n))
    A_qdot_o, base_mu_mu, base_mu_qdot = np.empty(6), np.empty(6), np.empty(6)
    for i in range(6):
        k = SWAP[i]
        A_qdot_o[i], base_mu_mu[i], base_mu_qdot[i] = A_qdot[k], c_mu[k], cross[k]
        for j in range(6):
            M_b[i, j] = M[k, SWAP[j]]
        for j in range(n):
            A_l[i, j] = A[k, j]
    for i in range(n):                          # eq. 19a: M_q - M_bq^T A_l
        for j in range(n):
            x = M[6 + i, 6 + j]
            for k in range(6):
                x -= M[k, 6 + i] * A[k, j]
            Lambda_q[i, j] = x
    # ad~_h A_l qdot with h = M_b mu = [h_w; h_v]: [h_w x a_w + h_v x a_v; h_v x a_w] (Lemma 8)
    h = np.zeros(6)
    for i in range(6):
        for j in range(6):
            h[i] += M_b[i, j] * mu[j]
    IM_qdot = np.empty(6)
    a = A_qdot_o
    for i in range(3):
        i1, i2 = (i + 1) % 3, (i + 2) % 3
        IM_qdot[i] = (h[i1] * a[i2] - h[i2] * a[i1]) + (h[3 + i1] * a[3 + i2] - h[3 + i2] * a[3 + i1])
        IM_qdot[3 + i] = h[3 + i1] * a[i2] - h[3 + i2] * a[i1]
    shape_mu_mu, shape_mu_qdot, shape_qdot_qdot = np.empty(n), np.empty(n), np.empty(n)
    shape_row(c_mu, A, shape_mu_mu)
    shape_row(cross, A, shape_mu_qdot)
    shape_row(c_q, A, shape_qdot_qdot)
    return (M_b, A_l, Lambda_q, A_qdot_o, IM_qdot, base_mu_mu, base_mu_qdot, shape_mu_mu, shape_mu_qdot,
            shape_qdot_qdot)


def forward_dynamics(terms, tau, F1):
    """``(mu_dot, qddot)``: the REL equations ([Mishra2023] eq. 18) solved at one state.

    ``tau`` joint forces and ``F1`` base body wrench ``[moment; force]``,
    including potential forces.
    """
    mu_dot = spd_solve(terms.M_b, F1 - terms.base_mu_mu - terms.base_mu_qdot)
    rhs = tau - terms.A_l.T @ F1 - terms.shape_mu_mu - terms.shape_mu_qdot - terms.shape_qdot_qdot
    return mu_dot, spd_solve(terms.Lambda_q, rhs)
