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
stabilises, so it falls sideways from round-off within seconds (docs/HOPPER.md).

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
that way (:class:`StepWork`), so the bookkeeping closes up to the integrator's
position-update error.
"""
from dataclasses import dataclass

import mujoco
import numpy as np

from floating_base_control.conventions import pose
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

    def state(self):
        d = self.data
        x, z, theta = d.qpos[:3]
        g1 = planar_pose(x, z, theta)
        V1 = np.concatenate([PLANE_NORMAL * d.qvel[2], g1[:3, :3].T @ [d.qvel[0], 0.0, d.qvel[1]]])
        return g1, d.qpos[self.qpos_idx].copy(), V1, d.qvel[self.qvel_idx].copy()


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
        self._jac = np.zeros((3, m.nv))
        self._jac_base = np.zeros((3, m.nv))
        self._sensor = {m.sensor(i).name: slice(m.sensor_adr[i], m.sensor_adr[i] + m.sensor_dim[i])
                        for i in range(m.nsensor)}
        self.joint_names = model.joint_names
        # sensordata addresses of the encoders, and the odometry's rotation buffer
        self._q_adr = np.array([self._sensor[f"q_{n}"].start for n in self.joint_names])
        self._qd_adr = np.array([self._sensor[f"qd_{n}"].start for n in self.joint_names])
        self._R = np.zeros(9)
        self._h = m.opt.timestep

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
        mujoco.mj_step1(self.model, self.data)
        s, sensor = self.data.sensordata, self._sensor
        quat = s[sensor["base_quat"]]
        mujoco.mju_quat2Mat(self._R, quat / np.linalg.norm(quat))
        g1 = pose(self._R.reshape(3, 3), s[sensor["base_pos"]])
        q, qdot = s[self._q_adr], s[self._qd_adr]
        V1 = np.concatenate([s[self._sensor["base_gyro"]], s[self._sensor["base_velocimeter"]]])
        # acceleration-stage sensor: the force of the previous step (one step of latency)
        force = float(s[self._sensor["foot_force"]][0])
        return HopperMeasurements(t=self.data.time, q=q, qdot=qdot, g1=g1, V1=V1, foot_force=force)

    def step(self, tau, base_torque, tau_damping=None):
        """Apply joint torques and the base torque (about the plane normal) for one step;
        returns the :class:`StepWork` of the step.  Call :meth:`sense` first."""
        m, d = self.model, self.data
        mujoco.mj_jacSite(m, d, self._jac, None, self.foot_site)
        mujoco.mj_jacSite(m, d, None, self._jac_base, self.base_site)
        self._base_axis = d.site_xmat[self.base_site].reshape(3, 3) @ PLANE_NORMAL
        v0 = d.qvel.copy()
        if self.floor_act is not None:
            self._update_floor(d.site_xpos[self.foot_site], self._jac @ v0)
        d.ctrl[self.plant.act_idx] = tau
        d.ctrl[self.base_act] = base_torque
        mujoco.mj_step2(m, d)
        return self._work(v0, d.qvel, np.asarray(tau, float),
                          np.zeros(len(tau)) if tau_damping is None else np.asarray(tau_damping, float))

    def advance(self, tau, base_torque):
        """One step with these torques, without sensors or energy bookkeeping (for a real-time
        simulator node); the floor is the same as in :meth:`step`."""
        m, d = self.model, self.data
        mujoco.mj_step1(m, d)
        if self.floor_act is not None:
            mujoco.mj_jacSite(m, d, self._jac, None, self.foot_site)
            self._update_floor(d.site_xpos[self.foot_site], self._jac @ d.qvel)
        d.ctrl[self.plant.act_idx] = tau
        d.ctrl[self.base_act] = base_torque
        mujoco.mj_step2(m, d)

    def _update_floor(self, foot, foot_vel):
        """Switch the floor on while the foot is at or below z = 0; anchor it where the foot
        crossed the surface (eqs. 4.13-4.14 with the sign fixed)."""
        m, d = self.model, self.data
        contact = foot[2] <= 0.0
        if contact and not self.in_contact:
            # the foot crossed z = 0 during the last step: at most one step back
            back = min(foot[2] / foot_vel[2], self.timestep) if foot_vel[2] < 0.0 else 0.0
            anchor = foot - foot_vel * back
            # F = ctrl (K a - K p - D pdot): the anchor enters as the constant gain term
            m.actuator_gainprm[self.floor_act[:2], 0] = self.K * anchor[:2]
        self.in_contact = contact
        d.ctrl[self.floor_act] = 1.0 if contact else 0.0

    def _work(self, v0, v1, tau, tau_damping):
        h, idx = self.timestep, self.plant.qvel_idx
        qd_mid = 0.5 * (v0[idx] + v1[idx])
        omega_mid = self._base_axis @ (self._jac_base @ (0.5 * (v0 + v1)))
        base = self.data.ctrl[self.base_act] * omega_mid * h
        return StepWork(joint=float(tau @ qd_mid) * h, damping=float(tau_damping @ qd_mid) * h,
                        base=float(base), floor=self._floor_work(v0, v1))

    def _floor_work(self, v0, v1):
        d, h = self.data, self.timestep
        if self.floor_act is None:
            return float(d.qfrc_constraint @ (0.5 * (v0 + v1))) * h
        if not self.in_contact:
            return 0.0
        u0, u1 = self._jac @ v0, self._jac @ v1          # foot velocity along x, y, z (J at step start)
        F = d.actuator_force[self.floor_act].copy()
        active = np.array([True, True, F[2] > 0.0])      # a clamped F_z = 0 is not in the implicit step
        F_eff = np.where(active, F - self.D * (u1 - u0), 0.0)
        return float(F_eff @ (0.5 * (u0 + u1))) * h

    # -- ground truth, for evaluation and logs only ---------------------------------------------

    def state(self):
        """Ground truth ``(g1, q, V1, qdot)``."""
        return self.plant.state()

    def energy(self):
        """MuJoCo's mechanical energy (gravity potential + kinetic) at the last :meth:`sense`, J."""
        return float(self.data.energy[0] + self.data.energy[1])

    def energies(self):
        """``(kinetic, gravity potential)`` at the last :meth:`sense`, J."""
        return float(self.data.energy[1]), float(self.data.energy[0])

    def com_and_momentum(self):
        """World CoM, CoM velocity, and the angular momentum about the CoM (world axes), from
        MuJoCo's subtree quantities at the last :meth:`sense`."""
        mujoco.mj_subtreeVel(self.model, self.data)
        r = self.plant.root
        d = self.data
        return d.subtree_com[r].copy(), d.subtree_linvel[r].copy(), d.subtree_angmom[r].copy()

    @property
    def mass(self):
        return self.plant.mass

    def foot_position(self):
        """World position of the foot at the last :meth:`sense`."""
        return self.data.site_xpos[self.foot_site].copy()

    def foot_velocity(self):
        """World velocity of the foot at the last :meth:`sense`."""
        res = np.zeros(6)
        mujoco.mj_objectVelocity(self.model, self.data, mujoco.mjtObj.mjOBJ_SITE, self.foot_site, res, 0)
        return res[3:]

    def floor_force(self):
        """Ground-truth world force of the floor on the foot during the last step, N."""
        d = self.data
        if self.floor_act is not None:
            return d.actuator_force[self.floor_act].copy() if self.in_contact else np.zeros(3)
        f = np.zeros(3)
        for i in range(d.ncon):
            c6 = np.zeros(6)
            mujoco.mj_contactForce(self.model, d, i, c6)
            f += d.contact[i].frame.reshape(3, 3).T @ c6[:3]
        return f

    def touching(self):
        """Ground truth at the last :meth:`sense`: is the foot on the floor?"""
        if self.floor_act is not None:
            return bool(self.data.site_xpos[self.foot_site][2] <= 0.0)
        return self.data.ncon > 0


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
