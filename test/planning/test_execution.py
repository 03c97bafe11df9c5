"""Executing reorientation plans (planning/execution.py) and the plans it asks for (plan_remainder, timings from a
moving start), on a kinematic stand-in of the robot: the arm follows the reference exactly, the base turns by
eq. 9 of a *different* model (the spacecraft 10 % heavier and its inertia off), and the observer's estimate is
that attitude.  What is checked is what the feedback must do: a model error that would leave the plan's end
degrees off is corrected to round-off of the estimate, within the limits, the trajectory continuous at every
swap, planning never inside the tick."""
import math

import numpy as np
import pytest

from helpers import assert_close
from floating_base_control import FloatingBaseModel
from floating_base_control.control.shape import COMPENSATIONS, ShapeGains
from floating_base_control.dynamics.centroidal import center_of_mass
from floating_base_control.planning import execution as ex
from floating_base_control.planning import holonomy as hol
from floating_base_control.planning import reorientation as ro
from floating_base_control.planning.paths import LinePath
from floating_base_control.planning.rotations import rotation_angle, rotation_from_axis_angle
from floating_base_control.planning.timing import Hold, TimedPath, time_path
from floating_base_control.resources import orbital_robot_urdf
from floating_base_control.urdf_loader import scale_link_inertial

Q_D = np.array([0.3, -0.5, -0.3, -2.05, 0.3, 1.25, 1.1])
#: Control period of the stand-in loop (s).
DT = 0.01


@pytest.fixture(scope="module")
def plan30(orbital):
    """30 deg about z in three cycles (the planner's choice is two, of its largest loop)."""
    return ro.plan_reorientation(orbital, Q_D, rotation_from_axis_angle((0, 0, 1), math.radians(30)), cycles=3)


@pytest.fixture(scope="module")
def heavier():
    """The 'true' robot: every link's inertial of the spacecraft scaled by 1.1 (the controller's model is not)."""
    with open(orbital_robot_urdf()) as f:
        return FloatingBaseModel.from_urdf_string(scale_link_inertial(f.read(), None, 1.1), source="heavier")


def test_a_timing_from_a_moving_start_keeps_its_speed_and_ends_at_rest():
    """A straight move timed from a path speed: the first sample moves at that speed, the limits hold on a dense
    grid, and from the end on the path is at rest (no acceleration left: a tracked reference would hold the arm
    off its end by ``Lambda_q qddot / K``)."""
    path = LinePath(np.zeros(3), np.array([2.0, -1.0, 0.5]))
    v, a = np.array([1.0, 2.0, 2.0]), np.array([4.0, 4.0, 4.0])
    timing = time_path(path, v, a, 2000, sdot_start=0.3)
    piece = TimedPath(path, timing)
    t = np.linspace(0.0, timing.duration, 4001)
    _, qdot, qddot = piece.evaluate(t)
    assert_close(qdot[0], 0.3 * (path.q_b - path.q_a), 1e-12, "start velocity")
    assert (np.abs(qdot) <= v * (1 + 1e-12)).all() and (np.abs(qddot) <= a * (1 + 1e-12)).all()
    for after in (timing.duration, timing.duration + 1.0):
        _, qdot, qddot = piece.evaluate(np.array([after]))
        assert_close(qdot, np.zeros((1, 3)), 1e-12, f"velocity at {after}")
        assert_close(qddot, np.zeros((1, 3)), 0.0, f"acceleration at {after}")
    with pytest.raises(ro.InputError, match="cannot be timed from path speed 5"):
        time_path(path, v, a, 2000, sdot_start=5.0)


def test_remainder_lands_anew_and_continues_the_plan(orbital, plan30):
    """From the start of the 30 deg plan's second cycle, 0.5 deg more to turn: the remaining two cycles of a nearby
    loop land on it to round-off, and the trajectory goes on from the boundary without a step in position or
    velocity; the exact remaining rotation gives back the plan's own loop."""
    H = hol.rotation_matrix(plan30.loop_rotation)
    t1 = plan30.cycle_times[1]
    q1, v1, _ = plan30.evaluate(t1)
    for extra, changed in ((np.zeros(3), False), (np.radians([0.3, -0.2, 0.3]), True)):
        remainder = ro.plan_remainder(orbital, plan30, 1, H @ H @ hol.rotation_matrix(extra))
        assert math.degrees(remainder.error) < 1e-6 and remainder.cycles == 2
        q, v, _ = remainder.evaluate(0.0)
        assert_close(q, q1, 1e-12, "position at the boundary")
        assert_close(v, v1, 1e-9, "velocity at the boundary")
        shift = np.abs(remainder.loop.coefficients - plan30.loop.coefficients).max()
        assert (shift > 1e-3) if changed else (shift < 1e-9), shift
        lim = remainder.limits
        assert (remainder.positions >= lim.lower).all() and (remainder.positions <= lim.upper).all()
        assert (np.abs(remainder.velocities) <= lim.velocity).all()


@pytest.mark.slow
def test_remainder_with_momentum_ends_at_the_target_at_the_plan_end(orbital):
    """With a slow tumble: from the second cycle's start, the attitude predicted there off by 0.2 deg, the remainder
    still ends at the target (within the remainder's tolerance, 1e-4 rad): at the plan's own end, or, when its loops
    need longer (the plan's wait was at its start), when they end."""
    mu0 = np.r_[np.radians([1.0, 0.3, 0.0]), 0.0, 0.0, 0.0]
    plan = ro.plan_reorientation(orbital, Q_D, rotation_from_axis_angle((0, 0, 1), math.radians(10)), mu=mu0,
                                 harmonics=2, max_duration=60.0)
    assert plan.cycles >= 2
    t1 = plan.cycle_times[1]
    A = ro.attitude_change(orbital, plan, 0.0, t1, plan.momentum) @ hol.rotation_matrix(np.radians([0.2, 0, 0.1]))
    J = plan.momentum
    k = J[:3] - np.cross(center_of_mass(orbital.kinematics(Q_D)), J[3:])          # about the CoM, conserved
    remainder = ro.plan_remainder(orbital, plan, 1, A.T @ plan.target, np.r_[A.T @ k, 0.0, 0.0, 0.0])
    end = plan.duration - t1
    assert remainder.duration >= end - 1e-9
    assert remainder.duration <= end + 1e-9 or not isinstance(remainder.trajectory.pieces[-1], Hold)
    assert remainder.error < ro.REMAINDER_TOLERANCE


class StandIn:
    """The arm at its reference, the base turned by eq. 9 of the 'true' model along it (midpoint rule on the
    reference's velocity, every DT), the estimate that attitude (``noise``: a fixed rotation added)."""

    def __init__(self, truth, q0):
        self.truth, self.q, self.R = truth, np.array(q0, dtype=float), np.eye(3)
        self.ws = truth.create_data()

    def step(self, reference, t):
        q_mid = reference.sample(t + DT / 2)
        omega = -(self.truth.mechanical_connection(q_mid.q) @ q_mid.qdot)[:3]
        self.R = self.R @ hol.rotation_matrix(omega * DT)
        self.q = reference.sample(t + DT).q


def run_task(model, truth, target, duration, later=(), **options):
    """The task driven at 1 / DT by the stand-in, ``later``: ``(time, target)`` commands after the first;
    ``(task, stand-in, max |qdot_r| / limit, largest step of q_r)``."""
    task = ex.ReorientTask(model, ex.SynchronousPlanner(model, latency_s=options.pop("latency_s", 0.0)), Q_D,
                           ShapeGains(np.full(7, 100.0), np.full(7, 10.0)), **options)
    task.command(target)
    plant, speed, jump = StandIn(truth, Q_D), 0.0, 0.0
    g = np.eye(4)
    previous = task.reference.sample(0.0)
    later = list(later)
    for t in np.arange(0.0, duration, DT):
        while later and later[0][0] <= t:
            task.command(later.pop(0)[1])
        g[:3, :3] = plant.R
        task.torque(t, plant.q, np.zeros(7), model.rel_terms(plant.q, np.zeros(7), np.zeros(6)), np.zeros(6),
                    COMPENSATIONS["tau2"], g)
        sample = task.reference.sample(t)
        speed = max(speed, float((np.abs(sample.qdot) / model.velocity_limits).max()))
        jump = max(jump, float(np.abs(sample.q - previous.q).max()))
        previous = sample
        plant.step(task.reference, t)
    return task, plant, speed, jump


@pytest.mark.slow
def test_feedback_corrects_a_model_error_every_cycle(orbital, heavier):
    """30 deg about z with a 10 % heavier spacecraft: open loop the plan would end ~3 deg short.  The executor
    re-plans the remaining cycles from the estimate (exact here) before each boundary: the first plan's loop (two
    cycles of 15 deg, its largest) cannot turn the 16 deg left in one cycle, so the remainder takes two smaller
    ones, and the next remainder lands the last; that cycle's shortfall (~0.6 deg) is corrected from rest, within
    the task's tolerance (0.05 deg).  The reference stays within the speed limits and continuous in position (no
    step larger than its speed allows in one period)."""
    target = rotation_from_axis_angle((0, 0, 1), math.radians(30))
    first = ro.plan_reorientation(orbital, Q_D, target)
    open_loop = hol.attitudes_along(heavier, first.trajectory, [0.0, first.duration])[-1]
    assert rotation_angle(target.T @ open_loop) > math.radians(2.0)
    task, plant, speed, jump = run_task(orbital, heavier, target, 26.0, settle_s=0.5)
    events = [event for _, event, _ in task.log]
    assert sum(e.startswith("remainder from") for e in events) == 2 and "correction" in events, events
    assert task.status == "done"
    assert math.degrees(rotation_angle(target.T @ plant.R)) < math.degrees(ex.TOLERANCE)
    assert speed <= 1.0 and jump <= DT * max(orbital.velocity_limits)


@pytest.mark.slow
def test_results_later_than_their_boundary_are_dropped_and_the_plan_goes_on(orbital, heavier):
    """A planner 1.5 s late (more than lead_s): every remainder comes after its boundary and is dropped, the running
    plan goes on, and the correction from rest at the end still brings the base within 0.05 deg."""
    target = rotation_from_axis_angle((0, 0, 1), math.radians(30))
    task, plant, speed, _ = run_task(orbital, heavier, target, 34.0, settle_s=0.5, latency_s=1.5, tolerance=1e-4)
    events = [event for _, event, _ in task.log]
    assert sum(e.startswith("remainder late") for e in events) >= 1 and not any(
        e.startswith("remainder from") for e in events), events
    assert "correction" in events and task.status == "done"
    assert math.degrees(rotation_angle(target.T @ plant.R)) < 0.05 and speed <= 1.0


@pytest.mark.slow
def test_a_new_target_stops_the_running_loop_at_its_boundary_then_is_reached(orbital):
    """A new target 3 s into a 30 deg plan (in its first cycle): the next boundary's plan is the loop's one cycle more
    to rest (no step in the reference), then a plan from rest for the new target (10 deg about z), which the
    base reaches within the task's tolerance (the model is exact here)."""
    first, second = (rotation_from_axis_angle((0, 0, 1), math.radians(a)) for a in (30, 10))
    task, plant, speed, jump = run_task(orbital, orbital, first, 24.0, later=[(3.0, second)], settle_s=0.5)
    events = [event for _, event, _ in task.log]
    stop = next(i for i, e in enumerate(events) if e.startswith("stop from"))
    assert any(e.startswith("plan from") for e in events[stop:]), events
    assert task.status == "done" and np.array_equal(task.target, second)
    assert math.degrees(rotation_angle(second.T @ plant.R)) < math.degrees(ex.TOLERANCE)
    assert speed <= 1.0 and jump <= DT * max(orbital.velocity_limits)


def test_a_target_out_of_reach_is_refused_with_the_planners_reason(orbital):
    """The wrist's joints alone cannot turn the spacecraft by 90 deg within max_cycles: refused, the arm held."""
    model = orbital
    task = ex.ReorientTask(model, ex.SynchronousPlanner(model, {"joints": ["panda_joint6", "panda_joint7"],
                                                                "harmonics": 1}), Q_D, settle_s=0.0)
    task.command(rotation_from_axis_angle((0, 0, 1), math.radians(90)))
    for t in (0.0, DT):
        task.torque(t, Q_D, np.zeros(7), model.rel_terms(Q_D, np.zeros(7), np.zeros(6)), np.zeros(6),
                    COMPENSATIONS["tau2"], np.eye(4))
    assert task.status == "refused"
    assert "cannot turn the base" in task.refusals[-1]
    assert_close(task.reference.sample(1.0).q, Q_D, 0.0, "held")
