"""An orbital robot from any arm: a user's arm URDF mounted on a spacecraft bus.

:func:`mount_arm` writes the URDF of the whole robot: a root link ``spacecraft_bus``
(the floating base {1}: mass, CoM, inertia about the CoM) and a fixed joint
``arm_mount`` (the mount pose) to the arm's root link.  The arm is read as
:func:`~floating_base_control.urdf_loader.describe_urdf` reads any URDF: a ``world``
root is dropped, mimic groups and the joints in ``locked`` are fixed.  The defaults
are the shipped orbital robot's spacecraft (``urdf/orbital_robot.urdf``).

Defaults scaled from the robot instead of tuned for one (:func:`default_shape_setpoints`,
:func:`default_shape_gains`, :func:`default_observer_gains`) make a scenario for any arm
(:func:`~floating_base_control.experiments.orbital.scenario.arm_scenario`).
"""
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

from floating_base_control.control.shape import ShapeGains
from floating_base_control.control.stability import delay_robust_joint_gains
from floating_base_control.estimation.observer import ObserverGains
from floating_base_control.model import FloatingBaseModel
from floating_base_control.resources import orbital_robot_urdf
from floating_base_control.urdf_loader import describe_urdf, read_urdf, root_link
from floating_base_control.validation import InputError, ModelError

#: Root link and mount joint of a mounted robot.
BUS_LINK, MOUNT_JOINT = "spacecraft_bus", "arm_mount"
#: Observer stiffness per unit of locked inertia (1/s^2): l_rot = c * mean rotational moment of M_b,
#: l_trans = c * mass.  The observer's error dynamics ``eps'' + k eps' + (l / M) eps = 0`` (see
#: ``estimation/observer.py``) then have the same poles for any robot: those of the defaults
#: ``ObserverGains()`` on the shipped orbital robot (l / M close to 1).
OBSERVER_STIFFNESS_PER_INERTIA = 1.0
#: Offset (rad or m) of the default set-point from the start, alternating in sign along the arm.
SETPOINT_STEP = 0.3


@dataclass(frozen=True)
class Spacecraft:
    """The bus (SI units): mass, CoM and inertia about the CoM in the bus frame, and the arm's mount."""

    mass: float = 300.0
    com: tuple = (0.02, -0.01, 0.0)
    inertia: tuple = (52.0, 61.0, 58.0, 1.2, -0.8, 0.5)     #: ixx iyy izz ixy ixz iyz
    mount_xyz: tuple = (0.3, 0.0, 0.5)
    mount_rpy: tuple = (0.0, 0.0, 0.0)

    def __post_init__(self):
        ixx, iyy, izz, ixy, ixz, iyz = self.inertia
        inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        if not (np.isfinite(inertia).all() and np.isfinite(self.mass) and self.mass > 0):
            raise InputError(f"spacecraft mass must be > 0 and inertia finite, got {self.mass}, {self.inertia}")
        a, b, c = np.linalg.eigvalsh(inertia)
        if a <= 0 or a + b < c:
            raise InputError(f"spacecraft inertia {self.inertia} is not a rigid body's (principal moments "
                             f"{a:.4g}, {b:.4g}, {c:.4g} must be > 0 with I1 + I2 >= I3)")


def mount_arm(arm_xml, spacecraft=Spacecraft(), source="<arm>", locked=None, mimic="lock"):
    """URDF text of the arm ``arm_xml`` mounted on ``spacecraft`` (module doc)."""
    arm = ET.fromstring(describe_urdf(arm_xml, source, locked, mimic).urdf)
    arm_root = root_link(arm)
    names = {el.get("name") for el in arm if el.tag in ("link", "joint")}
    if arm_root is None or {BUS_LINK, MOUNT_JOINT} & names:
        raise ModelError(f"URDF {source}: cannot mount it: it needs one root link and no link or joint "
                         f"named {BUS_LINK!r} or {MOUNT_JOINT!r}")
    s = spacecraft
    bus = ET.Element("link", name=BUS_LINK)
    inertial = ET.SubElement(bus, "inertial")
    ET.SubElement(inertial, "origin", xyz=_numbers(s.com), rpy="0 0 0")
    ET.SubElement(inertial, "mass", value=repr(float(s.mass)))
    ET.SubElement(inertial, "inertia", **dict(zip(("ixx", "iyy", "izz", "ixy", "ixz", "iyz"),
                                                  (repr(float(x)) for x in s.inertia))))
    joint = ET.Element("joint", name=MOUNT_JOINT, type="fixed")
    ET.SubElement(joint, "parent", link=BUS_LINK)
    ET.SubElement(joint, "child", link=arm_root)
    ET.SubElement(joint, "origin", xyz=_numbers(s.mount_xyz), rpy=_numbers(s.mount_rpy))
    arm.insert(0, joint)
    arm.insert(0, bus)
    arm.set("name", f"{arm.get('name') or 'arm'}_on_spacecraft")
    return ET.tostring(arm, encoding="unicode")


def load_robot(urdf="", arm_urdf="", spacecraft=Spacecraft(), locked=None, mimic="lock"):
    """``(model, urdf_path)`` of an orbital robot: the URDF ``urdf`` (default: the shipped orbital
    robot), or the arm ``arm_urdf`` mounted on ``spacecraft``; ``locked`` and ``mimic`` as in
    ``FloatingBaseModel.from_urdf``.  What both orbital nodes load (same loading, same errors);
    ``urdf_path`` is the file the plant resolves meshes from."""
    if urdf and arm_urdf:
        raise InputError(f"give urdf ({urdf!r}) or arm_urdf ({arm_urdf!r}), not both")
    if not arm_urdf:
        path = urdf or orbital_robot_urdf()
        return FloatingBaseModel.from_urdf(path, locked=locked, mimic=mimic), path
    xml = mount_arm(read_urdf(arm_urdf), spacecraft, str(arm_urdf), locked, mimic)
    return FloatingBaseModel.from_urdf_string(xml, source=f"{arm_urdf} on a spacecraft"), arm_urdf


def robot_model(options):
    """The model of :func:`load_robot` with ``options`` (its keyword arguments): what a background worker
    (``floating_base_control/background.py``) builds for the controller node's checks."""
    return load_robot(**options)[0]


def _numbers(v):
    return " ".join(repr(float(x)) for x in v)


def default_shape_setpoints(model):
    """``(q0, q_d)``: the middle of each joint's range (0 where unlimited), and a set-point
    :data:`SETPOINT_STEP` away from it with alternating signs, kept inside the limits."""
    lo, hi = model.position_limits.T
    bounded = np.isfinite(lo) & np.isfinite(hi)
    lo, hi = np.where(bounded, lo, -np.pi), np.where(bounded, hi, np.pi)
    q0 = np.where(bounded, 0.5 * (lo + hi), 0.0)
    step = SETPOINT_STEP * (-1.0) ** np.arange(model.n)
    margin = 0.25 * (hi - lo)
    return q0, np.clip(q0 + step, lo + margin, hi - margin)


def default_shape_gains(model, q0, q_d, count=7):
    """PD gains for the way from ``q0`` to ``q_d``: ``control/stability.py``'s delay-robust gains over ``count``
    shapes on the straight line between them (scaled by the joints' inertias; stable with margin with one
    control period of loop delay and over DDS, also where the start aligns two joints' axes)."""
    shapes = [q0 + s * (q_d - q0) for s in np.linspace(0.0, 1.0, count)]
    return ShapeGains(*delay_robust_joint_gains([model.reduced_shape_inertia(q) for q in shapes]))


def default_observer_gains(model, q):
    """:class:`ObserverGains` scaled by the locked inertia ``M_b(q)``
    (:data:`OBSERVER_STIFFNESS_PER_INERTIA`; ``k`` as in the defaults)."""
    M_b = model.locked_inertia(q)
    c = OBSERVER_STIFFNESS_PER_INERTIA
    return ObserverGains(k=ObserverGains().k, l_rot=float(c * np.trace(M_b[:3, :3]) / 3.0),
                         l_trans=float(c * model.mass))
