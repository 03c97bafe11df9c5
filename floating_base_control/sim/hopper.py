"""MuJoCo plant of the [Feurstein2021] hoppers (Feurstein 2021, ch. 4).

Built from the same URDF as the controller's Pinocchio model (``sim/plant.py``), plus:

* the thesis' viscoelastic point-foot floor (eqs. 4.13-4.14, ``K = 10000`` N/m,
  ``D = 1000`` N s/m) as three force actuators at the foot site, computed by
  MuJoCo from its own state each step, or MuJoCo's own contact (``floor="mujoco"``);
* an explicit base-torque actuator about the plane normal (the external torque
  the thesis' polar spring needs);
* the sensors a controller reads: base pose and body twist at a base site
  (odometry), joint encoders, and the normal force at the foot.

**Plane.** By default (``base="planar"``) MuJoCo's base moves on a planar joint
(slides along world x and z, a hinge about -y), so the motion is planar exactly; the
controller's model is still the 3D free-flyer and reads 6-D odometry.  With
``base="free"`` the base has MuJoCo's free joint and only symmetry keeps the motion in
the plane: that holds while hopping, but a point-foot monopod standing still is a
lateral inverted pendulum (e-folding time ``sqrt(h/g)``, about 0.1 s) that nothing
stabilises, so it falls sideways from round-off within seconds (docs/explanation/hopper.md).

**Floor.** The thesis prints ``F^y = max(K o^y - D odot^y, 0)``, which pulls a foot that
penetrates; the sign is fixed here so that the floor pushes out of the ground:
``F_z = max(-K z - D zdot, 0)`` and, horizontally, ``F_h = -K (p_h - a_h) - D pdot_h``,
active while the foot is at or below ``z = 0``.  The horizontal anchor ``a`` (not stated
in the thesis) is the point where the foot crossed ``z = 0``.  The floor's damper is
integrated implicitly by MuJoCo (``implicitfast``): the actuators' force is affine in
the foot velocity and MuJoCo includes that derivative in its implicit step (a
clamped ``F_z = 0`` is excluded), so the stiff impact (time constant ``m_eff / D``,
about 0.05 ms) is stable at a 0.1 ms step.  The touchdown is then resolved within one
or two steps: the limit of the stiff floor.

**Energy.** With ``M(v_{k+1} - v_k) = h f_eff`` (MuJoCo's Euler/implicitfast step, ``f_eff``
the forces held over the step, implicit damper included), the kinetic energy at fixed
``M`` changes by exactly ``h f_eff . (v_k + v_{k+1}) / 2``: each source's work is counted
that way (:class:`StepWork`, :func:`step_work`), so the bookkeeping closes up to the integrator's
position-update error.

**Cost.** A step is MuJoCo's two stages and, around them, a few calls that take MuJoCo's arrays as
they are: the sensors and the work are compiled kernels (``compiled.py``) that add up with numpy's
BLAS as the numpy expressions did; the foot's Jacobian is computed only while the floor acts.

One coherent module: the hopper's MuJoCo plant, its floor, base actuator and sensors, built
into one MuJoCo model; the step's kernels read that model's arrays.
"""
import math
from dataclasses import dataclass

import mujoco
import numpy as np

from floating_base_control.compiled import B, C1, C2, F, I, R1, RI1, W1, W2, kernel
from floating_base_control.sim.plant import MujocoPlant, build_spec
from floating_base_control.validation import InputError
from floating_base_control.robots.hopper.model import PLANE_NORMAL, HopperMeasurements, base_pitch, planar_pose

FLOORS = ("viscoelastic", "mujoco")
BASES = ("planar", "free")

#: Thesis Tables 4.6 and 4.11 (both hoppers, x and y): N/m and N s/m.
FLOOR_K = 10000.0
FLOOR_D = 1000.0
#: MuJoCo contact option: foot sphere radius (m) and soft-contact reference (time constant s, damping ratio).
FOOT_RADIUS = 0.005
CONTACT_SOLREF = (0.005, 1.0)


@dataclass
class StepWork:
    """Work done on the robot during one step by each source (J); see the module doc."""

    joint: float        #: all joint torques
    damping: float      #: the radial damper's share of ``joint``
    base: float         #: the base-torque actuator
    floor: float        #: the floor (actuators or MuJoCo contact)


class PlanarMujocoPlant(MujocoPlant):
    """:class:`MujocoPlant` whose base moves on a planar joint: ``qpos[:3] = (x, z, theta)``,
    slides along world x and z and a hinge about -y (the thesis' angle ``theta_ib``)."""

    def set_state(self, g1, q, V1, qdot):
        R, p = g1[:3, :3], g1[:3, 3]
        if abs(p[1]) > 1e-12 or abs(R[1, 1] - 1.0) > 1e-12:
            raise InputError("the planar plant needs a base pose in the x-z plane, rotated about y")
        v = R @ V1[3:]
        self.data.qpos[:3] = p[0], p[2], base_pitch(R)
        self.data.qvel[:3] = v[0], v[2], PLANE_NORMAL @ V1[:3]
        self.data.qpos[self.qpos_idx] = q
        self.data.qvel[self.qvel_idx] = qdot
        mujoco.mj_forward(self.model, self.data)

    def base_pose(self):
        x, z, theta = self.data.qpos[:3]
        return planar_pose(x, z, theta)

    def state(self):
        d = self.data
        g1 = self.base_pose()
        V1 = np.concatenate([PLANE_NORMAL * d.qvel[2], g1[:3, :3].T @ [d.qvel[0], 0.0, d.qvel[1]]])
        q, qdot = self.joint_state()
        return g1, q, V1, qdot


class HopperPlant:
    """A hopper simulated by MuJoCo, addressed in the package's conventions.

    Loop per step: :meth:`sense` (MuJoCo's position/velocity stage and the sensors at the
    current state), the controller, then :meth:`step` (floor, actuators, integration).
    """

    def __init__(self, model, urdf_path, floor="viscoelastic", base="planar", timestep=1e-4,
                 floor_K=FLOOR_K, floor_D=FLOOR_D):
        if floor not in FLOORS:
            raise InputError(f"floor must be one of {FLOORS}, got {floor!r}")
        if base not in BASES:
            raise InputError(f"base must be one of {BASES}, got {base!r}")
        if not (np.isfinite([floor_K, floor_D]).all() and floor_K > 0.0 and floor_D >= 0.0):
            raise InputError(f"the floor needs a finite stiffness floor_K > 0 and damping floor_D >= 0, "
                             f"got floor_K = {floor_K}, floor_D = {floor_D}")
        self.floor_kind, self.base_kind, self.K, self.D = floor, base, float(floor_K), float(floor_D)
        spec = build_spec(urdf_path, model.joint_names, model.effort_limits, model.gravity,
                          timestep, "implicitfast", contacts=floor == "mujoco")
        spec.option.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
        if base == "planar":
            _planar_base(spec)
        _add_hopper_elements(spec, model.joint_names, floor, self.K, self.D)
        kind = PlanarMujocoPlant if base == "planar" else MujocoPlant
        self.plant = kind(spec.compile(), model.joint_names)
        self.model, self.data = self.plant.model, self.plant.data
        m = self.model
        self.foot_site = m.site("foot").id
        self.base_site = m.site("base_imu").id
        self.floor_act = np.array([m.actuator(f"floor_{a}").id for a in "xyz"]) if floor == "viscoelastic" else None
        self.base_act = m.actuator("base_torque").id
        self.in_contact = False
        self._jac = np.zeros((3, m.nv))          # the foot's translation Jacobian, while the floor acts
        self._jac_base = np.zeros((3, m.nv))     # the base's rotation Jacobian
        self._v0 = np.zeros(m.nv)                # the velocities at the start of a step
        self._no_damping = np.zeros(model.n)
        self._joint_dofs = self.plant.qvel_idx.astype(np.int64)
        self._motors = self.plant.act_idx.astype(np.int64)
        adr = {m.sensor(i).name: int(m.sensor_adr[i]) for i in range(m.nsensor)}
        self.joint_names = model.joint_names
        # sensordata addresses: odometry (framepos, gyro, velocimeter), encoders, framequat, foot force
        self._odometry_adr = np.array([adr["base_pos"], adr["base_gyro"], adr["base_velocimeter"]])
        self._q_adr = np.array([adr[f"q_{n}"] for n in self.joint_names])
        self._qd_adr = np.array([adr[f"qd_{n}"] for n in self.joint_names])
        self._quat_adr, self._force_adr = adr["base_quat"], adr["foot_force"]
        self._quat = np.zeros(4)                 # the odometry's orientation, normalized
        self._R = np.zeros(9)                    # ... as a rotation, row-major
        self._h = m.opt.timestep
        self._n = model.n
        # MuJoCo's arrays and rows that a step reads (views made once: MuJoCo updates them in place, and each
        # attribute access of MjData makes a new view)
        d, root = self.data, self.plant.root
        self._qvel, self._ctrl, self._sensordata = d.qvel, d.ctrl, d.sensordata
        self._base_ctrl = d.ctrl[self.base_act:self.base_act + 1]
        self._foot_xpos, self._base_xmat = d.site_xpos[self.foot_site], d.site_xmat[self.base_site]
        self._centroid = d.subtree_com[root], d.subtree_linvel[root], d.subtree_angmom[root]
        self._floor_force = d.actuator_force[self.floor_act[0]:self.floor_act[0] + 3] if floor == "viscoelastic" \
            else np.zeros(3)

    @property
    def time(self):
        return self.data.time

    @property
    def timestep(self):
        return self._h

    def set_state(self, g1, q, V1, qdot):
        """Place the robot; the floor is released (no contact)."""
        self.plant.set_state(g1, q, V1, qdot)
        self.in_contact = False
        if self.floor_act is not None:
            self.data.ctrl[self.floor_act] = 0.0
        mujoco.mj_forward(self.model, self.data)

    def sense(self):
        """Run MuJoCo's position/velocity stage at the current state and read the sensors."""
        d, s, n = self.data, self._sensordata, self._n
        mujoco.mj_step1(self.model, d)
        unit_quaternion(s, self._quat_adr, self._quat)
        mujoco.mju_quat2Mat(self._R, self._quat)
        g1, V1, q, qdot = np.empty((4, 4)), np.empty(6), np.empty(n), np.empty(n)
        odometry_and_encoders(s, self._R, self._odometry_adr, self._q_adr, self._qd_adr, g1, V1, q, qdot)
        # acceleration-stage sensor: the force of the previous step (one step of latency)
        return HopperMeasurements(d.time, q, qdot, g1, V1, float(s[self._force_adr]))

    def step(self, tau, base_torque, tau_damping=None):
        """Apply joint torques and the base torque (about the plane normal) for one step;
        returns the :class:`StepWork` of the step.  Call :meth:`sense` first."""
        m, d, h = self.model, self.data, self._h
        mujoco.mj_jacSite(m, d, None, self._jac_base, self.base_site)
        tau = np.ascontiguousarray(tau, dtype=float)
        self._actuate(tau, base_torque)
        on_floor = self.floor_act is not None and self.in_contact
        if on_floor:
            mujoco.mj_jacSite(m, d, self._jac, None, self.foot_site)
        mujoco.mj_step2(m, d)
        v0, v1 = self._v0, self._qvel
        damping = self._no_damping if tau_damping is None else np.ascontiguousarray(tau_damping, dtype=float)
        work = step_work(v0, v1, self._joint_dofs, tau, damping, self._base_ctrl[0], self._jac_base,
                         self._base_xmat, h, on_floor, self._jac, self._floor_force, self.D)
        if self.floor_act is None:          # MuJoCo's contact: the constraint force's work
            return StepWork(*work[:3], float(d.qfrc_constraint @ (0.5 * (v0 + v1))) * h)
        return StepWork(*work)

    def advance(self, tau, base_torque):
        """One step with these torques, without sensors or energy bookkeeping (for a real-time
        simulator node); the floor is the same as in :meth:`step`."""
        m, d = self.model, self.data
        mujoco.mj_step1(m, d)
        self._actuate(np.asarray(tau, dtype=float), base_torque)
        mujoco.mj_step2(m, d)

    def _actuate(self, tau, base_torque):
        """The controls of a step at the current state (the floor's, then the motors' ``tau``, a float array,
        and the base actuator's), and the velocities the step starts from."""
        if self.floor_act is not None:
            self._update_floor()
        start_step(self._qvel, self._v0, self._ctrl, self._motors, tau, self.base_act, float(base_torque))

    def _update_floor(self):
        """Switch the floor on while the foot is at or below z = 0; anchor it where the foot
        crossed the surface (eqs. 4.13-4.14 with the sign fixed)."""
        foot = self._foot_xpos
        contact = bool(foot[2] <= 0.0)
        if contact == self.in_contact:
            return
        if contact:
            # the foot crossed z = 0 during the last step: at most one step back
            m, d = self.model, self.data
            mujoco.mj_jacSite(m, d, self._jac, None, self.foot_site)
            foot_vel = self._jac @ d.qvel
            back = min(foot[2] / foot_vel[2], self.timestep) if foot_vel[2] < 0.0 else 0.0
            anchor = foot - foot_vel * back
            # F = ctrl (K a - K p - D pdot): the anchor enters as the constant gain term
            m.actuator_gainprm[self.floor_act[:2], 0] = self.K * anchor[:2]
        self.in_contact = contact
        self.data.ctrl[self.floor_act] = 1.0 if contact else 0.0

    # -- ground truth, for evaluation and logs only ---------------------------------------------

    def state(self):
        """Ground truth ``(g1, q, V1, qdot)``."""
        return self.plant.state()

    def base_pose_and_shape(self):
        """Ground truth ``(g1, q, qdot)`` (:meth:`state` without the twist)."""
        return (self.plant.base_pose(), *self.plant.joint_state())

    def energy(self):
        """MuJoCo's mechanical energy (kinetic + gravity potential) at the last :meth:`sense`, J."""
        kinetic, gravity = self.energies()
        return kinetic + gravity

    def energies(self):
        """``(kinetic, gravity potential)`` at the last :meth:`sense`, J."""
        return float(self.data.energy[1]), float(self.data.energy[0])

    def com_and_momentum(self, copy=True):
        """World CoM, CoM velocity, and the angular momentum about the CoM (world axes), from
        MuJoCo's subtree quantities at the last :meth:`sense`; ``copy=False``: MuJoCo's own rows,
        which the next step changes."""
        mujoco.mj_subtreeVel(self.model, self.data)
        return tuple(row.copy() for row in self._centroid) if copy else self._centroid

    @property
    def mass(self):
        return self.plant.mass

    def foot_position(self, copy=True):
        """World position of the foot at the last :meth:`sense` (``copy=False``: MuJoCo's own row)."""
        return self._foot_xpos.copy() if copy else self._foot_xpos

    def foot_velocity(self):
        """World velocity of the foot at the last :meth:`sense`."""
        res = np.zeros(6)
        mujoco.mj_objectVelocity(self.model, self.data, mujoco.mjtObj.mjOBJ_SITE, self.foot_site, res, 0)
        return res[3:]

    def floor_force(self):
        """Ground-truth world force of the floor on the foot during the last step, N."""
        d = self.data
        if self.floor_act is not None:
            return self._floor_force.copy() if self.in_contact else np.zeros(3)
        f = np.zeros(3)
        for i in range(d.ncon):
            c6 = np.zeros(6)
            mujoco.mj_contactForce(self.model, d, i, c6)
            f += d.contact[i].frame.reshape(3, 3).T @ c6[:3]
        return f

    def touching(self):
        """Ground truth at the last :meth:`sense`: is the foot on the floor?"""
        if self.floor_act is not None:
            return bool(self._foot_xpos[2] <= 0.0)
        return self.data.ncon > 0


# -- kernels of a step: MuJoCo's arrays in, numpy's arithmetic (np.dot: its BLAS, on contiguous arrays) ---------

@kernel(C1, I, W1)
def unit_quaternion(s, adr, quat):
    """The quaternion at ``s[adr:adr + 4]`` (framequat) divided by its norm, into ``quat`` (``np.linalg.norm``'s
    arithmetic: the square root of numpy's dot product)."""
    q = s[adr:adr + 4]
    norm = math.sqrt(np.dot(q, q))
    for i in range(4):
        quat[i] = q[i] / norm


@kernel(R1, R1, RI1, RI1, RI1, W2, W1, W1, W1)
def odometry_and_encoders(s, R, odometry, q_adr, qd_adr, g1, V1, q, qdot):
    """The measurements in ``sensordata`` ``s``: ``g1 = [[R, p], [0, 1]]`` with the rotation ``R``
    (row-major) and ``p`` at ``odometry[0]`` (framepos), ``V1 = [gyro; velocimeter]`` at ``odometry[1:]``,
    ``q`` and ``qdot`` at the encoders' addresses."""
    for i in range(3):
        for j in range(3):
            g1[i, j] = R[3 * i + j]
        g1[i, 3] = s[odometry[0] + i]
        g1[3, i] = 0.0
        V1[i] = s[odometry[1] + i]
        V1[3 + i] = s[odometry[2] + i]
    g1[3, 3] = 1.0
    for i in range(len(q_adr)):
        q[i] = s[q_adr[i]]
        qdot[i] = s[qd_adr[i]]


_NORMAL = np.ascontiguousarray(PLANE_NORMAL)


@kernel(R1, W1, W1, RI1, R1, I, F)
def start_step(qvel, v0, ctrl, motors, tau, base_actuator, base_torque):
    """The velocities ``v0`` a step starts from (``qvel``), and its controls: ``tau`` of the motors (actuator
    ids ``motors``) and the base torque."""
    v0[:] = qvel
    for i in range(len(motors)):
        ctrl[motors[i]] = tau[i]
    ctrl[base_actuator] = base_torque


@kernel(C1, C1, RI1, C1, C1, F, C2, C1, F, B, C2, C1, F)
def step_work(v0, v1, joints, tau, tau_damping, base_torque, J_base, base_xmat, h, on_floor, J_foot, floor_force, D):
    """``(joint, damping, base, floor)``: the work over one step, ``h f . (v0 + v1) / 2`` (module doc), of the
    joint torques ``tau``, of their share ``tau_damping``, of the base torque and of the viscoelastic floor
    (zero unless ``on_floor``), J.

    ``joints``: the joints' velocity addresses; ``J_base``: the base's rotation Jacobian, ``base_xmat`` its
    orientation (the base torque acts about its plane normal).  The floor's force ``floor_force`` (the
    actuators') is held over the step and the implicit step adds the damper ``-D (u1 - u0)`` on the foot
    velocity ``u = J_foot v`` (a clamped ``F_z = 0`` is not in the implicit step); its work is taken at the
    mean foot velocity.
    """
    qd_mid = np.empty(len(joints))
    for i in range(len(joints)):
        qd_mid[i] = 0.5 * (v0[joints[i]] + v1[joints[i]])
    omega_mid = np.dot(np.dot(base_xmat.reshape((3, 3)), _NORMAL), np.dot(J_base, 0.5 * (v0 + v1)))
    floor = 0.0
    if on_floor:
        u0, u1 = np.dot(J_foot, v0), np.dot(J_foot, v1)
        effective = np.empty(3)
        for i in range(3):
            effective[i] = floor_force[i] - D * (u1[i] - u0[i]) if i < 2 or floor_force[2] > 0.0 else 0.0
        floor = np.dot(effective, 0.5 * (u0 + u1)) * h
    return np.dot(tau, qd_mid) * h, np.dot(tau_damping, qd_mid) * h, base_torque * omega_mid * h, floor


def _planar_base(spec):
    """Replace the free joint of ``build_spec`` by a planar joint (slide x, slide z, hinge -y)."""
    spec.delete(spec.joint("base_free_joint"))
    base = spec.body("base_link")
    for name, kind, axis in (("base_x", mujoco.mjtJoint.mjJNT_SLIDE, [1, 0, 0]),
                             ("base_z", mujoco.mjtJoint.mjJNT_SLIDE, [0, 0, 1]),
                             ("base_pitch", mujoco.mjtJoint.mjJNT_HINGE, PLANE_NORMAL)):
        base.add_joint(name=name, type=kind, axis=axis)


def _add_hopper_elements(spec, joint_names, floor, K, D):
    """Sites, floor, base-torque actuator and sensors of the hopper plant."""
    foot = spec.body("foot")
    base = spec.body("base_link")
    foot.add_site(name="foot", size=[1.5 * FOOT_RADIUS, 0, 0])
    base.add_site(name="base_imu")
    spec.worldbody.add_site(name="world_origin")
    for name in joint_names:
        # MuJoCo's URDF import clamps the *total* actuator force on a joint to the URDF effort;
        # the floor actuators act on the joints too, so only the motors' ctrlrange may limit
        spec.joint(name).actfrclimited = mujoco.mjtLimited.mjLIMITED_FALSE
        spec.add_sensor(name=f"q_{name}", type=mujoco.mjtSensor.mjSENS_JOINTPOS, objname=name,
                        objtype=mujoco.mjtObj.mjOBJ_JOINT)
        spec.add_sensor(name=f"qd_{name}", type=mujoco.mjtSensor.mjSENS_JOINTVEL, objname=name,
                        objtype=mujoco.mjtObj.mjOBJ_JOINT)
    for name, kind in (("base_pos", mujoco.mjtSensor.mjSENS_FRAMEPOS),
                       ("base_quat", mujoco.mjtSensor.mjSENS_FRAMEQUAT),
                       ("base_gyro", mujoco.mjtSensor.mjSENS_GYRO),
                       ("base_velocimeter", mujoco.mjtSensor.mjSENS_VELOCIMETER)):
        spec.add_sensor(name=name, type=kind, objname="base_imu", objtype=mujoco.mjtObj.mjOBJ_SITE)
    act = spec.add_actuator(name="base_torque", trntype=mujoco.mjtTrn.mjTRN_SITE, target="base_imu")
    act.gear = np.concatenate([np.zeros(3), PLANE_NORMAL])
    if floor == "viscoelastic":
        for axis, gear in zip("xyz", np.eye(3)):
            act = spec.add_actuator(name=f"floor_{axis}", trntype=mujoco.mjtTrn.mjTRN_SITE,
                                    target="foot", refsite="world_origin")
            act.gear = np.concatenate([gear, np.zeros(3)])
            act.gaintype = mujoco.mjtGain.mjGAIN_AFFINE
            act.gainprm[:3] = [0.0, -K, -D]
            act.biastype = mujoco.mjtBias.mjBIAS_NONE
            act.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
            act.ctrlrange = [0.0, 1.0]
            if axis == "z":
                act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
                act.forcerange = [0.0, 1e12]
        spec.add_sensor(name="foot_force", type=mujoco.mjtSensor.mjSENS_ACTUATORFRC,
                        objname="floor_z", objtype=mujoco.mjtObj.mjOBJ_ACTUATOR)
    else:
        spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1],
                                pos=[0, 0, -FOOT_RADIUS], solref=list(CONTACT_SOLREF))
        foot.add_geom(name="foot", type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[FOOT_RADIUS, 0, 0],
                      mass=0.0, solref=list(CONTACT_SOLREF))
        spec.add_sensor(name="foot_force", type=mujoco.mjtSensor.mjSENS_TOUCH, objname="foot",
                        objtype=mujoco.mjtObj.mjOBJ_SITE)
