"""URDF -> Pinocchio free-flyer model, with the checks a user needs when it goes wrong.

The root link of the URDF is the floating base (frame {1} of seed 002).  The
shape joints must be 1-DoF (revolute, continuous or prismatic); fixed joints are
merged by Pinocchio.  Continuous joints are loaded as revolute joints without
position limits, so that the shape ``q`` is a plain vector in R^n (Pinocchio
would otherwise store them as ``(cos, sin)`` pairs).
"""
import math
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin

from .validation import ModelError

_SHAPE_JOINT_TYPES = {"revolute", "continuous", "prismatic"}
#: Relative tolerance of the physical-consistency checks of link inertias.
INERTIA_TOL = 1e-9


def read_urdf(path):
    """Text of the URDF at ``path``; :class:`ModelError` if it cannot be read."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as exc:
        raise ModelError(f"cannot read URDF {path!r}: {exc.strerror}") from None


def build_pinocchio_model(xml, gravity, source="<string>"):
    """Pinocchio model with a free-flyer root, the shape joints and ``gravity``.

    Continuous joints get infinite position limits (and infinite effort and
    velocity limits when the URDF gives none).  Raises :class:`ModelError`
    for XML that does not parse, unsupported joints and unphysical inertias.
    """
    xml, continuous, unlimited = _prepare(xml, source)
    try:
        model = pin.buildModelFromXML(xml, pin.JointModelFreeFlyer())
    except (RuntimeError, ValueError) as exc:
        raise ModelError(f"URDF {source} does not parse: {exc}") from None
    model.gravity = pin.Motion(np.concatenate([gravity, np.zeros(3)]))
    for j in range(2, model.njoints):
        iq, iv = model.idx_qs[j], model.idx_vs[j]
        if model.names[j] in continuous:
            model.lowerPositionLimit[iq] = -math.inf
            model.upperPositionLimit[iq] = math.inf
        if model.names[j] in unlimited:
            model.effortLimit[iv] = math.inf
            model.velocityLimit[iv] = math.inf
    return model


def _prepare(xml, source):
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise ModelError(f"URDF {source} does not parse: {exc}") from None
    if root.tag != "robot":
        raise ModelError(f"URDF {source} does not parse: root element is <{root.tag}>, "
                         "expected <robot>")
    continuous, unlimited = set(), set()
    for joint in root.findall("joint"):
        name, kind = joint.get("name"), joint.get("type")
        if joint.find("mimic") is not None:
            raise ModelError(f"URDF {source}: joint {name!r} is a mimic joint; "
                             "mimic joints are not supported")
        if kind == "continuous":
            joint.set("type", "revolute")
            limit = joint.find("limit")
            if limit is None:
                limit = ET.SubElement(joint, "limit", effort="0", velocity="0")
                unlimited.add(name)
            limit.set("lower", "-1e10")
            limit.set("upper", "1e10")
            continuous.add(name)
        elif kind != "fixed" and kind not in _SHAPE_JOINT_TYPES:
            raise ModelError(f"URDF {source}: joint {name!r} has type {kind!r}; shape joints "
                             "must be revolute, continuous or prismatic (the root link is "
                             "the floating base)")
    for link in root.findall("link"):
        check_link_inertia(link, source)
    return ET.tostring(root, encoding="unicode"), continuous, unlimited


def check_link_inertia(link, source):
    """Raise :class:`ModelError` if the <inertial> of ``link`` is not physically consistent.

    A rigid body needs ``m >= 0`` and a symmetric positive semi-definite
    rotational inertia whose principal moments satisfy the triangle
    inequalities ``I_a + I_b >= I_c``.
    """
    inertial = link.find("inertial")
    if inertial is None:
        return
    name = link.get("name")
    mass_el, inertia_el = inertial.find("mass"), inertial.find("inertia")
    try:
        m = float(mass_el.get("value")) if mass_el is not None else 0.0
        keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
        ixx, ixy, ixz, iyy, iyz, izz = (
            float(inertia_el.get(k, "0")) if inertia_el is not None else 0.0 for k in keys)
    except (TypeError, ValueError) as exc:
        raise ModelError(f"URDF {source}: link {name!r} has a non-numeric inertial: {exc}") from None
    inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    if not (math.isfinite(m) and np.isfinite(inertia).all()):
        raise ModelError(f"URDF {source}: link {name!r} has a non-finite mass or inertia")
    if m < 0:
        raise ModelError(f"URDF {source}: link {name!r} has negative mass {m}")
    moments = np.linalg.eigvalsh(inertia)
    scale = max(moments.max(), 1.0) * INERTIA_TOL
    if moments.min() < -scale:
        raise ModelError(f"URDF {source}: link {name!r} is not physically consistent: its "
                         f"inertia has a negative principal moment {moments.min():.6g}")
    a, b, c = moments
    if a + b < c - scale:
        raise ModelError(f"URDF {source}: link {name!r} is not physically consistent: its "
                         f"principal moments ({a:.6g}, {b:.6g}, {c:.6g}) violate the "
                         "triangle inequality I1 + I2 >= I3")
    if m == 0 and c > scale:
        raise ModelError(f"URDF {source}: link {name!r} has zero mass but non-zero inertia")


def scale_link_inertial(xml, link_name, factor):
    """URDF text with the mass and inertia of ``link_name`` (``None``: the root link) times ``factor``.

    Used to give a controller a model that is off from the plant by a known amount.
    """
    root = ET.fromstring(xml)
    if link_name is None:
        children = {j.find("child").get("link") for j in root.findall("joint")}
        link_name = next(link.get("name") for link in root.findall("link") if link.get("name") not in children)
    link = next((lk for lk in root.findall("link") if lk.get("name") == link_name), None)
    if link is None or link.find("inertial") is None:
        raise ModelError(f"URDF has no link {link_name!r} with an <inertial>")
    inertial = link.find("inertial")
    mass = inertial.find("mass")
    mass.set("value", repr(float(mass.get("value")) * factor))
    inertia = inertial.find("inertia")
    for key in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"):
        inertia.set(key, repr(float(inertia.get(key, "0")) * factor))
    return ET.tostring(root, encoding="unicode")
