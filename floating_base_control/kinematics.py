"""Per-link kinematics of the shape, expressed in the base frame {1}.

Every quantity of [Mishra2023] depends on the shape ``q`` only, never on the base
pose ``g1``.  We therefore evaluate Pinocchio's kinematics with the base at the
identity, where the world frame coincides with {1}, and express each link
``k`` by

* ``I_k = Ad_1k^-T M_k Ad_1k^-1``: its spatial inertia in {1} (6x6), and
* ``Z_k = Ad_1k J_k``: its Jacobian w.r.t. ``q`` in {1} (6xn),

both ordered ``[omega; v]``.  With these, the link-frame sums of the paper
become sums of ``I_k`` and ``Z_k`` (Ad_1k cancels through [Mishra2023] eqs. 62a
and 62b); e.g. ``M_b = sum_k I_k`` (eq. 7).  All links are stacked in arrays so
that each sum is one vectorized operation.
"""
from typing import NamedTuple, Optional

import numpy as np
import pinocchio as pin

from floating_base_control.conventions import swap_columns, swap_rows, swap_rows_and_columns
from floating_base_control.linalg import spd_solve


#: The joints' columns of Pinocchio's free-flyer Jacobians and generalized inertia (the base's are the first 6).
JOINTS = slice(6, None)


class Workspace:
    """Preallocated scratch data for one :class:`FloatingBaseModel` (like ``pin.Data``).

    Not thread-safe: give each thread its own (``model.create_data()``).
    """

    def __init__(self, model):
        self.pin_data = model.pin_model.createData()
        self.q_pin = pin.neutral(model.pin_model)   # base at the identity
        self.v_pin = np.zeros(model.pin_model.nv)   # base at rest
        self.v_cc = np.zeros(model.pin_model.nv)    # velocities at which rel_terms evaluates CC forces
        self.v_cc_sum = np.zeros(model.pin_model.nv)
        self.v_mu = np.zeros(model.pin_model.nv)    # [mu; 0] (Pinocchio's order): only mu is ever written
        # The fast path's inertias in Pinocchio's order: views of data.M (CRBA fills it in place;
        # pin.crba's return value is a copy) and LAPACK's in-place buffers.
        self.M = self.pin_data.M
        self.M_b, self.M_bq = self.M[:6, :6], self.M[:6, 6:]
        self.M_b_chol = np.eye(6, order="F")             # Cholesky factor of M_b (upper)
        self.A = np.zeros((6, model.n), order="F")       # A_l = M_b^-1 M_bq, rows [v; omega]
        self.A_qdot = np.zeros(6)                        # A_l qdot, [v; omega]


class ShapeKinematics(NamedTuple):
    """Link inertias and Jacobians in the base frame at one shape (see module doc)."""

    I: np.ndarray                 #: (nb, 6, 6) link spatial inertias in {1}
    Z: np.ndarray                 #: (nb, 6, n) link Jacobians in {1}
    M_b: np.ndarray               #: (6, 6) locked inertia, [Mishra2023] eq. 7
    M_bq: np.ndarray              #: (6, n) coupling inertia, eq. 7
    M_q: np.ndarray               #: (n, n) manipulator inertia, eq. 7
    A_l: np.ndarray               #: (6, n) local mechanical connection M_b^-1 M_bq, Def. 3
    qdot: Optional[np.ndarray] = None  #: shape velocity the rates below refer to
    Zdot: Optional[np.ndarray] = None  #: (nb, 6, n) d/dt Z_k along qdot


def shape_kinematics(model, ws, q, qdot=None):
    """:class:`ShapeKinematics` at shape ``q`` (and the Jacobian rates along ``qdot``).

    ``q`` and ``qdot`` are trusted here (no checks): this is the inner loop.
    """
    pm, pd = model.pin_model, ws.pin_data
    ws.q_pin[7:] = q
    if qdot is None:
        pin.computeJointJacobians(pm, pd, ws.q_pin)
    else:
        ws.v_pin[6:] = qdot
        pin.computeJointJacobiansTimeVariation(pm, pd, ws.q_pin, ws.v_pin)
    # Ad_1k^-1 with its columns reordered only: the order of its rows cancels in X^T M_k X, because
    # M_k is Pinocchio's too
    X = swap_columns(np.array([M.actionInverse for M in pd.oMi.tolist()[1:]]))
    I = X.transpose(0, 2, 1) @ (model.link_inertia_pin @ X)
    Z = swap_rows(pd.J, JOINTS) * model.support3
    Zdot = None if qdot is None else swap_rows(pd.dJ, JOINTS) * model.support3
    M, M_b, M_bq, A = inertia_blocks(model, ws)
    return ShapeKinematics(I, Z, M_b, M_bq, M[6:, 6:].copy(), A, None if qdot is None else ws.v_pin[6:].copy(), Zdot)


def shape_inertias(model, ws, q):
    """:class:`ShapeKinematics` without the per-link terms (``I``, ``Z`` are ``None``) at a trusted shape
    ``q``: the inertia blocks and ``A_l`` from one CRBA, all that ``M_b``, ``mu`` and ``Lambda_q`` need
    (e.g. the evaluation of a simulation against its ground truth)."""
    ws.q_pin[7:] = q
    M, M_b, M_bq, A = inertia_blocks(model, ws)
    return ShapeKinematics(None, None, M_b, M_bq, M[6:, 6:].copy(), A)


def inertia_blocks(model, ws):
    """``(M, M_b, M_bq, A_l)`` at the shape in ``ws.q_pin`` ([Mishra2023] eqs. 5, 7 and Def. 3).

    ``M`` is Pinocchio's CRBA result in its own ordering (some Pinocchio versions return a view of
    ``ws.pin_data.M``: copy what must outlive the next call).
    """
    M = pin.crba(model.pin_model, ws.pin_data, ws.q_pin)
    M_b = swap_rows_and_columns(M)
    M_bq = swap_rows(M, JOINTS)
    return M, M_b, M_bq, spd_solve(M_b, M_bq)


def mechanical_connection(model, ws, q):
    """``A_l(q) = M_b^-1 M_bq`` alone (one CRBA): what numerical methods differentiate."""
    ws.q_pin[7:] = q
    return inertia_blocks(model, ws)[3]


def stacked(Z):
    """View of per-link ``(nb, 6, m)`` blocks as one ``(6 nb, m)`` matrix.

    ``stacked(Z).T @ stacked(W)`` is ``sum_k Z_k^T W_k``.
    """
    return Z.reshape(-1, Z.shape[-1])
