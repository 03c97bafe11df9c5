"""Plastic impact of a floating-base robot on a sticking point contact.

A touchdown on a stiff floor that holds the foot in every direction (the viscoelastic
floor of [Feurstein2021] eqs. 4.13-4.14, resolves it in about 0.05 ms) is, seen from the rest of
the motion, an impulse ``J^T P`` at the contact point that stops it dead.  With the
generalized inertia ``M`` of [Mishra2023] eq. 5 and the point's Jacobian ``J``:

    M (v+ - v-) = J^T P,   J v+ = 0   =>   v+ = v- - M^-1 J^T (J M^-1 J^T)^-1 J v-

(Kane and Levinson, Dynamics, Sect. 9; Brach, Mechanical Impact Dynamics, ch. 3).
Carnot's theorem follows: the kinetic energy lost is that of the velocity jump,
``(v- - v+)^T M (v- - v+) / 2``; and since the impulse passes through the contact point,
the angular momentum about that point is unchanged.  ``test_impact.py`` checks both.
"""
import numpy as np

from floating_base_control.lie import skew


def generalized_inertia(kin):
    """``M = [[M_b, M_bq], [M_bq^T, M_q]]`` of [Mishra2023] eq. 5, ordered ``[V1 = (omega, v); qdot]``."""
    return np.block([[kin.M_b, kin.M_bq], [kin.M_bq.T, kin.M_q]])


def point_jacobian(p, J_pq):
    """Jacobian of the velocity of a point w.r.t. ``[V1; qdot]``, base axes: ``v_p = v + omega x p
    + J_pq qdot``, so ``J = [-p^, 1, J_pq]`` (3 x (6+n)).

    ``p``: the point in base coordinates; ``J_pq``: its velocity per joint rate with the base
    held fixed, base axes (3 x n)."""
    return np.hstack([-skew(p), np.eye(3), J_pq])


def plastic_impact(M, J, v):
    """``(v+, P)``: velocity ``[V1; qdot]`` after a plastic, sticking impact that stops the
    contact point of Jacobian ``J``, and the contact impulse ``P`` (in ``J``'s row axes).

    ``M``: generalized inertia (:func:`generalized_inertia`), ``v``: velocity before impact."""
    MinvJt = np.linalg.solve(M, J.T)
    P = -np.linalg.solve(J @ MinvJt, J @ v)
    return v + MinvJt @ P, P
