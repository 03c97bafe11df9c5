"""Which commands the controller takes, without ROS: joint trajectories as joint_trajectory_controller takes
them (a first point at the start, stamps in the future and in the past, partial goals, names in any order,
replacement mid-way), their whole path checked against the limits, and end-effector targets checked for
reach before any motion (issue 24, item 3)."""
import numpy as np
import pinocchio as pin
import pytest

from floating_base_control.control import end_effector as ee
from floating_base_control.control.trajectory import (JointTrajectory, ReferenceSample, TrajectoryReference, Waypoint,
                                                      derivative, polynomial_extremes)
from floating_base_control.conventions import to_pinocchio
from floating_base_control.dynamics.centroidal import center_of_mass
from floating_base_control.conventions import SWAP
from floating_base_control.lie import Ad, Ad_inv, exp
from floating_base_control.experiments.orbital.scenario import OrbitalScenario
from floating_base_control.validation import InputError

N = 3
LIMITS = np.array([[-2.0, 2.0]] * N)
ZERO = np.zeros(N)


def reference(q0=(0.1, -0.2, 0.3), v=1.0, a=5.0):
    return TrajectoryReference(np.array(q0), LIMITS, np.full(N, v), np.full(N, a), names=["a", "b", "c"])


def moveit_points(q_start, *points):
    """MoveIt's shape: the current state at ``time_from_start = 0``, then quintic points, at rest at the end."""
    out = [Waypoint(0.0, np.array(q_start, dtype=float), ZERO, ZERO)]
    for i, (t, q) in enumerate(points):
        v = ZERO if i == len(points) - 1 else np.full(N, 0.1)
        out.append(Waypoint(t, np.array(q, dtype=float), v, ZERO))
    return out


def dense(r, t0, t1, samples=20001):
    return np.array([r.sample(t).q for t in np.linspace(t0, t1, samples)])


def sampled(c, T, samples):
    """Values of the polynomials ``c`` (segments, powers, joints) at ``samples`` points of each segment."""
    return np.concatenate([(s[:, None] ** np.arange(c.shape[1])) @ ci
                           for ci, s in zip(c, (np.linspace(0.0, Ti, samples) for Ti in T))])


# -- the first point, the stamp ---------------------------------------------------------------


def test_a_first_point_at_the_start_near_the_reference_is_taken_without_a_jump():
    r = reference()
    q0 = r.sample(0.0).q
    r.command(5.0, moveit_points(q0 + 0.005, (1.0, q0 + 0.2), (2.0, q0 + 0.3)), now=5.0)
    assert np.array_equal(r.sample(5.0).q, q0)                      # from the reference, not the point
    assert np.allclose(r.sample(6.0).q, q0 + 0.2, atol=1e-12) and np.allclose(r.sample(6.0).qdot, 0.1, atol=1e-12)
    assert np.allclose(r.sample(7.0).q, q0 + 0.3, atol=1e-12) and not r.sample(7.5).qdot.any()
    left, right = r.sample(5.0 - 1e-9), r.sample(5.0 + 1e-9)
    assert np.allclose(left.q, right.q, atol=1e-8) and np.allclose(left.qdot, right.qdot, atol=1e-6)


def test_a_first_point_at_the_start_away_from_the_current_positions_is_refused_naming_the_joint():
    """Compared with the measured positions when given (as MoveIt compares), else the reference's."""
    r = reference()
    q0 = r.sample(0.0).q
    with pytest.raises(InputError, match=r"waypoint 0 is at the trajectory's start but joints \['b'\] are \[0\.02\] "
                                         r"from their current positions \(start tolerance 0\.01\)"):
        r.command(0.0, moveit_points(q0 + [0.0, 0.02, 0.0], (1.0, q0 + 0.2)), now=0.0)
    lagging = q0 + [0.0, 0.015, 0.0]                  # the arm behind its reference: MoveIt starts from the arm
    r.command(0.0, moveit_points(lagging, (1.0, q0 + 0.2)), now=0.0, current=lagging)
    assert np.array_equal(r.sample(0.0).q, q0)        # the reference does not jump to it
    with pytest.raises(InputError, match=r"joints \['b'\] are \[0\.015\] from their current positions"):
        r.command(0.0, moveit_points(q0, (1.0, q0 + 0.2)), now=0.0, current=lagging)
    r.start_tolerance = 0.05
    r.command(0.0, moveit_points(q0 + [0.0, 0.02, 0.0], (1.0, q0 + 0.2)), now=0.0)


def test_a_future_stamp_keeps_the_current_reference_until_then():
    r = reference(v=2.0, a=20.0)
    r.command(0.0, [Waypoint(2.0, [1.0, 0.0, 0.0], ZERO, ZERO)])
    before = [r.sample(t).q for t in (0.5, 1.2, 1.5 - 1e-9)]
    at_stamp = r.sample(1.5)
    r.command(1.5, moveit_points(at_stamp.q, (1.0, [0.0, 0.5, 0.0])), now=0.3)
    assert all(np.array_equal(r.sample(t).q, b) for t, b in zip((0.5, 1.2, 1.5 - 1e-9), before))
    after = r.sample(1.5 + 1e-9)
    assert np.allclose(after.q, at_stamp.q, atol=1e-8) and np.allclose(after.qdot, at_stamp.qdot, atol=1e-6)
    assert np.allclose(r.sample(2.5).q, [0.0, 0.5, 0.0], atol=1e-12)


def test_a_stamp_in_the_past_drops_the_past_waypoints_and_keeps_the_others_on_time():
    """Joint_trajectory_controller's documented replacement: waypoints before now are discarded, the rest are
    reached at their stamped times, from the reference's state now."""
    r = reference(v=5.0, a=50.0)
    q0 = r.sample(0.0).q
    r.command(10.0, moveit_points(q0, (1.0, q0 + 0.4), (2.0, q0 + 0.5), (3.0, q0 + 0.6)), now=11.5)
    assert np.array_equal(r.sample(11.5).q, q0)
    assert np.allclose(r.sample(12.0).q, q0 + 0.5, atol=1e-12) and np.allclose(r.sample(13.0).q, q0 + 0.6, atol=1e-12)
    with pytest.raises(InputError, match=r"ends in the past: 0\.500 s before it was taken"):
        r.command(10.0, moveit_points(r.sample(14.0).q, (1.0, q0), (3.5, q0)), now=14.0)
    assert np.allclose(r.sample(13.0).q, q0 + 0.6, atol=1e-12)               # the last valid one kept


def test_a_start_point_alone_or_times_that_do_not_increase_are_refused():
    r = reference()
    q0 = r.sample(0.0).q
    with pytest.raises(InputError, match="nothing to move to"):
        r.command(0.0, [Waypoint(0.0, q0)], now=0.0)
    with pytest.raises(InputError, match=r"waypoint 1: time_from_start must increase \(got 0\.5 s after 0\.5 s\)"):
        r.command(0.0, [Waypoint(0.5, q0), Waypoint(0.5, q0 + 0.1)], now=0.0)
    with pytest.raises(InputError, match="must be >= 0"):
        r.command(0.0, [Waypoint(-0.1, q0), Waypoint(0.5, q0 + 0.1)], now=0.0)
    with pytest.raises(InputError, match=r"the last waypoint's velocities must be zero \(joints \['a'\]"):
        r.command(0.0, [Waypoint(1.0, q0 + 0.1, [0.05, 0.0, 0.0])], now=0.0)
    r.allow_moving_end = True                   # a streaming client: stopped at the end, held there
    r.command(0.0, [Waypoint(1.0, q0 + 0.1, [0.05, 0.0, 0.0])], now=0.0)
    assert np.allclose(r.sample(1.0 - 1e-9).qdot, [0.05, 0.0, 0.0]) and not r.sample(1.0).qdot.any()


# -- joints: partial goals, any order -----------------------------------------------------------------


def test_joints_not_in_a_partial_goal_keep_their_position_and_names_may_come_in_any_order():
    r = reference()
    q0 = r.sample(0.0).q
    r.command(0.0, [Waypoint(1.0, [0.7, -0.4], [0.0, 0.0], [0.0, 0.0])], now=0.0, joints=[2, 0])   # c, a
    path = dense(r, 0.0, 2.0, 2001)
    assert np.array_equal(path[:, 1], np.full(len(path), q0[1]))          # b held, exactly
    assert np.allclose(r.sample(1.0).q, [-0.4, q0[1], 0.7], atol=1e-12)


def test_a_replacement_mid_way_continues_from_the_reference_smoothly():
    """MoveIt's replacement: a new trajectory whose first point is the current state (here the reference's,
    position and velocity), stamped now, while the first one runs."""
    r = reference()
    q0 = r.sample(0.0).q
    r.command(0.0, moveit_points(q0, (1.0, q0 + 0.3), (2.0, q0 + 0.5)), now=0.0)
    now = 1.37
    state = r.sample(now)
    first = [Waypoint(0.0, state.q, state.qdot, state.qddot), Waypoint(1.5, q0 - 0.2, ZERO, ZERO)]
    r.command(now, first, now=now)
    for dt in (1e-9, 1e-6):
        left, right = r.sample(now - dt), r.sample(now + dt)
        assert np.allclose(left.q, right.q, atol=1e-7) and np.allclose(left.qdot, right.qdot, atol=1e-5)
        assert np.allclose(left.qddot, right.qddot, atol=1e-3)
    assert np.allclose(r.sample(now + 1.5).q, q0 - 0.2, atol=1e-12)


def test_a_plan_leaves_the_reference_as_it_is_and_taken_is_the_command():
    """What the node checks off its tick (TrajectoryReference.plan in its worker) and takes at a tick."""
    r, copy = reference(), reference()
    q0 = r.sample(0.0).q
    points = moveit_points(q0, (1.0, q0 + 0.3), (2.0, q0 + 0.5))
    planned = r.plan(0.5, points, now=0.5)
    assert np.array_equal(dense(r, 0.0, 3.0, 301), np.tile(q0, (301, 1)))        # nothing taken
    r.take(planned)
    copy.command(0.5, points, now=0.5)
    assert np.array_equal(dense(r, 0.0, 3.0, 301), dense(copy, 0.0, 3.0, 301))


def test_a_zero_stamped_plan_taken_later_starts_then_if_the_reference_stayed_at_rest_else_at_its_stamp():
    """A check that took 35 ms: from rest the motion is not shortened (a 35 ms jump along it); from a moving
    reference the trajectory keeps its start (JTC's stamp in the past), continuing the reference smoothly."""
    r = reference()
    q0 = r.sample(0.0).q
    points = moveit_points(q0, (1.0, q0 + 0.3), (2.0, q0 + 0.5))
    planned = r.plan(0.5, points, now=0.5)
    r.take(planned, now=0.535)
    assert np.array_equal(r.sample(0.535).q, q0)
    assert np.allclose(r.sample(1.535).q, q0 + 0.3, atol=1e-12) and np.allclose(r.sample(2.535).q, q0 + 0.5)
    assert np.allclose(r.sample(2.0).q, planned.sample(2.0 - 0.035).q, atol=1e-15)

    state = r.sample(1.2)
    moving = r.plan(1.2, [Waypoint(0.0, state.q, state.qdot, state.qddot), Waypoint(1.5, q0, ZERO, ZERO)], now=1.2)
    r.take(moving, now=1.235)
    assert np.allclose(r.sample(2.7).q, q0, atol=1e-12)                 # 1.5 s after its stamp, not after 1.235
    left, right = r.sample(1.2 - 1e-9), r.sample(1.2 + 1e-9)
    assert np.allclose(left.q, right.q, atol=1e-7) and np.allclose(left.qdot, right.qdot, atol=1e-5)


# -- the path against the limits --------------------------------------------------------------------------


def test_extremes_are_exact_where_dense_sampling_finds_them():
    rng = np.random.default_rng(3)
    for powers in (2, 4, 6):
        c = rng.normal(size=(40, powers, 5))
        c[3, -1, 2] = 0.0                                   # a segment of lower degree
        T = rng.uniform(0.05, 3.0, 40)
        for poly in (c, derivative(c), derivative(derivative(c))):
            lo, hi = polynomial_extremes(poly, T)
            values = sampled(poly, T, 4001)
            span = values.max(0) - values.min(0) + 1e-300
            assert (lo <= values.min(0) + 1e-12).all() and (hi >= values.max(0) - 1e-12).all()
            assert np.abs(lo - values.min(0)).max() / span.max() < 1e-5        # 4001 samples see within 1e-5
            assert np.abs(hi - values.max(0)).max() / span.max() < 1e-5
            margin = 0.1 * span        # searching only what may leave a range: the same extremes beyond it
            lo_w, hi_w = polynomial_extremes(poly, T, (values.min(0) + margin, values.max(0) - margin))
            assert np.array_equal(lo_w, lo) and np.array_equal(hi_w, hi)


def test_a_cubic_between_waypoints_inside_the_limits_that_overshoots_them_is_refused(orbital):
    """Issue 24's case: waypoints inside panda_joint4's range (-3.0718 rad) whose cubic goes past it."""
    q0 = np.array(OrbitalScenario().q0)
    r = TrajectoryReference(q0, orbital.position_limits, orbital.velocity_limits, np.full(orbital.n, 5.0),
                            names=orbital.joint_names)
    q1, v1, q2 = q0.copy(), np.zeros(7), q0.copy()
    q1[3], v1[3], q2[3] = -3.0, -0.8, -2.9
    points = [Waypoint(1.0, q1, v1), Waypoint(2.0, q2, np.zeros(7))]
    trajectory = JointTrajectory(0.0, ReferenceSample(q0, np.zeros(7), np.zeros(7)), points)
    lowest = sampled(trajectory.segments, np.diff(trajectory.times), 100001)[:, 3].min()
    assert lowest < orbital.position_limits[3, 0] < min(q0[3], q1[3], q2[3])
    with pytest.raises(InputError, match=rf"trajectory leaves the position limits of joints \['panda_joint4'\]: "
                                         rf"reaches \[{lowest:.4f}\]"):
        r.command(0.0, points, now=0.0)
    v1[3] = -0.6                        # its lowest point -3.0688: inside, accepted
    r.command(0.0, [Waypoint(1.0, q1, v1), Waypoint(2.0, q2, np.zeros(7))], now=0.0)


def test_velocity_and_acceleration_between_waypoints_are_checked():
    """A cubic rest to rest over 1 rad in 1 s peaks at 1.5 rad/s mid-way and 6 rad/s^2 at its ends."""
    step = [Waypoint(1.0, [1.1, -0.2, 0.3], ZERO)]
    with pytest.raises(InputError, match=r"velocity limits of joints \['a'\] \(peaks \[1\.5\]"):
        reference(v=1.0, a=10.0).command(0.0, step, now=0.0)
    with pytest.raises(InputError, match=r"acceleration limits of joints \['a'\] \(peaks \[6\.0\]"):
        reference(v=2.0, a=5.0).command(0.0, step, now=0.0)
    reference(v=1.5, a=6.0).command(0.0, step, now=0.0)


# -- end-effector targets ---------------------------------------------------------------------------------


@pytest.mark.parametrize("V_e", [np.zeros(6), np.array([0.2, -0.1, 0.3, 0.05, -0.02, 0.04])])
def test_the_shape_velocity_gives_the_end_effector_its_twist_with_the_momentum_conserved(orbital, V_e):
    """At the shape velocity of ``shape_velocity_for``, eq. 9's base twist gives the system the momentum ``h``
    (Def. 2) and the frame Pinocchio's body twist ``V_e``."""
    q = np.array(OrbitalScenario().q0)
    ws, fid = ee.FrameWorkspace(orbital), ee.frame_id(orbital, "panda_link8")
    g_e = exp(np.array([0.1, 0.2, -0.3, 0.5, -0.2, 0.3]))
    h = np.array([12.0, 1.8, -1.0, 0.3, -2.9, -0.6])
    qdot, s, _ = ee.shape_velocity_for(orbital, ws, fid, q, g_e, V_e, h)
    g1 = g_e @ np.linalg.inv(ee.frame_kinematics(ws, fid, q)[0])
    V1 = orbital.base_velocity(q, np.linalg.solve(orbital.locked_inertia(q), Ad(g1).T @ h), qdot)
    assert np.allclose(orbital.momentum_map(g1, q, V1, qdot), h, atol=1e-10)
    q_pin, v_pin = to_pinocchio(g1, q, V1, qdot)
    data = orbital.pin_model.createData()
    pin.forwardKinematics(orbital.pin_model, data, q_pin, v_pin)
    assert np.allclose(pin.getFrameVelocity(orbital.pin_model, data, fid, pin.LOCAL).vector[SWAP], V_e, atol=1e-10)
    assert s.shape == (6,) and s[-1] > 0


def test_the_end_effector_range_bounds_its_distance_to_the_centre_of_mass(model):
    fid = model.pin_model.nframes - 1
    R = ee.end_effector_range(model, fid)
    ws, rng = ee.FrameWorkspace(model), np.random.default_rng(5)
    lo, hi = np.clip(model.position_limits.T, -np.pi, np.pi)
    far = 0.0
    for _ in range(300):
        q = rng.uniform(lo, hi)
        com = center_of_mass(model.kinematics(q))
        far = max(far, np.linalg.norm(ee.frame_kinematics(ws, fid, q)[0][:3, 3] - com))
    assert far <= R and far > 0.2 * R              # a bound, not a wild one


@pytest.fixture(scope="module")
def start(orbital):
    """The scenario's shape with the base at the origin, still or tumbling at the paper's 10 deg/s."""
    s = OrbitalScenario()
    q = np.array(s.q0)
    mu = np.r_[np.deg2rad(s.mu0_omega_deg_s), 0.0, 0.0, 0.0]
    ws = ee.FrameWorkspace(orbital)
    g_e = ee.frame_kinematics(ws, ee.frame_id(orbital, "panda_link8"), q)[0]
    return q, g_e, Ad_inv(np.eye(4)).T @ orbital.locked_inertia(q) @ mu


def moved(g, p, rz=0.0):
    D = np.eye(4)
    D[:3, :3] = pin.exp3(np.array([0.0, 0.0, rz]))
    D[:3, 3] = p
    return ee.displaced(g, D)


def test_an_end_effector_target_far_away_is_refused_as_out_of_reach(orbital, start):
    q, g_e, h = start
    with pytest.raises(InputError, match=r"outside the reachable workspace: 3\.\d\d m from the system's centre of "
                                         r"mass when the reference would arrive \(56\.2 s\), and the end effector "
                                         r"is never more than 1\.96 m from it"):
        ee.check_reachable(orbital, "panda_link8", q, np.eye(4), h, moved(g_e, [3.0, 0.0, 0.0]), 0.1, 0.3)


def test_a_target_within_range_past_the_arms_stretch_is_refused_at_the_singularity(orbital, start):
    q, g_e, _ = start
    outward = 0.6 * g_e[:3, 3] / np.linalg.norm(g_e[:3, 3])
    with pytest.raises(InputError, match=r"cannot be reached within the joint limits: panda_joint4 would move at "
                                         r"[\d.]+ rad/s \(limit 2\.175\)"):
        ee.check_reachable(orbital, "panda_link8", q, np.eye(4), np.zeros(6), moved(g_e, outward), 0.1, 0.3)


def test_a_near_target_is_reached_unless_the_tumble_outruns_a_slow_approach(orbital, start):
    """Held still in the world while the base tumbles at 10 deg/s, the arm runs out of range within seconds
    (docs/how-to/command-motion.md: a 2.4 s hold): the same 5 cm target is reachable at 0.1 m/s, not at 2 mm/s."""
    q, g_e, h = start
    target = moved(g_e, [0.0, -0.05, 0.0], 0.17)
    for momentum in (np.zeros(6), h):
        ee.check_reachable(orbital, "panda_link8", q, np.eye(4), momentum, target, 0.1, 0.3)
    ee.check_reachable(orbital, "panda_link8", q, np.eye(4), np.zeros(6), target, 0.002, 0.006)
    with pytest.raises(InputError, match="cannot be reached within the joint limits"):
        ee.check_reachable(orbital, "panda_link8", q, np.eye(4), h, target, 0.002, 0.006)
