"""The set-point controller's limit terms (control/setpoint.py: the wall beyond the limit margins and the velocity
guard) capped for the loop with its delay (control/stability.py, limit_term_gains; issue 24).

Uncapped, the terms are the effort limit over the margin and over the velocity limit: on the Panda's joint 7
(0.004 kg m^2 at its lightest) a 120 N m/rad wall with the PD's 0.05 N m s/rad is unstable with one period of
delay at any scale, and the 4.6 N m s/rad guard is a velocity loop at the stability boundary."""
from dataclasses import replace

import numpy as np
import pytest

from floating_base_control.control import stability as st
from floating_base_control.control.setpoint import TaskController
from floating_base_control.experiments.orbital import scenario as orbital
from floating_base_control.model import FloatingBaseModel
from floating_base_control.resources import orbital_robot_urdf
from floating_base_control.robots.orbital import controller as orbital_controller

H = 1e-3


@pytest.fixture(scope="module")
def model():
    return FloatingBaseModel.from_urdf(orbital_robot_urdf())


@pytest.fixture(scope="module")
def shapes(model):
    """Shapes the cap was not computed on (another seed than smallest_joint_inertias')."""
    return [model.reduced_shape_inertia(q) for q in st.sample_configurations(model, 24, seed=1)]


def terms(model, capped):
    task = TaskController(model.position_limits, model.velocity_limits, model.effort_limits,
                          inertia=st.smallest_joint_inertias(model) if capped else None, control_period=H)
    wall = task.wall_damping if capped else np.zeros(model.n)
    return task.limit_stiffness, task.guard_damping, wall


def failures(model, shapes, capped):
    """``[(gains, joint, term, delay)]`` where the loop with the term on that joint (the wall: its stiffness and
    damping beyond the margin added to the PD's; the guard: its damping added) lacks a gain margin of 3 at one
    period, or is unstable with one period and a DDS loop's latency, at any of ``shapes``."""
    K_lim, guard, wall = terms(model, capped)
    scenario = orbital.OrbitalScenario()
    pd = {"the paper's": (np.array(scenario.stiffness), np.array(scenario.damping)),
          "the node's defaults": st.robot_joint_gains(model)}
    out = []
    for name, (K, D) in pd.items():
        for j in range(model.n):
            for term, dK, dD in (("wall", K_lim[j], wall[j]), ("guard", 0.0, guard[j])):
                Kj, Dj = K.copy(), D.copy()
                Kj[j] += dK
                Dj[j] += dD
                for delay, scale in ((H, st.REQUIRED["gain_margin"]), (H + st.DDS_LATENCY_S, 1.0)):
                    if not all(st.is_stable(M, Kj, Dj, H, delay, scale=scale) for M in shapes):
                        out.append((name, j, term, delay))
    return out


def test_todays_limit_terms_destabilize_the_delayed_loop(model, shapes):
    found = failures(model, shapes, capped=False)
    assert ("the paper's", 6, "wall", H) in found and ("the paper's", 6, "guard", H) in found, found


def test_the_capped_limit_terms_keep_the_delayed_loop_stable_with_margin(model, shapes):
    assert failures(model, shapes, capped=True) == []


def test_each_capped_wall_alone_has_the_required_margins_on_its_joints_smallest_inertia(model):
    m = st.smallest_joint_inertias(model)
    K_lim, guard, wall = terms(model, capped=True)
    uncapped = terms(model, capped=False)
    for j in range(model.n):
        assert st.loop_verdict([[m[j]]], [K_lim[j]], [wall[j]], H) == (None, None), j
        assert 0 < K_lim[j] <= uncapped[0][j] and 0 < guard[j] == wall[j] <= uncapped[1][j]
    # the light wrist's wall is what the delay allows, well below the effort over the margin
    assert K_lim[6] < 0.25 * uncapped[0][6] and guard[6] < 0.1 * uncapped[1][6]


def test_a_joint_started_inside_its_margin_is_brought_out_within_its_velocity_limit(model, monkeypatch):
    """Joint 7 at rest 0.07 rad beyond its margin (0.03 rad from the hard limit), no tumble, one period of loop
    delay: the capped wall brings it back to the margin within the velocity limit; the uncapped one throws it
    past the limit (2.9 rad/s over; 1.2 rad/s over even without the delay)."""
    base = orbital.OrbitalScenario()
    q0 = np.array(base.q0)
    hi = model.position_limits[6, 1]
    q0[6] = hi - 0.03
    scenario = replace(base, q0=tuple(q0), q_d=tuple(q0), duration_s=1.0, mu0_omega_deg_s=(0.0, 0.0, 0.0))
    log, summary = orbital.run(scenario)
    assert summary["max_velocity_limit_overrun_rad_s"] == 0.0 and summary["max_position_limit_overrun_rad"] == 0.0
    assert abs(log["q"][-1, 6] - (hi - 0.1)) < 1e-3            # at its margin (the reference's clip)
    original = orbital_controller.OrbitalController.__init__

    def uncapped(self, model, *args, **kwargs):
        original(self, model, *args, **kwargs)
        self.task = TaskController(model.position_limits, model.velocity_limits, model.effort_limits)
    monkeypatch.setattr(orbital_controller.OrbitalController, "__init__", uncapped)
    assert orbital.run(scenario)[1]["max_velocity_limit_overrun_rad_s"] > 1.0


def test_without_the_inertias_the_terms_are_the_uncapped_ones(model):
    """What replays and the set-point tests of the terms' formulas use: the effort over the margin and over
    the velocity limit, no wall damping."""
    K_lim, guard, wall = terms(model, capped=False)
    np.testing.assert_array_equal(K_lim, model.effort_limits / 0.1)
    np.testing.assert_array_equal(guard, model.effort_limits / model.velocity_limits)
    assert not wall.any()
