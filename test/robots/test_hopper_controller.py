"""The hopping controller of [Feurstein2021] eqs. 4.16-4.26 against finite differences and the
reduced equations of [Mishra2023]: rates, wrenches, power and the contact hysteresis."""
import math
from dataclasses import fields, replace

import numpy as np
import pytest

from helpers import assert_close
from floating_base_control import InputError, ModelError
from floating_base_control.lie import rotation_of
from floating_base_control.robots.hopper import controller as controller_module, coordinates, laws
from floating_base_control.robots.hopper.contact import ContactDetector
from floating_base_control.robots.hopper.controller import VARIANTS, HopperController, HopperGains
from floating_base_control.robots.hopper.coordinates import foot_height, polar_angle
from floating_base_control.robots.hopper.model import PLANE_NORMAL, HopperMeasurements, base_pitch
from floating_base_control.sim.hopper import HopperPlant
from floating_base_control.resources import hopper_urdf
from floating_base_control.lie import exp
from floating_base_control.robots.hopper.model import hopper_model, planar_pose, planar_twist

ROBOTS = {"prismatic": (0.08, 0.15), "revolute": (1.2, 2.3)}


@pytest.fixture(scope="module", params=list(ROBOTS))
def robot(request):
    return request.param, hopper_model(request.param, 9.81)


def random_measurement(robot, rng, t=0.0, force=0.0, planar=True):
    name, model = robot
    q = np.array([rng.uniform(*ROBOTS[name])])
    theta = -math.pi / 2 + rng.uniform(-0.4, 0.4) if name == "prismatic" else -2.5174 + rng.uniform(-0.4, 0.4)
    g1 = planar_pose(rng.normal(), 0.3, theta)
    V1 = planar_twist(*rng.normal(size=3)) if planar else rng.normal(size=6)
    return HopperMeasurements(t=t, q=q, qdot=rng.normal(size=1), g1=g1, V1=V1, foot_force=force)


def advance(meas, h):
    """The measurement after ``h`` seconds of constant velocities (g1 <- g1 exp(h V1))."""
    return replace(meas, g1=meas.g1 @ exp(h * meas.V1), q=meas.q + h * meas.qdot)


def central(f, meas, h=1e-6):
    return (f(advance(meas, h)) - f(advance(meas, -h))) / (2 * h)


def gains(variant="II", **kw):
    """Gains of the control-law tests; the foot force rule lets ``stance_command`` put a
    measurement with the foot in the air into stance."""
    kw = {"K_r": 2200.0, "r_des": 0.13, "K_p": 6.0, "K_E": 20.0, "E_des": 2.8, "D_r_flight": 20.0,
          "contact_rule": "foot_force", **kw}
    return HopperGains(variant=variant, **kw)


def test_radial_rate_through_the_internal_velocity(robot, rng):
    """``rdot_cf = J_r R_cf J_v^int v`` (eq. 4.24) is the rate of ``|o_f - o_c|`` under any base
    motion: the locked (rigid) part of the motion does not change the CoM-foot distance."""
    ctrl = HopperController(robot[1], gains())
    for _ in range(3):
        meas = random_measurement(robot, rng, planar=False)
        cmd = ctrl.step(meas)
        assert cmd.r_cf_dot == pytest.approx(central(lambda m: ctrl.step(m).r_cf, meas), abs=1e-7)
        assert cmd.r_cf_dot != pytest.approx(0.0, abs=1e-3)


def test_radial_term_produces_no_base_wrench(robot, rng):
    """In flight only the radial spring, damper and pump act (eqs. 4.18-4.19): the base wrench is
    exactly zero and the joint torques deliver the power ``tau_r rdot_cf``."""
    ctrl = HopperController(robot[1], gains())
    for _ in range(3):
        meas = random_measurement(robot, rng, planar=False)
        cmd = ctrl.step(meas)
        assert not cmd.stance and cmd.tau_r != 0.0
        assert np.all(cmd.base_wrench == 0.0)
        assert cmd.tau @ meas.qdot == pytest.approx(cmd.tau_r * cmd.r_cf_dot, rel=1e-10)
        assert cmd.tau_damping @ meas.qdot == pytest.approx(-20.0 * cmd.r_cf_dot ** 2, rel=1e-10)


def stance_command(ctrl, meas):
    ctrl.reset(stance=True)
    return ctrl.step(replace(meas, foot_force=50.0))


def test_polar_leg_angle_and_wrench(robot, rng):
    """Controller II (eqs. 4.22-4.25): ``alpha_dot`` is the rate of ``alpha_i,cf``; the polar term
    has no base force, its moment is about the plane normal, and it delivers ``tau_p alpha_dot``."""
    ctrl = HopperController(robot[1], gains("II", K_E=0.0))
    for _ in range(3):
        meas = random_measurement(robot, rng)
        cmd = stance_command(ctrl, meas)
        radial = HopperController(robot[1], gains("II", K_E=0.0, K_p=0.0))
        cmd_r = stance_command(radial, meas)
        assert cmd.alpha_dot == pytest.approx(central(lambda m: stance_command(ctrl, m).alpha, meas), abs=1e-7)
        assert cmd.tau_p == pytest.approx(-6.0 * cmd.alpha, rel=1e-12)
        assert np.all(cmd.base_wrench[3:] == 0.0)
        assert_close(cmd.base_wrench[:3], PLANE_NORMAL * cmd.base_torque, 1e-14, "moment about n")
        power = cmd.base_wrench[:3] @ meas.V1[:3] + (cmd.tau - cmd_r.tau) @ meas.qdot
        assert power == pytest.approx(cmd.tau_p * cmd.alpha_dot, rel=1e-9)


def test_polar_locked_frame_acts_on_the_locked_velocity_only(robot, rng):
    """Controller III (eq. 4.26): ``alpha_c`` turns at the locked angular velocity, and its wrench
    ``J_alpha_c^T tau_p`` has zero shape force ``tau - A_l^T F_b`` in the reduced equations (seed
    002, eq. 18): it changes the momentum and leaves the shape dynamics alone."""
    name, model = robot
    ctrl = HopperController(model, gains("III", K_E=0.0))
    radial = HopperController(model, gains("III", K_E=0.0, K_p=0.0))
    for _ in range(3):
        meas = random_measurement(robot, rng)
        cmd = stance_command(ctrl, meas)
        mu = model.locked_velocity(meas.q, meas.V1, meas.qdot)
        assert cmd.alpha_dot == pytest.approx(PLANE_NORMAL @ mu[:3], rel=1e-12)
        assert cmd.alpha_dot == pytest.approx(central(lambda m: stance_command(ctrl, m).alpha, meas), abs=1e-7)
        F_b = cmd.base_wrench
        tau_polar = cmd.tau - stance_command(radial, meas).tau
        A = model.mechanical_connection(meas.q)
        assert abs(tau_polar - A.T @ F_b).max() < 1e-14
        assert np.all(F_b[3:] == 0.0) and F_b[:3] @ PLANE_NORMAL == pytest.approx(cmd.tau_p)


def test_alpha_c_matches_the_leg_angle_at_the_reference_shape():
    """``q_ref`` fixes the constant of ``theta_bc``: at that shape alpha_c = alpha_i,cf, elsewhere
    they differ by the locked-frame rotation minus the leg's geometric rotation."""
    model = hopper_model("revolute", 9.81)
    ctrl = HopperController(model, gains("III", q_ref=1.7802))
    for q1, theta in ((1.7802, -2.5174), (1.7802, -2.0), (1.2, -2.5174)):
        meas = HopperMeasurements(0.0, np.array([q1]), np.zeros(1), planar_pose(0, 0.3, theta), np.zeros(6), 50.0)
        cmd = stance_command(ctrl, meas)
        same = abs(cmd.alpha - cmd.alpha_cf) < 1e-9
        assert same == (q1 == 1.7802)
    assert base_pitch(planar_pose(0, 0, -2.5174)[:3, :3]) == pytest.approx(-2.5174)


def test_changing_q_ref_moves_the_reference_of_alpha_c():
    """A live ``q_ref`` change (ROS parameter) takes effect at the next step."""
    model = hopper_model("revolute", 9.81)
    ctrl = HopperController(model, gains("III", q_ref=1.7802))
    meas = HopperMeasurements(0.0, np.array([1.2]), np.zeros(1), planar_pose(0, 0.3, -2.5174), np.zeros(6), 50.0)
    assert abs(stance_command(ctrl, meas).alpha - stance_command(ctrl, meas).alpha_cf) > 1e-3
    ctrl.gains = replace(ctrl.gains, q_ref=1.2)
    cmd = stance_command(ctrl, meas)
    assert abs(cmd.alpha - cmd.alpha_cf) < 1e-9


def test_energy_with_and_without_springs(rng):
    robot = ("revolute", hopper_model("revolute", 9.81))
    meas = random_measurement(robot, rng)
    with_springs = HopperController(robot[1], gains("II")).step(meas)
    without = HopperController(robot[1], replace(gains("II"), energy_with_springs=False)).step(meas)
    assert with_springs.energy - without.energy == pytest.approx(with_springs.virtual_spring_energy, rel=1e-12)
    assert with_springs.virtual_spring_energy == pytest.approx(0.5 * 2200.0 * (with_springs.r_cf - 0.13) ** 2)


def test_the_energy_is_the_steps_without_the_springs(robot, rng):
    """One implementation of ``E``: :meth:`HopperController.energy` (kinetic + gravity) is the step's
    ``E`` with ``energy_with_springs`` off, bit for bit."""
    ctrl = HopperController(robot[1], gains("II", energy_with_springs=False))
    for _ in range(3):
        meas = random_measurement(robot, rng, planar=False)
        assert ctrl.step(meas).energy == ctrl.energy(meas.g1, meas.q, meas.V1, meas.qdot)


#: The kernels a step runs, by module: the compiled ones against their Python source.
KERNELS = {coordinates: ("columns_times", "com_from_coupling", "com_in_world", "foot_height", "foot_height_rate",
                         "internal_foot_jacobian", "radial_coordinates", "polar_angle", "leg_angle_rate",
                         "locked_angle_rate", "line_coordinates", "cross3", "dot3", "mv3", "rotation_of"),
           laws: ("radial_joint_torque", "polar_wrench_leg", "polar_wrench_locked", "_clip", "limit_base_torque",
                  "hopping_torques", "cross3", "dot3", "mtv3", "rotation_of"),
           controller_module: ("line_coordinates", "hopping_torques", "_finite")}


def commands(robot, rng, variant, limited):
    """Steps of a ``variant`` controller in flight and stance, at random states (seeded by ``rng``); with
    ``limited`` the joint and base torques saturate."""
    ctrl = HopperController(robot[1], gains(variant, K_E=20.0 if variant != "III" else 0.0, D_p=0.3),
                            torque_limits=0.05 if limited else None, base_torque_limit=0.01 if limited else math.inf)
    out = []
    for k in range(6):
        meas = random_measurement(robot, rng, t=1e-3 * k, force=50.0 * (k % 2), planar=k < 3)
        ctrl.reset(stance=bool(k % 2))
        out.append(ctrl.step(meas))
    return out


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_compiled_step_is_its_python_source(robot, variant, monkeypatch):
    """The step's kernels (``coordinates.py``, ``laws.py``) compute what their Python source computes,
    bit for bit: IEEE arithmetic in the order written (``compiled.py``), so the compiled step is the
    Python step it replaced, in flight and stance and with the torques limited."""
    for limited in (False, True):
        compiled = commands(robot, np.random.default_rng(7), variant, limited)
        with monkeypatch.context() as m:
            for module, names in KERNELS.items():
                for name in names:
                    m.setattr(module, name, getattr(module, name).py_func)
            source = commands(robot, np.random.default_rng(7), variant, limited)
        assert any(c.stance for c in compiled) and any(c.saturated for c in compiled) == limited
        for a, b in zip(compiled, source):
            for field in fields(a):
                assert np.array_equal(getattr(a, field.name), getattr(b, field.name)), field.name


def test_contact_hysteresis_and_dwell():
    """The foot_force rule; the foot height does not enter."""
    g = HopperGains(contact_rule="foot_force", touchdown_force=2.0, liftoff_force=0.5, min_phase_time=0.005)
    c = ContactDetector(g)
    trace = [(0.000, 1.0, False), (0.001, 2.5, True), (0.002, 0.1, True),   # dwell: stays in stance
             (0.010, 1.0, True),                                            # between thresholds
             (0.011, 0.4, False), (0.012, 3.0, False),                      # dwell after lift-off
             (0.020, 3.0, True)]
    for t, force, stance in trace:
        assert c.update(t, force, 1.0 if stance else -1.0) == stance, (t, force)


def test_foot_height_rule_is_the_floor_flag():
    """The default rule: stance exactly while the foot is at or below the floor (no hysteresis,
    no dwell), whatever the force sensor reads."""
    c = ContactDetector(HopperGains())
    trace = [(0.0, 0.0, 1e-3, False), (1e-4, 0.0, 0.0, True), (2e-4, 0.0, 1e-6, False),
             (3e-4, 50.0, 1e-6, False), (4e-4, 0.0, -1e-3, True), (5e-4, 0.0, -1e-9, True)]
    for t, force, height, stance in trace:
        assert c.update(t, force, height) == stance, (t, height)


def test_foot_height_is_odometry_and_forward_kinematics(robot, rng):
    """The controller's foot height (base pose and the foot's forward kinematics) is the plant's
    foot site height, and the step's stance follows it (the force sensor reads 0 throughout)."""
    name, model = robot
    plant = HopperPlant(model, hopper_urdf(name))
    ctrl = HopperController(model, HopperGains())
    for height in (0.02, -0.002):
        q = np.array([rng.uniform(0.09, 0.13) if name == "prismatic" else rng.uniform(1.0, 2.2)])
        g1 = planar_pose(0.3, 0.0, rng.uniform(-2.8, -2.3) if name == "revolute" else -math.pi / 2)
        plant.set_state(g1, q, np.zeros(6), np.zeros(1))
        g1[2, 3] += height - plant.foot_position()[2]
        plant.set_state(g1, q, np.zeros(6), np.zeros(1))
        meas = replace(plant.sense(), foot_force=0.0)
        geo = ctrl.geometry(meas.q)
        height_read = foot_height(rotation_of(meas.g1), tuple(meas.g1[:3, 3]), tuple(geo.p_f))
        assert height_read == pytest.approx(plant.foot_position()[2], abs=1e-12)
        assert ctrl.step(meas).stance == (height <= 0.0)


def test_bad_input_is_named():
    with pytest.raises(InputError, match="variant"):
        HopperGains(variant="IV")
    with pytest.raises(InputError, match="contact_rule"):
        HopperGains(contact_rule="touch")
    with pytest.raises(InputError, match="hysteresis"):
        HopperGains(touchdown_force=1.0, liftoff_force=1.0)
    with pytest.raises(InputError, match="K_r"):
        HopperGains(K_r=math.inf)
    model = hopper_model("revolute", 9.81)
    with pytest.raises(ModelError, match="gravity"):
        HopperController(hopper_model("revolute", 0.0), HopperGains())
    with pytest.raises(ModelError, match="frame"):
        HopperController(model, HopperGains(), foot_frame="toe")
    ctrl = HopperController(model, HopperGains())
    meas = HopperMeasurements(0.0, np.array([1.0, 2.0]), np.zeros(1), np.eye(4), np.zeros(6), 0.0)
    with pytest.raises(InputError, match="q must have shape"):
        ctrl.step(meas)
    with pytest.raises(InputError, match="variant cannot change"):
        ctrl.gains = HopperGains(variant="III")
    assert polar_angle((0.0, 0.0, -1.0))[0] == 0.0
