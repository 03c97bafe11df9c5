"""The hopping controller's laws ([Feurstein2021] sect. 4.1.5, eqs. 4.16-4.19) and the maps that turn
their forces into joint torques and a base wrench (eqs. 4.25-4.26).

Virtual springs between the centre of mass (CoM) and the point foot:

* a radial spring on the CoM-foot distance ``r_cf``, mapped through the *internal* velocity
  ``J^int`` (eq. 3.96, ``coordinates.py``), so that it produces joint torques only (eq. 4.25, first
  term), plus an energy pump ``tau_E = -K_E (E - E_des) rdot_cf`` (eq. 4.16), in stance and flight;
* a polar spring (stance only, eqs. 4.17, 4.19), in two variants: II on the angle ``alpha_i,cf`` of
  the CoM-foot line from the downward vertical (eqs. 4.20-4.25), and III on the orientation
  ``alpha_c`` of the CoM frame aligned with the locked velocity (eq. 4.26, ``locked_frame.py``);
* variant I has no polar spring (under-actuated).

The scalar laws are plain Python (a tick evaluates each once).  The wrench maps run over the joints
and are compiled kernels (``compiled.py``); :func:`hopping_torques` is what a tick calls.
"""
from floating_base_control.compiled import B, F, R1, R2, T3, T9, W1, kernel
from floating_base_control.lie import cross3, dot3, mtv3, rotation_of
from floating_base_control.robots.hopper.coordinates import NORMAL


# -- the laws (eqs. 4.16-4.19) ---------------------------------------------------------------------------

def radial_spring_energy(r, r_des, K_r):
    """Potential of the virtual radial spring, ``K_r (r - r_des)^2 / 2``, J."""
    return 0.5 * K_r * (r - r_des) ** 2


def virtual_spring_energy(r, r_des, K_r, alpha, alpha_des, K_p):
    """Potential of the virtual radial and polar springs, ``K_r (r - r_des)^2 / 2 + K_p (alpha -
    alpha_des)^2 / 2``, J."""
    return radial_spring_energy(r, r_des, K_r) + 0.5 * K_p * (alpha - alpha_des) ** 2


def mechanical_energy(kinetic, weight, o_c):
    """Kinetic energy plus the gravity potential ``-m g . o_c`` (zero at height 0) of the robot with
    the weight ``m g`` (a 3-tuple, world) and the CoM at ``o_c`` (world), J."""
    return kinetic - (weight[0] * o_c[0] + weight[1] * o_c[1] + weight[2] * o_c[2])


def energy_pump(E, E_des, r_dot, K_E):
    """``tau_E = -K_E (E - E_des) rdot_cf`` ([Feurstein2021] eq. 4.16)."""
    return -K_E * (E - E_des) * r_dot


def radial_force(r, r_dot, r_des, K_r, D_r, tau_E):
    """``tau_r = -K_r (r_cf - r_des) - D_r rdot_cf + tau_E`` ([Feurstein2021] eqs. 4.16 and 4.18)."""
    return -K_r * (r - r_des) - D_r * r_dot + tau_E


def polar_torque(alpha, alpha_dot, alpha_des, K_p, D_p):
    """``tau_p = -K_p (alpha - alpha_des) - D_p alpha_dot`` ([Feurstein2021] eq. 4.17; zero in flight, 4.19)."""
    return -K_p * (alpha - alpha_des) - D_p * alpha_dot


# -- wrench maps (eqs. 4.25-4.26): joint torques into ``tau``, the base moment returned ----------------------

@kernel(R2, T3, F, W1)
def radial_joint_torque(J_int, e, tau_r, tau):
    """Radial term of eq. 4.25, ``J_v^int^T R_cf^T J_r^T tau_r``, into ``tau``: joint torques only,
    because ``J^int`` has no base columns (the base wrench of this term is zero)."""
    for j in range(len(tau)):
        tau[j] = (J_int[0, j] * e[0] + J_int[1, j] * e[1] + J_int[2, j] * e[2]) * tau_r


@kernel(T3, R2, T9, T3, F, W1)
def polar_wrench_leg(d_b, J_d, R, grad_alpha, tau_p, tau):
    """Polar term of eq. 4.25 (variant II), ``J_(i o_cf dot)^T J_alpha^T tau_p``: adds its joint
    torques to ``tau`` and returns its base moment (base frame).

    ``i o_cf dot = R (omega x d_b + J_d qdot)`` does not depend on the base's linear
    velocity, so the base force is zero.
    """
    f = mtv3(R, grad_alpha)
    f = (f[0] * tau_p, f[1] * tau_p, f[2] * tau_p)
    for j in range(len(tau)):
        tau[j] = tau[j] + (J_d[0, j] * f[0] + J_d[1, j] * f[1] + J_d[2, j] * f[2])
    return cross3(d_b, f)


@kernel(R2, F, W1)
def polar_wrench_locked(A_omega, tau_p, tau):
    """Polar term of eq. 4.26 (variant III), ``J_(alpha_c dot)^T tau_p`` with
    ``alpha_c dot = n . (omega + A_omega qdot)``, the locked angular velocity about the normal
    (``A_omega``: the connection's rotation rows): adds its joint torques ``A_omega^T n tau_p`` to
    ``tau`` and returns its base moment ``n tau_p``.

    In the reduced equations ([Mishra2023] eq. 18) its shape force ``tau - A^T F_b`` is zero, so it
    acts on the locked (external) velocity only.
    """
    moment = (NORMAL[0] * tau_p, NORMAL[1] * tau_p, NORMAL[2] * tau_p)
    for j in range(len(tau)):
        tau[j] = tau[j] + (A_omega[0, j] * moment[0] + A_omega[1, j] * moment[1] + A_omega[2, j] * moment[2])
    return moment


@kernel(F, F)
def _clip(x, limit):
    """``x`` within ``[-limit, limit]`` (Python's ``min(max(x, -limit), limit)``)."""
    if -limit > x:
        x = -limit
    if limit < x:
        x = limit
    return x


@kernel(T3, F)
def limit_base_torque(moment, limit):
    """``(moment, limited)``: the base moment with its component about the plane normal (what the
    base-torque actuator applies) within ``limit``."""
    about_normal = dot3(moment, NORMAL)
    limited = _clip(about_normal, limit)
    if limited == about_normal:
        return moment, False
    delta = limited - about_normal
    return (moment[0] + delta * NORMAL[0], moment[1] + delta * NORMAL[1], moment[2] + delta * NORMAL[2]), True


@kernel(R2, R2, R2, R2, R2, F, F, F, B, B, R1, F, W1, W1, W1)
def hopping_torques(J_int, J_d, A, vectors, g1, tau_r, tau_damper, tau_p, polar, locked, limits, base_limit,
                    tau, tau_damping, base_wrench):
    """Eqs. 4.25-4.26 for one tick: the joint torques ``tau`` (the radial force ``tau_r`` and, if ``polar``,
    the polar torque ``tau_p``: on ``alpha_c`` if ``locked``, else on ``alpha_i,cf``), the radial damper's
    share ``tau_damping`` (of its force ``tau_damper``) and the base wrench ``[moment; 0]``, into the arrays
    given; the joint torques within ``limits`` and the base torque within ``base_limit``.  Returns
    ``(saturated, base torque about the plane normal)``.

    ``J_int``, ``J_d``, ``vectors`` (rows ``e_cf``, ``d_b``, ``J_alpha``): those of
    ``coordinates.line_coordinates``; ``A``: the mechanical connection, rows ``[A_v; A_omega]`` (Pinocchio's
    order, as ``coordinates.py`` reads it); ``g1``: the base pose.
    """
    e = (vectors[0, 0], vectors[0, 1], vectors[0, 2])
    radial_joint_torque(J_int, e, tau_damper, tau_damping)
    radial_joint_torque(J_int, e, tau_r, tau)
    moment = (0.0, 0.0, 0.0)
    if polar and locked:
        moment = polar_wrench_locked(A[3:], tau_p, tau)
    elif polar:
        d_b, grad_alpha = (vectors[1, 0], vectors[1, 1], vectors[1, 2]), (vectors[2, 0], vectors[2, 1], vectors[2, 2])
        moment = polar_wrench_leg(d_b, J_d, rotation_of(g1), grad_alpha, tau_p, tau)
    saturated = False
    for j in range(len(tau)):
        limited = _clip(tau[j], limits[j])
        saturated = saturated or limited != tau[j]
        tau[j] = limited
    moment, clipped = limit_base_torque(moment, base_limit)
    base_torque = 0.0           # summed from +0.0, as numpy's dot of base_wrench[:3] and PLANE_NORMAL
    for i in range(3):
        base_wrench[i] = moment[i]
        base_torque += moment[i] * NORMAL[i]
    return saturated or clipped, base_torque
