"""Health of the base estimate without ground truth (estimation/health.py): the innovation metric,
the gate, re-initialization after a run of rejections, samples older than the history, and the
restart from an implausible state, alone and inside OrbitalController."""
import numpy as np
import pytest

from floating_base_control.control.shape import ShapeGains
from floating_base_control.conventions import pose
from floating_base_control.estimation.health import EstimatorHealth, HealthConfig, pose_innovation
from floating_base_control.estimation.observer import MomentumObserver
from floating_base_control.lie import exp
from floating_base_control.robots.orbital.controller import OrbitalController
from floating_base_control.model import FloatingBaseModel
from floating_base_control.experiments.orbital.scenario import OrbitalScenario
from floating_base_control.resources import orbital_robot_urdf
from floating_base_control.validation import InputError

RNG = np.random.default_rng(11)


def random_pose():
    return exp(RNG.normal(size=6))


def rotation(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return exp(np.r_[angle * axis, 0.0, 0.0, 0.0])


def translation(p):
    return pose(np.eye(3), p)


def test_innovation_is_the_rotation_angle_and_the_scaled_distance_and_left_invariant():
    g = random_pose()
    assert pose_innovation(g, g, 1.0) == pytest.approx(0.0, abs=1e-7)
    assert pose_innovation(g, g @ rotation([1, 2, 3], 0.7), 2.0) == pytest.approx(0.7, abs=1e-12)
    assert pose_innovation(g, g @ translation([3.0, 0, 4.0]), 2.0) == pytest.approx(2.5, abs=1e-12)
    d = rotation([0, 0, 1], 0.3) @ translation([0, 0.6, 0.8])
    assert pose_innovation(g, g @ d, 0.5) == pytest.approx(np.hypot(0.3, 2.0), abs=1e-12)
    h = random_pose()                       # the world frame does not matter
    assert pose_innovation(h @ g, h @ g @ d, 0.5) == pytest.approx(np.hypot(0.3, 2.0), abs=1e-12)


def started_observer():
    obs = MomentumObserver()
    obs.add_pose(np.eye(4), 0.0, 0.0)
    obs.mu_hat = np.r_[0.1, 0.0, 0.0, 0.0, 0.0, 0.05]
    return obs


def test_an_outlier_is_rejected_counted_and_not_used():
    obs, health = started_observer(), EstimatorHealth()
    assert health.admit(obs, translation([0.01, 0, 0]), 0.1, 0.1) is None
    reason = health.admit(obs, translation([1000.0, 0, 0]), 0.2, 0.2)
    assert reason == "innovation above the gate (0.5)" and health.rejected == 1
    assert np.array_equal(obs.g_hat, np.eye(4))
    assert health.admit(obs, rotation([0, 1, 0], 0.4), 0.3, 0.3) is None      # 0.4 rad < 0.5: admitted
    assert health.admit(obs, rotation([0, 1, 0], 0.6), 0.4, 0.4) is not None   # 0.6 rad: not
    assert health.reinitializations == 0


def test_an_attitude_only_sample_is_gated_on_its_rotation():
    """A star tracker's sample has a NaN translation: NaN > threshold is False, so without the
    rotation-only innovation every attitude-only outlier would pass the gate."""
    obs, health = started_observer(), EstimatorHealth()
    attitude_only = rotation([0, 1, 0], 0.4)
    attitude_only[:3, 3] = np.nan
    assert health.admit(obs, attitude_only, 0.1, 0.1) is None                # 0.4 rad: admitted
    attitude_only[:3, :3] = rotation([0, 1, 0], 0.6)[:3, :3]
    assert health.admit(obs, attitude_only, 0.2, 0.2) == "innovation above the gate (0.5)"
    assert health.rejected == 1


def test_a_run_of_consistent_rejections_reinitializes_the_pose_and_keeps_the_velocity():
    obs, health = started_observer(), EstimatorHealth(HealthConfig(reinit_after=5))
    mu = obs.mu_hat.copy()
    jumped = translation([100.0, 0, 0])
    for i in range(4):
        assert health.admit(obs, jumped, 0.1 * i, 0.1 * i) is not None
    assert health.reinitializations == 0 and np.array_equal(obs.g_hat, np.eye(4))
    health.admit(obs, jumped, 0.4, 0.4)
    assert health.reinitializations == 1 and health.rejected == 5
    assert np.array_equal(obs.g_hat, jumped) and np.array_equal(obs.g_pred, jumped)
    assert np.array_equal(obs.mu_hat, mu)
    assert health.admit(obs, jumped, 0.5, 0.5) is None                       # now the samples agree


def test_disagreeing_outliers_never_reinitialize():
    obs, health = started_observer(), EstimatorHealth(HealthConfig(reinit_after=3))
    for i in range(20):
        assert health.admit(obs, translation([100.0 * (-1) ** i, 0, 0]), 0.1 * i, 0.1 * i) is not None
    assert health.reinitializations == 0 and health.rejected == 20


def test_a_sample_older_than_the_history_is_rejected_with_the_reason():
    obs, health = started_observer(), EstimatorHealth()
    reason = health.admit(obs, np.eye(4), 10.0 - 3.0, 10.0)
    assert reason == "pose sample older than the observer's history (2 s)" and health.rejected == 1
    assert health.admit(obs, np.eye(4), 10.0 - 1.5, 10.0) is None


@pytest.mark.parametrize("mu_hat, says", [(np.r_[1000.0, 0, 0, 0, 0, 0], "beyond 10 rad/s"),
                                          (np.r_[0, 0, 0, 0, 50.0, 0], "or 10 m/s"),
                                          (np.r_[np.nan, 0, 0, 0, 0, 0], "non-finite")])
def test_an_implausible_state_restarts_from_the_next_sample(mu_hat, says):
    obs, health = started_observer(), EstimatorHealth()
    assert not health.check_state(obs) and health.restarts == 0
    obs.mu_hat = mu_hat
    assert health.check_state(obs) and health.restarts == 1 and says in health.last_restart
    assert not obs.initialized
    assert health.admit(obs, translation([5.0, 0, 0]), 1.0, 1.0) is None      # any sample starts it again
    obs.add_pose(translation([5.0, 0, 0]), 1.0, 1.0)
    assert obs.initialized and not health.check_state(obs)


def test_thresholds_are_checked():
    with pytest.raises(InputError, match="threshold must be finite and > 0"):
        HealthConfig(threshold=0.0)
    with pytest.raises(InputError, match="reinit_after must be >= 1"):
        HealthConfig(reinit_after=0)


@pytest.fixture(scope="module")
def scenario():
    return OrbitalScenario()


def controller(s):
    model = FloatingBaseModel.from_urdf(orbital_robot_urdf())
    return model, OrbitalController(model, np.array(s.q_d), ShapeGains(s.stiffness, s.damping))


def run(ctrl, t0, seconds, q, qdot, pose_of_t, rate=100.0, pose_every=10):
    """Ticks at ``rate`` with a pose sample every ``pose_every`` ticks; the outputs."""
    outs = []
    for i in range(int(seconds * rate)):
        t = t0 + i / rate
        samples = [(t, pose_of_t(t))] if i % pose_every == 0 else []
        outs.append(ctrl.step(t, q, qdot, samples))
    return outs


@pytest.mark.parametrize("case", ["1000 m once", "100 m for 2 s", "1000 rad/s for 2 s"])
def test_the_controller_returns_to_normal_after_an_outlier_without_saturating(scenario, case):
    """The core alone (the node also refuses the absurd joint velocity): one 1000 m pose, 100 m
    for 2 s, or a 1000 rad/s joint velocity for 2 s, then good input: within 5 s the command is
    the one of a controller that never saw the outlier, and no command saturates."""
    model, ctrl = controller(scenario)
    _, reference = controller(scenario)
    q, qdot = np.array(scenario.q_d) - 0.1, np.full(model.n, 0.05)
    still = lambda t: np.eye(4)                                           # noqa: E731
    run(ctrl, 0.0, 3.0, q, qdot, still)
    run(reference, 0.0, 3.0, q, qdot, still)
    if case == "1000 m once":
        bad = run(ctrl, 3.0, 0.1, q, qdot, lambda t: translation([1000.0, 0, 0]))
    elif case == "100 m for 2 s":
        bad = run(ctrl, 3.0, 2.0, q, qdot, lambda t: translation([100.0, 0, 0]))
    else:
        bad = run(ctrl, 3.0, 2.0, q, np.full(model.n, 1000.0), still)
    t1 = 3.0 + len(bad) / 100.0
    after = run(ctrl, t1, 5.0, q, qdot, still)
    expected = run(reference, 3.0, t1 - 3.0 + 5.0, q, qdot, still)[-1]
    assert ctrl.observer.initialized and np.isfinite(after[-1].tau).all()
    assert np.allclose(after[-1].tau, expected.tau, atol=0.05), (after[-1].tau, expected.tau)
    if case != "1000 rad/s for 2 s":                 # there, -D qdot itself saturates: the node refuses it
        assert not any(out.saturated for out in bad + after)
    else:
        assert not any(out.saturated for out in after)


def _state(ctrl):
    """Everything of the observer and its health checks a tick can change, as exact values."""
    obs, health = ctrl.observer, ctrl.health
    return (obs._poses.tobytes(), obs._mu_hat.tobytes(), obs.initialized, obs.samples, obs.resets,
            health.rejected, health.reinitializations, health.restarts, len(health._run))


TICK = 3.0 + 0.001


@pytest.mark.parametrize("case, screened", [
    ("no sample", True), ("sample 30 ms old", True), ("sample taken now", True), ("attitude only", True),
    ("outlier", False), ("older than the history", False), ("rotation error of pi", False),
    ("implausible state", False), ("non-finite state", False), ("two samples", False)])
def test_the_compiled_tick_is_the_checked_path_or_leaves_it_everything(scenario, case, screened):
    """``OrbitalController._observe`` takes a tick with at most one sample in one compiled call
    (``observer_screen``): the state after it, the samples counted and the observer's error are those of
    the checked path (health checks, gate and ``add_pose`` in Python) bit for bit; anything unusual it
    leaves, unchanged, to the checked path."""
    q = np.array(scenario.q_d) - 0.1
    qdot = np.linspace(-0.05, 0.05, len(q))
    moving = lambda t: exp(np.r_[0.02, -0.01, 0.03, 0.1, 0.0, -0.05] * t)     # noqa: E731
    (_, fast), (_, checked) = controller(scenario), controller(scenario)
    for ctrl in (fast, checked):
        run(ctrl, 0.0, 3.0, q, qdot, moving, rate=1000.0, pose_every=100)
    assert _state(fast) == _state(checked)
    g = moving(TICK - 0.03) @ translation([0.01, -0.02, 0.0])
    attitude_only = g.copy()
    attitude_only[:3, 3] = np.nan
    samples = {"no sample": [], "sample 30 ms old": [(TICK - 0.03, g)], "sample taken now": [(TICK, moving(TICK))],
               "attitude only": [(TICK - 0.03, attitude_only)], "outlier": [(TICK, translation([1000.0, 0, 0]))],
               "older than the history": [(TICK - 2.5, g)], "two samples": [(TICK - 0.03, g), (TICK, moving(TICK))],
               "rotation error of pi": [(TICK, moving(TICK))]}.get(case, [])
    for ctrl in (fast, checked):
        if case == "rotation error of pi":        # within the gate of the prediction, pi from g_hat
            ctrl.observer.g_hat = ctrl.observer.g_pred @ rotation([0, 0, 1], np.pi)
        if case == "implausible state":
            ctrl.observer.mu_hat = np.r_[0, 0, 0, 0, 50.0, 0]
        if case == "non-finite state":
            ctrl.observer.mu_hat = np.r_[np.nan, 0, 0, 0, 0, 0]
    for ctrl in (fast, checked):
        ctrl.observer.advance(TICK)
    before, fast_error = _state(fast), None
    if len(samples) < 2:
        fast_error = fast.health.screened_error(fast.observer, samples[0] if samples else None, TICK)
        assert (fast_error is not None) == screened
        assert fast_error is not None or _state(fast) == before
    if fast_error is None:
        fast_error = fast._observe(TICK, samples)
    checked._take_samples(TICK, samples)
    checked_error = checked.observer.error() if checked.observer.initialized else None
    assert _state(fast) == _state(checked)
    assert _state(fast) != before or case in ("no sample", "implausible state", "non-finite state")
    if checked_error is None:
        assert fast_error is None
    else:
        for a, b in zip(fast_error, checked_error):
            assert np.array_equal(a, b)
