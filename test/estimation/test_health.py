"""Health of the base estimate without ground truth (estimation/health.py): the innovation metric,
the gate, re-initialization after a run of rejections, samples older than the history, and the
restart from an implausible state, on a pose sample's one path into the observer
(estimation/pose_samples.py) and inside OrbitalController."""
import numpy as np
import pytest

from floating_base_control.control.shape import ShapeGains
from floating_base_control.conventions import pose
from floating_base_control.estimation.health import EstimatorHealth, HealthConfig, pose_innovation
from floating_base_control.estimation.observer import MomentumObserver
from floating_base_control.estimation.pose_samples import observe
from floating_base_control.lie import exp, inv, log
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


def admit(obs, health, g, t_meas, t_now):
    """One tick at ``t_now`` with the sample ``g`` taken at ``t_meas`` (``observe``): why the gate rejected it,
    ``None`` if it was admitted (and consumed)."""
    rejected = health.rejected
    observe(obs, health, t_now, [(t_meas, g)])
    return health.last_rejection if health.rejected > rejected else None


def test_an_outlier_is_rejected_counted_and_not_used():
    obs, health = started_observer(), EstimatorHealth()
    assert admit(obs, health, translation([0.01, 0, 0]), 0.1, 0.1) is None
    assert np.array_equal(obs.g_pred, translation([0.01, 0, 0]))                  # consumed: the prediction
    reason = admit(obs, health, translation([1000.0, 0, 0]), 0.2, 0.2)
    assert reason == "innovation above the gate (0.5)" and health.rejected == 1
    assert np.array_equal(obs.g_hat, np.eye(4)) and np.array_equal(obs.g_pred, translation([0.01, 0, 0]))
    g = obs.g_pred
    assert admit(obs, health, g @ rotation([0, 1, 0], 0.4), 0.3, 0.3) is None   # 0.4 rad < 0.5: admitted
    assert admit(obs, health, g @ rotation([0, 1, 0], 1.0), 0.4, 0.4) is not None   # 0.6 rad from it: not
    assert health.reinitializations == 0 and obs.samples == 3


def test_an_attitude_only_sample_is_gated_on_its_rotation():
    """A star tracker's sample has a NaN translation: NaN > threshold is False, so without the
    rotation-only innovation every attitude-only outlier would pass the gate."""
    obs, health = started_observer(), EstimatorHealth()
    attitude_only = rotation([0, 1, 0], 0.4)
    attitude_only[:3, 3] = np.nan
    assert admit(obs, health, attitude_only, 0.1, 0.1) is None                  # 0.4 rad: admitted
    assert np.array_equal(obs.g_pred[:3, :3], attitude_only[:3, :3]) and not obs.g_pred[:3, 3].any()
    attitude_only[:3, :3] = rotation([0, 1, 0], 1.0)[:3, :3]
    assert admit(obs, health, attitude_only, 0.2, 0.2) == "innovation above the gate (0.5)"
    assert health.rejected == 1


def test_a_run_of_consistent_rejections_reinitializes_the_pose_and_keeps_the_velocity():
    obs, health = started_observer(), EstimatorHealth(HealthConfig(reinit_after=5))
    mu = obs.mu_hat.copy()
    jumped = translation([100.0, 0, 0])
    for i in range(4):
        assert admit(obs, health, jumped, 0.1 * i, 0.1 * i) is not None
    assert health.reinitializations == 0 and np.array_equal(obs.g_hat, np.eye(4))
    admit(obs, health, jumped, 0.4, 0.4)
    assert health.reinitializations == 1 and health.rejected == 5
    assert np.array_equal(obs.g_hat, jumped) and np.array_equal(obs.g_pred, jumped)
    assert np.array_equal(obs.mu_hat, mu)
    assert admit(obs, health, jumped, 0.5, 0.5) is None                          # now the samples agree


def test_disagreeing_outliers_never_reinitialize():
    obs, health = started_observer(), EstimatorHealth(HealthConfig(reinit_after=3))
    for i in range(20):
        assert admit(obs, health, translation([100.0 * (-1) ** i, 0, 0]), 0.1 * i, 0.1 * i) is not None
    assert health.reinitializations == 0 and health.rejected == 20


def test_a_sample_older_than_the_history_is_rejected_with_the_reason():
    obs, health = started_observer(), EstimatorHealth()
    reason = admit(obs, health, np.eye(4), 10.0 - 3.0, 10.0)
    assert reason == "pose sample older than the observer's history (2 s)" and health.rejected == 1
    assert admit(obs, health, np.eye(4), 10.0 - 1.5, 10.0) is None


@pytest.mark.parametrize("mu_hat, says", [(np.r_[1000.0, 0, 0, 0, 0, 0], "beyond 10 rad/s"),
                                          (np.r_[0, 0, 0, 0, 50.0, 0], "or 10 m/s"),
                                          (np.r_[np.nan, 0, 0, 0, 0, 0], "non-finite")])
def test_an_implausible_state_restarts_from_the_next_sample(mu_hat, says):
    obs, health = started_observer(), EstimatorHealth()
    assert observe(obs, health, 0.5, ()) is not None and health.restarts == 0
    obs.mu_hat = mu_hat
    assert observe(obs, health, 0.6, ()) is None
    assert health.restarts == 1 and says in health.last_restart and obs.resets == 1
    assert not obs.initialized
    assert admit(obs, health, translation([5.0, 0, 0]), 1.0, 1.0) is None      # any sample starts it again
    assert obs.initialized and np.array_equal(obs.g_hat, translation([5.0, 0, 0]))
    observe(obs, health, 1.1, ())
    assert health.restarts == 1


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
    return (obs._state.tobytes(), obs.initialized, obs.t, health.rejected, health.reinitializations, health.restarts,
            len(health._run))


def oracle_tick(ctrl, t, samples):
    """A tick's pose samples by the gate's rules (health.py's module doc) written out with numpy, each admitted
    sample consumed by the observer's gate-less ``add_pose``: the oracle of ``pose_samples.observe``."""
    obs, health, config = ctrl.observer, ctrl.health, ctrl.health.config
    if obs.initialized:
        mu = obs.mu_hat
        if not np.isfinite(obs.g_hat).all() or not np.isfinite(mu).all():
            health.restarts, health.last_restart = health.restarts + 1, "non-finite estimate"
            obs.reset()
        elif np.linalg.norm(mu[:3]) > config.max_angular_rate or np.linalg.norm(mu[3:]) > config.max_speed:
            health.restarts, health.last_restart = health.restarts + 1, "too fast"
            obs.reset()
    for t_meas, g in samples:
        if t - t_meas > obs.history_s:
            health.rejected += 1
            continue
        if obs.initialized:
            carried = g.copy()                          # carried forward: the increments since t_meas
            for start, dt, V in obs.history:
                overlap = start + dt - max(start, t_meas)
                if overlap > 0:
                    carried = carried @ exp(V * overlap)
            residual = log(inv(obs.g_pred) @ carried)
            size = (np.linalg.norm(residual[:3]) if np.isnan(g[:3, 3]).any() else
                    np.hypot(np.linalg.norm(residual[:3]), np.linalg.norm(carried[:3, 3] - obs.g_pred[:3, 3])
                             / config.length))
            if size > config.threshold:
                health.rejected += 1
                health._run.append(g)
                continue
        health._run.clear()
        obs.add_pose(g, t_meas, t)
    return obs.error() if obs.initialized else None


TICK = 3.0 + 0.001


@pytest.mark.parametrize("case", ["no sample", "sample 30 ms old", "sample taken now", "attitude only", "outlier",
                                  "older than the history", "rotation error of pi", "implausible state",
                                  "non-finite state", "two samples"])
def test_a_ticks_samples_take_the_gates_rules_into_the_observer(scenario, case):
    """``pose_samples.observe`` (one compiled call a sample, the gate's verdicts inside) leaves the observer and
    the gate's counts as the gate's rules and the observer's own consumption of a sample (``add_pose``) say, bit
    for bit, and gives the error the observer then has: for the usual ticks and each unusual one."""
    q = np.array(scenario.q_d) - 0.1
    qdot = np.linspace(-0.05, 0.05, len(q))
    moving = lambda t: exp(np.r_[0.02, -0.01, 0.03, 0.1, 0.0, -0.05] * t)     # noqa: E731
    (_, tick), (_, oracle) = controller(scenario), controller(scenario)
    for ctrl in (tick, oracle):
        run(ctrl, 0.0, 3.0, q, qdot, moving, rate=1000.0, pose_every=100)
    assert _state(tick) == _state(oracle)
    g = moving(TICK - 0.03) @ translation([0.01, -0.02, 0.0])
    attitude_only = g.copy()
    attitude_only[:3, 3] = np.nan
    samples = {"no sample": [], "sample 30 ms old": [(TICK - 0.03, g)], "sample taken now": [(TICK, moving(TICK))],
               "attitude only": [(TICK - 0.03, attitude_only)], "outlier": [(TICK, translation([1000.0, 0, 0]))],
               "older than the history": [(TICK - 2.5, g)], "two samples": [(TICK - 0.03, g), (TICK, moving(TICK))],
               "rotation error of pi": [(TICK, moving(TICK))], "implausible state": [(TICK, moving(TICK))],
               "non-finite state": [(TICK, moving(TICK))]}[case]
    for ctrl in (tick, oracle):
        if case == "rotation error of pi":        # within the gate of the prediction, pi from g_hat
            ctrl.observer.g_hat = ctrl.observer.g_pred @ rotation([0, 0, 1], np.pi)
        if case == "implausible state":
            ctrl.observer.mu_hat = np.r_[0, 0, 0, 0, 50.0, 0]
        if case == "non-finite state":
            ctrl.observer.mu_hat = np.r_[np.nan, 0, 0, 0, 0, 0]
        ctrl.observer.advance(TICK)
    before = _state(tick)
    error, expected = tick._observe(TICK, samples), oracle_tick(oracle, TICK, samples)
    assert _state(tick) == _state(oracle)
    assert _state(tick) != before or case == "no sample"
    assert (tick.observer.resets, tick.health.rejected) == {
        "outlier": (0, 1), "older than the history": (0, 1), "rotation error of pi": (1, 0),
        "implausible state": (1, 0), "non-finite state": (1, 0)}.get(case, (0, 0))
    for a, b in zip(error, expected):
        assert np.array_equal(a, b)
