"""The orbital controller against a recorded trajectory of an earlier implementation.

``data/orbital_controller_trace.npz`` holds the inputs of ``OrbitalController.step`` over the
first 2 s of the default orbital scenario (joint states per tick, pose samples with their
stamps) and the outputs every 10th tick, recorded from the implementation before the
per-tick workspace (issue 12).  Replaying the inputs into a fresh controller must give the same
torques and estimates to 1e-12: the refactor changes how the tick computes, not what.
"""
from pathlib import Path

import numpy as np
import pytest

from helpers.oracles import compensation_oracle

from floating_base_control.control.shape import ShapeGains
from floating_base_control.control.setpoint import TaskController, TaskLimits
from floating_base_control.robots.orbital.controller import OrbitalController
from floating_base_control.experiments.orbital.scenario import OrbitalScenario

TRACE = Path(__file__).parent / "data" / "orbital_controller_trace.npz"


def pose(row):
    g = np.eye(4)
    g[:3, :] = row.reshape(3, 4)
    return g


def published_eq_52(ctrl, model):
    """The task torque of eq. 52 as published: the trace predates the reference shaping and limit terms
    of ``control/setpoint.py`` (issue 15)."""
    ctrl.task = TaskController(model.position_limits, model.velocity_limits, model.effort_limits,
                               TaskLimits(shaping=False))


@pytest.fixture(scope="module")
def replay(orbital):
    """The recorded outputs and the replayed ones, every 10th tick."""
    rec = np.load(TRACE)
    scenario = OrbitalScenario()
    ctrl = OrbitalController(orbital, scenario.q_d, ShapeGains(scenario.stiffness, scenario.damping),
                             scenario.observer, scenario.compensation)
    published_eq_52(ctrl, orbital)
    samples = {}
    for row in rec["poses"]:
        samples.setdefault(int(row[0]), []).append((row[1], row[2], pose(row[3:])))
    dt = 1.0 / scenario.control_rate_hz
    out = {"tau": [], "mu_hat_o": [], "g_hat": []}
    for i, (q, qdot) in enumerate(zip(rec["q"], rec["qdot"])):
        t = i * dt
        tick_samples = samples.get(i, [])
        assert all(t_now == t for t_now, _, _ in tick_samples)
        step = ctrl.step(t, q, qdot, [(t_taken, g) for _, t_taken, g in tick_samples])
        if i % 10 == 0:
            g_hat = ctrl.observer.g_hat
            out["tau"].append(step.tau)
            out["mu_hat_o"].append(step.mu_hat_o)
            out["g_hat"].append(np.full(12, np.nan) if g_hat is None else np.asarray(g_hat)[:3, :].ravel())
    return rec, {k: np.array(v) for k, v in out.items()}


def test_trace_covers_observer_start_and_samples(replay):
    rec, _ = replay
    assert len(rec["q"]) == 2001 and len(rec["poses"]) == 20      # 2 s at 1 kHz, poses at 10 Hz
    assert np.isnan(rec["g_hat"][0]).all() and np.isfinite(rec["g_hat"][-1]).all()


@pytest.mark.parametrize("key", ["tau", "mu_hat_o", "g_hat"])
def test_replayed_outputs_equal_the_recorded_ones(replay, key):
    rec, out = replay
    assert out[key].shape == rec[key].shape
    np.testing.assert_array_equal(np.isnan(out[key]), np.isnan(rec[key]))
    err = np.nanmax(np.abs(out[key] - rec[key]))
    assert err <= 1e-12, f"{key} differs from the recorded trajectory by {err:.2e}"


def test_lazy_outputs_equal_the_rel_terms_at_the_ticks_state(orbital):
    """The outputs a tick evaluates on demand (``terms``, ``tau_hat_1``, ``V1_hat``, ``momentum``,
    ``saturated``) are those of the REL terms at the tick's inputs, even when read after later ticks."""
    from floating_base_control.lie import Ad_inv

    rec = np.load(TRACE)
    scenario = OrbitalScenario()
    ctrl = OrbitalController(orbital, scenario.q_d, ShapeGains(scenario.stiffness, scenario.damping),
                             scenario.observer, "tau2")
    first = rec["poses"][0]
    mu0 = np.r_[np.deg2rad(scenario.mu0_omega_deg_s), 0.1, 0.0, 0.0]
    ctrl.observer.initialize(pose(first[3:]), mu0, first[1])
    ctrl.step(first[1], rec["q"][0], rec["qdot"][0], [(first[2], pose(first[3:]))])
    outs = [ctrl.step(first[1] + 1e-3 * i, rec["q"][i], rec["qdot"][i]) for i in (1, 2)]
    g_hat = ctrl.observer.g_hat
    out = outs[1]
    terms = orbital.rel_terms(rec["q"][2], rec["qdot"][2], out.mu_hat_o)
    for name in terms._fields:
        np.testing.assert_allclose(getattr(outs[0].terms, name),
                                   getattr(orbital.rel_terms(rec["q"][1], rec["qdot"][1], outs[0].mu_hat_o), name),
                                   rtol=0, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(out.tau_hat_2, compensation_oracle(terms, "tau2"), rtol=0, atol=1e-12)
    np.testing.assert_allclose(out.tau_hat_1, compensation_oracle(terms, "tau1"), rtol=0, atol=1e-12)
    np.testing.assert_allclose(out.V1_hat, out.mu_hat_o - terms.A_qdot, rtol=0, atol=1e-15)
    np.testing.assert_allclose(out.momentum, Ad_inv(g_hat).T @ (terms.M_b @ out.mu_hat_o), rtol=0, atol=1e-12)
    assert np.abs(out.momentum).max() > 1.0                      # the robot carries momentum
    assert not out.saturated
    np.testing.assert_allclose(out.tau, out.tau_c + out.tau_hat_2, rtol=0, atol=1e-15)
    ctrl.torque_limits = np.full(orbital.n, 1e-3)
    clipped = ctrl.step(first[1] + 3e-3, rec["q"][3], rec["qdot"][3])
    assert clipped.saturated and np.abs(clipped.tau).max() == 1e-3


@pytest.mark.parametrize("compensation", ["tau1", "tau2", "none", "truth"])
def test_each_compensation_adds_its_eq_45_torque_from_the_rel_terms(orbital, compensation):
    """The tick's feed-forward is eq. 45 from the REL terms (Theorem 1's fast path, paper's order)
    at the observer's mu_hat_o, or at the true mu for the ``truth`` baseline."""
    from floating_base_control.control.shape import task_torque

    rec = np.load(TRACE)
    scenario = OrbitalScenario()
    gains = ShapeGains(scenario.stiffness, scenario.damping)
    ctrl = OrbitalController(orbital, scenario.q_d, gains, scenario.observer, compensation)
    published_eq_52(ctrl, orbital)
    first = rec["poses"][0]
    mu_true = np.r_[np.deg2rad(scenario.mu0_omega_deg_s), 0.05, -0.02, 0.01]
    ctrl.observer.initialize(pose(first[3:]), mu_true * 0.9, first[1])
    for i in range(5):
        q, qdot = rec["q"][i], rec["qdot"][i]
        out = ctrl.step(first[1] + 1e-3 * i, q, qdot, mu_true=mu_true)
    terms = orbital.rel_terms(q, qdot, mu_true if compensation == "truth" else out.mu_hat_o)
    expected = task_torque(q, qdot, scenario.q_d, gains) + compensation_oracle(terms, compensation)
    np.testing.assert_allclose(out.tau, np.clip(expected, -ctrl.torque_limits, ctrl.torque_limits), rtol=0, atol=1e-12)
    np.testing.assert_allclose(out.tau_hat_1, compensation_oracle(terms, "tau1"), rtol=0, atol=1e-12)
    np.testing.assert_allclose(out.tau_hat_2, compensation_oracle(terms, "tau2"), rtol=0, atol=1e-12)
    if compensation != "none":
        assert np.abs(compensation_oracle(terms, compensation)).max() > 1e-4     # the test has teeth


def test_a_registered_compensation_law_runs_in_the_tick(orbital):
    """Adding a compensation law is a ``CompensationLaw`` and one registration line: half of eq. 45's
    ``tau_hat_2``, registered here, is accepted by name and added by the tick."""
    from floating_base_control.control.shape import COMPENSATIONS, CompensationLaw, register_compensation

    register_compensation(CompensationLaw("half_tau2", lambda eq45: 0.5 * eq45.tau_hat_2))
    try:
        rec = np.load(TRACE)
        scenario = OrbitalScenario()
        gains = ShapeGains(scenario.stiffness, scenario.damping)
        ctrl = OrbitalController(orbital, scenario.q_d, gains, scenario.observer, "half_tau2")
        published_eq_52(ctrl, orbital)
        first = rec["poses"][0]
        ctrl.observer.initialize(pose(first[3:]), np.r_[np.deg2rad(scenario.mu0_omega_deg_s), 0.05, -0.02, 0.01],
                                 first[1])
        for i in range(3):
            q, qdot = rec["q"][i], rec["qdot"][i]
            out = ctrl.step(first[1] + 1e-3 * i, q, qdot)
        half = 0.5 * orbital.rel_terms(q, qdot, out.mu_hat_o).shape_mu_mu
        assert np.abs(half).max() > 1e-4
        np.testing.assert_allclose(out.tau - out.tau_c, half, rtol=0, atol=1e-12)
        assert ctrl.compensation == "half_tau2"
    finally:
        del COMPENSATIONS["half_tau2"]


def test_compensation_laws_are_checked(orbital):
    from floating_base_control import InputError
    from floating_base_control.control.shape import register_compensation

    scenario = OrbitalScenario()
    with pytest.raises(InputError, match=r"compensation must be one of \('tau1', 'tau2', 'none', 'truth'\), "
                                         r"got 'tau3'"):
        OrbitalController(orbital, scenario.q_d, ShapeGains(scenario.stiffness, scenario.damping), compensation="tau3")
    with pytest.raises(InputError, match="a compensation law must be a CompensationLaw, got function"):
        register_compensation(lambda eq45: eq45.tau_hat_2)
