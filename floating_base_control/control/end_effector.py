"""End-effector task of a free-floating robot: Cartesian impedance to a world-frame target pose.

The end-effector frame {e} (any frame of the model) is at ``g_e = g1 g_1e(q)``.  Its body
twist follows from eq. 9 (``V1 = mu - A_l qdot``)::

    V_e = Ad_1e^-1 V1 + J_e(q) qdot = Ad_1e^-1 mu + J*(q) qdot,    J* = J_e - Ad_1e^-1 A_l

``J*`` is the generalized Jacobian of the free-floating robot (Umetani and Yoshida 1989)
in the locked-velocity form of [Mishra2023], and ``Ad_1e^-1 mu`` the drift the system's
momentum causes: the damping acts on the whole twist, drift included.  The pose
error and the impedance are expressed in the world-aligned frame at {e} (axes of
the inertial frame, origin at {e}), where stiffness and damping are given per axis::

    e_w = [log(R_e R_r^T); p_e - p_r],   F_w = -K_x clip(e_w) - D_x (V_w - V_r),   V_w = blkdiag(R_e, R_e) V_e
    tau_c = J*^T (F_ff + blkdiag(R_e, R_e)^T F_w) + N^T (-K_n (q - q_n) - D_n qdot)

The task-space feedforward ``F_ff`` (operational space formulation, Khatib 1987, with the
reduced dynamics of eq. 18) makes the end effector follow the reference's acceleration
``A_r`` despite the drift: with ``Vdot_e = J* qddot + b_e``, where ``b_e = d/dt (Ad_1e^-1 mu +
J* qdot)`` at ``qddot = 0`` is the drift's acceleration (``mu_dot`` from eq. 18's base row, which
has no ``qddot``), and ``Lambda_q qddot + c = tau_c`` (``c``: the CC torques eq. 45's compensation
leaves out)::

    F_ff = Lambda_x (A_e - b_e) + J*#^T c,   Lambda_x = (J* Lambda_q^-1 J*^T)^-1

(``A_e``: the reference acceleration in body axes), so that ``Lambda_x (Vdot_e - A_e) = F_e``:
the closed loop is the impedance ``Lambda_w edot' + D_x edot + K_x e = 0``.  Holding a pose
while the system carries momentum needs ``J* qdot = -Ad_1e^-1 mu`` and its derivative: that is
what ``b_e`` supplies.  Without compensation (``none``) no momentum term is used (``mu = 0`` in
``b_e``, ``c`` the shape's own CC torques).  The damping ``D_x`` is either per axis or set from a
damping ratio ``zeta`` by the factorization design (Albu-Schaeffer et al. 2003),
``D_x = zeta (Lambda_w^1/2 K_x^1/2 + K_x^1/2 Lambda_w^1/2)``, ``Lambda_w`` being ``Lambda_x`` in
the world axes: critical damping per axis for ``zeta = 1`` whatever the arm's configuration.

The target is approached along a pose reference ``g_r(t)`` (:class:`PoseReference`:
straight line and constant-axis rotation with a quintic time scaling, bounded
Cartesian speeds), and the damping acts on ``V_w - V_r``, so a far target gives no
torque step.  With the dynamically consistent null-space projector ``N^T = I - J*^T J*#^T``,
``J*# = Lambda_q^-1 J*^T (J* Lambda_q^-1 J*^T)^-1`` (``Lambda_q``: reduced shape inertia,
eq. 19a).  ``g1`` and ``mu`` are the observer's estimates; nothing else of the base is used.

One coherent module: one task law (the equations above), a short function per term, with
the kinematics and the reachability check it needs and nothing else uses.
"""
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from floating_base_control import validation as check
from floating_base_control.conventions import swap_halves, swap_rows, swap_rows_and_columns
from floating_base_control.dynamics.centroidal import com_from_locked_inertia
from floating_base_control.dynamics.rel_fast import locked_inertia_factor
from floating_base_control.kinematics import JOINTS
from floating_base_control.lie import Ad, Ad_inv, inv, skew
from floating_base_control.validation import InputError


@dataclass
class CartesianGains:
    """Cartesian impedance ``[rotation (3); translation (3)]`` per world axis, and the null-space posture."""

    stiffness: np.ndarray                  #: K_x: N m/rad (rotation), N/m (translation)
    damping: np.ndarray                    #: D_x: N m s/rad, N s/m
    nullspace_stiffness: np.ndarray        #: K_n per joint, N m/rad
    nullspace_damping: np.ndarray          #: D_n per joint, N m s/rad
    damping_ratio: float = None            #: zeta: D_x from the task inertia (module doc); None: ``damping``

    def __post_init__(self):
        self.stiffness = check.vector("Cartesian stiffness", self.stiffness, 6)
        self.damping = check.vector("Cartesian damping", self.damping, 6)
        if (self.stiffness < 0).any() or (self.damping <= 0).any():
            raise InputError("Cartesian stiffness must be >= 0 and damping > 0, got "
                             f"{self.stiffness.tolist()}, {self.damping.tolist()}")
        if self.damping_ratio is not None and not (np.isfinite(self.damping_ratio) and self.damping_ratio > 0):
            raise InputError(f"Cartesian damping ratio must be > 0, got {self.damping_ratio}")
        self.nullspace_stiffness = np.asarray(self.nullspace_stiffness, dtype=float)
        self.nullspace_damping = np.asarray(self.nullspace_damping, dtype=float)
        if (self.nullspace_stiffness < 0).any() or (self.nullspace_damping < 0).any():
            raise InputError("null-space stiffness and damping must be >= 0")


def frame_id(model, name):
    """Index of the frame ``name`` in the model (``InputError`` listing the frames if unknown)."""
    if not model.pin_model.existFrame(name):
        raise InputError(f"unknown end-effector frame {name!r}; frames: {[f.name for f in model.pin_model.frames]}")
    return model.pin_model.getFrameId(name)


class FrameWorkspace:
    """Preallocated Pinocchio data for frame kinematics with the base at the identity."""

    def __init__(self, model):
        self.model = model
        self.pin_model = model.pin_model
        self.data = self.pin_model.createData()
        self.q_pin = pin.neutral(self.pin_model)
        self.inertia = model.create_data()           # for A_l at the shifted shapes of drift_acceleration


def frame_kinematics(ws, fid, q):
    """``(g_1e, J_e)``: the frame's pose in the base frame {1} and its body Jacobian w.r.t. ``q``
    (6 x n, ``[omega; v]`` rows), at shape ``q`` with the base fixed."""
    ws.q_pin[7:] = q
    pin.computeJointJacobians(ws.pin_model, ws.data, ws.q_pin)
    g = pin.updateFramePlacement(ws.pin_model, ws.data, fid).homogeneous
    J = pin.getFrameJacobian(ws.pin_model, ws.data, fid, pin.LOCAL)
    return g, swap_rows(J, JOINTS)


def generalized_jacobian(g_1e, J_e, A_l):
    """``(J*, Ad_1e^-1)``: ``V_e = Ad_1e^-1 mu + J* qdot`` with ``J* = J_e - Ad_1e^-1 A_l`` (module doc)."""
    Ad_e1 = Ad_inv(g_1e)
    return J_e - Ad_e1 @ A_l, Ad_e1


def body_twist(ws, fid, q, qdot, mu):
    """``V_e = Ad_1e^-1 mu + J*(q) qdot`` (module doc), ``A_l(q)`` from the workspace's own CRBA."""
    locked_inertia_factor(ws.model, ws.inertia, q)
    J_star, Ad_e1 = generalized_jacobian(*frame_kinematics(ws, fid, q), swap_halves(ws.inertia.A))
    return Ad_e1 @ mu + J_star @ qdot


def shape_velocity_for(model, ws, fid, q, g_e, V_e, h):
    """``(qdot, s, Vt)``: the minimum-norm shape velocity that gives {e}, at world pose ``g_e``, the body twist
    ``V_e`` while the system carries the spatial momentum ``h`` (world axes): ``J* qdot = V_e - Ad_1e^-1 mu``
    with the base at ``g1 = g_e g_1e(q)^-1`` and ``mu = M_b^-1 Ad_g1^T h`` ([Mishra2023] Defs. 2 and 3);
    ``s`` and ``Vt``: the singular values and right singular vectors of ``J*``."""
    g_1e, J_e = frame_kinematics(ws, fid, q)
    locked_inertia_factor(model, ws.inertia, q)
    mu = np.linalg.solve(swap_rows_and_columns(ws.inertia.M_b), Ad(g_e @ inv(g_1e)).T @ h)
    J_star, Ad_e1 = generalized_jacobian(g_1e, J_e, swap_halves(ws.inertia.A))
    U, s, Vt = np.linalg.svd(J_star)
    r = s.size
    return Vt[:r].T @ ((U[:, :r].T @ (V_e - Ad_e1 @ mu)) / s), s, Vt


def drift_acceleration(ws, fid, q, qdot, mu, mu_dot, h=1e-4):
    """``b_e = d/dt V_e`` at ``qddot = 0`` (body axes): central differences along ``(qdot, mu_dot)``."""
    return (body_twist(ws, fid, q + h * qdot, qdot, mu + h * mu_dot)
            - body_twist(ws, fid, q - h * qdot, qdot, mu - h * mu_dot)) / (2 * h)


def locked_acceleration(terms):
    """``mu_dot`` of eq. 18's base row with ``F1 = 0`` (it has no ``qddot``: ``Lambda`` is block-diagonal)."""
    return np.linalg.solve(terms.M_b, -terms.base_mu_mu - terms.base_mu_qdot)


def body_acceleration(R_e, A_w, V_e):
    """The body-axes ``Vdot_e`` of a world-aligned acceleration ``A_w = d/dt blkdiag(R_e, R_e) V_e``."""
    return np.concatenate((R_e.T @ A_w[:3], R_e.T @ A_w[3:] - skew(V_e[:3]) @ V_e[3:]))


def displaced(g, D):
    """``[R_d R, p + p_d]``: pose ``g`` displaced by ``D = [R_d, p_d]`` given in the world axes."""
    out = np.eye(4)
    out[:3, :3] = D[:3, :3] @ g[:3, :3]
    out[:3, 3] = g[:3, 3] + D[:3, 3]
    return out


def pose_error(g, g_target):
    """``[log(R R_t^T); p - p_t]``: rotation vector and position error in the world axes."""
    rotation = pin.log3(g[:3, :3] @ g_target[:3, :3].T)
    return np.r_[rotation, g[:3, 3] - g_target[:3, 3]]


def rotate_twist(R, V):
    """``blkdiag(R, R) V``: a body twist or wrench in the axes of ``R``'s reference frame."""
    return np.concatenate((R @ V[:3], R @ V[3:]))


class PoseReference:
    """From pose ``g0`` at ``t0`` to ``g1``: ``p = p0 + s (p1 - p0)``, ``R = exp(s log(R1 R0^T)) R0`` with the
    quintic rest-to-rest ``s(t)``, its duration set by the speeds ``v_max`` (m/s) and ``w_max`` (rad/s)."""

    def __init__(self, t0, g0, g1, v_max, w_max):
        self.t0, self.g0, self.g1 = t0, g0.copy(), g1.copy()
        self.delta = pose_error(g1, g0)                       # [rotation vector; displacement], world axes
        peak = max(np.linalg.norm(self.delta[:3]) / w_max, np.linalg.norm(self.delta[3:]) / v_max)
        self.T = max(15 / 8 * peak, 1e-3)

    @property
    def end_time(self):
        return self.t0 + self.T

    def sample(self, t):
        """``(g_r, V_r, A_r)``: the reference pose, its world-aligned twist ``[omega; pdot]`` and that twist's
        derivative at ``t``."""
        x = min(max((t - self.t0) / self.T, 0.0), 1.0)
        s = x**3 * (10 - 15 * x + 6 * x**2)
        s_dot = 30 * x**2 * (1 - x)**2 / self.T
        s_ddot = 60 * x * (1 - x) * (1 - 2 * x) / self.T**2
        g = np.eye(4)
        g[:3, :3] = pin.exp3(s * self.delta[:3]) @ self.g0[:3, :3]
        g[:3, 3] = self.g0[:3, 3] + s * self.delta[3:]
        return g, s_dot * self.delta, s_ddot * self.delta


#: Default impedance ``[rotation (N m/rad); translation (N/m)]`` per world axis, damping ratio and posture gains
#: (N m/rad, N m s/rad, every joint): chosen by the analysis of the delayed loop (control/stability.py): on the
#: orbital robot's end-effector task, gain margin above 3 and phase margin above 45 deg with one control period
#: of loop delay, above 2 and 30 deg with a DDS loop's 3 ms more (docs/results/stability.md).  About the flange's axis
#: the end effector's rotational task inertia is the hand's alone: a stiffer rotation runs out of phase.
DEFAULT_STIFFNESS = (30.0, 30.0, 30.0, 2000.0, 2000.0, 2000.0)
DEFAULT_DAMPING_RATIO = 0.7
DEFAULT_NULLSPACE_STIFFNESS = 5.0
DEFAULT_NULLSPACE_DAMPING = 1.0


#: The pose error fed to the stiffness is clipped to these norms (rad, m): a jump of the base pose estimate
#: or a far reference then gives a bounded wrench, as Cartesian impedance controllers of arms do.
MAX_ERROR = (0.2, 0.05)


def clipped(error, max_error=MAX_ERROR):
    """The rotation and position parts of ``error`` scaled down to the norms ``max_error``."""
    out = error.copy()
    for part, limit in zip((slice(0, 3), slice(3, 6)), max_error):
        norm = np.linalg.norm(out[part])
        if norm > limit:
            out[part] *= limit / norm
    return out


def world_inertia(R_e, Lambda_x):
    """``Lambda_w = blkdiag(R_e, R_e) Lambda_x blkdiag(R_e, R_e)^T``: the task inertia in the world axes."""
    B = np.zeros((6, 6))
    B[:3, :3] = B[3:, 3:] = R_e
    return B @ Lambda_x @ B.T


def damping_matrix(gains, Lambda_w):
    """``D_x``: per axis, or ``zeta (Lambda_w^1/2 K_x^1/2 + K_x^1/2 Lambda_w^1/2)`` (module doc)."""
    if gains.damping_ratio is None:
        return np.diag(gains.damping)
    w, V = np.linalg.eigh(Lambda_w)
    L_half = (V * np.sqrt(np.maximum(w, 0.0))) @ V.T
    K_half = np.sqrt(gains.stiffness)
    return gains.damping_ratio * (L_half * K_half + K_half[:, None] * L_half)


def impedance_torque(J_star, drift, R_e, error, V_r, qdot, Lambda_q, q, q_null, gains, acceleration=None,
                     cc=None):
    """``tau_c`` of the module doc from the generalized Jacobian, the drift twist ``Ad_1e^-1 mu``
    (body), the world rotation ``R_e`` of {e}, the pose error and the reference twist ``V_r``;
    ``acceleration = A_e - b_e`` and ``cc = c`` give the feedforward ``F_ff`` (``None``: none)."""
    V_w = rotate_twist(R_e, drift + J_star @ qdot)
    Li_JT = np.linalg.solve(Lambda_q, J_star.T)
    Lambda_x = np.linalg.inv(J_star @ Li_JT)
    J_sharp_T = Lambda_x @ Li_JT.T                                         # J*#^T
    D = damping_matrix(gains, world_inertia(R_e, Lambda_x))
    F_e = rotate_twist(R_e.T, -gains.stiffness * clipped(error) - D @ (V_w - V_r))
    if acceleration is not None:
        F_e += Lambda_x @ acceleration
    if cc is not None:
        F_e += J_sharp_T @ cc
    posture = -gains.nullspace_stiffness * (q - q_null) - gains.nullspace_damping * qdot
    return J_star.T @ F_e + posture - J_star.T @ (J_sharp_T @ posture)


#: The reachability check steps along the reference at most this far (m) and this much rotation (rad) a step,
#: in at least :data:`REACH_MIN_STEPS`, and no joint moves more than :data:`REACH_SHAPE_STEP` (rad) in a step.
REACH_STEP = (0.02, 0.04)
REACH_MIN_STEPS = 10
REACH_SHAPE_STEP = 0.04


def _chain_length(pm, joint):
    """Upper bound of the distance from the base's origin to ``joint``'s: the lengths between successive
    joints of its chain, plus each prismatic joint's largest travel."""
    length = 0.0
    for j in pm.supports[joint][2:]:                     # not the universe, not the base's free-flyer
        length += np.linalg.norm(pm.jointPlacements[j].translation)
        if pm.joints[j].shortname().startswith("JointModelP"):
            i = pm.joints[j].idx_q
            length += max(abs(pm.lowerPositionLimit[i]), abs(pm.upperPositionLimit[i]))
    return length


def end_effector_range(model, fid):
    """``R``: the frame ``fid`` is never further than ``R`` from the system's centre of mass, whatever the
    shape: ``|p_e - c| <= sum_k m_k / m |p_e - c_k|`` and ``|p_e - c_k| <= |p_e - o_1| + |o_1 - c_k|``, each
    bounded by the lengths of its chain from the base's origin ``o_1``."""
    pm = model.pin_model
    frame = pm.frames[fid]
    to_frame = _chain_length(pm, frame.parentJoint) + np.linalg.norm(frame.placement.translation)
    bodies = sum(Y.mass * (_chain_length(pm, k) + np.linalg.norm(Y.lever)) for k, Y in enumerate(pm.inertias))
    return float(to_frame + bodies / model.mass)


def check_reachable(model, frame, q, g1, h, target, v_max, w_max):
    """``InputError`` with the reason if the end effector cannot be brought to ``target`` (world pose) along
    the :class:`PoseReference` the task would follow from its pose now, within the joint position and
    velocity limits, by any controller, with the shape ``q``, the base at ``g1`` and the spatial momentum
    ``h`` (world axes, conserved):

    * out of reach: when the reference arrives, the system's centre of mass (moving at ``p / m``) is further
      from the target than :func:`end_effector_range`;
    * else the shape that keeps {e} on the reference moves at :func:`shape_velocity_for` (the minimum-norm
      one; a 7-joint arm has one more degree of freedom, which a controller's posture term uses
      differently), integrated (Euler, steps of :data:`REACH_STEP` and :data:`REACH_SHAPE_STEP`) until the
      reference arrives: a joint beyond its position or velocity limit refuses the target (the boundary of
      the workspace is a singularity, where that velocity exceeds any limit)."""
    ws, fid = FrameWorkspace(model), frame_id(model, frame)
    target = check.pose("target pose", target)
    q = check.vector("q", q, model.n).copy()
    g_e = g1 @ frame_kinematics(ws, fid, q)[0]
    reference = PoseReference(0.0, g_e, target, v_max, w_max)
    com = g1[:3, :3] @ com_from_locked_inertia(model.kinematics(q).M_b) + g1[:3, 3] + h[3:] / model.mass * reference.T
    away, reach = np.linalg.norm(target[:3, 3] - com), end_effector_range(model, fid)
    if away > reach:
        raise InputError(f"outside the reachable workspace: {away:.2f} m from the system's centre of mass when "
                         f"the reference would arrive ({reference.T:.1f} s), and the end effector is never more "
                         f"than {reach:.2f} m from it")
    distance, angle = np.linalg.norm(reference.delta[3:]), np.linalg.norm(reference.delta[:3])
    dt_path = reference.T / max(REACH_MIN_STEPS, np.ceil(distance / REACH_STEP[0]), np.ceil(angle / REACH_STEP[1]))
    lo, hi = model.position_limits.T
    t = 0.0
    while True:
        g_r, V_w, _ = reference.sample(t)
        qdot, s, _ = shape_velocity_for(model, ws, fid, q, g_r, rotate_twist(g_r[:3, :3].T, V_w), h)
        over, outside = np.abs(qdot) / model.velocity_limits, (q < lo) | (q > hi)
        if over.max() > 1 or outside.any():
            j = int(np.argmax(outside)) if outside.any() else int(np.argmax(over))
            what = (f"pass its position limits ({q[j]:.3f} not in [{lo[j]:.4f}, {hi[j]:.4f}])" if outside.any()
                    else f"move at {abs(qdot[j]):.2f} rad/s (limit {model.velocity_limits[j]:g})")
            raise InputError(f"cannot be reached within the joint limits: {model.joint_names[j]} would {what} "
                             f"{t:.2f} s into the {reference.T:.2f} s approach, "
                             f"{np.linalg.norm(g_r[:3, 3] - g_e[:3, 3]):.3f} m along the {distance:.3f} m to it "
                             f"(smallest singular value of J* there: {s[-1]:.3g})")
        if t >= reference.T:
            return
        dt = min(dt_path, REACH_SHAPE_STEP / max(np.abs(qdot).max(), 1e-9), reference.T - t)
        q += dt * qdot
        t += dt


class EndEffectorTask:
    """Drive ``frame`` to a world target pose with :class:`CartesianGains` and posture ``q_null``, along a
    :class:`PoseReference` at most ``v_max`` m/s and ``w_max`` rad/s fast; until the first target
    (:meth:`command`) the pose of the first tick is held.  :meth:`torque` is the ``tau_c`` of
    :class:`OrbitalController` (it needs the observer's base pose)."""

    name = "end_effector"

    def __init__(self, model, frame, gains, q_null, v_max=0.1, w_max=0.2, feedforward=True):
        self.fid = frame_id(model, frame)
        self.frame = frame
        self.gains = gains
        self.q_null = check.vector("q_null", q_null, model.n)
        self.v_max, self.w_max = v_max, w_max
        self.feedforward = feedforward     #: the task-space feedforward F_ff (module doc)
        self.ws = FrameWorkspace(model)
        self.reference = None              #: :class:`PoseReference` followed (from the first tick with a pose)
        self.pending = None                #: ``(start_time, target)`` not started yet
        self.error = np.zeros(6)           #: estimated pose error ``e_w`` to the reference at the last tick

    @property
    def target(self):
        """The world pose the reference ends at (``None`` while a command is pending or before the first
        tick with a base pose)."""
        return None if self.pending or self.reference is None else self.reference.g1

    def command(self, target, start_time=-np.inf, relative=False):
        """Move to ``target`` (4x4 world pose) from ``start_time`` on, from where the reference is then;
        ``relative``: ``target = [R_d, p_d]`` is a displacement in the world axes, applied there
        (``[R_d R_r, p_r + p_d]``)."""
        self.pending = (float(start_time), check.pose("target pose", target), relative)

    def _reference_at(self, t, g_e):
        if self.reference is None:
            self.reference = PoseReference(t, g_e, g_e, self.v_max, self.w_max)
        if self.pending is not None and t >= self.pending[0]:
            start, (_, target, relative) = self.reference.sample(t)[0], self.pending
            if relative:
                target = displaced(start, target)
            self.reference = PoseReference(t, start, target, self.v_max, self.w_max)
            self.pending = None
        return self.reference.sample(t)

    def torque(self, t, q, qdot, terms, mu, compensation, g_hat=None):
        if g_hat is None:       # no base pose yet: no world target either, only damp the joints
            return -self.gains.nullspace_damping * qdot
        g_1e, J_e = frame_kinematics(self.ws, self.fid, q)
        J_star, Ad_e1 = generalized_jacobian(g_1e, J_e, terms.A_l)
        g_e = g_hat @ g_1e
        g_r, V_r, A_r = self._reference_at(t, g_e)
        self.error = pose_error(g_e, g_r)
        drift = Ad_e1 @ mu
        acceleration = cc = None
        if self.feedforward:
            acceleration, cc = self._feedforward(q, qdot, terms, mu, compensation, g_e[:3, :3],
                                                 drift + J_star @ qdot, A_r)
        return impedance_torque(J_star, drift, g_e[:3, :3], self.error, V_r, qdot, terms.Lambda_q, q,
                                self.q_null, self.gains, acceleration, cc)

    def _feedforward(self, q, qdot, terms, mu, compensation, R_e, V_e, A_r):
        """``(A_e - b_e, c)`` of the module doc, with the momentum terms unless the ``compensation`` law leaves
        them all (``none``)."""
        cc = terms.shape_qdot_qdot.copy()
        if not compensation.cancels_mu_mu:
            mu, mu_dot = np.zeros(6), np.zeros(6)
        else:
            mu_dot = locked_acceleration(terms)
            if not compensation.cancels_mu_qdot:           # tau_hat_1 contains B~(mu) qdot already
                cc += terms.shape_mu_qdot
        b_e = drift_acceleration(self.ws, self.fid, q, qdot, mu, mu_dot)
        return body_acceleration(R_e, A_r, V_e) - b_e, cc
