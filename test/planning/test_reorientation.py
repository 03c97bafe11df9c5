"""The reorientation planner (planning/): its eq. 9 against the numpy oracle of eq. 9
(helpers/reconstruction_oracle.py), its curvature gradient, eq. 11 for small loops, the timing's limits, and
plans that land on their targets."""
import math

import mujoco
import numpy as np
import pytest

from helpers import assert_close
from helpers import reconstruction_oracle as oracle
from floating_base_control import FloatingBaseModel, InputError
from floating_base_control.analysis import locomotion as loc
from floating_base_control.planning import holonomy as hol
from floating_base_control.planning import reorientation as ro
from floating_base_control.planning.baseline import baseline_plan, naive_baseline
from floating_base_control.planning.clearance import BaseClearance
from floating_base_control.planning.limits import joint_limits
from floating_base_control.planning.loops import CLEARANCE_SAMPLES, _stokes_form
from floating_base_control.planning.paths import FourierLoop, LinePath
from floating_base_control.planning.rotations import (relative_rotation, rotation_angle, rotation_from_axis_angle,
                                                      rotation_from_quaternion)
from floating_base_control.planning.timing import Hold, TimedPath, Trajectory, time_path
from floating_base_control.resources import share_file
from floating_base_control.sim.plant import MujocoPlant

#: The orbital scenario's set-point (config/orbital_robot.yaml).
Q_D = np.array([0.3, -0.5, -0.3, -2.05, 0.3, 1.25, 1.1])


def _loop(rng, scale=0.4, harmonics=2, joints=(0, 1, 2, 3)):
    return FourierLoop(Q_D, joints, rng.normal(size=(2 * harmonics, len(joints))) * scale)


class _Part:
    """The first ``length`` of a path's parameter."""

    def __init__(self, path, length):
        self.derivatives, self.length = path.derivatives, length


def _dense(path, samples):
    return path.derivatives(np.linspace(0.0, path.length, samples + 1))[0]


def test_loop_rotation_is_eq9(orbital, rng):
    """The compiled integration on the smooth loop equals the oracle's eq. 9 on a dense polyline through it
    (their difference is the polyline's chord error, O(h^2): ~1e-8 rad here), and it
    converges at fourth order on an open path (half the loop: on a whole loop the periodic integrand makes
    equal steps converge faster still)."""
    loop = _loop(rng)
    ws = orbital.create_data()
    R = hol.path_rotation(orbital, ws, loop, 64)
    g = oracle.reconstruct(orbital, _dense(loop, 4000))[-1]
    assert np.linalg.norm(hol.rotation_vector(R)) > math.radians(0.5)           # the base really turns
    assert_close(hol.rotation_vector(R), hol.rotation_vector(g[:3, :3]), 5e-8, "loop rotation vs reconstruct")
    half = _Part(loop, np.pi)
    fine = hol.path_rotation(orbital, ws, half, 512)
    err = [np.linalg.norm(hol.rotation_vector(hol.path_rotation(orbital, ws, half, s).T @ fine)) for s in (16, 32)]
    assert 12 < err[0] / err[1] < 20, f"convergence ratio {err[0] / err[1]:.2f}, expected ~16"


def test_reversed_loop_turns_back_exactly(orbital, rng):
    """``q(-s)`` turns the base by the inverse rotation (eq. 9 at zero momentum depends on the path only)."""
    loop = _loop(rng)
    c = loop.coefficients.copy()
    c[2:] *= -1
    ws = orbital.create_data()
    R, R_back = (hol.path_rotation(orbital, ws, p, 256) for p in (loop, loop.with_coefficients(c)))
    assert_close(R_back @ R, np.eye(3), 1e-12, "H(reversed) H")


def test_loop_gradient_is_the_transported_curvature(orbital, rng):
    """``H^-1 dH = H^T int R1 DA_l(q', dq)_omega ds`` (Theorem 2) against central differences of the
    holonomy itself."""
    loop = _loop(rng)
    ws = orbital.create_data()
    H, G = hol.loop_holonomy_gradient(orbital, ws, loop, 48)
    c, h = loop.coefficients.ravel(), 1e-6
    fd = np.empty_like(G)
    for i in range(len(c)):
        step = np.zeros_like(c)
        step[i] = h
        R_plus, R_minus = (hol.path_rotation(orbital, ws, loop.with_coefficients(np.reshape(c + s, (4, 4))), 48)
                           for s in (step, -step))
        fd[:, i] = (hol.rotation_vector(H.T @ R_plus) - hol.rotation_vector(H.T @ R_minus)) / (2 * h)
    assert_close(G, fd, 2e-5 * np.abs(fd).max(), "holonomy gradient")


def test_attitude_with_momentum_is_eq9(orbital, rng):
    """With a tumble, the attitude along a timed loop from the conserved momentum equals the oracle's eq. 9 with
    ``mu = M_b^-1 Ad_g1^T J`` on a dense polyline through it."""
    loop = _loop(rng, scale=0.3)
    limits = joint_limits(orbital)
    trajectory = Trajectory([TimedPath(loop, time_path(loop, limits.velocity, limits.acceleration, 256))])
    mu0 = np.r_[np.radians([10.0, 1.14, 0.0]), 0.02, 0.0, -0.01]
    times = np.linspace(0.0, trajectory.duration, 3001)
    J = hol.momentum_at_rest(orbital, Q_D, mu0)
    R = hol.attitudes_along(orbital, trajectory, times, J)
    g = oracle.reconstruct(orbital, trajectory.evaluate(times)[0], mu=loc.locked_velocity_of_momentum(orbital, J),
                           t=times)
    assert rotation_angle(R[-1]) > math.radians(20)                  # the drift dominates
    for k in (len(times) // 2, -1):
        assert_close(hol.rotation_vector(R[k]), hol.rotation_vector(g[k][:3, :3]), 3e-7, f"R1 at sample {k}")


def test_small_loop_follows_the_stokes_form(orbital):
    """The planner's first guess, eq. 11 as a 2-form: ``q0 + eps D (a (cos s - 1) + b sin s)`` turns the base
    about the axis by ``pi eps^2 a^T S b`` to first order in ``eps`` (the error halves with ``eps``)."""
    limits = joint_limits(orbital)
    axis, joints = np.array([0.0, 0.0, 1.0]), np.arange(4)
    S = _stokes_form(orbital, Q_D, axis, joints, limits)
    U, sv, Vt = np.linalg.svd(S)
    D = limits.velocity[joints]
    ws = orbital.create_data()
    rel = []
    for eps in (0.02, 0.01):
        loop = FourierLoop(Q_D, joints, eps * np.vstack([D * U[:, 0], D * Vt[0]]))
        turned = hol.rotation_vector(hol.path_rotation(orbital, ws, loop, 64)) @ axis
        rel.append(abs(turned / (np.pi * eps**2 * sv[0]) - 1))
    assert rel[0] < 0.05 and 1.6 < rel[0] / rel[1] < 2.4, f"relative errors {rel}"


def test_timing_is_time_optimal_on_a_line():
    """A rest-to-rest straight move: accelerate, cruise at the slowest joint's speed limit, brake (bang-bang):
    ``T = d / v + v / a`` for the limiting joint, within the timing's reserve, and no limit exceeded."""
    path = LinePath(np.zeros(3), np.array([2.0, -1.0, 0.5]))
    v, a = np.array([1.0, 2.0, 2.0]), np.array([4.0, 4.0, 4.0])
    timing = time_path(path, v, a, 2000)
    exact = 2.0 / 1.0 + 1.0 / 4.0
    assert exact <= timing.duration <= exact / (1 - 0.0101)
    t = np.linspace(0.0, timing.duration, 5001)
    _, qdot, qddot = TimedPath(path, timing).evaluate(t)
    assert (np.abs(qdot) <= v).all() and (np.abs(qddot) <= a * (1 + 1e-12)).all()
    assert_close(qdot[[0, -1]], np.zeros((2, 3)), 1e-12, "at rest at both ends")


def test_target_rotations_in_base_and_world_frames(rng):
    """The same turn given about a world axis, about the base axis it is at the start, as a quaternion and as
    an absolute attitude are one rotation."""
    R0 = rotation_from_axis_angle(rng.normal(size=3), 1.1)
    axis_w, angle = rng.normal(size=3), 0.7
    R = rotation_from_axis_angle(axis_w, angle, frame="world", start_attitude=R0)
    assert_close(R, rotation_from_axis_angle(R0.T @ axis_w, angle), 1e-14, "world axis vs base axis")
    u = axis_w / np.linalg.norm(axis_w)
    quat = np.r_[u * math.sin(angle / 2), math.cos(angle / 2)]
    assert_close(R, rotation_from_quaternion(quat, "world", R0), 1e-14, "quaternion")
    assert_close(R, relative_rotation(R0 @ R, R0), 1e-14, "absolute attitude")
    with pytest.raises(InputError, match="start_attitude"):
        rotation_from_axis_angle(axis_w, angle, frame="world")


@pytest.fixture(scope="module")
def plan30(orbital):
    return ro.plan_reorientation(orbital, Q_D, rotation_from_axis_angle((0, 0, 1), math.radians(30)))


def test_plan_lands_on_30_deg_about_z(orbital, plan30):
    """The orbital robot, 30 deg about the spacecraft's z: the predicted end attitude is the target, every
    cycle turns it by the same rotation about z, and the trajectory starts and ends at rest at the set-point."""
    assert math.degrees(plan30.error) < 1e-6
    assert plan30.cycles >= 1 and plan30.loop is not None
    assert_close(plan30.loop_rotation * plan30.cycles, [0.0, 0.0, math.radians(30)], 1e-11, "cycles x rotation")
    assert_close(plan30.positions[[0, -1]], [Q_D, Q_D], 1e-12, "start and end shape")
    assert_close(plan30.velocities[[0, -1]], np.zeros((2, orbital.n)), 1e-12, "at rest at both ends")


def test_plan_keeps_the_limits_on_its_samples(plan30):
    lim = plan30.limits
    assert (plan30.positions >= lim.lower).all() and (plan30.positions <= lim.upper).all()
    assert (np.abs(plan30.velocities) <= lim.velocity).all()
    assert (np.abs(plan30.accelerations) <= lim.acceleration).all()
    t = np.linspace(0.0, plan30.duration, 40001)                       # between the samples too
    q, qdot, qddot = plan30.evaluate(t)
    assert (q >= lim.lower).all() and (q <= lim.upper).all()
    assert (np.abs(qdot) <= lim.velocity).all() and (np.abs(qddot) <= lim.acceleration).all()


def test_plan_prediction_is_eq9_along_its_trajectory(orbital, plan30):
    """Independent re-integration: the oracle's eq. 9 along polylines through the returned trajectory
    (:meth:`evaluate` at N and 2N times) converges to the plan's prediction at second order (the chord
    error), and its Richardson extrapolation meets it, at the end and halfway."""
    i = np.searchsorted(plan30.times, plan30.duration / 2)
    for end, predicted in ((plan30.duration, plan30.predicted_rotation), (plan30.times[i], plan30.attitudes[i])):
        phi = hol.rotation_vector(predicted)
        rec = [hol.rotation_vector(oracle.reconstruct(orbital, plan30.evaluate(np.linspace(0.0, end, n + 1))[0])
                                   [-1][:3, :3]) for n in (1500, 3000)]
        err = [np.linalg.norm(r - phi) for r in rec]
        assert 3.8 < err[0] / err[1] < 4.2, f"convergence ratio {err[0] / err[1]:.3f}, expected 4"
        assert_close((4 * rec[1] - rec[0]) / 3, phi, 3e-9 * np.linalg.norm(phi), f"extrapolated at t = {end:.3g}")


def test_plan_about_a_tilted_axis_to_another_shape(orbital):
    """5 deg about an axis in the x-y plane, ending at another shape: the straight move's own rotation is
    compensated by the loops (two harmonics: a coarser, faster search)."""
    q_final = Q_D + np.array([0.1, 0.05, 0.0, -0.05, 0.0, 0.0, 0.0])
    target = rotation_from_axis_angle((1, 1, 0), math.radians(5))
    plan = ro.plan_reorientation(orbital, Q_D, target, q_final=q_final, harmonics=2)
    assert math.degrees(plan.error) < 1e-6
    assert_close(plan.positions[-1], q_final, 1e-12, "final shape")
    ws = orbital.create_data()
    R_move = hol.path_rotation(orbital, ws, LinePath(Q_D, q_final), 64)
    assert rotation_angle(R_move) > math.radians(0.01)           # the move alone turns the base
    R_loops = np.linalg.matrix_power(hol.path_rotation(orbital, ws, plan.loop, 256), plan.cycles)
    assert_close(R_loops @ R_move, target, 1e-9, "loops then move")


def test_plan_refuses_what_the_limits_forbid(orbital):
    target = rotation_from_axis_angle((0, 0, 1), math.radians(30))
    with pytest.raises(InputError, match="margin 1.8 rad leaves no room to move panda_joint2"):
        ro.plan_reorientation(orbital, Q_D, target, margin=1.8)
    with pytest.raises(InputError, match="q0: panda_joint4 = -0.08 rad is outside its limits minus the margin"):
        ro.plan_reorientation(orbital, np.r_[Q_D[:3], -0.08, Q_D[4:]], target)
    with pytest.raises(InputError, match="a loop needs at least two joints"):
        ro.plan_reorientation(orbital, Q_D, target, joints=["panda_joint1"])
    with pytest.raises(InputError, match="velocity_limits: panda_joint5 has 0"):
        ro.plan_reorientation(orbital, Q_D, target, velocity_limits=[2, 2, 2, 2, 0, 2, 2])


def test_plan_refuses_a_tumble_it_cannot_outrun(orbital):
    """With the scenario's tumble (10 deg/s), 30 deg about z cannot be reached within 5 s: refused, naming the
    drift."""
    mu0 = np.r_[np.radians([10.0, 1.14, 0.0]), 0.0, 0.0, 0.0]
    target = rotation_from_axis_angle((0, 0, 1), math.radians(30))
    with pytest.raises(InputError, match=r"a drift of 10.1 deg/s at rest\), no end time within max_duration 5.0 s"):
        ro.plan_reorientation(orbital, Q_D, target, mu=mu0, harmonics=1, max_duration=5.0)


def test_plan_refuses_joints_too_weak_for_the_target(orbital):
    """The wrist's last two joints barely turn the spacecraft (their curvature is ~100x smaller): 90 deg
    would take thousands of cycles."""
    target = rotation_from_axis_angle((0, 0, 1), math.radians(90))
    with pytest.raises(InputError, match=r"joints \['panda_joint6', 'panda_joint7'\] cannot turn the base"):
        ro.plan_reorientation(orbital, Q_D, target, joints=["panda_joint6", "panda_joint7"], harmonics=1)


def test_plan_with_momentum_lands_at_its_end(orbital):
    """With a slow tumble the plan waits, then loops, so that the attitude at its end is the target:
    the oracle's eq. 9 with the conserved momentum along the trajectory (polylines of N and 2N points,
    Richardson-extrapolated) ends there too, and without the loops the drift would end elsewhere."""
    mu0 = np.r_[np.radians([1.0, 0.3, 0.0]), 0.0, 0.0, 0.0]
    target = rotation_from_axis_angle((0, 0, 1), math.radians(10))
    plan = ro.plan_reorientation(orbital, Q_D, target, mu=mu0, harmonics=2, max_duration=60.0)
    assert math.degrees(plan.error) < 1e-6
    J = orbital.kinematics(Q_D).M_b @ mu0
    rec = []
    for n in (800, 1600):                      # ~100 points per second of the plan, and twice that
        t = np.linspace(0.0, plan.duration, n + 1)
        g = oracle.reconstruct(orbital, plan.evaluate(t)[0], mu=loc.locked_velocity_of_momentum(orbital, J), t=t)
        rec.append(hol.rotation_vector(g[-1][:3, :3]))
    assert_close((4 * rec[1] - rec[0]) / 3, hol.rotation_vector(plan.predicted_rotation), 3e-9, "end attitude")
    assert plan.error < ro.MOMENTUM_TOLERANCE
    drift = hol.attitudes_along(orbital, Trajectory([Hold(Q_D, plan.duration)]), [0.0, plan.duration],
                                J)[-1]
    assert rotation_angle(drift.T @ target) > math.radians(5)


def test_lwr_turns_90_deg_about_z():
    """The robot of [Mishra2023] Sec. V-B (LWR 4+ on a 3.5 kg base, from q = 0), whose base turns 11.9 deg in
    one 0.5 rad circle: 90 deg in one cycle of a large loop (two harmonics: the faster search)."""
    lwr = FloatingBaseModel.from_urdf(share_file("urdf/lwr4_free_floating.urdf"))
    plan = ro.plan_reorientation(lwr, np.zeros(7), rotation_from_axis_angle((0, 0, 1), math.radians(90)),
                                 harmonics=2)
    assert math.degrees(plan.error) < 1e-6
    assert plan.cycles == 1
    assert (np.abs(plan.velocities) <= plan.limits.velocity).all()
    assert (plan.positions >= plan.limits.lower).all() and (plan.positions <= plan.limits.upper).all()


def test_baseline_circle_is_the_best_of_the_ccf_maps(orbital):
    """The naive loop: a large circle whose exact rotation about the axis per cycle (eq. 9) is what the CCF
    map's volume predicted (eq. 11), to within the error of eq. 11 on so large a loop."""
    circle = naive_baseline(orbital, Q_D, (0, 0, 1), joints=[0, 1, 2, 3], grid=9, candidates=4)
    turned = circle.phi[2]
    assert turned > 0 and abs(turned / circle.estimate - 1) < 0.3
    assert circle.radius > 0.3


def test_base_clearance_gradient(orbital, rng):
    """The distance between the base's and the arm's collision geometries: its gradient ``n^T J_p`` against
    central differences (step 1e-3 rad: coal's distances carry ~1e-7 m of solver noise)."""
    clearance = BaseClearance(orbital)
    lo, hi = orbital.position_limits.T
    qs = rng.uniform(lo, hi, size=(30, orbital.n))
    qs = qs[np.argsort(clearance.distances(qs))[:4]]                  # the closest approaches
    h = 1e-3
    for q, g in zip(qs, clearance.gradients(qs)):
        fd = np.array([clearance.distances([q + h * e, q - h * e]) @ [1, -1] / (2 * h) for e in np.eye(orbital.n)])
        assert_close(g, fd, 2e-3 * np.abs(fd).max(), "clearance gradient")


@pytest.fixture(scope="module")
def plan_xy20(orbital):
    return ro.plan_reorientation(orbital, Q_D, rotation_from_axis_angle((1, 1, 0), math.radians(20)))


def test_plan_about_x_y_turns_twice_the_baselines_rotation_per_cycle(orbital, plan_xy20):
    """20 deg about (1, 1, 0): the fastest loop turns ~5 deg per cycle (the target would take 3 cycles of larger
    loops), the grown loop lands it in 2 cycles of 10 deg, within the limits on dense samples, at least twice what
    the naive baseline's circle turns per cycle (3.79 deg, eq. 9) and no slower than it per second."""
    plan = plan_xy20
    assert plan.cycles == 2 and math.degrees(plan.error) < 1e-6
    axis = np.array([1.0, 1.0, 0.0]) / math.sqrt(2)
    assert_close(plan.loop_rotation, axis * math.radians(10), 1e-11, "rotation per cycle")
    circle = naive_baseline(orbital, Q_D, axis)
    assert plan.rotation_per_cycle >= 2 * (circle.phi @ axis)
    q, qdot, _ = plan.evaluate(np.linspace(0.0, plan.duration, 20001))
    assert (q >= plan.limits.lower).all() and (q <= plan.limits.upper).all()
    assert (np.abs(qdot) <= plan.limits.velocity).all()
    baseline = baseline_plan(orbital, Q_D, plan.target, circle)
    assert plan.duration < baseline.duration


def test_plan_keeps_the_arm_off_the_spacecraft(orbital, plan_xy20):
    """20 deg about an axis in the x-y plane: the fastest loop would swing the forearm into the spacecraft;
    the plan keeps the clearance, and MuJoCo (its own collision detection, the URDF's boxes and cylinders)
    finds no contact between the base and the arm anywhere on it."""
    plan = plan_xy20
    assert math.degrees(plan.error) < 1e-6
    s = np.linspace(0, 2 * np.pi, CLEARANCE_SAMPLES, endpoint=False)
    assert BaseClearance(orbital).distances(plan.loop.derivatives(s)[0]).min() >= ro.CLEARANCE
    plant = MujocoPlant.from_urdf(share_file("urdf/orbital_robot.urdf"), orbital, geometry="primitives")
    d = plant.data
    touching = 0
    for q in plan.positions:
        d.qpos[:] = 0.0
        d.qpos[3] = 1.0
        d.qpos[plant.qpos_idx] = q
        mujoco.mj_forward(plant.model, d)
        bodies = [(plant.model.geom_bodyid[c.geom1], plant.model.geom_bodyid[c.geom2]) for c in d.contact[:d.ncon]]
        touching += any(plant.root in pair for pair in bodies)
    assert touching == 0
