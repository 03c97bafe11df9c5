"""Integrability of the locked (average) velocity: Saccon et al. [Saccon2017], Prop. 4.1.

Integrating the locked velocity gives the centroidal frame C ([Saccon2017] eq. 17).
It is a function ``F(q)`` of the shape alone (``g_C = g1 F(q)``) iff the
curvature of the mechanical connection vanishes identically (eq. 20); then
``F`` is built by integrating along a staircase path (eqs. 26-28).  Otherwise C
depends on the path, and a closed shape loop leaves a holonomy.

Conventions.  [Saccon2017]'s connection ``calA = L^-1 A`` is [Mishra2023]'s ``A_l`` with
twists ordered ``[v; omega]`` instead of ``[omega; v]``, and its curvature
(eq. 20) ``calB_ij = d_j calA_i - d_i calA_j + calA_i x calA_j`` has the opposite
sign of [Mishra2023]'s (Def. 5, ``DA_l(e_i) e_j = d_i A_j - d_j A_i - [A_i, A_j]``)::

    calB_ij = -P DA_l(q, e_i) e_j,      P = swap of the 3-vector halves.

The frame ``K = g1^-1 g_C`` obeys ``K_dot = (A_l qdot)^ K`` ([Saccon2017] eq. 22; a left
multiplication), whatever the momentum; with zero momentum the base moves by
``dg1 = K(0) K(T)^-1``, so ``K`` is the inverse of :func:`~.locomotion.net_displacement`.
"""
from typing import NamedTuple

import numpy as np

from floating_base_control import validation as check
from floating_base_control.conventions import swap_halves
from floating_base_control.dynamics.centroidal import center_of_mass
from floating_base_control.dynamics.curvature import curvature_tensor
from floating_base_control.kinematics import shape_kinematics
from floating_base_control.lie import log
from floating_base_control.analysis.locomotion import checked_path, net_displacement

#: Default verdict threshold on the rotational curvature (rad/rad^2 for revolute joints).
FLAT_TOL = 1e-8


def saccon_curvature(kin):
    """``calB[:, i, j]`` of [Saccon2017] eq. 20, ordered ``[v; omega]``: ``-P DA_l(e_i) e_j``."""
    return -swap_halves(curvature_tensor(kin))


class CurvatureScan(NamedTuple):
    """Result of :func:`curvature_scan` (curvature in [Mishra2023]'s convention, base frame)."""

    flat: bool                    #: max_rotational <= tol: the average angular velocity integrates
    max_rotational: float        #: max over shapes and pairs of |rotational rows of DA_l|
    max_translational: float     #: the same for the translational rows
    worst_pair: tuple             #: joint indices (i, j) of max_rotational
    worst_shape: np.ndarray       #: shape of max_rotational
    per_pair: np.ndarray          #: (n, n) max |rotational DA_l(e_i) e_j| over the shapes
    tol: float


def sample_shapes(model, count, rng):
    """``count`` shapes uniform within the joint limits (``[-pi, pi]`` where unlimited)."""
    lo, hi = model.position_limits.T
    lo, hi = np.where(np.isfinite(lo), lo, -np.pi), np.where(np.isfinite(hi), hi, np.pi)
    return rng.uniform(lo, hi, size=(int(count), model.n))


def curvature_scan(model, shapes, tol=FLAT_TOL):
    """[Saccon2017] Prop. 4.1 on samples: max |curvature| over ``shapes`` (m x n) and a verdict.

    The verdict reads the rotational rows: when they vanish the orientation of C
    integrates, and its origin is the CoM ([Saccon2017] App. B), so the translational
    rows vanish too (reported as a check).  ``flat`` on samples is evidence, not
    proof; one non-zero sample proves non-integrability.
    """
    shapes = checked_path(model, shapes, "shapes", min_rows=1)
    ws = model.create_data()
    per_pair = np.zeros((model.n, model.n))
    worst, worst_shape, max_trans = -1.0, shapes[0], 0.0
    for q in shapes:
        F = curvature_tensor(shape_kinematics(model, ws, q))
        rot = np.linalg.norm(F[:3], axis=0)
        per_pair = np.maximum(per_pair, rot)
        max_trans = max(max_trans, float(np.linalg.norm(F[3:], axis=0).max()))
        if rot.max() > worst:
            worst, worst_shape = float(rot.max()), q
    i, j = np.unravel_index(np.argmax(per_pair), per_pair.shape)
    return CurvatureScan(bool(worst <= tol), worst, max_trans, (int(min(i, j)), int(max(i, j))),
                         worst_shape.copy(), per_pair, float(tol))


def transport(model, qs, K0=None, substeps=1):
    """``K(T)`` with ``K_dot = (A_l(q) qdot)^ K``, ``K(0) = K0`` (default identity), along the
    joint path ``qs`` ([Saccon2017] eqs. 17 and 22): the centroidal frame seen from the base."""
    K0 = np.eye(4) if K0 is None else check.pose("K0", K0)
    return np.linalg.inv(net_displacement(model, qs, substeps=substeps)) @ K0


def holonomy(model, loop, substeps=1):
    """``K(T) K(0)^-1`` of a closed joint loop (N x n): the identity iff C returns (4x4).

    With zero momentum the base is displaced by its inverse.
    """
    loop = checked_path(model, loop, "loop", min_rows=3)
    gap = np.abs(loop[-1] - loop[0]).max()
    if gap > 1e-9 * max(1.0, np.abs(loop).max()):
        raise check.InputError(f"the joint loop is not closed: its first and last shapes differ "
                               f"by up to {gap:.3g}")
    return transport(model, loop, substeps=substeps)


def staircase(s0, s, step=0.05):
    """The path of eqs. 26-28 from ``s0`` to ``s``: one coordinate after the other, in order,
    each leg cut into pieces of at most ``step``."""
    path, q = [np.array(s0, dtype=float)], np.array(s0, dtype=float)
    for i in range(len(q)):
        pieces = max(1, int(np.ceil(abs(s[i] - q[i]) / step)))
        for value in np.linspace(q[i], s[i], pieces + 1)[1:]:
            q = q.copy()
            q[i] = value
            path.append(q)
    return np.array(path)


def centroidal_frame(model, s, s0=None, F0=None, step=0.05, substeps=2):
    """``F(s) = g1^-1 g_C`` by the staircase construction of [Saccon2017] eqs. 26-28.

    ``F0 = F(s0)`` defaults to the base axes at the CoM of ``s0`` (App. B: the origin
    of C stays at the CoM).  Meaningful when the connection is flat
    (:func:`curvature_scan`); otherwise it is one path-dependent value among many.
    """
    s = check.vector("s", s, model.n)
    s0 = np.zeros(model.n) if s0 is None else check.vector("s0", s0, model.n)
    if F0 is None:
        F0 = np.eye(4)
        F0[:3, 3] = center_of_mass(model.kinematics(s0))
    return transport(model, staircase(s0, s, step), F0, substeps)


def path_dependence(model, s, s0=None, step=0.05, substeps=2):
    """``|log(F_staircase^-1 F_line)|``: the staircase frame of eqs. 26-28 against integrating
    the locked velocity along the straight line from ``s0`` to ``s``.  Zero (to integration
    accuracy) iff the connection is flat on the region swept."""
    s = check.vector("s", s, model.n)
    s0 = np.zeros(model.n) if s0 is None else check.vector("s0", s0, model.n)
    pieces = max(1, int(np.ceil(np.abs(s - s0).max() / step)))
    line = s0 + np.linspace(0.0, 1.0, pieces + 1)[:, None] * (s - s0)
    F_stair = transport(model, staircase(s0, s, step), substeps=substeps)
    F_line = transport(model, line, substeps=substeps)
    return float(np.linalg.norm(log(np.linalg.solve(F_stair, F_line))))
