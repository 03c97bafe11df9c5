"""The task controller of the shape controller (control/setpoint.py): set-points within range, a reference
within the URDF velocity limits, integral action with anti-windup, a limit potential, and the closed loop
near a joint limit staying within the limits."""
import numpy as np
import pytest

from helpers.oracles import limit_potential_gradient_oracle

from floating_base_control.control.limits import LimitMonitor
from floating_base_control.control.shape import ShapeGains
from floating_base_control.control.setpoint import (TaskController, check_setpoint, controller_options, integral_step,
                                                    reference_step)
from floating_base_control.dynamics.rel_fast import rel_terms
from floating_base_control.model import FloatingBaseModel
from floating_base_control.experiments.orbital import scenario as orbital
from floating_base_control.robots.orbital.controller import OrbitalController
from floating_base_control.resources import orbital_robot_urdf
from floating_base_control.validation import InputError


@pytest.fixture(scope="module")
def model():
    return FloatingBaseModel.from_urdf(orbital_robot_urdf())


def test_setpoints_outside_the_joint_range_are_refused_with_the_reason(model):
    q_d = np.array(orbital.OrbitalScenario().q_d)
    q_d[5] = 3.9                                                    # joint 6 range [-0.0175, 3.7525]
    with pytest.raises(InputError, match=r"joint 5: 3.9 not in \[-0.0175, 3.752"):
        check_setpoint(q_d, model.position_limits)
    with pytest.raises(InputError, match="outside the joint range"):
        OrbitalController(model, q_d, ShapeGains(np.ones(7), np.ones(7)))


def test_reference_respects_speed_and_acceleration_and_arrives_at_rest():
    q_r, qdot_r = np.zeros(3), np.zeros(3)
    target, v_max, a_max, dt = np.array([1.0, -0.3, 0.0]), np.array([0.5, 2.0, 1.0]), 2.0, 1e-3
    history = []
    for _ in range(4000):
        previous = qdot_r.copy()
        reference_step(q_r, qdot_r, target, np.full(3, -np.inf), np.full(3, np.inf), v_max, a_max, dt)
        history.append((q_r.copy(), qdot_r.copy(), (qdot_r - previous) / dt))
    q, qdot, qddot = (np.array(h) for h in zip(*history))
    assert (np.abs(qdot) <= v_max + 1e-12).all()
    assert (np.abs(qddot) <= a_max * (1 + 1e-9)).all()
    assert np.array_equal(q[-1], target) and not qdot[-1].any()
    assert np.abs(qdot[:, 0]).max() == pytest.approx(0.5)          # cruises at the speed limit
    assert q[:, 0].max() <= 1.0 + 1e-6 and q[:, 1].min() >= -0.3 - 1e-6   # no overshoot (beyond a micro-radian)


def test_integral_anti_windup_clamps_and_freezes_while_saturated():
    z, k_i, clamp = np.zeros(2), np.array([2.0, 2.0]), np.array([1.0, 1.0])
    for _ in range(1000):                                           # a constant error for 1 s
        integral_step(z, np.array([1.0, 1.0]), 1e-3, k_i, clamp, np.array([0.0, -5.0]), np.array([5.0, 5.0]))
    assert z[0] == pytest.approx(0.5)                               # |K_i z| <= 1 N m
    assert z[1] == 0.0                                              # -K_i e pushes the saturated -5 N m further


def test_limit_potential_is_zero_inside_the_margins_and_gives_full_effort_at_the_limit(model):
    """At rest on the reference with no PD gains, the tick's task torque is the limit term alone, ``-dPhi_lim``:
    the oracle's gradient, zero inside the margins and the full effort at the hard limits."""
    lo, hi = model.position_limits.T
    for q, expected in [(0.5 * (lo + hi), np.zeros(model.n)), (hi, -model.effort_limits), (lo, model.effort_limits),
                        (hi - 0.05, None), (lo + 0.02, None)]:
        task = TaskController(model.position_limits, model.velocity_limits, model.effort_limits)
        gains = ShapeGains(np.zeros(model.n), np.ones(model.n))           # the first tick: q_r = q, at rest
        tau = task.torque(0.0, q, np.zeros(model.n), q, gains)
        oracle = -limit_potential_gradient_oracle(q, model.position_limits, task.limit_stiffness, task.margin)
        np.testing.assert_allclose(tau, oracle, rtol=1e-12, atol=1e-12)
        if expected is not None:
            np.testing.assert_allclose(tau, expected, rtol=1e-12, atol=0)
        else:
            assert 0 < np.abs(tau).max() < model.effort_limits.max()


def test_pd_is_eq_52_at_rest_and_controller_names(model):
    task = TaskController(model.position_limits, model.velocity_limits, model.effort_limits)
    gains = ShapeGains(np.arange(1.0, 8.0), np.full(7, 0.5))
    q_d = np.array(orbital.OrbitalScenario().q_d)
    task.torque(0.0, q_d + 0.01, np.zeros(7), q_d, gains)          # the reference starts at the measurement
    tau = task.torque(1e-3, q_d + 0.01, np.full(7, 0.1), q_d + 0.01, gains)
    np.testing.assert_allclose(tau, -0.5 * 0.1 * np.ones(7), atol=1e-12)
    assert controller_options("tau2i") == ("tau2", True) and controller_options("pd") == ("none", False)
    with pytest.raises(InputError, match="controller must be one of"):
        controller_options("lqr")


def test_compensation_does_not_depend_on_the_linear_part_of_mu(model):
    """Galilean invariance: tau_hat_2 is a function of the angular part of mu only, so an attitude-only pose
    source suffices for compensation."""
    ws, rng = model.create_data(), np.random.default_rng(3)
    q, qdot, omega = rng.uniform(-1, 1, 7), rng.standard_normal(7), rng.standard_normal(3)
    a = rel_terms(model, ws, q, qdot, np.r_[omega, rng.standard_normal(3)]).shape_mu_mu.copy()
    b = rel_terms(model, ws, q, qdot, np.r_[omega, 10 * rng.standard_normal(3)]).shape_mu_mu.copy()
    assert np.abs(a).max() > 0.1
    np.testing.assert_allclose(a, b, atol=1e-12)


def test_limit_monitor_reports_overruns():
    monitor = LimitMonitor(np.array([[-1.0, 1.0]]), np.array([2.0]))
    monitor.update(np.array([0.5]), np.array([1.0]))
    monitor.update(np.array([1.2]), np.array([-2.5]), saturated=True)
    r = monitor.report()
    assert r["max_position_limit_overrun_rad"] == pytest.approx(0.2)
    assert r["max_velocity_limit_overrun_rad_s"] == pytest.approx(0.5)
    assert r["torque_saturated_ticks_fraction"] == 0.5


def test_limit_monitor_margins_are_exactly_the_worst_of_every_tick():
    """The monitor keeps only the extremes of q and |qdot|; its margins must equal, bit for bit, the worst
    of the margins worked out at every tick (min(q - lo, hi - q), qdot_max - |qdot|, |qdot| / qdot_max)."""
    rng = np.random.default_rng(3)
    limits = np.array([[-2.9, 2.9], [-1.76, 1.76], [-np.inf, np.inf], [-3.07, -0.07]])
    v_max = np.array([2.175, 2.61, np.inf, 0.0])           # inf and 0: no velocity limit
    monitor = LimitMonitor(limits, v_max)
    qs, qdots = rng.uniform(-3.2, 3.2, (500, 4)), rng.normal(0, 2.0, (500, 4))
    for q, qdot in zip(qs, qdots):
        monitor.update(q, qdot)
    v = np.where(v_max > 0, v_max, np.inf)
    margins = np.minimum(qs - limits[:, 0], limits[:, 1] - qs).min(axis=0)
    r = monitor.report()
    assert r["min_position_limit_margin_rad"] == margins.tolist()
    assert r["max_velocity_limit_ratio"] == (np.abs(qdots) / v).max(axis=0).tolist()
    assert r["max_position_limit_overrun_rad"] == max(0.0, -margins.min())
    assert r["max_velocity_limit_overrun_rad_s"] == max(0.0, -(v - np.abs(qdots)).min())


def test_a_setpoint_near_a_limit_is_reached_within_position_and_velocity_limits():
    """Joint 6 sent 0.05 rad from its upper limit (the former loop overran it by 0.148 rad at 23 rad/s)."""
    q_d = list(orbital.OrbitalScenario().q_d)
    q_d[5] = 3.70
    _, summary = orbital.run(orbital.OrbitalScenario(duration_s=2.5, q_d=tuple(q_d)))
    assert summary["status"] == "completed"
    assert summary["max_position_limit_overrun_rad"] == 0.0
    assert summary["max_velocity_limit_overrun_rad_s"] == 0.0
    assert max(summary["max_velocity_limit_ratio"]) < 0.8
    assert min(summary["min_position_limit_margin_rad"]) > 0.0


def test_integral_action_is_a_live_ranged_node_parameter(model):
    from floating_base_control.ros.params import controller_params
    specs = {s.name: s for s in controller_params(model.joint_names, model.position_limits, model.effort_limits)}
    for j in model.joint_names:
        spec = specs[f"integral.{j}"]
        assert spec.default == 0.0 and spec.range == (0.0, 1000.0) and not spec.read_only


def test_the_compiled_command_keeps_a_nan_for_the_caller_to_refuse():
    """A NaN in ``tau_c + feedforward`` must not come out of the saturation as a full-limit torque:
    the node refuses non-finite commands, which needs the NaN."""
    from floating_base_control.control.limits import saturated_sum
    limits, out = np.array([5.0, 5.0, 5.0]), np.zeros(3)
    saturated_sum(np.array([np.nan, 9.0, -9.0]), np.array([0.0, 0.0, np.nan]), limits, out)
    assert np.isnan(out[0]) and out[1] == 5.0 and np.isnan(out[2])


@pytest.mark.parametrize("rate_hz, late_s, gap_s", [(1000.0, 0.09, 0.11), (10.0, 0.12, 1.01)])
def test_the_reference_restarts_after_a_gap_not_after_a_late_tick(model, rate_hz, late_s, gap_s):
    """A tick later than usual continues the reference toward the set-point; after a gap (0.1 s, or ten periods
    at a low rate: a 10 Hz node's late tick is more than 0.1 s) it restarts at the measured shape, at rest,
    with zero torque.  (A 10 Hz node restarted at every late tick: its command fell to zero and ramped up.)"""
    task = TaskController(model.position_limits, model.velocity_limits, model.effort_limits,
                          control_period=1.0 / rate_hz)
    gains = ShapeGains(np.full(model.n, 30.0), np.full(model.n, 3.0))
    q_d = model.position_limits.mean(axis=1)              # inside every margin: no limit term
    q = q_d + 0.1
    assert not task.torque(0.0, q, np.zeros(model.n), q_d, gains).any()       # the start: the reference at q
    moved = task.torque(late_s, q, np.zeros(model.n), q_d, gains)
    assert np.all(moved < 0) and np.all(task.qdot_r < 0)                     # on its way to q_d
    assert not task.torque(late_s + gap_s, q, np.zeros(model.n), q_d, gains).any()
    assert np.array_equal(task.q_r, q) and not task.qdot_r.any()
