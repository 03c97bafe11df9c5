"""The realistic orbital scenario's models: Gaz et al. 2019 friction, quantized encoders, the star tracker,
attitude-only samples in the observer, and the controller's dispersed (physically consistent) model."""
import numpy as np
import pytest

from floating_base_control.estimation.observer import MomentumObserver
from floating_base_control.lie import exp, log
from floating_base_control.model import FloatingBaseModel
from floating_base_control.experiments.orbital.dispersions import REALISTIC, perturbed_urdf
from floating_base_control.experiments.orbital.realistic import realistic_scenario
from floating_base_control.experiments.orbital.scenario import run
from floating_base_control.sim.sensors import JointEncoders, PoseSensor
from floating_base_control.resources import orbital_robot_urdf
from floating_base_control.sim.friction import PANDA_PHI1, SigmoidFriction


def test_gaz_friction_is_zero_at_rest_opposes_motion_and_spans_phi1():
    f = SigmoidFriction()
    np.testing.assert_allclose(f.torque(np.zeros(7)), 0.0, atol=1e-15)
    fast = f.torque(np.full(7, 20.0)) - f.torque(np.full(7, -20.0))
    np.testing.assert_allclose(fast, PANDA_PHI1, rtol=1e-6)              # the Coulomb span, 0.30-1.28 N m
    assert min(PANDA_PHI1) == pytest.approx(0.303, abs=1e-3) and max(PANDA_PHI1) == pytest.approx(1.2794)
    qdot = np.linspace(-2, 2, 7)
    assert (f.torque(qdot) * qdot >= 0).all()                            # dissipative: tau_f qdot >= 0
    np.testing.assert_allclose(SigmoidFriction(scale=(2.0,) * 7).torque(qdot), 2 * f.torque(qdot))
    assert (f.opposing_torque(qdot) == -f.torque(qdot)).all()           # what the plant applies, exactly


def test_compiled_friction_is_eq_25_as_numpy_computes_it_to_the_last_bit():
    """The plant's friction (two kernels around numpy's exp) against eq. 25 written in numpy, at speeds from
    rest to Coulomb, with the plant writing it straight into MuJoCo's applied forces."""
    f = SigmoidFriction(scale=tuple(np.linspace(0.8, 1.2, 7)))
    phi1, phi2, phi3 = (np.asarray(v, dtype=float) for v in (f.phi1, f.phi2, f.phi3))
    phi1 = phi1 * f.scale
    rng = np.random.default_rng(3)
    out = np.empty(7)
    for scale in (1e-4, 1e-2, 0.3, 5.0):
        for qdot in rng.normal(scale=scale, size=(200, 7)):
            tau_f = phi1 / (1 + np.exp(-phi2 * (qdot + phi3))) - phi1 / (1 + np.exp(-phi2 * phi3))
            assert np.array_equal(f.torque(qdot), tau_f)
            assert np.array_equal(f.opposing_torque(qdot, out=out), -tau_f) and np.array_equal(out, -tau_f)


def test_quantized_encoders_match_the_formula_in_numpy():
    """The compiled quantizer and filter against ``round(q / r) r`` and ``qdot += alpha ((q_m - q_prev) / dt
    - qdot)`` in numpy, read after read, to the last bit."""
    res, dt = REALISTIC.encoder_resolution_rad, 1e-3
    enc = JointEncoders(resolution=res, dt=dt, velocity_filter_hz=50.0)
    w = 2 * np.pi * 50.0 * dt
    alpha, rng = w / (1 + w), np.random.default_rng(4)
    q, q_prev, qdot = rng.uniform(-2, 2, 7), None, np.zeros(7)
    for _ in range(300):
        q = q + rng.normal(scale=1e-3, size=7)
        q_m = np.round(q / res) * res
        if q_prev is not None:
            qdot = qdot + ((q_m - q_prev) / dt - qdot) * alpha
        got_q, got_qdot = enc.read(q, np.zeros(7))
        assert np.array_equal(got_q, q_m) and np.array_equal(got_qdot, qdot)
        q_prev = q_m


def test_quantized_encoders_and_filtered_differentiation():
    res = REALISTIC.encoder_resolution_rad
    enc = JointEncoders(resolution=res, dt=1e-3, velocity_filter_hz=50.0)
    for i in range(400):                                                # a ramp at 0.3 rad/s
        q, qdot = enc.read(np.array([0.1 + 0.3 * i * 1e-3]), np.array([0.3]))
    np.testing.assert_allclose(q / res, np.round(q / res), atol=1e-9)   # whole counts
    assert qdot[0] == pytest.approx(0.3, abs=0.02)


def test_star_tracker_bias_dropouts_jitter_and_attitude_only():
    sensor = PoseSensor(rate_hz=10, rotation_noise=0.0, position_noise=0.0, latency_s=0.05, seed=3,
                        attitude_bias=1e-3, bias_time_s=1e6, position=False, rate_jitter=0.1,
                        latency_jitter_s=0.02, dropout=0.2)
    got = []
    for i in range(100001):                                              # 100 s
        t = i * 1e-3
        sensor.sample(t, np.eye(4))
        got += [(t, ts, g) for ts, g in sensor.deliver(t)]
    assert 700 < len(got) < 900                                          # 1000 taken, 20 % lost
    assert all(0.05 - 1e-9 <= t - ts <= 0.07 + 1e-3 for t, ts, _ in got)
    assert np.diff([ts for _, ts, _ in got]).min() >= 0.09 - 1e-9
    assert all(np.isnan(g[:3, 3]).all() for _, _, g in got)
    bias = np.array([log(np.block([[g[:3, :3], np.zeros((3, 1))], [np.zeros((1, 3)), 1.0]]))[:3]
                     for _, _, g in got])
    assert np.ptp(bias, axis=0).max() < 1e-4                             # slowly varying (1e6 s correlation)
    assert 1e-5 < np.abs(bias[0]).max() < 5e-3


def test_attitude_only_sample_corrects_the_attitude_and_keeps_the_predicted_translation():
    obs = MomentumObserver()
    g0 = exp(np.array([0.1, 0.0, 0.0, 1.0, 2.0, 3.0]))
    obs.add_pose(g0, 0.0, 0.0)
    sample = exp(np.array([0.12, 0.0, 0.0, 0.0, 0.0, 0.0]))
    sample[:3, 3] = np.nan
    obs.add_pose(sample, 0.0, 0.0)
    np.testing.assert_allclose(obs.g_pred[:3, 3], g0[:3, 3], atol=1e-12)
    np.testing.assert_allclose(obs.g_pred[:3, :3], sample[:3, :3], atol=1e-12)


def test_dispersed_controller_model_is_physically_consistent_and_within_bounds():
    path = orbital_robot_urdf()
    xml = open(path).read()
    plant = FloatingBaseModel.from_urdf(path)
    a, b = (FloatingBaseModel.from_urdf_string(perturbed_urdf(xml, seed)) for seed in (1, 2))
    again = FloatingBaseModel.from_urdf_string(perturbed_urdf(xml, 1))  # the loader checks every inertia
    # Pinocchio's bodies: 0 the universe, 1 the spacecraft with panda_link0 fused, then the Panda's links
    ratios = np.array([m.mass / p.mass for m, p in zip(a.pin_model.inertias, plant.pin_model.inertias)
                       if p.mass > 0][1:])
    assert np.abs(ratios - 1).max() <= 0.10 + 1e-9 and np.abs(ratios - 1).max() > 0.02
    assert abs(a.pin_model.inertias[1].mass / plant.pin_model.inertias[1].mass - 1) <= 0.051
    assert a.pin_model.inertias[3] != b.pin_model.inertias[3]
    q = np.array(realistic_scenario(0).q0)
    np.testing.assert_array_equal(a.locked_inertia(q), again.locked_inertia(q))
    assert np.linalg.eigvalsh(a.locked_inertia(q)).min() > 0


def test_realistic_scenario_is_drawn_from_its_seed():
    s1, s2 = realistic_scenario(11), realistic_scenario(11)
    assert s1 == s2 and s1 != realistic_scenario(12)
    w = np.linalg.norm(s1.mu0_omega_deg_s)
    assert REALISTIC.tumble_deg_s[0] <= w <= REALISTIC.tumble_deg_s[1]
    assert s1.name == "realistic" and not s1.pose_position and len(s1.friction_scale) == 7


def test_realistic_plant_is_rk4_at_the_control_rate_and_keeps_the_momentum():
    """One RK4 step per 1 ms tick (docs/explanation/orbital.md): the free-floating robot's momentum stays to
    ~5e-13 relative through friction, model error and the star tracker (MuJoCo's Euler at this step: ~1e-3)."""
    scenario = realistic_scenario(0, duration_s=2.0)
    assert (scenario.sim_substeps, scenario.control_rate_hz) == (1, 1000.0)
    _, summary = run(scenario)
    assert summary["status"] == "completed" and summary["loop_delay_s"] == 1e-3
    assert summary["momentum_drift_rel"] < 1e-12
