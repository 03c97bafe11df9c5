"""The free-floating KUKA LWR 4+ of [Mishra2023] Sec. V-B: published parameters -> URDF.

``python test/lwr_gaz2016.py > urdf/lwr4_free_floating.urdf`` writes the URDF
that the package ships; ``test_lwr_urdf.py`` checks that the shipped file is
exactly this script's output, so every number in it is traceable to:

* Link masses, CoMs and inertias (about the CoM, axes of the classic-DH frame
  ``i``): C. Gaz, F. Flacco, A. De Luca, "Extracting feasible robot parameters
  from dynamic coefficients using nonlinear optimization methods", ICRA 2016,
  as given in kjyv/FloBaRoID ``model/kuka_lwr4_gaz.urdf`` (commit 1aad0837) and
  an independent MATLAB copy with the same numbers (``load_Kuka_dynamic_pars.m``);
  classic DH with ``d = (0, 0, 0.4, 0, 0.39, 0, 0)``.
* URDF kinematics (joint origins, axes, limits): CentroEPiaggio/kuka-lwr,
  ``lwr_description/model/kuka_lwr.urdf.xacro`` (commit 00915b55); its link
  frames are parallel to the base at ``q = 0`` and its joint axes
  ``z, -y, z, y, z, -y, z`` are the DH ``z_(i-1)`` axes, so the joint angles are
  the DH angles.
* Base: [Mishra2023] Sec. V-B2: 3.5 kg, principal inertia (0.12, 0.14, 0.12) kg m^2
  about its CoM, axes of the base frame.  The paper does not say where the arm
  is mounted; here the LWR's own base plate (not identified, merged into the
  3.5 kg) sits at the base frame origin, which is the base CoM.

The published set is not physically consistent (links 1, 5, 6 have a negative
principal moment, links 2, 3 and 7 violate the triangle inequality; many entries
are the optimiser's box bounds).  :func:`nearest_consistent_inertia` projects each
rotational inertia about the CoM to the nearest consistent one in the Frobenius
norm, keeping mass and CoM (hence every gravity moment ``m c``) and the principal
axes: only the principal moments move, to the nearest point of the cone
``I_a + I_b >= I_c`` (which implies ``I >= 0``).
"""
import numpy as np

#: Gaz et al. 2016, classic-DH link frames: mass (kg), CoM (m), inertia about the CoM
#: (kg m^2) as xx, xy, xz, yy, yz, zz.
MASS = np.array([4.1948152162, 4.2996847737, 3.658530333, 2.3846673548, 1.7035567183,
                 0.4000713156, 0.6501439811])
COM = np.array([[-0.0216387515, 0.01, -0.0376881829],
                [0.0003284751, -0.0041132249, 0.0823647642],
                [0.0002593328, 0.1137431845, -0.000100257],
                [-0.0014648843, -0.0000461, 0.148580959],
                [-0.0003791484, -0.0553526131, -0.0101255137],
                [0.0020739022, 0.0586184696, -0.044799983],
                [-0.0004601303, 0.0014789221, 0.0715608282]])
INERTIA = np.array([[0.01, 0.01, 0.01, 0.0018932828, 0.01, 0.01],
                    [0.0474108647, -0.00000621, 0.0001166457, 0.05, -0.0009141575, 0.001601901],
                    [0.0469510749, -0.000271431, 4.09e-8, 0.0008344566, -0.000577228, 0.05],
                    [0.0124233226, 0.000000225, -0.0005187982, 0.0072708907, -0.0005484476,
                     0.0099884782],
                    [0.006322648, -0.0002163196, 0.00000652, 0.0012020203, -0.005, 0.0070806218],
                    [0.0005278646, 0.0000483, -0.0000375, 0, -0.0010605344, 0.0034899625],
                    [0, -0.000000577, 0, 0.0000323, 0, 0.0001187527]])
DH_D = (0.0, 0.0, 0.4, 0.0, 0.39, 0.0, 0.0)
DH_ALPHA = (np.pi / 2, -np.pi / 2, -np.pi / 2, np.pi / 2, np.pi / 2, -np.pi / 2, 0.0)
#: DH frame 0 sits at the shoulder (joint 2 axis), 0.3105 m above the base origin.
DH_BASE_HEIGHT = 0.3105

#: CentroEPiaggio kinematics: joint origin z offsets (m) in the parent, axes, limits (deg),
#: velocity limits (deg/s), efforts (N m).
JOINT_Z = (0.11, 0.2005, 0.2, 0.2, 0.2, 0.19, 0.078)
JOINT_AXIS = ((0, 0, 1), (0, -1, 0), (0, 0, 1), (0, 1, 0), (0, 0, 1), (0, -1, 0), (0, 0, 1))
JOINT_LIMIT_DEG = (170, 120, 170, 120, 170, 120, 170)
JOINT_VELOCITY_DEG = (110, 110, 128, 128, 204, 184, 184)
JOINT_EFFORT = (176, 176, 100, 100, 100, 38, 38)

BASE_MASS = 3.5
BASE_INERTIA = (0.12, 0.14, 0.12)

#: Margin (kg m^2) kept inside the triangle inequalities, so that rounding and other
#: simulators' own checks (MuJoCo's) never see a boundary case.
MARGIN = 1e-7


def inertia_matrix(row):
    xx, xy, xz, yy, yz, zz = row
    return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])


def dh(theta, d, alpha):
    """Classic DH transform with ``a = 0``: RotZ(theta) TransZ(d) RotX(alpha)."""
    ct, st, ca, sa = np.cos(theta), np.sin(theta), np.cos(alpha), np.sin(alpha)
    return np.array([[ct, -st * ca, st * sa, 0.0], [st, ct * ca, -ct * sa, 0.0],
                     [0.0, sa, ca, d], [0.0, 0.0, 0.0, 1.0]])


def dh_frames_at_zero():
    """Poses of the DH frames 1..7 in the base frame at ``q = 0``."""
    T = np.eye(4)
    T[2, 3] = DH_BASE_HEIGHT
    frames = []
    for d, alpha in zip(DH_D, DH_ALPHA):
        T = T @ dh(0.0, d, alpha)
        frames.append(T.copy())
    return frames


def urdf_link_origins():
    """Origins of the URDF link frames 1..7 in the base frame at ``q = 0`` (all parallel)."""
    return np.column_stack([np.zeros(7), np.zeros(7), np.cumsum(JOINT_Z)])


def published_in_urdf_frames():
    """``(mass, com, inertia)`` of links 1..7 in the URDF link frames (inertia 3x3 about the CoM)."""
    coms, inertias = [], []
    for T, origin, c, row in zip(dh_frames_at_zero(), urdf_link_origins(), COM, INERTIA):
        R = T[:3, :3]
        coms.append(R @ c + T[:3, 3] - origin)
        inertias.append(R @ inertia_matrix(row) @ R.T)
    return MASS.copy(), np.array(coms), np.array(inertias)


def nearest_consistent_inertia(inertia, margin=MARGIN):
    """Nearest (Frobenius) rotational inertia with principal moments ``I_a + I_b >= I_c + margin``.

    The consistent set is orthogonally invariant, so the nearest point keeps the
    principal axes and moves the principal moments to the nearest point of the
    polyhedral cone of the triangle inequalities (a 3-variable QP).
    """
    moments, axes = np.linalg.eigh(inertia)
    G = np.array([[1.0, 1.0, -1.0], [1.0, -1.0, 1.0], [-1.0, 1.0, 1.0]])
    if (G @ moments >= margin).all():
        return inertia.copy()
    best = None
    for active in ([0], [1], [2], [0, 1], [0, 2], [1, 2]):       # KKT by active sets
        Ga = G[active]
        lam = np.linalg.solve(Ga @ Ga.T, margin - Ga @ moments)
        x = moments + Ga.T @ lam
        if (lam >= 0).all() and (G @ x >= margin * (1 - 1e-9)).all():
            if best is None or np.sum((x - moments) ** 2) < np.sum((best - moments) ** 2):
                best = x
    return axes @ np.diag(best) @ axes.T


def projected_parameters():
    """``(mass, com, inertia)`` in URDF link frames, inertias projected to consistency."""
    mass, com, inertia = published_in_urdf_frames()
    return mass, com, np.array([nearest_consistent_inertia(I) for I in inertia])


def _fmt(x):
    return f"{x:.12g}"


def _inertial_xml(mass, com, inertia):
    return (f'    <inertial>\n      <origin xyz="{" ".join(map(_fmt, com))}" rpy="0 0 0"/>\n'
            f'      <mass value="{_fmt(mass)}"/>\n'
            f'      <inertia ixx="{_fmt(inertia[0, 0])}" ixy="{_fmt(inertia[0, 1])}" '
            f'ixz="{_fmt(inertia[0, 2])}" iyy="{_fmt(inertia[1, 1])}" '
            f'iyz="{_fmt(inertia[1, 2])}" izz="{_fmt(inertia[2, 2])}"/>\n    </inertial>\n')


HEADER = """<?xml version="1.0"?>
<!--
  Free-floating KUKA LWR 4+ of Mishra et al. [Mishra2023], Sec. V-B: the arm on a
  3.5 kg base with principal inertia (0.12, 0.14, 0.12) kg m^2.
  GENERATED by test/lwr_gaz2016.py (do not edit; test_lwr_urdf.py checks it).

  Link masses and CoMs: Gaz, Flacco, De Luca, ICRA 2016 ("Extracting feasible
  robot parameters from dynamic coefficients using nonlinear optimization
  methods"), moved from the classic-DH frames to these link frames.  Their
  inertias about the CoM are NOT physically consistent as published; each is
  replaced by the nearest consistent tensor (Frobenius norm, same principal
  axes, triangle inequalities with a 1e-7 kg m^2 margin).  Masses and CoMs are
  unchanged.  Kinematics and limits: CentroEPiaggio/kuka-lwr (commit 00915b55).
  Base: CoM at the base frame origin, the arm mounted there (the paper does not
  say where; see docs/explanation/geometry.md).
-->
<robot name="lwr4_free_floating">
"""


def urdf_text():
    mass, com, inertia = projected_parameters()
    base = np.diag(BASE_INERTIA)
    out = [HEADER, '  <link name="base_link">\n',
           _inertial_xml(BASE_MASS, np.zeros(3), base),
           '    <visual><geometry><box size="0.3 0.3 0.3"/></geometry></visual>\n  </link>\n']
    parent = "base_link"
    for i in range(7):
        child = f"lwr_link_{i + 1}"
        lim = np.deg2rad(JOINT_LIMIT_DEG[i])
        out.append(f'  <joint name="lwr_joint_{i + 1}" type="revolute">\n'
                   f'    <parent link="{parent}"/>\n    <child link="{child}"/>\n'
                   f'    <origin xyz="0 0 {_fmt(JOINT_Z[i])}" rpy="0 0 0"/>\n'
                   f'    <axis xyz="{" ".join(map(str, JOINT_AXIS[i]))}"/>\n'
                   f'    <limit lower="{_fmt(-lim)}" upper="{_fmt(lim)}" '
                   f'effort="{JOINT_EFFORT[i]}" '
                   f'velocity="{_fmt(np.deg2rad(JOINT_VELOCITY_DEG[i]))}"/>\n  </joint>\n')
        out.append(f'  <link name="{child}">\n' + _inertial_xml(mass[i], com[i], inertia[i])
                   + '  </link>\n')
        parent = child
    out.append("</robot>\n")
    return "".join(out)


if __name__ == "__main__":
    print(urdf_text(), end="")
