"""The coordinates the hopping controller acts on ([Feurstein2021] eqs. 3.96, 4.20-4.24): the length
``r_cf`` and the polar angle of the line from the centre of mass (CoM) to the point foot, their rates,
and the foot's height above the floor.

Vectors are 3-tuples and a pose's rotation a row-major 9-tuple (``lie.py``'s kernels); a matrix with one
column per joint (a Jacobian, the mechanical connection) is an array of shape ``(rows, n)``.  The
functions are compiled kernels (``compiled.py``); :func:`line_coordinates` is what a control tick calls,
once, on the Pinocchio results of that tick.  The connection ``A`` and the CRBA ``M`` are
read where the tick's factorization leaves them (``rel_fast.locked_inertia_factor``), in Pinocchio's
order: rows ``[v; omega]``.
"""
import math

from floating_base_control.compiled import B, F, R1, R2, T3, T9, W2, kernel
from floating_base_control.dynamics.centroidal import com_from_coupling
from floating_base_control.lie import cross3, dot3, mv3, rotation_of
from floating_base_control.robots.hopper.model import PLANE_NORMAL

#: The plane normal as a 3-tuple (compiled kernels read it as a constant).
NORMAL = tuple(PLANE_NORMAL.tolist())


@kernel(R2, R1)
def columns_times(J, x):
    """``J x`` (a 3-tuple) of the ``3 x n`` matrix ``J`` (the first three rows of the array ``J``)."""
    a = b = c = 0.0
    for j in range(len(x)):
        a, b, c = a + J[0, j] * x[j], b + J[1, j] * x[j], c + J[2, j] * x[j]
    return a, b, c


@kernel(R2, T3)
def com_in_world(g1, c):
    """``o_c = R c + p``: the CoM ``c`` (base frame) in the world, for the base pose ``g1``."""
    rc = mv3(rotation_of(g1), c)
    return rc[0] + g1[0, 3], rc[1] + g1[1, 3], rc[2] + g1[2, 3]


@kernel(T9, T3, T3)
def foot_height(R, p, p_f):
    """Height of the foot above the floor (``UP`` component of ``R p_f + p``; the floor is the
    odometry frame's z = 0), from the base pose ``(R, p)`` and the foot in the base frame, m."""
    return R[6] * p_f[0] + R[7] * p_f[1] + R[8] * p_f[2] + p[2]


@kernel(T9, T3, T3, T3, T3)
def foot_height_rate(R, omega, v, p_f, Jf_qdot):
    """Rate of :func:`foot_height`: the ``UP`` component of the foot's velocity ``R (v + omega x
    p_f + J_f qdot)``, from the base body twist ``[omega; v]`` and the foot's velocity ``J_f qdot``
    relative to the base (base frame), m/s."""
    w = cross3(omega, p_f)
    return dot3((R[6], R[7], R[8]), (v[0] + w[0] + Jf_qdot[0], v[1] + w[1] + Jf_qdot[1], v[2] + w[2] + Jf_qdot[2]))


@kernel(R2, R2, T3, W2)
def internal_foot_jacobian(J_f, A, p_f, J_int):
    """``J^int = J_fq - A_fb M_bb^-1 M_bq`` ([Feurstein2021] eq. 3.96), base frame, into ``J_int`` (3 x n):
    the foot's velocity per joint rate with the base moving by ``-A`` (a base twist ``[omega; v]``
    moves the foot by ``v + omega x p_f``).  ``J_f``: the foot's Jacobian w.r.t. q (base fixed); ``A``:
    the mechanical connection, rows ``[A_v; A_omega]`` (Pinocchio's order)."""
    for j in range(J_f.shape[1]):
        w = cross3((A[3, j], A[4, j], A[5, j]), p_f)
        for i in range(3):
            J_int[i, j] = J_f[i, j] - (w[i] + A[i, j])


@kernel(T3, T3)
def radial_coordinates(d_b, v_int):
    """``(r_cf, e_cf, rdot_cf)``: CoM-foot distance, unit vector (base frame) and its rate
    through the internal velocity ``v_int = J^int qdot``, ``rdot = J_r R_cf J_v^int v`` ([Feurstein2021],
    eqs. 4.23-4.24)."""
    r = math.sqrt(dot3(d_b, d_b))
    e = (d_b[0] / r, d_b[1] / r, d_b[2] / r)
    return r, e, dot3(e, v_int)


@kernel(T3)
def polar_angle(d):
    """``alpha_i,cf`` of the world CoM-foot vector ``d`` and its gradient ``J_alpha`` ([Feurstein2021],
    eqs. 4.22-4.23): the angle from the downward vertical, positive about ``PLANE_NORMAL``
    (foot ahead of the CoM).  ``FORWARD`` and ``UP`` are world x and z."""
    dx, dz = d[0], d[2]
    rho2 = dx * dx + dz * dz
    return math.atan2(dx, -dz), (-dz / rho2, 0.0, dx / rho2)


@kernel(T9, T3, R2, T3, R1, T3)
def leg_angle_rate(R, d_b, J_d, omega, qdot, grad_alpha):
    """``alpha_i,cf dot = J_alpha R (omega x d_b + J_d qdot)`` ([Feurstein2021] eqs. 4.22-4.23), the rate of
    the CoM-foot line's angle, with ``J_d`` the CoM-foot vector's Jacobian w.r.t. q (base frame, 3 x n)."""
    w, Jd_qdot = cross3(omega, d_b), columns_times(J_d, qdot)
    return dot3(grad_alpha, mv3(R, (w[0] + Jd_qdot[0], w[1] + Jd_qdot[1], w[2] + Jd_qdot[2])))


@kernel(R2, T3, R1)
def locked_angle_rate(A_omega, omega, qdot):
    """``alpha_c dot = n . (omega + A_omega qdot)`` ([Feurstein2021] eq. 4.26): the locked angular velocity
    ([Mishra2023] Def. 3) about the plane normal."""
    A_omega_qdot = columns_times(A_omega, qdot)
    return dot3(NORMAL, (omega[0] + A_omega_qdot[0], omega[1] + A_omega_qdot[1], omega[2] + A_omega_qdot[2]))


@kernel(R2, R2, R2, R1, F, R2, R1, R1, B, W2, W2, W2)
def line_coordinates(J_f, A, M, p_f, m, g1, V1, qdot, locked, J_int, J_d, vectors):
    """The coordinates of one control tick: ``(foot height, its rate, r_cf, rdot_cf, alpha_i,cf,
    alpha dot, o_c)`` with ``alpha dot`` the rate of ``alpha_c`` if ``locked`` (controller III), else of
    ``alpha_i,cf``, and ``o_c`` the world CoM.  Fills ``J_int`` and ``J_d`` (3 x n: the internal foot
    Jacobian and the CoM-foot vector's) and the rows of ``vectors``: ``e_cf``, ``d_b`` (the CoM-foot
    vector, base frame), ``J_alpha``, which the wrench maps (``laws.py``) read.

    ``J_f``, ``p_f``: the foot's Jacobian w.r.t. q and position (base frame); ``A``: the mechanical
    connection, rows ``[v; omega]``; ``M``: the CRBA at the base identity (the CoM, and the coupling inertia
    ``M_bq`` whose linear rows are ``m J_c``); ``m``: the mass; ``(g1, V1)``: base pose and body twist; ``qdot``.
    """
    R, p, pf = rotation_of(g1), (g1[0, 3], g1[1, 3], g1[2, 3]), (p_f[0], p_f[1], p_f[2])
    c = com_from_coupling(M[3:6, :3], m)
    omega, v = (V1[0], V1[1], V1[2]), (V1[3], V1[4], V1[5])
    height = foot_height(R, p, pf)
    height_rate = foot_height_rate(R, omega, v, pf, columns_times(J_f, qdot))
    d_b = (pf[0] - c[0], pf[1] - c[1], pf[2] - c[2])
    internal_foot_jacobian(J_f, A, pf, J_int)
    r, e, r_dot = radial_coordinates(d_b, columns_times(J_int, qdot))
    alpha_cf, grad_alpha = polar_angle(mv3(R, d_b))
    for j in range(len(qdot)):
        for i in range(3):
            J_d[i, j] = J_f[i, j] - M[i, 6 + j] / m
    if locked:
        alpha_dot = locked_angle_rate(A[3:], omega, qdot)
    else:
        alpha_dot = leg_angle_rate(R, d_b, J_d, omega, qdot, grad_alpha)
    for i in range(3):
        vectors[0, i], vectors[1, i], vectors[2, i] = e[i], d_b[i], grad_alpha[i]
    return height, height_rate, r, r_dot, alpha_cf, alpha_dot, com_in_world(g1, c)
