"""Random floating-base kinematic trees as URDF text, for property tests.

Branches, revolute/continuous/prismatic joints, offset and rotated joint frames,
arbitrary axes, off-centre rotated link inertias and merged fixed links.
"""
import numpy as np
from scipy.spatial.transform import Rotation


def _inertial(rng, scale=1.0):
    m = rng.uniform(0.5, 5.0) * scale
    # principal moments from a random box: always physically consistent
    a, b, c = rng.uniform(0.05, 0.5, 3)
    moments = m / 12 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    R = Rotation.random(random_state=rng).as_matrix()
    I = R @ np.diag(moments) @ R.T
    com = rng.uniform(-0.2, 0.2, 3)
    return (f'<inertial><origin xyz="{com[0]} {com[1]} {com[2]}"/><mass value="{m}"/>'
            f'<inertia ixx="{I[0,0]}" ixy="{I[0,1]}" ixz="{I[0,2]}" iyy="{I[1,1]}" '
            f'iyz="{I[1,2]}" izz="{I[2,2]}"/></inertial>')


def random_tree_urdf(seed, n_joints=6, fixed_links=1, base_scale=5.0):
    """URDF text of a random tree with ``n_joints`` 1-DoF joints on a floating base."""
    rng = np.random.default_rng(seed)
    links = [f'<link name="base">{_inertial(rng, base_scale)}</link>']
    joints = []
    kinds = ["revolute", "continuous", "prismatic"]
    for i in range(n_joints + fixed_links):
        parent = "base" if i == 0 else f"link{rng.integers(-1, i)}".replace("link-1", "base")
        kind = "fixed" if i >= n_joints else kinds[rng.integers(0, 3)] if i else "revolute"
        xyz = rng.uniform(-0.5, 0.5, 3)
        rpy = rng.uniform(-np.pi, np.pi, 3)
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        limit = ('<limit lower="-3" upper="3" effort="50" velocity="5"/>'
                 if kind in ("revolute", "prismatic") else "")
        joints.append(f'<joint name="j{i}" type="{kind}"><parent link="{parent}"/>'
                      f'<child link="link{i}"/><origin xyz="{xyz[0]} {xyz[1]} {xyz[2]}" '
                      f'rpy="{rpy[0]} {rpy[1]} {rpy[2]}"/>'
                      f'<axis xyz="{axis[0]} {axis[1]} {axis[2]}"/>{limit}</joint>')
        links.append(f'<link name="link{i}">{_inertial(rng)}</link>')
    return '<robot name="random_tree">' + "".join(links + joints) + "</robot>"


def _origin_matrix(el):
    o = el.find("origin")
    xyz = [float(v) for v in (o.get("xyz", "0 0 0") if o is not None else "0 0 0").split()]
    rpy = [float(v) for v in (o.get("rpy", "0 0 0") if o is not None else "0 0 0").split()]
    g = np.eye(4)
    g[:3, :3] = Rotation.from_euler("xyz", rpy).as_matrix()     # URDF rpy: extrinsic x-y-z
    g[:3, 3] = xyz
    return g


def _set_origin(el, g):
    import xml.etree.ElementTree as ET
    o = el.find("origin")
    if o is None:
        o = ET.SubElement(el, "origin")
    o.set("xyz", " ".join(repr(float(v)) for v in g[:3, 3]))
    o.set("rpy", " ".join(repr(float(v)) for v in Rotation.from_matrix(g[:3, :3]).as_euler("xyz")))


def rebase_urdf(xml, g_1c):
    """The same robot with the base frame moved to ``{c} = {1} g_1c`` (the root link's
    inertial and the origins of the joints it parents are re-expressed in {c})."""
    import xml.etree.ElementTree as ET
    root = ET.fromstring(xml)
    children = {j.find("child").get("link") for j in root.findall("joint")}
    base = next(link for link in root.findall("link") if link.get("name") not in children)
    g_c1 = np.linalg.inv(g_1c)
    inertial = base.find("inertial")
    if inertial is not None:
        _set_origin(inertial, g_c1 @ _origin_matrix(inertial))
    for joint in root.findall("joint"):
        if joint.find("parent").get("link") == base.get("name"):
            _set_origin(joint, g_c1 @ _origin_matrix(joint))
    return ET.tostring(root, encoding="unicode")
