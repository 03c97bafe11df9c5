"""The hoppers in MuJoCo: conservation in flight, energy bookkeeping, the plane, and the
qualitative results of [Feurstein2021] Sects. 4.2.2 and 4.3.2 (short runs; the 20 s Exp VI is the demo)."""
import math
from dataclasses import replace

import numpy as np
import pytest

import mujoco

from floating_base_control.conventions import pose
from floating_base_control.experiments.hopper.report import flights, summarize
from floating_base_control.robots.hopper.model import hopper_model
from floating_base_control.sim.hopper import HopperPlant, step_work
from floating_base_control.resources import hopper_urdf
from floating_base_control.experiments.hopper.scenario import experiment
from floating_base_control.experiments.hopper import scenario
from floating_base_control.robots.hopper.controller import HopperController
from floating_base_control.robots.hopper.model import PLANE_NORMAL, planar_pose
from floating_base_control.dynamics.centroidal import centroidal_momentum
from floating_base_control.dynamics.impact import generalized_inertia, plastic_impact, point_jacobian


def run(exp, *args, **kwargs):
    """The thesis' loop: each command acts in the step its state was read (no loop delay)."""
    return scenario.run(exp, *args, loop_delay_s=0.0, **kwargs)


@pytest.fixture(scope="module")
def revolute_iv():
    """Exp IV under the force-sensor contact rule (the default rule: test_hopper_steps.py)."""
    exp = experiment("revolute", "IV", contact_rule="foot_force")
    return exp, run(exp, 2.6)


def balance(flows, meta):
    stored = meta["E_end"] - meta["E0"]
    energy_in = flows.external + flows.joint
    return energy_in, energy_in - flows.damping - flows.touchdown - flows.floor - stored


def test_energy_bookkeeping_closes(revolute_iv):
    """Inflows (base torque, joints) = outflows (touchdown, radial damper, floor) + the change of
    mechanical energy, each flow integrated from the forces MuJoCo applied (module doc of
    sim/hopper.py); the residual is the integrator's error."""
    exp, (log, flows, meta) = revolute_iv
    energy_in, residual = balance(flows, meta)
    assert energy_in > 0.5 and flows.damping > 0.1 and flows.touchdown > 0.1 and flows.floor > 0.1
    assert abs(residual) < 1e-3 * energy_in


def test_revolute_exp_iv_rotates_a_few_degrees_per_flight(revolute_iv):
    """[Feurstein2021], Exp IV: with radial damping in flight the leg "rotates only around 3 deg during
    flight" and almost hops in place.  Under the foot_force contact rule, not the first flight
    after the drop: the touchdown impact's -8.3e-3 N m s (test above) is undone in stance and at
    lift-off up to a residue that the floor's details decide, and it turns the leg by 19 deg
    (docs/explanation/hopper.md, the floor table)."""
    exp, (log, flows, meta) = revolute_iv
    summary = summarize(exp, log, flows, meta)
    rotations = summary["flight_rotations_deg"]
    assert not summary["fell"] and summary["hops"] >= 5
    assert 10 < rotations[0] < 25
    assert max(abs(r) for r in rotations[1:]) < 5.0
    assert abs(summary["mean_forward_speed"]) < 0.05


def test_first_touchdown_is_the_plastic_sticking_impact():
    """The stiff viscoelastic floor stops the foot dead at the first touchdown of Exp I-IV: 1 ms
    later the angular momentum about the CoM and the horizontal CoM velocity are those of the
    rigid plastic impact (dynamics/impact.py, computed from the controller's Pinocchio model).
    This is the -8.3e-3 N m s the first stance has to undo (docs/explanation/hopper.md), whatever the floor's
    details, as long as it holds the foot."""
    exp = experiment("revolute", "IV")
    model = hopper_model("revolute", exp.gravity)
    plant = HopperPlant(model, hopper_urdf("revolute"))
    plant.set_state(*exp.initial_state())
    zero = np.zeros(1)
    plant.sense()
    while plant.foot_position()[2] > 0.0:                # free fall, torques off
        before = plant.state()
        plant.step(zero, 0.0)
        plant.sense()
    g1, q, V1, qdot = before
    kin = model.kinematics(q)
    geo = HopperController(model, exp.gains).geometry(q)
    v_plus, _ = plastic_impact(generalized_inertia(kin), point_jacobian(geo.p_f, geo.J_f),
                               np.concatenate([V1, qdot]))
    h = centroidal_momentum(kin, g1, v_plus[:6], v_plus[6:])
    for _ in range(10):
        plant.step(zero, 0.0)
        plant.sense()
    _, com_vel, L = plant.com_and_momentum()
    assert h[:3] @ PLANE_NORMAL == pytest.approx(-8.33e-3, rel=1e-3)
    np.testing.assert_allclose(L, h[:3], rtol=0, atol=2e-3 * abs(h[1]))
    assert com_vel[0] == pytest.approx(h[3] / model.mass, rel=2e-3)


def test_revolute_exp_i_rotates_about_30_degrees_and_falls():
    """[Feurstein2021], Exp I (radial spring only): the first lift-off leaves enough angular momentum
    to turn the CoM-foot line "by about 30 degrees" before the next touchdown; it falls."""
    exp = experiment("revolute", "I")
    summary = summarize(exp, *run(exp, 2.0))
    assert summary["first_flight_rotation_deg"] == pytest.approx(30.0, abs=3.0)
    assert summary["fell"] and summary["fell_at_s"] < 1.0


def test_prismatic_exp_i_tips_over_after_a_few_hops():
    """[Feurstein2021], prismatic Exp I: the upright under-actuated leg is an unstable equilibrium and
    tips over "after 7 jumps" (from a 1e-7 rad tilt here); the same tilt under the polar spring
    (Exp II, III) stays upright (next tests)."""
    exp = experiment("prismatic", "I")
    log, flows, meta = run(exp, 4.0)
    touchdown_alpha = [math.degrees(a) for _, a, *_ in log.touchdowns]
    assert not math.isnan(log.fell_at)
    assert 5 <= len(flights(log)) <= 9
    assert max(abs(a) for a in touchdown_alpha[:4]) < 0.01 and abs(touchdown_alpha[-1]) > 3.0


def test_prismatic_exp_ii_comes_to_rest_after_about_a_dozen_hops():
    """[Feurstein2021], prismatic Exp II: upright, losing energy to the floor, "final rest position after
    12 jumps"."""
    exp = experiment("prismatic", "II")
    log, flows, meta = run(exp, 3.3, log_every=100)
    hops = flights(log)
    a = log.arrays()
    assert math.isnan(log.fell_at)
    assert 9 <= len(hops) <= 15                               # 12 in the thesis
    assert hops[-1][1] < 3.0                                  # no hop in the last 0.3 s
    assert a["kinetic"][-1] < 0.01 and abs(a["alpha_cf"]).max() < 1e-4
    apex = [h for _, h, _ in log.apexes]
    assert all(h1 < h0 for h0, h1 in zip(apex, apex[1:]))


def test_prismatic_exp_iii_keeps_its_energy():
    """[Feurstein2021], prismatic Exp III: the energy pump (K_E = 20) restores ``E_des`` every hop: the
    apex height stays constant (it decays hop by hop without the pump, Exp II)."""
    exp = experiment("prismatic", "III")
    log, flows, meta = run(exp, 1.8, log_every=20)
    apex = np.array([h for _, h, _ in log.apexes])
    a = log.arrays()
    assert len(apex) >= 4 and math.isnan(log.fell_at)
    assert np.ptp(apex[1:]) < 0.01 * apex[1:].mean()
    assert apex[1:].min() > 0.97 * apex[0]
    flight = a["touching"] == 0
    assert abs(a["E_ctrl"][flight][-100:] - exp.gains.E_des).max() < 0.03 * exp.gains.E_des


def flight_record(timestep):
    """Ground truth through the first flight of revolute Exp III (strong radial vibrations:
    the radial spring and pump act, the polar spring does not)."""
    exp = experiment("revolute", "III")
    model = hopper_model("revolute", exp.gravity)
    plant = HopperPlant(model, hopper_urdf("revolute"), timestep=timestep)
    ctrl = HopperController(model, exp.gains)
    plant.set_state(*exp.initial_state())
    meas, rows, phase = plant.sense(), [], 0
    while phase < 3:
        cmd = ctrl.step(meas)
        phase += (phase == 0 and plant.touching()) or (phase == 1 and not (plant.touching() or cmd.stance)) \
            or (phase == 2 and plant.touching())
        if phase == 2:
            com, com_vel, L = plant.com_and_momentum()
            rows.append((plant.time, com[0], com[2], L @ [0, -1, 0], cmd.tau[0], cmd.base_torque))
        plant.step(cmd.tau, cmd.base_torque, cmd.tau_damping)
        meas = plant.sense()
    return exp.gravity, np.array(rows)


def test_flight_conserves_centroidal_angular_momentum_and_follows_a_parabola():
    """In flight the only external force is gravity: the angular momentum about the CoM is
    constant and the CoM is a parabola, although the radial spring drives the knee hard.  The
    deviation is MuJoCo's first-order integration error: it halves with the time step."""
    deviations = []
    for timestep in (1e-4, 5e-5):
        g, r = flight_record(timestep)
        t, x, z, L, tau, base = (r[:, i] for i in range(6))
        t = t - t[0]
        assert t[-1] > 0.25 and abs(tau).max() > 1.0 and np.all(base == 0.0)
        deviations.append(abs(L - L[0]).max())
        A = np.c_[np.ones_like(t), t]
        for y in (x, z + 0.5 * g * t ** 2):
            coef = np.linalg.lstsq(A, y, rcond=None)[0]
            assert abs(A @ coef - y).max() < 1e-5
    assert deviations[0] < 1e-4 < 10 * abs(L[0])
    assert deviations[1] == pytest.approx(deviations[0] / 2, rel=0.15)


def test_planar_and_free_base_agree_and_the_plane_holds():
    """MuJoCo's planar base joint and its free joint give the same hopping motion; with the free
    joint the motion stays in the plane by symmetry (out-of-plane motion exactly zero)."""
    exp = experiment("revolute", "IV")
    logs = {base: run(exp, 0.6, base=base, log_every=50)[0].arrays() for base in ("planar", "free")}
    for key in ("com_x", "com_z", "q", "L", "E_mech"):
        assert abs(logs["planar"][key] - logs["free"][key]).max() < 1e-8, key
    assert logs["free"]["out_of_plane"].max() == 0.0


def test_free_base_standing_still_falls_sideways():
    """What the thesis' planar model hides: standing on its point foot, the robot is a lateral
    inverted pendulum that no controller term acts on; a 1e-6 rad roll grows like
    exp(sqrt(g/h) t), sqrt(g/h) ~ 9.5/s (the planar base cannot roll)."""
    exp = experiment("prismatic", "II")
    model = hopper_model("prismatic", exp.gravity)
    plant = HopperPlant(model, hopper_urdf("prismatic"), base="free")
    ctrl = HopperController(model, replace(exp.gains, r_des=0.114))
    g1, q, V1, qdot = exp.initial_state()
    g1[2, 3] = 0.1145                                     # foot just on the floor
    roll = 1e-6
    g1[:3, :3] = np.array([[1, 0, 0], [0, math.cos(roll), -math.sin(roll)],
                           [0, math.sin(roll), math.cos(roll)]]) @ g1[:3, :3]
    plant.set_state(g1, q, V1, qdot)
    meas, lateral = plant.sense(), []
    for k in range(6000):
        cmd = ctrl.step(meas)
        plant.step(cmd.tau, cmd.base_torque, cmd.tau_damping)
        meas = plant.sense()
        lateral.append(abs(plant.com_and_momentum()[0][1]))
    assert lateral[-1] > 20 * lateral[1000]


def test_controllers_ii_and_iii_coincide_on_the_prismatic_hopper():
    """The prismatic leg passes through the CoM and ``theta_bc`` is constant (``A_omega = 0``):
    alpha_c is alpha_i,cf and the two polar controllers give the same run."""
    runs = [run(experiment("prismatic", "III", variant=v), 0.4, log_every=20)[0].arrays() for v in ("II", "III")]
    assert runs[0]["base_torque"].any()
    for key in ("com_z", "q", "alpha_cf", "tau", "base_torque"):
        assert abs(runs[0][key] - runs[1][key]).max() < 1e-9, key


def test_advance_is_the_same_physics_as_sense_and_step():
    """hopper_sim's fast step (no sensors, no bookkeeping) moves the plant exactly as the
    experiment runner's sense() + step(), touchdowns included."""
    exp = experiment("revolute", "VI")
    model = hopper_model("revolute", exp.gravity)
    plants = [HopperPlant(model, hopper_urdf("revolute")) for _ in range(2)]
    for p in plants:
        p.set_state(*exp.initial_state())
    tau = lambda k: np.array([3.0 * math.sin(0.01 * k)])  # noqa: E731
    touched = False
    for k in range(3000):                                       # 0.3 s: flight and a touchdown
        plants[0].sense()
        plants[0].step(tau(k), 0.1)
        plants[1].advance(tau(k), 0.1)
        touched |= plants[1].in_contact
    assert touched
    assert np.array_equal(plants[0].data.qpos, plants[1].data.qpos)
    assert np.array_equal(plants[0].data.qvel, plants[1].data.qvel)


def numpy_step_work(v0, v1, joints, tau, tau_damping, base_torque, J_base, base_xmat, h, on_floor, J_foot, force, D):
    """The oracle of ``sim/hopper.py``'s ``step_work``: the numpy expressions of the plant's work before
    that kernel."""
    qd_mid = 0.5 * (v0[joints] + v1[joints])
    omega_mid = (base_xmat.reshape(3, 3) @ PLANE_NORMAL) @ (J_base @ (0.5 * (v0 + v1)))
    floor = 0.0
    if on_floor:
        u0, u1 = J_foot @ v0, J_foot @ v1
        effective = np.where(np.array([True, True, force[2] > 0.0]), force - D * (u1 - u0), 0.0)
        floor = float(effective @ (0.5 * (u0 + u1))) * h
    return float(tau @ qd_mid) * h, float(tau_damping @ qd_mid) * h, float(base_torque * omega_mid * h), floor


@pytest.mark.parametrize("nv", [4, 7])
def test_step_work_adds_up_as_numpy_does(rng, nv):
    """The compiled work of a step is the numpy expressions' bit for bit (numba's ``np.dot`` is the BLAS
    that numpy's ``@`` calls), in flight, on the floor and with the floor's ``F_z`` clamped to zero: the
    energy flows of a run did not move when the kernel replaced them (planar base: nv 4, free: 7)."""
    for on_floor, clamped in ((False, False), (True, False), (True, True)):
        for _ in range(20):
            v0, v1, tau, damping = rng.normal(size=nv), rng.normal(size=nv), rng.normal(size=1), rng.normal(size=1)
            J_base, J_foot, force = rng.normal(size=(3, nv)), rng.normal(size=(3, nv)), rng.normal(size=3)
            force[2] = 0.0 if clamped else abs(force[2])
            xmat = pose(np.linalg.qr(rng.normal(size=(3, 3)))[0], np.zeros(3))[:3, :3].ravel()
            args = (v0, v1, np.array([nv - 1]), tau, damping, rng.normal(), J_base, xmat, 1e-4, on_floor, J_foot,
                    force, 1000.0)
            assert step_work(*args) == numpy_step_work(*args)


def test_sensors_read_as_numpy_does(rng):
    """``sense()`` (compiled) reads MuJoCo's sensors as the numpy expressions did: the framequat
    normalized by ``np.linalg.norm``, MuJoCo's rotation of it, the position, gyro, velocimeter and
    encoders, bit for bit."""
    model = hopper_model("revolute", 9.81)
    plant = HopperPlant(model, hopper_urdf("revolute"), base="free")
    m = plant.model
    adr = {m.sensor(i).name: slice(m.sensor_adr[i], m.sensor_adr[i] + m.sensor_dim[i]) for i in range(m.nsensor)}
    for _ in range(5):
        roll, pitch = rng.normal(size=2)
        R = np.array([[1, 0, 0], [0, math.cos(roll), -math.sin(roll)], [0, math.sin(roll), math.cos(roll)]]) \
            @ planar_pose(0.0, 0.0, pitch)[:3, :3]
        plant.set_state(pose(R, rng.normal(size=3)), rng.normal(size=1), rng.normal(size=6), rng.normal(size=1))
        meas = plant.sense()
        s = plant.data.sensordata
        quat, R9 = s[adr["base_quat"]], np.zeros(9)
        mujoco.mju_quat2Mat(R9, quat / np.linalg.norm(quat))
        assert np.array_equal(meas.g1, pose(R9.reshape(3, 3), s[adr["base_pos"]]))
        assert np.array_equal(meas.V1, np.concatenate([s[adr["base_gyro"]], s[adr["base_velocimeter"]]]))
        assert np.array_equal(np.r_[meas.q, meas.qdot], np.r_[s[adr["q_knee"]], s[adr["qd_knee"]]])
