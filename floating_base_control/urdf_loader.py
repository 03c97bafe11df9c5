"""URDF -> Pinocchio free-flyer model, with the checks a user needs when it goes wrong.

The root link of the URDF is the floating base (frame {1} of [Mishra2023]).  The
shape joints must be 1-DoF (revolute, continuous or prismatic); fixed joints are
merged by Pinocchio.  What a real robot description may contain, and what it
becomes here (:func:`describe_urdf` applies it, :class:`URDFDescription` reports it):

* **Continuous joints** are loaded as revolute joints without position limits,
  so that the shape ``q`` is a plain vector in R^n (Pinocchio would otherwise
  store them as ``(cos, sin)`` pairs).
* **Locked joints** (``locked={"joint": position}``) become fixed joints at that
  position (their origin composed with the joint's motion): the bodies they carry
  merge into their parent, for the model and for the plant alike.  Use it for a
  gripper or a head that the controller must not move.
* **Mimic joints** are not independent coordinates.  ``mimic="lock"`` (the
  default) locks each mimic group (the leader and every joint mimicking it) at the
  leader's position from ``locked`` (default: 0 clipped to its limits), the
  followers at ``multiplier * leader + offset``: a gripper held at one opening.
  ``mimic="error"`` refuses them.
* **A root link named** ``world`` (a placeholder that fixes a robot to the ground,
  by a fixed or floating joint) is dropped: its child is the floating base.  A
  ``world`` attached by a moving joint is refused.
* **Limits**: a missing ``<limit>``, ``effort="0"`` or ``velocity="0"`` (left to the
  driver by many descriptions) mean *no limit* (infinite), as does a position range
  ``lower >= upper``.
* **Joint damping and friction** (``<dynamics>``) are reported in
  :attr:`URDFDescription.damping` / ``friction``; the model is of ideal joints
  (see ``sim/plant.py`` for what the plant does with them).

Physical consistency (``m >= 0``, rotational inertia PSD with the triangle
inequalities) is checked on the rigid bodies the dynamics uses, after fixed links
merge, with a tolerance relative to the body's largest principal moment; the error
names the URDF links of the body.

Every error is a :class:`ModelError` naming the cause: what urdfdom (Pinocchio's
URDF parser) would refuse, the tree (links named by joints exist, one parent per link,
one root, no loop) and the numbers of origins and axes, is checked here first; urdfdom
reports from C++ on the process's standard error, so while it parses, file descriptor 2
goes to a file (:func:`_urdfdom_messages`) and what it said becomes the error's cause.

One coherent module: one pipeline, URDF text to a checked Pinocchio model; its rewriting
steps (``world`` root, locked and mimic joints, continuous joints, limits) apply in order to the one
parsed tree, and its errors name the URDF's elements, which only this parse knows.
"""
import contextlib
import math
import os
import re
import sys
import tempfile
import threading
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pinocchio as pin

from floating_base_control.validation import ModelError

_SHAPE_JOINT_TYPES = {"revolute", "continuous", "prismatic"}
#: Relative tolerance of the physical-consistency checks of body inertias (URDFs print ~6 digits).
INERTIA_TOL = 1e-6
#: ``mimic=`` choices of :func:`describe_urdf`.
MIMIC_MODES = ("lock", "error")
_INERTIA_KEYS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")


class URDFDescription(NamedTuple):
    """A URDF as the package uses it, and what was changed to get there."""

    urdf: str                 #: URDF text: ``world`` root dropped, locked joints fixed (for model and plant)
    source: str
    locked: dict              #: joint -> position (rad or m) of every locked joint (mimic groups included)
    mimic: dict               #: follower joint -> (leader, multiplier, offset)
    dropped_root: str         #: name of the dropped ``world`` root link, or ""
    unlimited_position: frozenset  #: joints without position limits (continuous, or no valid range)
    unlimited_effort: frozenset    #: joints without an effort limit
    unlimited_velocity: frozenset  #: joints without a velocity limit
    damping: dict             #: joint -> URDF damping (N m s/rad or N s/m), non-zero only
    friction: dict            #: joint -> URDF Coulomb friction (N m or N), non-zero only


def read_urdf(path):
    """Text of the URDF at ``path``; :class:`ModelError` if it cannot be read."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as exc:
        raise ModelError(f"cannot read URDF {path!r}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ModelError(f"cannot read URDF {path!r}: not UTF-8 text ({exc.reason})") from None


def with_absolute_meshes(xml, base_dir):
    """The URDF text ``xml`` with its relative mesh paths made absolute from ``base_dir`` (the folder of the
    file it came from), for a derived URDF written elsewhere; ``package://`` and absolute paths unchanged."""
    root = ET.fromstring(xml)
    for mesh in root.iter("mesh"):
        name = mesh.get("filename", "")
        if name and "://" not in name and not Path(name).is_absolute():
            mesh.set("filename", str((Path(base_dir) / name).resolve()))
    return ET.tostring(root, encoding="unicode")


def describe_urdf(xml, source="<string>", locked=None, mimic="lock"):
    """:class:`URDFDescription` of the URDF text ``xml`` with the joints in ``locked`` locked.

    Raises :class:`ModelError` for XML that does not parse, unsupported joints,
    bad ``locked`` entries and non-numeric or negative link masses.
    """
    if mimic not in MIMIC_MODES:
        raise ModelError(f"mimic must be one of {MIMIC_MODES}, got {mimic!r}")
    root = _parse(xml, source)
    dropped = _drop_world_root(root, source)
    joints = {j.get("name"): j for j in root.findall("joint")}
    locked = _lock_positions(joints, dict(locked or {}), mimic, source)
    mimics = {name: _mimic_of(j, joints, source) for name, j in joints.items() if j.find("mimic") is not None}
    unlimited, no_effort, no_velocity, damping, friction = set(), set(), set(), {}, {}
    for name, joint in joints.items():
        kind = joint.get("type")
        if name in locked:
            _lock(joint, locked[name], source)
            continue
        if kind == "fixed":
            continue
        if kind not in _SHAPE_JOINT_TYPES:
            raise ModelError(f"URDF {source}: joint {name!r} has type {kind!r}; shape joints "
                             "must be revolute, continuous or prismatic (the root link is "
                             "the floating base)")
        limit = joint.find("limit")
        lower, upper, effort, velocity = (_number(limit, k, name, source) for k in
                                          ("lower", "upper", "effort", "velocity"))
        if kind == "continuous" or limit is None or lower >= upper:
            unlimited.add(name)
        if not effort > 0:
            no_effort.add(name)
        if not velocity > 0:
            no_velocity.add(name)
        dyn = joint.find("dynamics")
        for key, table in (("damping", damping), ("friction", friction)):
            value = _number(dyn, key, name, source)
            if value:
                table[name] = value
        _normalize_joint(joint, name in unlimited)
    for link in root.findall("link"):
        check_link_mass(link, source)
    return URDFDescription(ET.tostring(root, encoding="unicode"), source, locked, mimics, dropped,
                           frozenset(unlimited), frozenset(no_effort), frozenset(no_velocity),
                           damping, friction)


def build_pinocchio_model(description, gravity):
    """Pinocchio model of a :class:`URDFDescription`: free-flyer root, shape joints, ``gravity``.

    Infinite position, effort and velocity limits where the description has none.
    Raises :class:`ModelError` if Pinocchio refuses the URDF or a merged body is unphysical.
    """
    source, refused = description.source, None
    with _urdfdom_messages() as said:
        try:
            model = pin.buildModelFromXML(_revolute_continuous(description.urdf), pin.JointModelFreeFlyer())
        except (RuntimeError, ValueError) as exc:
            refused = exc
    if refused is not None:
        raise ModelError(f"URDF {source} does not parse: {'; '.join(said) or refused}")
    model.gravity = pin.Motion(np.concatenate([gravity, np.zeros(3)]))
    for j in range(2, model.njoints):
        iq, iv, name = model.idx_qs[j], model.idx_vs[j], model.names[j]
        if name in description.unlimited_position:
            model.lowerPositionLimit[iq] = -math.inf
            model.upperPositionLimit[iq] = math.inf
        if name in description.unlimited_effort:
            model.effortLimit[iv] = math.inf
        if name in description.unlimited_velocity:
            model.velocityLimit[iv] = math.inf
    for j in range(1, model.njoints):
        check_body_inertia(model.inertias[j], body_links(model, j), source)
    return model


def body_links(pin_model, joint):
    """URDF links merged into the rigid body carried by Pinocchio joint ``joint``."""
    return [f.name for f in pin_model.frames if f.type == pin.FrameType.BODY and f.parentJoint == joint]


def check_body_inertia(inertia, links, source):
    """Raise :class:`ModelError` if a rigid body (a ``pin.Inertia``) is not physically consistent.

    A rigid body needs ``m >= 0`` and a symmetric positive semi-definite rotational
    inertia about its CoM whose principal moments satisfy ``I_a + I_b >= I_c``,
    to :data:`INERTIA_TOL` of its largest principal moment.  ``links`` (the URDF
    links merged into the body) name it in the error.
    """
    what = (f"link {links[0]!r}" if len(links) == 1 else
            f"the body of links {', '.join(map(repr, links))} (merged by fixed joints)")
    m, moments = inertia.mass, np.linalg.eigvalsh(inertia.inertia)
    # The body's scale: its rotational inertia about its joint, where merging rounds (a point
    # mass merged at an offset leaves moments of 1e-20 around zero).
    r = inertia.lever
    about_joint = inertia.inertia + m * (r @ r * np.eye(3) - np.outer(r, r))
    tol = INERTIA_TOL * max(np.abs(moments).max(), np.linalg.eigvalsh(about_joint).max())
    if m == 0 and moments.max() > 0:
        raise ModelError(f"URDF {source}: {what} has zero mass but non-zero inertia")
    if moments.min() < -tol:
        raise ModelError(f"URDF {source}: {what} is not physically consistent: its inertia has a "
                         f"negative principal moment {moments.min():.6g} (largest {moments.max():.6g})")
    a, b, c = moments
    if a + b < c - tol:
        raise ModelError(f"URDF {source}: {what} is not physically consistent: its principal "
                         f"moments ({a:.6g}, {b:.6g}, {c:.6g}) violate the triangle inequality "
                         "I1 + I2 >= I3")


def check_link_mass(link, source):
    """Raise :class:`ModelError` if the <inertial> of ``link`` is non-numeric, non-finite or of negative mass.

    The inertia itself is checked on the merged bodies (:func:`check_body_inertia`).
    """
    inertial = link.find("inertial")
    if inertial is None:
        return
    name = link.get("name")
    mass_el, inertia_el = inertial.find("mass"), inertial.find("inertia")
    try:
        m = float(mass_el.get("value")) if mass_el is not None else 0.0
        inertia = [float(inertia_el.get(k, "0")) if inertia_el is not None else 0.0 for k in _INERTIA_KEYS]
    except (TypeError, ValueError) as exc:
        raise ModelError(f"URDF {source}: link {name!r} has a non-numeric inertial: {exc}") from None
    if not (math.isfinite(m) and np.isfinite(inertia).all()):
        raise ModelError(f"URDF {source}: link {name!r} has a non-finite mass or inertia")
    if m < 0:
        raise ModelError(f"URDF {source}: link {name!r} has negative mass {m}")


def root_link(root):
    """Name of the root link of a parsed URDF (the link that is no joint's child)."""
    children = {j.find("child").get("link") for j in root.findall("joint") if j.find("child") is not None}
    roots = [lk.get("name") for lk in root.findall("link") if lk.get("name") not in children]
    return roots[0] if len(roots) == 1 else None


def scale_link_inertial(xml, link_name, factor):
    """URDF text with the mass and inertia of ``link_name`` (``None``: the root link) times ``factor``.

    Used to give a controller a model that is off from the plant by a known amount.
    """
    root = ET.fromstring(xml)
    link_name = link_name or root_link(root)
    link = next((lk for lk in root.findall("link") if lk.get("name") == link_name), None)
    if link is None or link.find("inertial") is None:
        raise ModelError(f"URDF has no link {link_name!r} with an <inertial>")
    inertial = link.find("inertial")
    mass = inertial.find("mass")
    mass.set("value", repr(float(mass.get("value")) * factor))
    inertia = inertial.find("inertia")
    for key in _INERTIA_KEYS:
        inertia.set(key, repr(float(inertia.get(key, "0")) * factor))
    return ET.tostring(root, encoding="unicode")


# -- the transformations of describe_urdf -------------------------------------------------

def _parse(xml, source):
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise ModelError(f"URDF {source} does not parse: {exc}") from None
    if root.tag != "robot":
        raise ModelError(f"URDF {source} does not parse: root element is <{root.tag}>, "
                         "expected <robot>")
    if root.find("link") is None:
        raise ModelError(f"URDF {source} has no <link>: not a robot description")
    root.set("name", root.get("name") or "robot")     # urdfdom requires one; nothing depends on it
    for joint in root.findall("joint"):
        for tag in ("parent", "child"):
            if joint.find(tag) is None or not joint.find(tag).get("link"):
                raise ModelError(f"URDF {source} does not parse: joint {joint.get('name')!r} "
                                 f"has no <{tag} link=...>")
    _check_tree(root, source)
    _check_vectors(root, source)
    return root


def _check_tree(root, source):
    """Links and joints named once each, every joint between links of the URDF, one tree."""
    links = [lk.get("name") for lk in root.findall("link")]
    joints = root.findall("joint")
    for kind, names in (("link", links), ("joint", [j.get("name") for j in joints])):
        if not all(names):
            raise ModelError(f"URDF {source}: a <{kind}> has no name")
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ModelError(f"URDF {source}: {kind} names used more than once: {twice}")
    parent_joint, children = {}, {}
    for joint in joints:
        name, parent, child = joint.get("name"), joint.find("parent").get("link"), joint.find("child").get("link")
        for tag, link in (("parent", parent), ("child", child)):
            if link not in links:
                raise ModelError(f"URDF {source}: joint {name!r} has {tag} link {link!r}, which is not a "
                                 "<link> of the URDF")
        if child in parent_joint:
            raise ModelError(f"URDF {source}: link {child!r} is the child of two joints, "
                             f"{parent_joint[child]!r} and {name!r}; a URDF is a tree")
        parent_joint[child] = name
        children.setdefault(parent, []).append(child)
    roots = [lk for lk in links if lk not in parent_joint]
    if len(roots) != 1:
        raise ModelError(f"URDF {source}: {len(roots)} root links (links that are no joint's child) "
                         f"{roots[:5]}; a URDF is one tree with one root")
    reached, todo = set(roots), list(roots)
    while todo:
        for child in children.get(todo.pop(), ()):
            reached.add(child)
            todo.append(child)
    if len(reached) != len(links):
        raise ModelError(f"URDF {source}: links {sorted(set(links) - reached)[:5]} form a loop of joints, "
                         f"apart from the root {roots[0]!r}; a URDF is a tree")


#: Elements with 3-vector attributes, as urdfdom reads them.
_VECTORS = {"origin": ("xyz", "rpy"), "axis": ("xyz",)}


def _check_vectors(root, source):
    """Every origin and axis of the joints and links: three finite numbers; a moving joint's axis non-zero
    (a fixed joint's axis means nothing, and many URDFs write 0 0 0)."""
    for kind in ("joint", "link"):
        for element in root.findall(kind):
            moves = kind == "joint" and element.get("type") in _SHAPE_JOINT_TYPES
            for el in element.iter():
                for key in _VECTORS.get(el.tag, ()):
                    text = el.get(key)
                    if text is None:
                        continue
                    try:
                        v = np.array(text.split(), float)
                    except ValueError:
                        v = np.array([])
                    if v.shape != (3,) or not np.isfinite(v).all() or (el.tag == "axis" and moves and not v.any()):
                        kind_of = "a non-zero axis" if el.tag == "axis" and moves else "three finite numbers"
                        raise ModelError(f"URDF {source}: {kind} {element.get('name')!r} has <{el.tag} "
                                         f'{key}="{text}">; expected {kind_of}')


#: How urdfdom reports (console_bridge, on standard error): ``Error:   <text>`` then
#: ``         at line <n> in <its source file>``.
_CONSOLE_BRIDGE = re.compile(r"^(?:Error|Warning|Info|Debug): +(.*)\n +at line \d+ in \S+\n?", re.M)
_STDERR = threading.Lock()


@contextlib.contextmanager
def _urdfdom_messages():
    """Keep what urdfdom prints off the terminal: file descriptor 2 goes to a file for the duration
    and the list yielded receives urdfdom's messages on exit.  Anything else written to it meanwhile
    (another thread's log line) is written to standard error then.  One parse at a time."""
    said = []
    with _STDERR, tempfile.TemporaryFile() as capture:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(capture.fileno(), 2)
        try:
            yield said
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            text = capture.read().decode(errors="replace")
            said += [" ".join(m.group(1).split()) for m in _CONSOLE_BRIDGE.finditer(text)]
            others = _CONSOLE_BRIDGE.sub("", text)
            if others:
                os.write(2, others.encode())


def _drop_world_root(root, source):
    """Remove a root link named ``world`` and the joint to its child (see module doc)."""
    if root_link(root) != "world":
        return ""
    out = [j for j in root.findall("joint") if j.find("parent").get("link") == "world"]
    if len(out) != 1 or out[0].get("type") not in ("fixed", "floating"):
        kinds = [(j.get("name"), j.get("type")) for j in out]
        raise ModelError(f"URDF {source}: the root link 'world' is attached to the robot by {kinds}; "
                         "a floating base needs exactly one fixed or floating joint from 'world' "
                         "(it is then dropped and its child is the base)")
    world = next(lk for lk in root.findall("link") if lk.get("name") == "world")
    root.remove(world)
    root.remove(out[0])
    return "world"


def _number(element, key, joint, source, default=0.0):
    if element is None or element.get(key) is None:
        return default
    try:
        value = float(element.get(key))
    except ValueError:
        raise ModelError(f"URDF {source}: joint {joint!r} has a non-numeric {key} "
                         f"{element.get(key)!r}") from None
    if math.isnan(value):
        raise ModelError(f"URDF {source}: joint {joint!r} has {key} = nan")
    return value


def _mimic_of(joint, joints, source):
    el, name = joint.find("mimic"), joint.get("name")
    leader = el.get("joint")
    if leader == name or leader not in joints:
        raise ModelError(f"URDF {source}: joint {name!r} mimics {leader!r}, which is "
                         f"{'itself' if leader == name else 'not a joint of the URDF'}")
    return leader, _number(el, "multiplier", name, source, 1.0), _number(el, "offset", name, source)


def _lock_positions(joints, locked, mimic, source):
    """Positions of every joint to lock: the user's, and the mimic groups (see module doc)."""
    unknown = sorted(set(locked) - set(joints))
    if unknown:
        raise ModelError(f"URDF {source}: cannot lock {unknown}: no such joints (joints: {sorted(joints)})")
    for name, value in locked.items():
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ModelError(f"URDF {source}: locked position of {name!r} must be a finite number, got {value!r}")
        if joints[name].get("type") not in _SHAPE_JOINT_TYPES:
            raise ModelError(f"URDF {source}: cannot lock joint {name!r} of type {joints[name].get('type')!r}")
        if _clip_to_limits(joints[name], value, source) != value:
            limit = joints[name].find("limit")
            raise ModelError(f"URDF {source}: cannot lock {name!r} at {value:g}: outside its range "
                             f"[{_number(limit, 'lower', name, source):g}, {_number(limit, 'upper', name, source):g}]")
    followers = {n: _mimic_of(j, joints, source) for n, j in joints.items() if j.find("mimic") is not None}
    if followers and mimic == "error":
        raise ModelError(f"URDF {source}: joints {sorted(followers)} are mimic joints; pass mimic='lock' "
                         "(or lock them) to hold each mimic group at one position")
    locked = {n: float(v) for n, v in locked.items()}
    for name in followers:
        chain, leader = [name], followers[name][0]
        while leader in followers and leader not in chain:       # a mimic of a mimic
            chain.append(leader)
            leader = followers[leader][0]
        if leader in chain:
            raise ModelError(f"URDF {source}: mimic joints {chain} mimic each other in a loop")
        if leader not in locked:
            locked[leader] = _clip_to_limits(joints[leader], 0.0, source)
        value = locked[leader]
        for follower in reversed(chain):
            _, multiplier, offset = followers[follower]
            value = multiplier * value + offset
            locked.setdefault(follower, value)
    return locked


def _clip_to_limits(joint, value, source):
    limit = joint.find("limit")
    lo, hi = (_number(limit, k, joint.get("name"), source) for k in ("lower", "upper"))
    return float(np.clip(value, lo, hi)) if joint.get("type") != "continuous" and lo < hi else value


def _origin(joint):
    el = joint.find("origin")
    xyz = np.array((el.get("xyz") if el is not None and el.get("xyz") else "0 0 0").split(), float)
    rpy = np.array((el.get("rpy") if el is not None and el.get("rpy") else "0 0 0").split(), float)
    return xyz, pin.rpy.rpyToMatrix(*rpy)


def _lock(joint, position, source):
    """Make ``joint`` fixed at ``position``: URDF child frame = origin * motion(axis, position)."""
    axis_el = joint.find("axis")
    axis = np.array((axis_el.get("xyz") if axis_el is not None else "1 0 0").split(), float)
    if not np.linalg.norm(axis) > 0:
        raise ModelError(f"URDF {source}: joint {joint.get('name')!r} has a zero axis")
    axis = axis / np.linalg.norm(axis)
    xyz, R = _origin(joint)
    if joint.get("type") == "prismatic":
        xyz = xyz + R @ axis * position
    else:
        R = R @ pin.exp3(axis * position)
    for tag in ("origin", "axis", "limit", "dynamics", "mimic", "safety_controller", "calibration"):
        for el in joint.findall(tag):
            joint.remove(el)
    joint.set("type", "fixed")
    ET.SubElement(joint, "origin", xyz=_numbers(xyz), rpy=_numbers(pin.rpy.matrixToRpy(R)))


def _numbers(v):
    return " ".join(f"{float(x):.17g}" for x in v)


def _normalize_joint(joint, unlimited_position):
    """A movable joint as both parsers read it: a ``<limit>`` with numbers; an unlimited revolute
    joint is continuous, an unlimited prismatic one gets +-1e10 m."""
    limit = joint.find("limit")
    if limit is None:
        limit = ET.SubElement(joint, "limit")
    for key in ("effort", "velocity"):
        limit.set(key, limit.get(key, "0"))
    if unlimited_position and joint.get("type") == "revolute":
        joint.set("type", "continuous")
    if unlimited_position:
        limit.set("lower", "-1e10")
        limit.set("upper", "1e10")


def _revolute_continuous(xml):
    """For Pinocchio: continuous joints as revolute joints of range +-1e10 (a plain angle, not the
    (cos, sin) pair Pinocchio would use); :func:`build_pinocchio_model` then unlimits them."""
    root = ET.fromstring(xml)
    for joint in root.findall("joint"):
        if joint.get("type") == "continuous":
            joint.set("type", "revolute")
    return ET.tostring(root, encoding="unicode")
