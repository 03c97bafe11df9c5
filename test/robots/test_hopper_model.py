"""The hopper URDFs against the numbers of [Feurstein2021] Tables 4.4-4.5, 4.9-4.10, 4.13, and the
MuJoCo plant against the controller's Pinocchio model."""
import math

import numpy as np
import pytest

from helpers import assert_close
from floating_base_control.robots.hopper.controller import HopperController, HopperGains
from floating_base_control.robots.hopper.coordinates import polar_angle
from floating_base_control.robots.hopper.locked_frame import LockedFrameAngle
from floating_base_control.robots.hopper.model import PLANE_NORMAL
from floating_base_control.robots.hopper.model import hopper_model, planar_pose, planar_twist
from floating_base_control.sim.hopper import HopperPlant
from floating_base_control.resources import hopper_urdf
from floating_base_control.experiments.hopper.scenario import experiment


@pytest.fixture(scope="module")
def prismatic():
    return hopper_model("prismatic", 9.8)


@pytest.fixture(scope="module")
def revolute():
    return hopper_model("revolute", 9.81)


def planar_blocks(model, q):
    """The thesis' SE(2) blocks ``M_bb`` (v_x, v_y, omega), ``M_bq`` and ``M_qq`` from the 3D model:
    thesis x, y, omega are base x, base z and the rotation about -y."""
    kin = model.kinematics(np.atleast_1d(q))
    rows = np.array([[0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 0, 1], np.r_[PLANE_NORMAL, 0, 0, 0]], float)
    return rows @ kin.M_b @ rows.T, rows @ kin.M_bq, kin.M_q


def test_prismatic_inertia_is_the_thesis_one(prismatic):
    M_bb, M_bq, M_qq = planar_blocks(prismatic, 0.114)
    # [Feurstein2021] Sect. 4.2 at q1 = 0.114 (digest check): 0.0057 = m_f q1, 6.498e-4 = m_f q1^2
    expected = np.array([[1.007, 0, 0], [0, 1.007, 0.0057], [0, 0.0057, 6.498e-4]])
    assert_close(M_bb, expected, 1e-9, "M_bb")
    assert_close(M_bq.ravel(), [0.05, 0, 0], 1e-12, "M_bq")
    assert M_qq[0, 0] == pytest.approx(0.05, rel=1e-12)
    # shape inertia m_b m_f / (m_b + m_f), independent of q1
    assert prismatic.reduced_shape_inertia([0.114])[0, 0] == pytest.approx(0.957 * 0.05 / 1.007, rel=1e-9)
    assert prismatic.mass == pytest.approx(1.007, rel=1e-12)


def test_revolute_locked_frame_rate_is_the_thesis_one(revolute):
    """``d theta_bc / dq1 = [M_bb^-1 M_bq]_omega`` ([Feurstein2021] eq. 3.70): the digest's values
    (T4), and the thesis' closed form of ``theta_bc`` (Appendix A.2, lines 223-230)."""
    for q1, T_omega in ((0.3, 0.27013), (1.0, 0.22939), (1.7802, 0.10234), (2.5, -0.13351)):
        A = revolute.mechanical_connection([q1])
        assert PLANE_NORMAL @ A[:3, 0] == pytest.approx(T_omega, abs=6e-6)
    m01, m02, m11 = 0.835, 0.122, 0.05
    Ac, B = m01 * m11 + m02 * m11, 2 * m01 * m11 + m02 * m11
    a, b = m01 * m02 + 5 * m01 * m11 + 2 * m02 * m11, 2 * B
    s = math.sqrt(a * a - b * b)

    def closed_form(q):
        return B * q / b + 2 * math.atan(math.tan(q / 2) * s / (a + b)) * (Ac * b - B * a) / (b * s)
    table = LockedFrameAngle(revolute, 0.0, 3.0)
    for q in (0.3, 1.0, 1.7802, 2.5):
        assert table(q) == pytest.approx(closed_form(q), abs=1e-7)
    assert table(1.7802) == pytest.approx(0.39638, abs=1e-5)
    # A knee without limits: tabulated over one turn, continued by whole turns (the closed form's
    # atan branch moves by pi at each odd multiple of pi).
    turn = LockedFrameAngle(revolute, -math.pi, math.pi, periodic=True)
    C = (Ac * b - B * a) / (b * s)
    for q in (4.0, 8.0, -4.0):
        branch = 2 * math.pi * math.floor((q + math.pi) / (2 * math.pi))
        assert turn(q) - turn(1.0) == pytest.approx(closed_form(q) + branch * C - closed_form(1.0), abs=1e-7)
    assert revolute.reduced_shape_inertia([1.7802])[0, 0] == pytest.approx(1.6037e-4, rel=1e-4)


def test_revolute_initial_states_of_table_4_13(revolute):
    ctrl = HopperController(revolute, HopperGains(variant="II"))
    for name, r_cf, alpha_deg in (("I", 0.1411, 0.0), ("V", 0.1411, 30.0), ("VI", 0.1411, -0.4)):
        g1, q, V1, qdot = experiment("revolute", name).initial_state()
        geo = ctrl.geometry(q)
        d = g1[:3, :3] @ (geo.p_f - geo.c)
        assert np.linalg.norm(d) == pytest.approx(r_cf, abs=5e-5)
        assert math.degrees(polar_angle(tuple(d))[0]) == pytest.approx(alpha_deg, abs=0.02)
    # foot of the Exp I-IV state (digest): (-0.00853, 0.14920)
    g1, q, _, _ = experiment("revolute", "I").initial_state()
    geo = ctrl.geometry(q)
    assert_close((g1[:3, :3] @ geo.p_f + g1[:3, 3])[[0, 2]], [-0.00853, 0.14920], 3e-5, "foot")
    # Exp VI starts at an apex with 0.23 m/s forward CoM speed (body-frame base velocity)
    g1, q, V1, qdot = experiment("revolute", "VI").initial_state()
    h = revolute.momentum_map(g1, q, V1, qdot)
    assert_close(h[3:] / revolute.mass, [0.2328, 0.0, 0.0052], 2e-4, "CoM velocity")


def test_tabulated_energies_fix_g(prismatic):
    """``E_0 = 2.9047`` (Table 4.8) is the prismatic potential at g = 9.8 and ``E(0) = 2.8382``
    (Table 4.12) the revolute Exp V potential at g = 9.81: the two values of g used."""
    def energy(model, name, robot):
        ctrl = HopperController(model, HopperGains(variant="II"))
        g1, q, V1, qdot = experiment(robot, name).initial_state()
        return ctrl.energy(g1, q, V1, qdot)
    assert energy(prismatic, "I", "prismatic") == pytest.approx(2.9047, abs=5e-5)
    assert energy(hopper_model("prismatic", 9.81), "I", "prismatic") == pytest.approx(2.9077, abs=5e-5)
    assert energy(hopper_model("revolute", 9.81), "V", "revolute") == pytest.approx(2.8382, abs=5e-5)
    assert energy(hopper_model("revolute", 9.8), "V", "revolute") == pytest.approx(2.8353, abs=5e-5)
    assert energy(hopper_model("revolute", 9.8), "I", "revolute") == pytest.approx(2.8645, abs=5e-5)


@pytest.mark.parametrize("robot", ["prismatic", "revolute"])
@pytest.mark.parametrize("base", ["planar", "free"])
def test_plant_is_the_controller_model(robot, base, rng):
    """Same mass, momentum and energy in MuJoCo (either base joint) as in Pinocchio, and the
    plant's sensors read the state it was given."""
    model = hopper_model(robot, 9.81)
    plant = HopperPlant(model, hopper_urdf(robot), base=base)
    ctrl = HopperController(model, HopperGains(variant="II"))
    q = np.array([rng.uniform(0.08, 0.15) if robot == "prismatic" else rng.uniform(0.5, 2.5)])
    g1 = planar_pose(*rng.normal(size=2), rng.uniform(-3, 3))
    V1, qdot = planar_twist(*rng.normal(size=3)), rng.normal(size=1)
    plant.set_state(g1, q, V1, qdot)
    meas = plant.sense()
    assert_close(meas.g1, g1, 1e-12, "odometry pose")
    assert_close(np.r_[meas.V1, meas.q, meas.qdot], np.r_[V1, q, qdot], 1e-12, "odometry twist, encoders")
    com, com_vel, L = plant.com_and_momentum()
    h = model.momentum_map(g1, q, V1, qdot)
    assert plant.mass == pytest.approx(model.mass, rel=1e-12)
    assert_close(model.mass * com_vel, h[3:], 1e-11, "linear momentum")
    assert_close(L + np.cross(com, model.mass * com_vel), h[:3], 1e-11, "angular momentum")
    assert plant.energy() == pytest.approx(ctrl.energy(g1, q, V1, qdot), rel=1e-11)
