"""Conversions at the edges: Pinocchio and MuJoCo <-> [Mishra2023] notation (ROS messages:
``ros/messages.py``).

Inside the package: base pose ``g1`` (4x4), shape ``q`` (n), base body twist
``V1 = [omega; v]`` (both in the base frame), wrenches ``[moment; force]``.
See ``docs/reference/conventions.md`` for the table; ``test/core/test_conventions.py`` pins
every row of it.

Pinocchio orders twists ``[v; omega]`` and wrenches ``[force; moment]``.  This module is the one place
that reorders between the two (:data:`SWAP` and the functions below it); the only code that works in
Pinocchio's order is the control tick's compiled kernels, which say so (``docs/reference/conventions.md`` lists
them, ``test/core/test_ordering.py`` enforces it).

==============  =================  ======================  =====================
                quaternion          base linear velocity    6-vector order
==============  =================  ======================  =====================
[Mishra2023]        (rotation matrix)   body                    omega, v
Pinocchio       x, y, z, w          body                    v, omega
MuJoCo free     w, x, y, z          world                   v (world), omega (body)
ROS messages    x, y, z, w          child frame (body)      separate fields
==============  =================  ======================  =====================
"""
from operator import itemgetter

import numpy as np
from transforms3d.quaternions import quat2mat

from floating_base_control.compiled import R2, R3, W2, W3, kernel


#: Index permutation between ``[omega; v]`` and Pinocchio's ``[v; omega]`` (its own inverse).
SWAP = np.array([3, 4, 5, 0, 1, 2])
SWAP_BOTH = np.ix_(SWAP, SWAP)


def quat_wxyz_to_matrix(quat):
    """Rotation matrix of a (not necessarily unit) quaternion ``(w, x, y, z)``."""
    quat = np.asarray(quat, dtype=float)
    return quat2mat(quat / np.linalg.norm(quat))


def matrix_to_quat_wxyz(R):
    """Unit quaternion ``(w, x, y, z)`` of a rotation matrix, with ``w >= 0``; of each of a stack ``(N, 3, 3)``
    into ``(N, 4)``.

    Bar-Itzhack's method (J. Guid. Control Dyn. 23(6), 2000) as transforms3d's ``mat2quat`` computes it, to the
    same bits: the eigenvector of the largest eigenvalue of a symmetric ``K`` built from ``R``.  ``K`` and the
    choice of the eigenvector are compiled, numpy's ``eigh`` in between takes a whole stack in one call (each
    matrix as if alone): a run's log converts all its base attitudes at once."""
    R = np.asarray(R, dtype=float)
    stack = R.reshape(-1, 3, 3)
    K = np.zeros((len(stack), 4, 4))
    bar_itzhack_matrix(stack, K)
    vals, vecs = np.linalg.eigh(K)
    quat = np.empty((len(stack), 4))
    largest_eigenvector_wxyz(vals, vecs, quat)
    return quat.reshape(R.shape[:-2] + (4,))


@kernel(R3, W3)
def bar_itzhack_matrix(R, K):
    """Bar-Itzhack's ``K`` of each rotation matrix ``R[i]`` into ``K[i]``, its lower half (``eigh`` reads only
    that), in transforms3d's order of operations (``Qyx`` is ``R[0, 1]``: the ``y`` input's part of ``x``)."""
    for i in range(R.shape[0]):
        Qxx, Qyx, Qzx = R[i, 0, 0], R[i, 0, 1], R[i, 0, 2]
        Qxy, Qyy, Qzy = R[i, 1, 0], R[i, 1, 1], R[i, 1, 2]
        Qxz, Qyz, Qzz = R[i, 2, 0], R[i, 2, 1], R[i, 2, 2]
        K[i, 0, 0] = (Qxx - Qyy - Qzz) / 3.0
        K[i, 1, 0], K[i, 1, 1] = (Qyx + Qxy) / 3.0, (Qyy - Qxx - Qzz) / 3.0
        K[i, 2, 0], K[i, 2, 1], K[i, 2, 2] = (Qzx + Qxz) / 3.0, (Qzy + Qyz) / 3.0, (Qzz - Qxx - Qyy) / 3.0
        K[i, 3, 0], K[i, 3, 1] = (Qyz - Qzy) / 3.0, (Qzx - Qxz) / 3.0
        K[i, 3, 2], K[i, 3, 3] = (Qxy - Qyx) / 3.0, (Qxx + Qyy + Qzz) / 3.0


@kernel(R2, R3, W2)
def largest_eigenvector_wxyz(vals, vecs, quat):
    """The eigenvector of each ``K``'s largest eigenvalue (the first of equal ones, as ``np.argmax``) as
    ``(w, x, y, z)``, turned to ``w >= 0``."""
    for i in range(vals.shape[0]):
        best = 0
        for k in range(1, 4):
            if vals[i, k] > vals[i, best]:
                best = k
        sign = -1.0 if vecs[i, 3, best] < 0 else 1.0
        for j in range(4):
            quat[i, j] = sign * vecs[i, (j + 3) % 4, best]


def wxyz_to_xyzw(quat):
    """Reorder a quaternion from ``(w, x, y, z)`` to ``(x, y, z, w)``."""
    return np.asarray(quat, dtype=float)[[1, 2, 3, 0]]


def xyzw_to_wxyz(quat):
    """Reorder a quaternion from ``(x, y, z, w)`` to ``(w, x, y, z)``."""
    return np.asarray(quat, dtype=float)[[3, 0, 1, 2]]


def pose(R, p):
    """4x4 pose ``g(R, p)``."""
    g = np.eye(4)
    g[:3, :3] = R
    g[:3, 3] = p
    return g


# --- Pinocchio: q = [p, quat(x, y, z, w), q_shape], v = [v_body, omega_body, qdot] ---

def to_pinocchio(g1, q, V1=None, qdot=None):
    """Pinocchio configuration (and velocity, if ``V1`` and ``qdot`` are given)."""
    q_pin = np.concatenate([g1[:3, 3], wxyz_to_xyzw(matrix_to_quat_wxyz(g1[:3, :3])), q])
    if V1 is None:
        return q_pin
    return q_pin, pinocchio_velocity(V1, qdot)


def from_pinocchio(q_pin, v_pin=None):
    """``(g1, q)`` (and ``(V1, qdot)`` if ``v_pin`` is given) of a Pinocchio state."""
    g1 = pose(quat_wxyz_to_matrix(xyzw_to_wxyz(q_pin[3:7])), q_pin[:3])
    if v_pin is None:
        return g1, q_pin[7:].copy()
    return g1, q_pin[7:].copy(), v_pin[:6][SWAP], v_pin[6:].copy()


def swap_halves(x):
    """Swap the 3-vector halves of a twist or wrench (its own inverse), or the rows of a 6 x m matrix
    of them (a Jacobian, the mechanical connection).

    ``[omega; v]`` <-> Pinocchio's ``[v; omega]`` and ``[moment; force]`` <->
    ``[force; moment]``.
    """
    return np.asarray(x)[SWAP]


def swap_rows(A, columns):
    """``A[SWAP, columns]``: the rows of a Pinocchio Jacobian ``6 x (6 + n)`` reordered, ``columns`` of it
    (e.g. ``slice(6, None)``: the joints' columns)."""
    return A[SWAP, columns]


def swap_columns(X):
    """The last axis of ``X`` reordered (the columns of a stack of ``6 x 6`` adjoint matrices)."""
    return X[..., SWAP]


def swap_rows_and_columns(M):
    """The ``6 x 6`` matrix (or the base block of a generalized inertia) in the other order, rows and
    columns: an inertia, ``Jlog6``."""
    return np.asarray(M)[SWAP_BOTH]


def generalized_from_pinocchio(M):
    """Pinocchio's free-flyer generalized inertia ``(6 + n) x (6 + n)`` in the order ``[V1; qdot]``."""
    order = np.r_[SWAP, np.arange(6, len(M))]
    return np.asarray(M)[np.ix_(order, order)]


def list_reordering(n=0):
    """A function that takes a Python list of ``6 + n`` floats in Pinocchio's free-flyer order (a twist, a
    wrench, a row of the generalized inertia) to a tuple in the order of ``[V1; qdot]``: :func:`swap_halves`
    for a step that computes on Python floats (one call of C, where a numpy index costs a microsecond)."""
    return itemgetter(*SWAP.tolist(), *range(6, 6 + n))


def pinocchio_velocity(V1, qdot):
    """Pinocchio's free-flyer velocity ``[v; omega; qdot]`` of the base twist ``V1 = [omega; v]`` and
    ``qdot``."""
    V1 = np.asarray(V1)
    return np.concatenate((V1[3:], V1[:3], qdot))         # slices: cheaper than indexing with SWAP


# --- MuJoCo free joint: qpos = [p, quat(w, x, y, z), q], qvel = [R v_body, omega_body, qdot] ---

def to_mujoco(g1, q, V1, qdot):
    """MuJoCo ``(qpos, qvel)`` of a free-joint robot whose hinge/slide joints follow ``q``."""
    R = g1[:3, :3]
    qpos = np.concatenate([g1[:3, 3], matrix_to_quat_wxyz(R), q])
    qvel = np.concatenate([R @ V1[3:], V1[:3], qdot])
    return qpos, qvel


def from_mujoco(qpos, qvel):
    """``(g1, q, V1, qdot)`` of MuJoCo free-joint ``(qpos, qvel)``."""
    R = quat_wxyz_to_matrix(qpos[3:7])
    V1 = np.concatenate([qvel[3:6], R.T @ qvel[:3]])
    return pose(R, qpos[:3]), qpos[7:].copy(), V1, qvel[6:].copy()
