"""The simulated plant: MuJoCo built from the same URDF as the controller's Pinocchio model.

MuJoCo integrates the physics; the package's own model is never used to step
the plant.  Ground truth (pose, twist, momentum) is read from MuJoCo's own
computations and is meant for logging and evaluation only: controllers read
the sensor models in ``sim/sensors.py``.

:meth:`MujocoPlant.from_urdf` builds the plant from the URDF *as the model loaded it*
(``model.description``: locked and mimic joints fixed, a ``world`` root dropped), so that
both describe the same bodies, then checks that they do (:func:`check_plant_matches`:
mass matrix and momentum at a random state).  Two choices:

* ``geometry``: the dynamics never need geometry.  ``"none"`` (default) drops
  visuals and collisions (no meshes needed), ``"primitives"`` keeps the
  box/cylinder/sphere collisions, ``"meshes"`` keeps all and resolves ``package://``
  through the ament index, then ``ROS_PACKAGE_PATH``.  MuJoCo never derives
  inertia from geometry here: a link without ``<inertial>`` is massless, as for Pinocchio.
* ``joint_dynamics``: the model has ideal joints.  ``"urdf"`` (default) keeps the URDF's
  ``<dynamics damping friction>`` in the plant and reports them as a model mismatch
  (:attr:`MujocoPlant.model_mismatch` and a warning); ``"ideal"`` removes them from the
  plant, which then matches the model.
"""
import os
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np

from floating_base_control.conventions import from_mujoco, to_mujoco
from floating_base_control.lie import exp
from floating_base_control.validation import ModelError

INTEGRATORS = {"rk4": mujoco.mjtIntegrator.mjINT_RK4,
               "euler": mujoco.mjtIntegrator.mjINT_EULER,
               "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST}
GEOMETRY = ("none", "primitives", "meshes")
JOINT_DYNAMICS = ("urdf", "ideal")
#: Relative agreement of plant and model required at construction (mass matrix, momentum).
PLANT_MATCH_TOL = 1e-8


def build_model(urdf_path, joint_names, effort_limits, gravity=(0.0, 0.0, 0.0), timestep=1e-3,
                integrator="rk4", contacts=True):
    """Compile a MuJoCo model of the URDF with a free joint on the root link and one
    torque motor per shape joint (``ctrlrange`` = the effort limits; infinite = unlimited)."""
    return compile_spec(build_spec(urdf_path, joint_names, effort_limits, gravity, timestep, integrator,
                                   contacts), urdf_path)


def build_spec(urdf_path, joint_names, effort_limits, gravity=(0.0, 0.0, 0.0), timestep=1e-3,
               integrator="rk4", contacts=True):
    """The uncompiled ``mujoco.MjSpec`` of :func:`build_model`, for plants that add their
    own sites, sensors or actuators (e.g. ``sim/hopper.py``) before compiling.  The URDF's
    primitive collision geometry is kept."""
    try:
        xml = Path(urdf_path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelError(f"MuJoCo cannot load {urdf_path}: {exc}") from None
    spec = spec_from_urdf_string(xml, "primitives", Path(urdf_path).parent, str(urdf_path))
    return configure_spec(spec, joint_names, effort_limits, gravity, timestep, integrator, contacts)


def compile_spec(spec, source):
    """``spec.compile()``, with MuJoCo's refusal as the package's error."""
    try:
        return spec.compile()
    except ValueError as exc:
        raise ModelError(f"MuJoCo cannot compile the plant of {source}: {exc}") from None


def spec_from_urdf_string(xml, geometry="none", base_dir=".", source="<string>"):
    """``mujoco.MjSpec`` of a URDF text, its geometry as ``geometry`` says (module doc)."""
    if geometry not in GEOMETRY:
        raise ModelError(f"geometry must be one of {GEOMETRY}, got {geometry!r}")
    root = ET.fromstring(xml)
    for link in root.findall("link"):
        for el in link.findall("visual") + link.findall("collision"):
            mesh = el.find("geometry/mesh")
            if geometry == "none" or (geometry == "primitives" and (mesh is not None or el.tag == "visual")):
                link.remove(el)
            elif mesh is not None:
                mesh.set("filename", resolve_mesh(mesh.get("filename", ""), base_dir, source))
    try:
        spec = mujoco.MjSpec.from_string(ET.tostring(root, encoding="unicode"))
    except ValueError as exc:
        raise ModelError(f"MuJoCo cannot load {source}: {exc}") from None
    spec.compiler.inertiafromgeom = mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE
    spec.compiler.fusestatic = True
    spec.compiler.discardvisual = geometry != "meshes"
    return spec


def resolve_mesh(uri, base_dir, source):
    """Absolute path of a URDF mesh ``filename``: ``package://pkg/rel`` through the ament index,
    then ``ROS_PACKAGE_PATH``; ``file://`` and relative paths from ``base_dir``."""
    if not uri.startswith("package://"):
        path = Path(uri[len("file://"):] if uri.startswith("file://") else uri)
        return str(path if path.is_absolute() else Path(base_dir) / path)
    package, _, rel = uri[len("package://"):].partition("/")
    roots = []
    try:
        from ament_index_python.packages import get_package_share_directory
        roots.append(Path(get_package_share_directory(package)))
    except (ImportError, LookupError, OSError, ValueError):
        pass
    for d in filter(None, os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep)):
        roots += [Path(d), Path(d) / package]
    for r in roots:
        if (r / rel).exists():
            return str(r / rel)
    raise ModelError(f"{source}: mesh {uri!r} not found (package {package!r} is in neither the "
                     "ament index nor ROS_PACKAGE_PATH); geometry='none' or 'primitives' "
                     "simulates without meshes")


def configure_spec(spec, joint_names, effort_limits, gravity=(0.0, 0.0, 0.0), timestep=1e-3,
                   integrator="rk4", contacts=True):
    """Options, the base's free joint and one torque motor per shape joint, on a URDF's spec."""
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
        # the usual case, joints in MuJoCo's order: slices, which read without an index array
        self._qpos_at, self._qvel_at = _as_slice(self.qpos_idx), _as_slice(self.qvel_idx)
        self.act_idx = np.array([mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_ACTUATOR, n)
                                 for n in joint_names])
        self._act_at = _as_slice(self.act_idx)
        # MjData's arrays never move: the joints' positions, velocities and applied forces as views, taken once
        d, at = self.data, self._qvel_at
        self._joint_views = ((d.qvel[at], d.qfrc_applied[at], d.qpos[self._qpos_at])
                             if isinstance(at, slice) and isinstance(self._qpos_at, slice) else None)
        self.root = mj_model.jnt_bodyid[0]
        self.mass = mj_model.body_subtreemass[self.root]
        self.model_mismatch = {}     #: URDF joint damping/friction the controller's model lacks
        self.inertias_from_model = False   #: body inertias set from the model's merged bodies
        self.friction = None         #: joint friction (``sim/friction.py``): ``tau_f = friction.torque(qdot)``

    @classmethod
    def from_urdf(cls, urdf_path, model, geometry="none", joint_dynamics="urdf", **options):
        """Plant of the robot described by ``model`` (a FloatingBaseModel of the URDF at
        ``urdf_path``), built from ``model.description`` and checked against it
        (:func:`check_plant_matches`); ``geometry`` and ``joint_dynamics``: see the module doc;
        ``options``: those of :func:`build_model`."""
        if joint_dynamics not in JOINT_DYNAMICS:
            raise ModelError(f"joint_dynamics must be one of {JOINT_DYNAMICS}, got {joint_dynamics!r}")
        desc = model.description
        xml = desc.urdf if desc is not None else Path(urdf_path).read_text(encoding="utf-8")

        def new_spec():
            spec = spec_from_urdf_string(xml, geometry, Path(urdf_path).parent, str(urdf_path))
            configure_spec(spec, model.joint_names, model.effort_limits, gravity=model.gravity, **options)
            if joint_dynamics == "ideal":
                for joint in spec.joints:
                    joint.damping, joint.frictionloss = np.zeros_like(joint.damping), 0.0
            return spec
        mismatch = {"damping": dict(desc.damping), "friction": dict(desc.friction)} if desc else {}
        if joint_dynamics == "ideal":
            mismatch = {}
        try:
            plant = cls(new_spec().compile(), model.joint_names)
            check_plant_matches(plant, model)
        except (ValueError, ModelError):
            # MuJoCo reads each URDF link alone: it refuses a consistent robot whose 1-microgram
            # link has a rank-1 inertia, and drops the inertia of a massless link that the merged
            # body keeps.  Then the plant gets the model's merged bodies (the same rigid bodies);
            # the check still tests MuJoCo's own kinematics, frames and base.  A new spec: compiling
            # fuses fixed children into their parent in the spec itself, whose inertia it then holds
            # as a diagonal one that a full inertia may not be added to.
            spec = new_spec()
            set_body_inertias(spec, model)
            plant = cls(compile_spec(spec, urdf_path), model.joint_names)
            plant.inertias_from_model = True
            check_plant_matches(plant, model)
        plant.model_mismatch = {k: v for k, v in mismatch.items() if v}
        if plant.model_mismatch:
            warnings.warn(f"{urdf_path}: the plant has URDF joint {' and '.join(plant.model_mismatch)} "
                          "that the controller's model lacks (joint_dynamics='ideal' removes them): "
                          f"{plant.model_mismatch}", stacklevel=2)
        return plant

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
        q, qdot = self.joint_state()
        return g1, q, V1, qdot

    def base_pose(self):
        """Ground-truth base pose ``g1`` (for evaluation only)."""
        return from_mujoco(self.data.qpos[:7], self.data.qvel[:6])[0]

    def joint_state(self):
        """``(q, qdot)`` as the joint encoders would read them, noise-free."""
        if self._joint_views is not None:
            qdot, _, q = self._joint_views
            return q.copy(), qdot.copy()
        return self.data.qpos[self._qpos_at].copy(), self.data.qvel[self._qvel_at].copy()

    def step(self, tau, nstep=1):
        """Apply joint torques ``tau`` (clipped by MuJoCo to the effort limits) for ``nstep`` time steps."""
        m, d = self.model, self.data
        d.ctrl[self._act_at] = tau
        if self.friction is None:
            mujoco.mj_step(m, d, nstep)
            return
        opposing_torque = self.friction.opposing_torque
        if self._joint_views is not None:      # views of MuJoCo's own buffers: the torque is written in place
            qvel, qfrc, _ = self._joint_views
            for _ in range(nstep):      # the friction torque follows the velocity of each step
                opposing_torque(qvel, out=qfrc)
                mujoco.mj_step(m, d)
            return
        qvel, qfrc, at = d.qvel, d.qfrc_applied, self._qvel_at
        for _ in range(nstep):
            qfrc[at] = opposing_torque(qvel[at])
            mujoco.mj_step(m, d)

    def collide_base_with_arm(self):
        """Contacts between the base and the arm only (MuJoCo's ``contype``/``conaffinity``: the base's geoms
        against every other body's; a body never collides with its parent): the primitives of many URDFs
        overlap between neighbouring links of the arm (the Panda's links 5 and 7 do at every shape), which
        would otherwise push the arm around.  Needs a plant built with ``geometry="primitives"`` and
        ``contacts=True``."""
        base = self.model.geom_bodyid == self.root
        self.model.geom_contype[:] = np.where(base, 1, 0)
        self.model.geom_conaffinity[:] = np.where(base, 0, 1)

    def contacts(self):
        """Number of contacts MuJoCo found at the last step (with :meth:`collide_base_with_arm`: between the base
        and the arm)."""
        return int(self.data.ncon)

    def momentum(self):
        """Total spatial momentum ``[angular; linear]`` about the world origin, world axes, from
        MuJoCo's subtree quantities (independent of the package's model)."""
        m, d = self.model, self.data
        # mj_step leaves derived quantities one step old: the positions and velocities stages of
        # mj_forward (all that subtree momentum needs) at the current state
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        mujoco.mj_comVel(m, d)
        mujoco.mj_subtreeVel(m, d)
        r = self.root
        p = self.mass * d.subtree_linvel[r]
        (cx, cy, cz), (px, py, pz) = d.subtree_com[r], p
        L = d.subtree_angmom[r] + (cy * pz - cz * py, cz * px - cx * pz, cx * py - cy * px)    # + com x p
        return np.concatenate([L, p])


def _as_slice(idx):
    """``idx`` as a slice if it is a contiguous increasing range, else ``idx`` itself."""
    if len(idx) and np.array_equal(idx, np.arange(idx[0], idx[0] + len(idx))):
        return slice(int(idx[0]), int(idx[0]) + len(idx))
    return idx


#: Mass (kg) and principal moments (kg m^2) given to a massless moving body (MuJoCo needs > 1e-15).
MASSLESS_BOUND = 1e-12


def set_body_inertias(spec, model):
    """Give each MuJoCo body the inertia of the model's merged body (Pinocchio's, in the same link
    frame), massless bodies :data:`MASSLESS_BOUND`; links merged into another body get none."""
    pm = model.pin_model
    bodies = {name: pm.inertias[j] for j, name in enumerate(model.link_names, start=1)}
    for body in spec.bodies[1:]:
        Y = bodies.get(body.name)
        body.explicitinertial = True
        body.mass = 0.0 if Y is None else Y.mass
        body.ipos = np.zeros(3) if Y is None else Y.lever
        I = np.zeros((3, 3)) if Y is None else Y.inertia
        body.fullinertia = [I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]]
    spec.compiler.boundmass = spec.compiler.boundinertia = MASSLESS_BOUND


def check_plant_matches(plant, model, seed=0):
    """Raise :class:`ModelError` unless plant and model agree at a random state within the limits:
    mass matrix (in the model's coordinates ``[V1; qdot]``) and spatial momentum, to
    :data:`PLANT_MATCH_TOL` relative.  Catches a free joint on another frame than the model's
    base, bodies merged differently, inertias MuJoCo changed.  Returns the two errors."""
    rng = np.random.default_rng(seed)
    lo, hi = model.position_limits.T
    q = rng.uniform(np.where(np.isfinite(lo), lo, -np.pi), np.where(np.isfinite(hi), hi, np.pi))
    g1, V1, qdot = exp(rng.normal(size=6)), rng.normal(size=6), rng.normal(size=model.n)
    plant.set_state(g1, q, V1, qdot)
    nv = plant.model.nv
    M_mj = np.zeros((nv, nv))
    mujoco.mj_fullM(plant.model, plant.data, M_mj)
    T = np.zeros((nv, 6 + model.n))     # qvel = T [V1; qdot], from the conventions' own map
    for k in range(6):
        T[:6, k] = to_mujoco(g1, np.zeros(0), np.eye(6)[k], np.zeros(0))[1]
    T[plant.qvel_idx, 6 + np.arange(model.n)] = 1.0
    M_plant = T.T @ M_mj @ T
    M_model = model.hamel_matrices(q, V1, qdot)[0]
    J_plant, J_model = plant.momentum(), model.momentum_map(g1, q, V1, qdot)
    err_M = np.abs(M_plant - M_model).max() / np.abs(M_model).max()
    err_J = np.abs(J_plant - J_model).max() / np.abs(J_model).max()
    if not (err_M <= PLANT_MATCH_TOL and err_J <= PLANT_MATCH_TOL):
        raise ModelError(f"{model.source}: the MuJoCo plant does not match the model (mass matrix off "
                         f"by {err_M:.2g}, momentum by {err_J:.2g}, relative): its free joint is not on "
                         "the model's base frame, or MuJoCo merged or changed bodies")
    return err_M, err_J
