"""Centroidal quantities of Saccon et al. [Saccon2017] in the notation of [Mishra2023].

[Saccon2017] writes the robotics "centroidal" quantities in the frame
``G = (p_com, [A])``: origin at the total CoM, axes of the inertial frame.  In
[Mishra2023]'s notation, with ``g_1G = g1^-1 g_OG`` the pose of G seen from the base
{1} (rotation ``R1^T``, origin the CoM ``c(q)`` in base coordinates):

* centroidal momentum matrix ``A_G = Ad_(g_1G)^T [M_b  M_bq]`` ([Saccon2017] eqs. 9, 11),
* centroidal momentum ``h_G = A_G [V1; qdot]`` (eq. 11),
* centroidal locked inertia ``I_G = Ad_(g_1G)^T M_b Ad_(g_1G) = diag(I_com, m 1)`` (eq. 14),
* average velocity ``V_G = I_G^-1 h_G = Ad_(g_1G)^-1 mu`` (eqs. 14, 38): [Mishra2023]'s
  locked velocity ``mu`` (Def. 3) seen from G, ``[omega_ave; pdot_com]``.

Everything is ordered ``[angular; linear]`` ([Saccon2017] orders ``[linear; angular]``;
Pinocchio's ``ccrba`` too).  All functions take a
:class:`~floating_base_control.kinematics.ShapeKinematics` ``kin``.
"""
import numpy as np

from floating_base_control.compiled import F, R2, kernel
from floating_base_control.lie import Ad, Ad_inv, skew


def center_of_mass(kin):
    """Total CoM ``c(q)`` in base coordinates (see :func:`com_from_locked_inertia`)."""
    return np.array(com_from_locked_inertia(kin.M_b))


def com_from_locked_inertia(M_b):
    """CoM in base coordinates (three floats), read off the locked inertia ``M_b = [[I_O, m c_x], [-m c_x, m 1]]``
    ([Mishra2023] eq. 7; base twists ``[omega; v]``)."""
    return com_from_coupling(M_b[:3, 3:], M_b[3, 3])


@kernel(R2, F)
def com_from_coupling(K, m):
    """CoM ``c = vee(K) / m`` in base coordinates from the locked inertia's coupling block ``K = m c_x``
    (angular rows, linear columns; [Mishra2023] eq. 7) and the mass ``m``: ``M_b[:3, 3:]`` in the
    package's order, ``M[3:6, :3]`` of Pinocchio's CRBA at the base identity in compiled kernels."""
    return K[2, 1] / m, K[0, 2] / m, K[1, 0] / m


def inertia_at_com(kin):
    """Rotational inertia of the locked system about its CoM, base axes (3x3)."""
    c = center_of_mass(kin)
    return kin.M_b[:3, :3] + kin.M_b[3, 3] * skew(c) @ skew(c)


def centroidal_pose(kin, g1):
    """``g_1G``: frame G (CoM origin, inertial axes) seen from the base {1}."""
    g = np.eye(4)
    g[:3, :3] = g1[:3, :3].T
    g[:3, 3] = center_of_mass(kin)
    return g


def centroidal_momentum_matrix(kin, g1):
    """``A_G = Ad_(g_1G)^T [M_b  M_bq]`` (6 x (6+n)): ``h_G = A_G [V1; qdot]`` ([Saccon2017] eq. 11)."""
    return Ad(centroidal_pose(kin, g1)).T @ np.hstack([kin.M_b, kin.M_bq])


def centroidal_inertia(kin, g1):
    """``I_G = Ad_(g_1G)^T M_b Ad_(g_1G)``: block diagonal ``diag(I_com, m 1)`` in inertial axes."""
    X = Ad(centroidal_pose(kin, g1))
    return X.T @ kin.M_b @ X


def centroidal_momentum(kin, g1, V1, qdot):
    """``h_G = [k_G; m pdot_com]``: angular momentum about the CoM and linear momentum (eq. 11)."""
    return centroidal_momentum_matrix(kin, g1) @ np.concatenate([V1, qdot])


def average_velocity(kin, g1, mu):
    """``V_G = [omega_ave; pdot_com] = Ad_(g_1G)^-1 mu`` ([Saccon2017] eqs. 14 and 38)."""
    return Ad_inv(centroidal_pose(kin, g1)) @ mu
