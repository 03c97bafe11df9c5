"""Motion tasks (issue 16): joint trajectories, the tracking law's CC terms, the generalized Jacobian,
the end-effector impedance, the handover between tasks, and the set-point path left unchanged."""
import numpy as np
import pinocchio as pin
import pytest

from floating_base_control.control import end_effector as ee
from floating_base_control.control import tracking
from floating_base_control.control.handover import Handover
from floating_base_control.control.shape import COMPENSATIONS, ShapeGains, task_torque
from floating_base_control.control.trajectory import TrajectoryReference, Waypoint
from floating_base_control.conventions import to_pinocchio
from floating_base_control.conventions import SWAP
from floating_base_control.lie import Ad, exp
from floating_base_control.experiments.orbital import scenario as orbital
from floating_base_control.experiments.orbital import tasks
from floating_base_control.validation import InputError

TAU2 = COMPENSATIONS["tau2"]
N = 3
LIMITS = np.array([[-2.0, 2.0]] * N)


def reference(q0=(0.0, 0.0, 0.0), v=1.0, a=5.0):
    return TrajectoryReference(np.array(q0), LIMITS, np.full(N, v), np.full(N, a))


def finite_rates(r, t, h=1e-6):
    """Central differences of the reference's position and velocity at ``t``."""
    return ((r.sample(t + h).q - r.sample(t - h).q) / (2 * h), (r.sample(t + h).qdot - r.sample(t - h).qdot) / (2 * h))


def test_quintic_trajectory_passes_its_waypoints_with_continuous_velocity_and_acceleration():
    r = reference()
    pts = [Waypoint(1.0, [0.3, -0.2, 0.1], [0.1, 0.0, -0.1], [0.0, 0.2, 0.0]),
           Waypoint(2.0, [0.5, 0.1, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0])]
    r.command(0.5, pts)
    for w in pts:
        s = r.sample(0.5 + w.time_from_start - 1e-12)
        assert np.allclose(s.q, w.positions, atol=1e-9) and np.allclose(s.qdot, w.velocities, atol=1e-9)
        assert np.allclose(s.qddot, w.accelerations, atol=1e-8)
    for t in (0.5, 1.5, 2.5):      # start and each waypoint: left and right limits agree
        left, right = r.sample(t - 1e-9), r.sample(t + 1e-9)
        assert np.allclose(left.q, right.q, atol=1e-8) and np.allclose(left.qdot, right.qdot, atol=1e-6)
        assert np.allclose(left.qddot, right.qddot, atol=1e-5)
    for t in (0.9, 1.7, 2.2):      # velocity and acceleration are the derivatives of the position
        v, a = finite_rates(r, t)
        s = r.sample(t)
        assert np.allclose(s.qdot, v, atol=1e-7) and np.allclose(s.qddot, a, atol=1e-6)
    assert np.array_equal(r.sample(10.0).q, pts[-1].positions) and not r.sample(10.0).qdot.any()


def test_cubic_with_velocities_and_linear_with_positions_only():
    r = reference()
    r.command(0.0, [Waypoint(1.0, [0.2, 0.0, 0.0], [0.1, 0.0, 0.0]), Waypoint(2.0, [0.4, 0.0, 0.0], [0.0] * 3)])
    assert r.trajectories[-1].degree == 3
    assert np.allclose(r.sample(1.0 - 1e-12).qdot, [0.1, 0, 0]) and np.allclose(r.sample(1.0 + 1e-12).qdot, [0.1, 0, 0])
    r = reference()
    r.command(0.0, [Waypoint(1.0, [0.2, -0.1, 0.0])])
    assert r.trajectories[-1].degree == 1
    assert np.allclose(r.sample(0.25).q, [0.05, -0.025, 0.0]) and np.allclose(r.sample(0.5).qdot, [0.2, -0.1, 0.0])


def test_a_new_trajectory_replaces_the_rest_of_the_current_one_from_its_start_time():
    r = reference(v=5.0, a=50.0)
    r.command(0.0, [Waypoint(2.0, [1.0, 0.0, 0.0], [0.0] * 3, [0.0] * 3)])
    before = r.sample(1.0)
    r.command(1.0, [Waypoint(1.0, [0.0, 0.5, 0.0], [0.0] * 3, [0.0] * 3)])
    assert np.allclose(r.sample(0.5).q, reference_sample_of_first(0.5))       # untouched before the start
    after = r.sample(1.0 + 1e-12)
    assert np.allclose(after.q, before.q) and np.allclose(after.qdot, before.qdot)
    assert np.allclose(after.qddot, before.qddot, atol=1e-6)
    assert np.allclose(r.sample(3.0).q, [0.0, 0.5, 0.0])


def reference_sample_of_first(t):
    r = reference()
    r.command(0.0, [Waypoint(2.0, [1.0, 0.0, 0.0], [0.0] * 3, [0.0] * 3)])
    return r.sample(t).q


def test_references_beyond_the_limits_are_refused_and_the_current_one_kept():
    r = reference(v=1.0, a=5.0)
    r.command(0.0, [Waypoint(2.0, [0.5, 0.0, 0.0], [0.0] * 3, [0.0] * 3)])
    kept = r.sample(1.0).q
    with pytest.raises(InputError, match="velocity limits of joints \\[0\\]"):
        r.command(0.5, [Waypoint(0.5, [1.9, 0.0, 0.0], [0.0] * 3, [0.0] * 3)])
    with pytest.raises(InputError, match="position limits"):
        r.command(0.5, [Waypoint(5.0, [2.5, 0.0, 0.0])])
    with pytest.raises(InputError, match="non-finite"):
        r.command(0.5, [Waypoint(5.0, [np.nan, 0.0, 0.0])])
    with pytest.raises(InputError, match="must increase"):
        r.command(0.5, [Waypoint(1.0, [0.1, 0, 0]), Waypoint(1.0, [0.2, 0, 0])])
    assert np.array_equal(r.sample(1.0).q, kept)


def test_a_setpoint_moves_as_fast_as_the_limits_allow_and_no_faster():
    r = reference(v=1.0, a=5.0)
    r.setpoint(0.0, [1.5, -0.5, 0.2])
    vmax, amax = r.trajectories[-1].bounds()[2:]
    assert vmax.max() <= 1.0 + 1e-9 and amax.max() <= 5.0 + 1e-9
    assert max(vmax.max() / 1.0, amax.max() / 5.0) > 0.97       # one of the limits is reached
    assert np.allclose(r.sample(r.end_time).q, [1.5, -0.5, 0.2])


@pytest.fixture(scope="module")
def state(orbital):
    rng = np.random.default_rng(7)
    q = rng.uniform(-1, 1, orbital.n)
    return q, rng.normal(size=orbital.n), rng.normal(size=6), rng.normal(size=orbital.n)


def test_cc_products_of_the_tracking_law_are_eq18s_and_have_prop3s_properties(orbital, state):
    q, qdot, mu, y = state
    terms = orbital.rel_terms(q, qdot, mu)
    ws = tracking.CCWorkspace(orbital)
    gamma = lambda x: tracking.reduced_shape_coriolis_product(ws, q, terms.A_l, qdot, x)  # noqa: E731
    assert np.allclose(gamma(qdot), terms.shape_qdot_qdot, atol=1e-12)
    h = 1e-6
    dLambda = (orbital.reduced_shape_inertia(q + h * qdot) - orbital.reduced_shape_inertia(q - h * qdot)) / (2 * h)
    assert abs(y @ dLambda @ y - 2 * y @ gamma(y)) < 1e-8 * abs(y @ dLambda @ y)    # Prop. 3, 2nd
    B = np.column_stack([tracking.gyroscopic_product(ws, q, terms.A_l, mu, e) for e in np.eye(orbital.n)])
    assert np.allclose(B @ y, orbital.rel_terms(q, y, mu).shape_mu_qdot, atol=1e-12)
    assert np.allclose(B, -B.T, atol=1e-12)                                          # Prop. 3, 4th


def test_constant_reference_gives_eq52(orbital, state):
    q, qdot, mu, _ = state
    q_d = q + 0.1
    gains = ShapeGains(np.full(orbital.n, 30.0), np.full(orbital.n, 2.0))
    task = tracking.JointTask(orbital, TrajectoryReference(q_d, orbital.position_limits, orbital.velocity_limits,
                                                           np.full(orbital.n, 5.0)), gains)
    tau = task.torque(1.0, q, qdot, orbital.rel_terms(q, qdot, mu), mu, TAU2)
    assert np.allclose(tau, task_torque(q, qdot, q_d, gains), atol=1e-14)


def test_generalized_jacobian_gives_pinocchios_frame_velocity(orbital, state):
    q, qdot, mu, _ = state
    g1 = exp(np.array([0.3, -0.2, 0.5, 1.0, -2.0, 0.5]))
    terms = orbital.rel_terms(q, qdot, mu)
    fid = ee.frame_id(orbital, "panda_link8")
    g_1e, J_e = ee.frame_kinematics(ee.FrameWorkspace(orbital), fid, q)
    J_star, Ad_e1 = ee.generalized_jacobian(g_1e, J_e, terms.A_l)
    V1 = mu - terms.A_l @ qdot                                            # eq. 9
    q_pin, v_pin = to_pinocchio(g1, q, V1, qdot)
    data = orbital.pin_model.createData()
    pin.forwardKinematics(orbital.pin_model, data, q_pin, v_pin)
    pin.updateFramePlacements(orbital.pin_model, data)
    assert np.allclose(data.oMf[fid].homogeneous, g1 @ g_1e, atol=1e-12)
    V_e = pin.getFrameVelocity(orbital.pin_model, data, fid, pin.LOCAL).vector[SWAP]
    assert np.allclose(Ad_e1 @ mu + J_star @ qdot, V_e, atol=1e-12)
    assert not np.allclose(J_e @ qdot, V_e, atol=1e-3)       # the base's motion matters


def test_impedance_pulls_the_end_effector_toward_the_target_and_the_posture_stays_in_the_null_space(orbital):
    q = np.array(orbital_scenario_q0())
    terms = orbital.rel_terms(q, np.zeros(orbital.n), np.zeros(6))
    fid = ee.frame_id(orbital, "panda_link8")
    g_1e, J_e = ee.frame_kinematics(ee.FrameWorkspace(orbital), fid, q)
    J_star, _ = ee.generalized_jacobian(g_1e, J_e, terms.A_l)
    gains = ee.CartesianGains(np.full(6, 100.0), np.full(6, 10.0), np.full(orbital.n, 10.0), np.full(orbital.n, 1.0))
    error = np.r_[0.0, 0.0, 0.0, 0.0, -0.01, 0.0]                      # 1 cm short of the target along y
    tau = ee.impedance_torque(J_star, np.zeros(6), g_1e[:3, :3], error, np.zeros(6), np.zeros(orbital.n),
                              terms.Lambda_q, q, q, gains)
    qddot = np.linalg.solve(terms.Lambda_q, tau)
    assert ee.rotate_twist(g_1e[:3, :3], J_star @ qddot)[4] > 0        # accelerates toward the target
    posture = ee.impedance_torque(J_star, np.zeros(6), g_1e[:3, :3], np.zeros(6), np.zeros(6), np.zeros(orbital.n),
                                  terms.Lambda_q, q, q + 0.1, gains)
    assert np.abs(posture).max() > 0.1
    assert np.allclose(J_star @ np.linalg.solve(terms.Lambda_q, posture), 0, atol=1e-12)   # no task acceleration


def orbital_scenario_q0():
    return orbital.OrbitalScenario().q0


def test_handover_changes_the_torque_by_less_than_5_percent_of_the_effort_limit_per_tick(orbital, state):
    q, qdot, mu, _ = state
    q = np.clip(q, *orbital.position_limits.T)
    terms = orbital.rel_terms(q, qdot, mu)
    settings = tasks.TaskSettings()
    hold = tasks.joint_hold(orbital, q + 0.05, settings)
    gains = ee.CartesianGains(settings.ee_stiffness, settings.ee_damping, settings.nullspace_stiffness,
                              settings.nullspace_damping)
    cartesian = ee.EndEffectorTask(orbital, "panda_link8", gains, q)
    switch = Handover(hold, cartesian, t_switch=1.0, blend_s=0.5)
    dt = 1e-3
    taus = [switch.torque(1.0 + k * dt, q, qdot, terms, mu, TAU2, np.eye(4)) for k in range(-3, 600)]
    steps = np.abs(np.diff(taus, axis=0)).max(axis=0)
    jump = np.abs(hold.torque(1.0, q, qdot, terms, mu, TAU2) - cartesian.torque(1.0, q, qdot, terms, mu, TAU2,
                                                                                   np.eye(4)))
    assert (jump > 0.05 * orbital.effort_limits).any()             # switching outright would jump
    assert (steps < 0.05 * orbital.effort_limits).all()
    assert np.allclose(switch.max_step, steps, rtol=1e-9, atol=1e-12)     # what the node reports
    assert switch.name == "end_effector"


def test_the_default_setpoint_run_is_unchanged():
    """The default scenario (no motion task) replays what main's controller did without motion tasks
    (recorded at main f87db15, in the loop without a loop delay)."""
    log, summary = orbital.run(orbital.OrbitalScenario(duration_s=0.5, loop_delay_s=0.0))
    assert np.allclose(log["tau"][-1], [-0.5305364814328085, 2.0014707659607245, -1.2290460127727263,
                                        0.5091979384231787, 0.046981274294148355, 0.1200853231523343,
                                        0.013121750882471132], rtol=1e-9, atol=1e-12)
    assert np.allclose(log["q"][-1], [0.05254639010663154, -0.8091262713036299, 0.011384416598892694,
                                      -2.3333563092309215, 0.03527806940577958, 1.4748108327577132,
                                      0.8447947271462842], rtol=1e-9, atol=1e-12)
    assert summary["final_joint_error_deg"] == pytest.approx(65.54851863800285, rel=1e-9)


def test_short_closed_loop_runs_track_a_trajectory_and_reach_an_end_effector_target():
    """Against MuJoCo, ROS-free: a 0.6 s trajectory segment tracked (the simulator's truth) with the true mu
    compensated, and, without momentum, a target 3 cm away reached."""
    scenario = orbital.OrbitalScenario(duration_s=1.2, compensation="truth")
    settings = tasks.TaskSettings(trajectory_start_s=0.2, via=(), segment_s=0.6)
    q_d = np.add(scenario.q0, [0.05, -0.05, 0.05, 0.05, 0.0, 0.0, 0.05])
    scenario.q_d = tuple(q_d)
    log, summary = tasks.run_task(scenario, "trajectory", settings)
    assert summary["status"] == "completed" and summary["task"] == "trajectory"
    assert summary["max_joint_error_deg"] < 0.05
    assert np.linalg.norm(log["q"][-1] - q_d) < np.deg2rad(0.05)
    scenario = orbital.OrbitalScenario(duration_s=2.0, compensation="tau2", mu0_omega_deg_s=(0.0, 0.0, 0.0),
                                       pose_rotation_noise=0.0, pose_position_noise=0.0)
    settings = tasks.TaskSettings(ee_start_s=0.1, ee_offset_m=(0.0, 0.02, -0.02), ee_rotation_deg=5.0,
                                  ee_hold_horizon_s=0.0)
    log, summary = tasks.run_task(scenario, "end-effector", settings)
    assert summary["status"] == "completed"
    assert np.nanmax(log["ee_position_error_m"]) > 0.02                    # the target is 2.8 cm away
    assert log["ee_position_error_m"][-1] < 1e-3 and log["ee_orientation_error_deg"][-1] < 0.1


def test_the_stiffness_sees_a_clipped_pose_error():
    error = np.r_[0.0, 0.3, 0.4, 0.01, 0.0, 0.0]           # 0.5 rad, 1 cm
    out = ee.clipped(error, (0.2, 0.05))
    assert np.allclose(out[:3], [0.0, 0.12, 0.16]) and np.array_equal(out[3:], error[3:])


def test_the_feedforward_gives_the_reference_acceleration_despite_the_drift(orbital, state):
    """With no pose or velocity error the end effector's acceleration under the REL dynamics (eq. 18, eq. 45's
    tau_hat_2 added) is the reference's, momentum and all: the drift's ``b_e`` and the CC torques cancelled."""
    q, qdot, mu, _ = state
    q = np.clip(q, *orbital.position_limits.T)
    mu = 0.3 * mu
    terms = orbital.rel_terms(q, qdot, mu)
    gains = ee.CartesianGains(np.full(6, 100.0), np.full(6, 10.0), np.full(orbital.n, 10.0), np.full(orbital.n, 1.0))
    task = ee.EndEffectorTask(orbital, "panda_link8", gains, q + 0.1)
    ws, fid = task.ws, task.fid
    g1 = exp(np.array([0.3, -0.2, 0.5, 1.0, -2.0, 0.5]))
    g_1e, J_e = ee.frame_kinematics(ws, fid, q)
    J_star, Ad_e1 = ee.generalized_jacobian(g_1e, J_e, terms.A_l)
    R_e = (g1 @ g_1e)[:3, :3]
    V_e = Ad_e1 @ mu + J_star @ qdot
    A_w = np.array([0.2, -0.1, 0.3, 0.5, 0.1, -0.4])                        # reference acceleration, world axes
    acceleration, cc = task._feedforward(q, qdot, terms, mu, TAU2, R_e, V_e, A_w)
    tau_c = ee.impedance_torque(J_star, Ad_e1 @ mu, R_e, np.zeros(6), ee.rotate_twist(R_e, V_e), qdot,
                                terms.Lambda_q, q, q + 0.1, gains, acceleration, cc)
    mu_dot, qddot = orbital.forward_dynamics_reduced(q, mu, qdot, tau_c + terms.shape_mu_mu)
    h = 1e-6
    V1 = mu - terms.A_l @ qdot                                              # eq. 9

    def world_twist(dt):        # V_w along the motion: the base by eq. 9, the shape and mu by eq. 18
        R = (g1 @ exp(dt * V1) @ ee.frame_kinematics(ws, fid, q + dt * qdot)[0])[:3, :3]
        return ee.rotate_twist(R, ee.body_twist(ws, fid, q + dt * qdot, qdot + dt * qddot, mu + dt * mu_dot))
    V_w = [world_twist(-h), world_twist(h)]
    assert np.allclose((V_w[1] - V_w[0]) / (2 * h), A_w, atol=1e-5)
    without = ee.impedance_torque(J_star, Ad_e1 @ mu, R_e, np.zeros(6), ee.rotate_twist(R_e, V_e), qdot,
                                  terms.Lambda_q, q, q + 0.1, gains)
    assert np.abs(tau_c - without).max() > 0.1                              # the feedforward matters here


def test_a_damping_ratio_gives_critical_damping_per_axis_for_an_isotropic_task_inertia():
    gains = ee.CartesianGains([100.0, 400.0, 25.0, 1e3, 4e3, 9e3], np.ones(6), np.zeros(3), np.zeros(3),
                              damping_ratio=0.7)
    D = ee.damping_matrix(gains, 2.0 * np.eye(6))
    assert np.allclose(D, np.diag(2 * 0.7 * np.sqrt(2.0 * gains.stiffness)), atol=1e-12)
    Lambda = np.diag([0.1, 0.2, 0.3, 4.0, 5.0, 6.0])
    rotation = exp(np.r_[0.3, -0.5, 0.2, 0.0, 0.0, 0.0])[:3, :3]
    Lambda_w = ee.world_inertia(rotation, Lambda)
    D = ee.damping_matrix(gains, Lambda_w)
    assert np.allclose(D, D.T) and np.linalg.eigvalsh(D).min() > 0
    with pytest.raises(InputError, match="damping ratio"):
        ee.CartesianGains(np.ones(6), np.ones(6), np.zeros(3), np.zeros(3), damping_ratio=-1.0)


def test_the_hold_velocity_keeps_the_end_effector_still_with_the_momentum_conserved(orbital):
    """analysis/hold.py: at the shape velocity it returns, the base twist of eq. 9 gives the system the given
    spatial momentum (Def. 2) and the end effector zero twist (Pinocchio's frame velocity)."""
    from floating_base_control.analysis.hold import hold_velocity
    q = np.array(orbital_scenario_q0())
    ws, fid = ee.FrameWorkspace(orbital), ee.frame_id(orbital, "panda_link8")
    g_e = exp(np.array([0.1, 0.2, -0.3, 0.5, -0.2, 0.3]))
    h = np.array([12.0, 1.8, -1.0, 0.3, -2.9, -0.6])
    for steer in (0.0, 1.0):
        qdot, sigma = hold_velocity(orbital, ws, fid, q, g_e, h, steer)
        g1 = g_e @ np.linalg.inv(ee.frame_kinematics(ws, fid, q)[0])
        mu = np.linalg.solve(orbital.locked_inertia(q), Ad(g1).T @ h)
        V1 = orbital.base_velocity(q, mu, qdot)
        assert np.allclose(orbital.momentum_map(g1, q, V1, qdot), h, atol=1e-10)
        q_pin, v_pin = to_pinocchio(g1, q, V1, qdot)
        data = orbital.pin_model.createData()
        pin.forwardKinematics(orbital.pin_model, data, q_pin, v_pin)
        assert np.allclose(pin.getFrameVelocity(orbital.pin_model, data, fid, pin.LOCAL).vector, 0, atol=1e-10)
        assert np.abs(qdot).max() > 0.05 and sigma > 0


def test_the_controller_takes_motion_tasks_only(orbital, state):
    """``OrbitalController.motion`` accepts what the ``MotionTask`` protocol names (the joint and end-effector
    tasks, a handover between them) and refuses anything else with the reason."""
    from floating_base_control.control.motion_task import MotionTask
    from floating_base_control.robots.orbital.controller import OrbitalController

    q = state[0]
    gains = ShapeGains(np.full(orbital.n, 30.0), np.full(orbital.n, 2.0))
    joint = tracking.JointTask(orbital, TrajectoryReference(q, orbital.position_limits, orbital.velocity_limits,
                                                            np.full(orbital.n, 5.0)), gains)
    cartesian = ee.EndEffectorTask(orbital, orbital.pin_model.frames[-1].name,
                                   ee.CartesianGains(np.ones(6), np.ones(6), np.ones(orbital.n), np.ones(orbital.n)),
                                   q)
    ctrl = OrbitalController(orbital, q, gains)
    for task in (joint, cartesian, Handover(joint, cartesian, 1.0)):
        assert isinstance(task, MotionTask)
        ctrl.motion = task
    ctrl.motion = None
    with pytest.raises(InputError, match="motion must be a MotionTask .* got str"):
        ctrl.motion = "joint"
