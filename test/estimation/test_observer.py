"""The observer of [Mishra2023] eqs. 37-42, 51 and the closed loop of Lemma 11, against MuJoCo."""
import numpy as np
import pytest

from helpers import assert_close
from floating_base_control import InputError
from floating_base_control.robots.orbital.controller import OrbitalController
from floating_base_control.control.shape import ShapeGains
from floating_base_control.estimation.observer import MomentumObserver, ObserverGains
from floating_base_control.estimation.prediction import PredictionHistory
from floating_base_control.lie import exp, inv, log
from floating_base_control.resources import orbital_robot_urdf
from floating_base_control.experiments.orbital.scenario import OrbitalScenario
from floating_base_control.sim.plant import MujocoPlant
from floating_base_control.sim.sensors import PoseSensor

# Stiffer than the default scenario (whose gains leave margin for the jitter of a ROS loop):
# this loop is synchronous, and the claims are about the observer and the compensation.
SCENARIO = OrbitalScenario(q0=(0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8), q_d=(0.3, 0.0, -0.3, -1.9, 0.3, 1.7, 1.1),
                           stiffness=(40.0, 40.0, 40.0, 40.0, 10.0, 10.0, 5.0),
                           damping=(4.0, 4.0, 4.0, 4.0, 0.5, 0.5, 0.2))


def closed_loop(orbital, compensation, seconds, perturb=True, rate=1000.0):
    """Exact model, a pose at every tick (the paper's continuous-measurement setting),
    observer started from a perturbed pose and mu_hat = 0.  Returns W (eq. 53) and the
    observer errors every 10 ms."""
    dt = 1e-3
    plant = MujocoPlant.from_urdf(orbital_robot_urdf(), orbital, timestep=dt / 2, contacts=False)
    q0 = np.array(SCENARIO.q0)
    mu0 = np.r_[np.deg2rad(SCENARIO.mu0_omega_deg_s), 0.0, 0.0, 0.0]
    plant.set_state(np.eye(4), q0, mu0, np.zeros(orbital.n))
    gains = ShapeGains(SCENARIO.stiffness, SCENARIO.damping)
    ctrl = OrbitalController(orbital, SCENARIO.q_d, gains, ObserverGains(), compensation)
    delta = np.r_[0.2, -0.1, 0.15, 0.05, 0.02, -0.04] if perturb else np.zeros(6)
    ctrl.observer.initialize(exp(delta), np.zeros(6), 0.0)
    rows = []
    for i in range(int(seconds / dt)):
        t = i * dt
        g1, q, V1, qdot = plant.state()
        out = ctrl.step(t, q, qdot, [(t, g1)])
        if i % 10 == 0:
            mu = orbital.locked_velocity(q, V1, qdot)
            eps = log(inv(ctrl.observer.g_hat) @ g1)
            mu_e = mu - out.mu_hat_o
            kin = orbital.kinematics(q)
            dq = q - ctrl.q_d
            W = (0.5 * eps @ ctrl.observer.gains.L @ eps + 0.5 * mu_e @ kin.M_b @ mu_e
                 + 0.5 * qdot @ orbital.reduced_shape_inertia(q) @ qdot + 0.5 * dq @ (gains.stiffness * dq))
            rows.append((t, W, np.linalg.norm(eps), np.linalg.norm(mu_e), np.linalg.norm(dq)))
        for _ in range(2):
            plant.step(out.tau)
    return np.array(rows)


@pytest.mark.parametrize("compensation", ["tau1", "tau2"])
def test_lemma_11_lyapunov_function_decreases_and_errors_converge(orbital, compensation):
    rows = closed_loop(orbital, compensation, 8.0)
    t, W, eps, mu_e, dq = rows.T
    increase = np.diff(W).max() / W[0]
    assert increase < 1e-4, f"W (eq. 53) increased by {increase:.2e} W(0)"
    assert W[-1] < 1e-4 * W[0]
    # exponential convergence of the observer errors: at least e^(-0.5 t) over the last 4 s
    at4, at8 = np.searchsorted(t, 4.0), -1
    assert eps[at8] < np.exp(-2.0) * eps[at4] and mu_e[at8] < np.exp(-2.0) * mu_e[at4]


def test_without_compensation_the_momentum_disturbs_the_joints(orbital):
    """With PD only the momentum terms act as a disturbance ([Mishra2023] Sec. V-A): the joint
    error stalls where the compensated loop keeps converging."""
    none = closed_loop(orbital, "none", 8.0, perturb=False)[-1, 4]
    tau2 = closed_loop(orbital, "tau2", 8.0, perturb=False)[-1, 4]
    assert none > 5 * tau2


def test_latency_compensation_recovers_the_current_pose(orbital):
    """With the exact mu_hat and noise-free samples, a sample delayed by 50 ms carried
    forward with the stored twists gives the current pose."""
    dt, latency = 1e-3, 0.05
    plant = MujocoPlant.from_urdf(orbital_robot_urdf(), orbital, timestep=dt / 2, contacts=False)
    mu0 = np.r_[np.deg2rad(SCENARIO.mu0_omega_deg_s), 0.01, 0.0, 0.0]
    plant.set_state(np.eye(4), np.array(SCENARIO.q0), mu0, np.zeros(orbital.n))
    sensor = PoseSensor(rate_hz=10, rotation_noise=0, position_noise=0, latency_s=latency)
    ctrl = OrbitalController(orbital, SCENARIO.q0, ShapeGains(SCENARIO.stiffness, SCENARIO.damping))
    ctrl.observer.initialize(np.eye(4), mu0, 0.0)
    for i in range(400):
        t = i * dt
        g1, q, V1, qdot = plant.state()
        sensor.sample(t, g1)
        samples = sensor.deliver(t)
        out = ctrl.step(t, q, qdot, samples)
        if samples and t > 0.2:
            err = log(inv(ctrl.observer.g_pred) @ g1)
            assert np.linalg.norm(err) < 1e-5, f"prediction error {np.linalg.norm(err):.2e} at t = {t}"
        for _ in range(2):
            plant.step(out.tau)
    assert ctrl.observer.samples == 4


def test_rotation_error_of_pi_is_rejected_or_reset():
    obs = MomentumObserver()
    obs.add_pose(np.eye(4), 0.0, 0.0)
    flipped = exp(np.r_[np.pi, 0, 0, 0, 0, 0])
    with pytest.raises(InputError, match="tr\\(eta\\(0\\)\\) = -1"):
        obs.initialize(flipped, np.zeros(6), 0.0)
    obs.add_pose(flipped, 0.0, 0.0)
    assert obs.resets == 1
    assert_close(obs.g_hat, flipped, 0)


def test_a_hold_is_never_integrated_and_a_diverged_estimate_starts_over(orbital):
    """After a hold (unusable joint states) the observer integrates no interval with rates
    from outside it: the tick after the hold only moves its time.  A non-finite estimate is
    dropped at the next hold and the next pose sample initializes the observer again."""
    ctrl = OrbitalController(orbital, SCENARIO.q_d, ShapeGains(np.ones(orbital.n), np.ones(orbital.n)))
    q, qdot = np.full(orbital.n, 0.3), np.full(orbital.n, 0.1)
    ctrl.step(0.00, q, qdot, [(0.0, np.eye(4))])
    ctrl.step(0.01, q, qdot)
    ctrl.hold(0.03)
    g_hat = ctrl.observer.g_hat.copy()
    ctrl.step(0.04, q, qdot)
    assert_close(ctrl.observer.g_hat, g_hat, 0)              # [0.03, 0.04]: no rates of its own
    ctrl.step(0.05, q, qdot)
    assert [(t, dt) for t, dt, _ in ctrl.observer.history][-1] == (0.04, pytest.approx(0.01))
    ctrl.observer.mu_hat = np.full(6, np.nan)
    ctrl.hold(0.06)
    assert not ctrl.observer.initialized and ctrl.observer.resets == 1
    out = ctrl.step(0.07, q, qdot, [(0.065, np.eye(4))])
    assert ctrl.observer.initialized and np.isfinite(out.tau).all()


def test_controller_inputs_are_checked_against_the_model(orbital):
    n = orbital.n
    gains = ShapeGains(np.ones(n), np.ones(n))
    with pytest.raises(InputError, match=r"q_d must have shape \(7,\), got \(3,\)"):
        OrbitalController(orbital, np.zeros(3), gains)
    with pytest.raises(InputError, match=r"shape gains need one value per joint \(7\)"):
        OrbitalController(orbital, SCENARIO.q_d, ShapeGains([1.0, 1.0], [1.0, 1.0]))
    ctrl = OrbitalController(orbital, SCENARIO.q_d, gains, compensation="truth")
    with pytest.raises(InputError, match="compensation 'truth' needs mu_true"):
        ctrl.step(0.0, np.zeros(n), np.zeros(n))
    with pytest.raises(InputError, match="torque_limits must be >= 0"):
        ctrl.torque_limits = -np.ones(n)
    ctrl.torque_limits = np.r_[0.0, np.ones(n - 1)]            # 0: that joint gets no torque


def test_gains_are_checked():
    with pytest.raises(InputError, match="observer gain k must be finite and > 0"):
        ObserverGains(k=0.0)
    with pytest.raises(InputError, match="shape gain damping"):
        ShapeGains([1.0, 1.0], [1.0, np.nan])


def test_a_late_sample_is_carried_forward_by_the_stored_increments(orbital, rng):
    """Carrying a sample forward with the prediction's odometry (one lookup) equals applying every
    stored increment since the sample was taken, the partial one included (the direct sum over
    the history), for stamps inside an interval, on a tick, older than the history and in the future."""
    ctrl = OrbitalController(orbital, SCENARIO.q_d, ShapeGains(np.ones(orbital.n), np.ones(orbital.n)))
    obs = ctrl.observer
    obs.history_s = 0.05
    obs.initialize(np.eye(4), np.r_[0.2, -0.1, 0.3, 0.05, 0.0, -0.02], 0.0)
    t, gap = 0.0, None
    for _ in range(120):                                  # irregular ticks, a gap without rates
        t += rng.uniform(0.5e-3, 1.5e-3)
        q, qdot = rng.uniform(-1, 1, orbital.n), rng.normal(size=orbital.n)
        ctrl.step(t, q, qdot)
        if gap is None and t > 0.09:
            gap = t + 0.001
            ctrl.hold(t + 0.002)
            t += 0.002
    history = obs.history
    assert history[0][0] >= t - 0.05 - 2e-3 and len(history) > 30
    g_meas = exp(rng.normal(size=6) * 0.1)
    assert history[0][0] < gap < history[-1][0]
    stamps = [history[-10][0] + 0.3 * history[-10][1], history[-20][0], history[0][0] - 0.01, gap, t - 0.0101,
              t + 0.01]
    for t_s in stamps:
        expected = g_meas.copy()
        for start, dt, V in history:
            overlap = start + dt - max(start, t_s)
            if overlap > 0:
                expected = expected @ exp(V * overlap)
        obs.add_pose(g_meas, t_s, t)
        assert_close(obs.g_pred, expected, 1e-12, f"sample taken at {t_s:.4f}")


def test_prediction_history_keeps_its_rows_in_order_when_they_move_or_grow():
    """The observer's preallocated history moves its live rows to the front and grows (a longer history
    than it was sized for) without losing or reordering an increment: it keeps what a list would."""
    history, kept = PredictionHistory(8), []
    for k in range(200):
        window = 3 if k < 100 else 20                    # outgrows 8 rows after tick 100
        D = np.eye(4)
        D[0, 3] = k
        history.record(float(k), 1.0, np.full(6, float(k)), D, k - window)
        kept = [j for j in kept if j >= k - window] + [k]
        rows = history.live
        assert rows["start"].tolist() == kept and len(history) == len(kept)
        assert rows["V1"][:, 0].tolist() == kept and rows["D"][:, 0, 3].tolist() == kept
    assert len(history.rows) > 8                         # it grew (and moved its rows before and after)
