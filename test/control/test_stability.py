"""The delayed loop's stability analysis (control/stability.py) against a brute-force simulation of the same
linear loop, and the package's default gains against the required margins (the old ones fail them)."""
import numpy as np
import pytest

from floating_base_control.control import stability as st
from floating_base_control.control.end_effector import (DEFAULT_DAMPING_RATIO, DEFAULT_NULLSPACE_DAMPING,
                                                       DEFAULT_NULLSPACE_STIFFNESS, DEFAULT_STIFFNESS, CartesianGains,
                                                       FrameWorkspace, frame_id)
from floating_base_control.experiments.orbital import tasks
from floating_base_control.experiments.orbital.scenario import OrbitalScenario

H = 1e-3
DDS = H + st.DDS_LATENCY_S
#: The gains before the loop delay was modelled: the trajectory demo's joint gains, the node's Cartesian defaults.
OLD_TRAJECTORY = ((600.0, 600.0, 400.0, 400.0, 100.0, 100.0, 50.0), (60.0, 60.0, 30.0, 30.0, 5.0, 5.0, 1.5))
OLD_NODE_CARTESIAN = CartesianGains([50.0] * 3 + [2000.0] * 3, [2.0] * 3 + [150.0] * 3, np.full(7, 5.0),
                                    np.full(7, 0.2))
#: A coupled two-joint inertia and gains (with integral action) for the brute-force comparisons.
M2 = np.array([[0.5, 0.12], [0.12, 0.05]])
K2, D2, KI2 = np.array([200.0, 30.0]), np.array([20.0, 3.0]), np.array([100.0, 15.0])


def _matrix(gain):
    return np.diag(gain) if np.ndim(gain) == 1 else np.asarray(gain)


class BruteForceLoop:
    """``M e'' = u`` integrated exactly for piecewise-constant ``u`` on ``substeps`` steps per period ``h``; each
    command ``u_k = -K e_k - D e'_k - K_i z_k`` (``z_{k+1} = z_k + h e_k``) is queued and acts from ``delay`` after
    its state was read until the next one arrives.  The state is that of ``closed_loop_matrix``: ``e, e', z`` and
    the commands in flight, newest first; kept finite by renormalizing (``log_scale``)."""

    def __init__(self, M, K, D, h, delay, state, K_i=None, substeps=16):
        self.n, self.h, self.substeps = len(M), h, substeps
        self.Mi, self.K, self.D = np.linalg.inv(M), _matrix(K), _matrix(D)
        self.K_i = None if K_i is None else _matrix(K_i)
        self.m = int(np.floor(delay / h + 1e-9))
        self.arrive = round((delay - self.m * h) / (h / substeps))        # substep at which u_{k-m} arrives
        assert abs(self.arrive * h / substeps - (delay - self.m * h)) < 1e-12, "the delay must fall on a substep"
        n, nz = self.n, 0 if K_i is None else self.n
        self.e, self.v, self.z = state[:n].copy(), state[n:2 * n].copy(), state[2 * n:2 * n + nz].copy()
        self.flying = [state[2 * n + nz + i * n:2 * n + nz + (i + 1) * n].copy() for i in range(self.m + 1)]
        self.log_scale = 0.0

    def period(self):
        u_k = -(self.K @ self.e + self.D @ self.v + (self.K_i @ self.z if self.K_i is not None else 0.0))
        queue = [u_k] + self.flying                                   # queue[j] = u_{k-j}
        step, e0 = self.h / self.substeps, self.e.copy()
        for s in range(self.substeps):
            a = self.Mi @ (queue[self.m] if s >= self.arrive else queue[self.m + 1])
            self.e, self.v = self.e + step * self.v + 0.5 * step * step * a, self.v + step * a
        if self.K_i is not None:
            self.z = self.z + self.h * e0
        self.flying = queue[:self.m + 1]
        size = np.linalg.norm(self.state())
        if size > 1e6 or 0 < size < 1e-6:
            self.e, self.v, self.z = self.e / size, self.v / size, self.z / size
            self.flying = [u / size for u in self.flying]
            self.log_scale += np.log(size)

    def state(self):
        return np.concatenate([self.e, self.v, self.z, *self.flying])

    def growth(self, periods, window):
        """Growth per period of the state's norm: the least-squares slope of its logarithm over the last
        ``window`` of ``periods`` periods (the oscillation of a complex pair averages out)."""
        logs = []
        for k in range(periods):
            self.period()
            logs.append(self.log_scale + np.log(np.linalg.norm(self.state())))
        return np.exp(np.polyfit(np.arange(window), logs[-window:], 1)[0])


@pytest.mark.parametrize("delay", [0.0, 0.375 * H, H, 1.75 * H, 3 * H])
@pytest.mark.parametrize("integral", [False, True])
def test_the_loop_matrix_is_one_period_of_the_brute_force_loop(delay, integral):
    """Column by column, from each basis state: the sampling with a (fractional) delay is exact."""
    K_i = KI2 if integral else None
    A = st.closed_loop_matrix(M2, K2, D2, H, delay, K_i)
    for j in range(len(A)):
        loop = BruteForceLoop(M2, K2, D2, H, delay, np.eye(len(A))[j], K_i)
        loop.period()
        np.testing.assert_allclose(loop.state(), A[:, j], rtol=0, atol=1e-13 * max(1.0, np.abs(A).max()))


def test_the_spectral_radius_is_the_brute_force_loops_growth():
    for scale in (1.0, 4.0):                     # a stable loop and one with 4 times the gains (unstable)
        radius = st.spectral_radius(st.closed_loop_matrix(M2, scale * K2, scale * D2, H, 1.5 * H))
        rng = np.random.default_rng(1)
        loop = BruteForceLoop(M2, scale * K2, scale * D2, H, 1.5 * H, rng.normal(size=2 * 2 + 2 * 2))
        assert loop.growth(5000, 2000) == pytest.approx(radius, abs=1e-5)
        assert (radius < 1) == (scale == 1.0)


@pytest.mark.parametrize("delay", [H, DDS])
def test_the_gain_and_delay_margins_are_where_the_brute_force_loop_turns_unstable(delay):
    gm = st.gain_margin(M2, K2, D2, H, delay)
    dm = st.delay_margin(M2, K2, D2, H, delay)
    assert 1.0 < gm < 100.0 and 0 < dm < 10 * H
    state = np.random.default_rng(2).normal(size=len(st.closed_loop_matrix(M2, K2, D2, H, delay)))
    for factor, grows in ((0.97, False), (1.03, True)):
        loop = BruteForceLoop(M2, factor * gm * K2, factor * gm * D2, H, delay, state)
        assert (loop.growth(3000, 1500) > 1.0) == grows
    for extra, grows in ((dm - H / 4, False), (dm + H / 4, True)):      # the brute force's delay: whole substeps
        d = delay + round(extra / (H / 16)) * H / 16
        state = np.random.default_rng(3).normal(size=len(st.closed_loop_matrix(M2, K2, D2, H, d)))
        assert (BruteForceLoop(M2, K2, D2, H, d, state).growth(3000, 1500) > 1.0) == grows


@pytest.mark.parametrize("zeta", [0.26, 0.7, 1.0])
def test_one_joint_margins_are_the_continuous_ones_for_a_fast_loop(zeta):
    """PD on ``e'' = u`` (``K = 1, D = 2 zeta``): crossover ``w^4 = 1 + D^2 w^2``, phase margin ``atan(D w)``,
    delay margin ``PM / w``, less the zero-order hold's half period (``w h / 2`` of phase)."""
    h, D = 1e-2, 2.0 * zeta
    w = np.sqrt((D * D + np.sqrt(D ** 4 + 4.0)) / 2.0)
    pm = np.arctan(D * w)
    assert st.phase_margin([[1.0]], [1.0], [D], h, 0.0) == pytest.approx(pm - w * h / 2, abs=np.deg2rad(0.1))
    assert st.delay_margin([[1.0]], [1.0], [D], h, 0.0, max_extra=2.0) == pytest.approx(pm / w - h / 2, abs=2e-3)


def test_unstable_gains_have_no_margin_and_a_gain_margin_below_one():
    strong = 6 * K2, 6 * D2
    assert not st.is_stable(M2, *strong, H, H)
    assert st.phase_margin(M2, *strong, H, H) == 0.0 and st.delay_margin(M2, *strong, H, H) == 0.0
    gm = st.gain_margin(M2, *strong, H, H)
    assert 0 < gm < 1 and st.is_stable(M2, 0.99 * gm * strong[0], 0.99 * gm * strong[1], H, H)


# -- the package's gains --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def trajectory_inertias(orbital):
    s, settings = OrbitalScenario(), tasks.TaskSettings()
    return [orbital.reduced_shape_inertia(q) for q in tasks.trajectory_shapes(settings, orbital, s.q0, s.q_d, 13)]


def test_the_trajectory_gains_are_the_delay_robust_design_on_its_path(orbital):
    s, settings = OrbitalScenario(), tasks.TaskSettings()
    K, D = st.delay_robust_joint_gains([orbital.reduced_shape_inertia(q)
                                        for q in tasks.trajectory_shapes(settings, orbital, s.q0, s.q_d)])
    np.testing.assert_allclose(settings.stiffness, K, rtol=5e-3)         # 3 digits
    np.testing.assert_allclose(settings.damping, D, rtol=5e-3)


def _worst(inertias_and_gains, delay):
    """The smallest gain and phase margins (deg) over the loops ``(M, K, D)``."""
    return (min(st.gain_margin(M, K, D, H, delay) for M, K, D in inertias_and_gains),
            min(np.rad2deg(st.phase_margin(M, K, D, H, delay)) for M, K, D in inertias_and_gains))


def _meets(margins, required):
    return margins[0] >= required["gain_margin"] and margins[1] >= required["phase_margin_deg"]


def test_the_trajectory_gains_have_the_margins_with_the_delay_and_the_old_ones_did_not(trajectory_inertias):
    settings = tasks.TaskSettings()
    new = [(M, settings.stiffness, settings.damping) for M in trajectory_inertias]
    assert _meets(_worst(new, H), st.REQUIRED) and _meets(_worst(new, DDS), st.REQUIRED_DDS)
    old = [(M, *OLD_TRAJECTORY) for M in trajectory_inertias]
    assert _worst(old, DDS)[0] < 1.0                  # unstable over DDS ...
    assert _worst(old, H)[0] < st.REQUIRED["gain_margin"]      # ... and thin with one period


@pytest.fixture(scope="module")
def ee_frame(orbital):
    return FrameWorkspace(orbital), frame_id(orbital, tasks.TaskSettings().ee_frame)


def test_the_cartesian_defaults_have_the_margins_and_the_old_node_defaults_were_unstable_over_dds(orbital, ee_frame):
    """At the end-effector demo's start and the set-point scenario's shapes: the old node defaults' rotational
    damping on the end effector's small rotational inertia is a fast velocity loop that a DDS loop's latency
    destabilizes."""
    ws, fid = ee_frame
    s = OrbitalScenario()
    new = CartesianGains(DEFAULT_STIFFNESS, np.ones(6), np.full(7, DEFAULT_NULLSPACE_STIFFNESS),
                         np.full(7, DEFAULT_NULLSPACE_DAMPING), DEFAULT_DAMPING_RATIO)
    shapes = [np.array(s.q0), np.array(s.q_d)]
    loops = {name: [st.cartesian_joint_gains(orbital, ws, fid, q, g) for q in shapes]
             for name, g in (("new", new), ("old", OLD_NODE_CARTESIAN))}
    assert _meets(_worst(loops["new"], H), st.REQUIRED) and _meets(_worst(loops["new"], DDS), st.REQUIRED_DDS)
    assert _worst(loops["old"], DDS)[0] < 1.0
    Lambda = st.task_inertia(orbital, ws, fid, s.q0)
    assert OLD_NODE_CARTESIAN.damping[0] / np.linalg.eigvalsh(Lambda).min() > 300.0    # its velocity loop, rad/s


def test_the_cartesian_linearization_is_the_impedance_torque_of_a_small_displacement(orbital, ee_frame):
    """``-K x`` and ``-D x`` of cartesian_joint_gains against the task's own torque (no momentum, no
    feedforward) by central differences: the joints displaced by ``eps x`` move the base by ``-eps A_l x``
    (eq. 9 with ``mu = 0``), and the error is the end effector's world pose to where it was."""
    from floating_base_control.control.end_effector import (frame_kinematics, generalized_jacobian, impedance_torque,
                                                           pose_error)
    from floating_base_control.dynamics.rel_fast import locked_inertia_factor
    from floating_base_control.conventions import SWAP
    from floating_base_control.lie import exp
    ws, fid = ee_frame
    q0 = np.array(OrbitalScenario().q0)
    gains = CartesianGains(DEFAULT_STIFFNESS, np.ones(6), np.full(7, 5.0), np.full(7, 1.0), DEFAULT_DAMPING_RATIO)
    M, K, D = st.cartesian_joint_gains(orbital, ws, fid, q0, gains)
    locked_inertia_factor(orbital, ws.inertia, q0)
    A_l = ws.inertia.A[SWAP].copy()
    g0 = frame_kinematics(ws, fid, q0)[0]

    def torque(eps, x, qdot):
        q = q0 + eps * x
        locked_inertia_factor(orbital, ws.inertia, q)
        g, J = frame_kinematics(ws, fid, q)
        J_star, _ = generalized_jacobian(g, J, ws.inertia.A[SWAP])
        g_e = exp(-eps * A_l @ x) @ g
        return impedance_torque(J_star, np.zeros(6), g_e[:3, :3], pose_error(g_e, g0), np.zeros(6), qdot,
                                orbital.reduced_shape_inertia(q), q, q0, gains)
    x, eps = np.random.default_rng(4).normal(size=7), 1e-6
    np.testing.assert_allclose((torque(eps, x, np.zeros(7)) - torque(-eps, x, np.zeros(7))) / (2 * eps), -K @ x,
                               rtol=0, atol=1e-6 * np.abs(K).max())
    np.testing.assert_allclose(torque(0.0, x, x), -D @ x, rtol=0, atol=1e-12 * np.abs(D).max())


def test_the_node_default_joint_gains_have_the_margins_over_its_sampled_shapes(orbital):
    from floating_base_control.ros.params import default_joint_gains
    K, D = default_joint_gains(orbital)
    loops = [(orbital.reduced_shape_inertia(q), K, D) for q in st.sample_configurations(orbital, 16)[::4]]
    assert _meets(_worst(loops, H), st.REQUIRED) and _meets(_worst(loops, DDS), st.REQUIRED_DDS)


def test_the_hoppers_flight_spring_needs_a_fast_loop():
    """The thesis' K_r, D_r on the light leg in flight: stable with margin at the in-process 10 kHz with one
    period of delay; at 1 kHz with one period no margin, unstable at the stretched knee."""
    from floating_base_control.experiments.hopper.scenario import experiment
    from floating_base_control.robots.hopper.model import hopper_model
    exp = experiment("revolute", "VI")
    model = hopper_model("revolute", exp.gravity)
    foot = model.pin_model.getFrameId("foot")
    for q in (1.67, 2.19):                       # the knee's range in Exp VI
        M, K, D = st.radial_loop(model, foot, [q], exp.gains.K_r, exp.gains.D_r_flight)
        assert M[0, 0] / (K[0] / exp.gains.K_r) < 0.03            # the radial mass in flight, kg
        assert st.gain_margin(M, K, D, 1e-4, 1e-4) > 3.0
        assert st.gain_margin(M, K, D, 1e-3, 1e-3) < 1.1
    assert not st.is_stable(M, K, D, 1e-3, 1e-3)


def test_the_node_refuses_gains_unstable_at_the_shape_and_warns_of_thin_margins(orbital):
    from floating_base_control.ros.params import controller_params, default_joint_gains, gain_stability
    specs = {s.name: s.default for s in controller_params(orbital.joint_names, orbital.position_limits,
                                                           orbital.effort_limits, default_joint_gains(orbital))}
    q0 = np.array(OrbitalScenario().q0)

    def check(changes):
        return gain_stability({**specs, **changes}.__getitem__, changes, orbital, q0)
    assert check({"task": "end_effector"}) == (None, None)              # the defaults
    assert check({"stiffness.panda_joint1": specs["stiffness.panda_joint1"]}) == (None, None)
    old = {"task": "end_effector", "end_effector.damping_ratio": 0.0, "end_effector.nullspace_damping": 0.2,
           **{f"end_effector.{kind}.{a}": v for kind, v in (("stiffness", 50.0), ("damping", 2.0))
              for a in ("rx", "ry", "rz")}}
    refusal, _ = check(old)
    assert refusal.startswith("Cartesian impedance") and "unstable with one control period and 3 ms" in refusal
    refusal, _ = check({"damping.panda_joint7": 5.0})        # 5 N m s/rad on the wrist's few grams m^2
    assert refusal.startswith("joint gains") and "unstable with one control period (1 ms)" in refusal
    unstable = {**specs, "damping.panda_joint7": 5.0}           # already so: a change elsewhere does not leave
    refusal, warning = gain_stability(unstable.__getitem__, {"stiffness.panda_joint1": 1.0}, orbital, q0,
                                      current=unstable.__getitem__)
    assert refusal is None and warning.endswith("as before this change")
    paper = OrbitalScenario()
    refusal, warning = check({**{f"stiffness.{j}": k for j, k in zip(orbital.joint_names, paper.stiffness)},
                              **{f"damping.{j}": d for j, d in zip(orbital.joint_names, paper.damping)}})
    assert refusal is None and "phase margin below 45 deg" in warning        # underdamped as in Fig. 6
