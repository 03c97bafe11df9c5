"""The simulated plant: MuJoCo built from the same URDF as the controller's Pinocchio model.

MuJoCo integrates the physics; the package's own model is never used to step
the plant.  Ground truth (pose, twist, momentum) is read from MuJoCo's own
computations and is meant for logging and evaluation only: controllers read
the sensor models in ``sim/sensors.py``.
"""
import mujoco
import numpy as np

from ..conventions import from_mujoco, to_mujoco
from ..validation import ModelError

INTEGRATORS = {"rk4": mujoco.mjtIntegrator.mjINT_RK4,
               "euler": mujoco.mjtIntegrator.mjINT_EULER,
               "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST}


def build_model(urdf_path, joint_names, effort_limits, gravity=(0.0, 0.0, 0.0), timestep=1e-3,
                integrator="rk4", contacts=True):
    """Compile a MuJoCo model of the URDF with a free joint on the root link and one
    torque motor per shape joint (``ctrlrange`` = the effort limits; infinite = unlimited)."""
    return build_spec(urdf_path, joint_names, effort_limits, gravity, timestep, integrator,
                      contacts).compile()


def build_spec(urdf_path, joint_names, effort_limits, gravity=(0.0, 0.0, 0.0), timestep=1e-3,
               integrator="rk4", contacts=True):
    """The uncompiled ``mujoco.MjSpec`` of :func:`build_model`, for plants that add their
    own sites, sensors or actuators (e.g. ``sim/hopper.py``) before compiling."""
    try:
        spec = mujoco.MjSpec.from_file(str(urdf_path))
    except ValueError as exc:
        raise ModelError(f"MuJoCo cannot load {urdf_path}: {exc}") from None
    spec.option.gravity = np.asarray(gravity, dtype=float)
    spec.option.timestep = timestep
    spec.option.integrator = INTEGRATORS[integrator]
    if not contacts:
        spec.option.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    spec.worldbody.first_body().add_freejoint(name="base_free_joint")
    for name, limit in zip(joint_names, effort_limits):
        act = spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        act.gainprm[0] = 1.0
        if np.isfinite(limit):
            act.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
            act.ctrlrange = [-limit, limit]
    return spec


class MujocoPlant:
    """A free-floating robot simulated by MuJoCo, addressed in the package's conventions.

    ``joint_names`` fixes the order of ``q``, ``qdot`` and ``tau`` (MuJoCo's own
    joint order is mapped by name).
    """

    def __init__(self, mj_model, joint_names):
        self.model = mj_model
        self.data = mujoco.MjData(mj_model)
        ids = [mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_JOINT, n) for n in joint_names]
        if min(ids) < 0:
            missing = [n for n, i in zip(joint_names, ids) if i < 0]
            raise ModelError(f"MuJoCo model has no joints {missing}")
        self.qpos_idx = np.array([mj_model.jnt_qposadr[i] for i in ids])
        self.qvel_idx = np.array([mj_model.jnt_dofadr[i] for i in ids])
        self.act_idx = np.array([mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_ACTUATOR, n)
                                 for n in joint_names])
        self.root = mj_model.jnt_bodyid[0]
        self.mass = mj_model.body_subtreemass[self.root]

    @classmethod
    def from_urdf(cls, urdf_path, model, **options):
        """Plant of the robot described by ``model`` (a FloatingBaseModel of the same URDF)."""
        mj = build_model(urdf_path, model.joint_names, model.effort_limits,
                         gravity=model.gravity, **options)
        return cls(mj, model.joint_names)

    @property
    def time(self):
        return self.data.time

    @property
    def timestep(self):
        return self.model.opt.timestep

    def set_state(self, g1, q, V1, qdot):
        """Place the robot at ``(g1, q)`` with base twist ``V1 = [omega; v]`` and joint rates."""
        qpos, qvel = to_mujoco(g1, np.zeros(0), V1, np.zeros(0))
        self.data.qpos[:7], self.data.qvel[:6] = qpos, qvel
        self.data.qpos[self.qpos_idx] = q
        self.data.qvel[self.qvel_idx] = qdot
        mujoco.mj_forward(self.model, self.data)

    def state(self):
        """Ground truth ``(g1, q, V1, qdot)`` (for evaluation only)."""
        d = self.data
        g1, _, V1, _ = from_mujoco(d.qpos[:7], d.qvel[:6])
        return g1, d.qpos[self.qpos_idx].copy(), V1, d.qvel[self.qvel_idx].copy()

    def joint_state(self):
        """``(q, qdot)`` as the joint encoders would read them, noise-free."""
        return self.data.qpos[self.qpos_idx].copy(), self.data.qvel[self.qvel_idx].copy()

    def step(self, tau):
        """Apply joint torques ``tau`` (clipped by MuJoCo to the effort limits) for one time step."""
        self.data.ctrl[self.act_idx] = tau
        mujoco.mj_step(self.model, self.data)

    def momentum(self):
        """Total spatial momentum ``[angular; linear]`` about the world origin, world axes, from
        MuJoCo's subtree quantities (independent of the package's model)."""
        mujoco.mj_forward(self.model, self.data)      # mj_step leaves derived quantities one step old
        mujoco.mj_subtreeVel(self.model, self.data)
        r = self.root
        p = self.mass * self.data.subtree_linvel[r]
        com = self.data.subtree_com[r]
        return np.concatenate([self.data.subtree_angmom[r] + np.cross(com, p), p])
