"""The in-process loop with its loop delay (sim/loop.py): commands act a delay after their state, the
zero-delay loop is the papers' loop bit for bit, and the delay is what the stability analysis predicts."""
import json
from pathlib import Path

import numpy as np
import pytest

from floating_base_control.experiments.hopper.scenario import experiment, run as hopper_run
from floating_base_control.experiments.orbital import scenario as orbital, tasks
from floating_base_control.resources import orbital_robot_urdf
from floating_base_control.sim.loop import CommandDelay, loop_delay_steps
from floating_base_control.sim.plant import MujocoPlant
from floating_base_control.validation import InputError

REFERENCE = json.loads((Path(__file__).parent / "data" / "zero_delay_reference.json").read_text())
#: The trajectory gains of the reference runs (the demo's before the loop delay was modelled).
OLD_GAINS = dict(stiffness=(600.0, 600.0, 400.0, 400.0, 100.0, 100.0, 50.0),
                 damping=(60.0, 60.0, 30.0, 30.0, 5.0, 5.0, 1.5))


def test_a_command_acts_from_its_arrival_until_the_next_one():
    delay = CommandDelay(3, initial="zero")              # 3 plant steps, 2 steps per tick
    delay.send(0, "A")
    assert delay.segments(0, 2) == [("zero", 2)]
    delay.send(2, "B")
    assert delay.segments(2, 2) == [("zero", 1), ("A", 1)]
    delay.send(4, "C")
    assert delay.segments(4, 2) == [("A", 1), ("B", 1)]
    now = CommandDelay(0, initial="zero")
    now.send(0, "A")
    assert now.segments(0, 2) == [("A", 2)]              # zero delay: the tick's own command, whole


def test_a_loop_of_single_steps_applies_the_segments_command():
    """``at(k)``, what a loop stepping the plant one step at a time applies, is ``segments(k, 1)``'s command."""
    by_step, by_segment = (CommandDelay(2, initial=-1, jitter=4, drop=0.3, seed=5) for _ in range(2))
    for k in range(500):
        by_step.send(k, k)
        by_segment.send(k, k)
        assert [(by_step.at(k), 1)] == by_segment.segments(k, 1)


def test_lost_and_jittered_commands_keep_the_last_one_and_their_order():
    delay = CommandDelay(2, initial=-1, jitter=4, drop=0.3, seed=5)
    applied = []
    for k in range(2000):
        delay.send(k, k)
        applied += [c for c, steps in delay.segments(k, 1) for _ in range(steps)]
    assert 0.25 < delay.dropped / delay.sent < 0.35
    assert all(np.diff(applied) >= 0)                    # never an older command after a newer one
    lags = np.arange(len(applied)) - np.array(applied)
    assert lags[10:].min() >= 2 and np.percentile(lags[10:], 50) > 2
    with pytest.raises(InputError, match="delay"):
        CommandDelay(-1, initial=0)
    with pytest.raises(InputError, match="loop delay"):
        loop_delay_steps(-1e-3, 5e-4, 1e-3)
    assert loop_delay_steps(None, 5e-4, 1e-3) == 2 and loop_delay_steps(0.0, 5e-4, 1e-3) == 0


def _hex(values):
    return [float(x).hex() for x in np.ravel(values)]


def test_the_zero_delay_loop_is_the_loop_before_the_delay_bit_for_bit():
    """Three short runs with ``loop_delay_s = 0``, against their final rows computed before the loop delay
    existed (test/sim/data/zero_delay_reference.json): the set-point scenario, a trajectory and the hopper."""
    log, summary = orbital.run(orbital.OrbitalScenario(duration_s=0.3, loop_delay_s=0.0))
    assert summary["loop_delay_s"] == 0.0
    assert {k: _hex(log[k][-1]) for k in ("q", "tau", "qdot")} == REFERENCE["orbital"]
    settings = tasks.TaskSettings(trajectory_start_s=0.1, **OLD_GAINS)
    log, _ = tasks.run_task(orbital.OrbitalScenario(duration_s=0.4, loop_delay_s=0.0), "trajectory", settings)
    assert {k: _hex(log[k][-1]) for k in ("q", "tau")} == REFERENCE["trajectory"]
    log, _, meta = hopper_run(experiment("revolute", "VI"), 0.3, loop_delay_s=0.0)
    a = log.arrays()
    assert {k: _hex(a[k][-1]) for k in ("com_x", "q", "tau")} == REFERENCE["hopper"]
    assert meta["loop_delay_s"] == 0.0


def test_by_default_the_first_command_acts_one_period_after_its_state():
    """Over the first period the plant gets no torque (the command is on its way), so the state at the second
    tick is the free motion's; the command of the first tick acts from then on."""
    scenario = orbital.OrbitalScenario(duration_s=0.002, log_rate_hz=1000.0)
    log, summary = orbital.run(scenario)
    assert summary["loop_delay_s"] == 1e-3
    model = orbital.FloatingBaseModel.from_urdf(orbital_robot_urdf())
    plant = MujocoPlant.from_urdf(orbital_robot_urdf(), model, timestep=5e-4, contacts=False)
    plant.set_state(np.eye(4), np.array(scenario.q0), np.r_[np.deg2rad(scenario.mu0_omega_deg_s), scenario.mu0_v],
                    np.zeros(model.n))
    plant.step(np.zeros(model.n), 2)
    np.testing.assert_array_equal(plant.joint_state()[0], log["q"][1])
    plant.step(log["tau"][0], 2)                         # the first tick's command, one period late
    np.testing.assert_array_equal(plant.joint_state()[0], log["q"][2])
    assert orbital.loop_delay(orbital.OrbitalScenario(loop_delay_s=1.6e-3)) == 1.5e-3       # whole physics steps


def test_the_old_trajectory_gains_diverge_with_a_dds_loops_delay_and_the_new_ones_do_not():
    """In MuJoCo, the joints held at the start with 4 ms of loop delay (one period and 3 ms of DDS latency):
    what control/stability.py predicts (gain margin below one for the old gains, above two for the new)."""
    errors, saturated = {}, {}
    for name, settings in (("old", tasks.TaskSettings(**OLD_GAINS)), ("new", tasks.TaskSettings())):
        scenario = orbital.OrbitalScenario(duration_s=2.0, loop_delay_s=4e-3)
        log, summary = tasks.run_task(scenario, "trajectory", settings)
        errors[name] = log["dq_norm_deg"][log["t"] >= 1.0].max()
        saturated[name] = summary["torque_saturated_fraction"]
    assert errors["old"] > 1.0 and saturated["old"] > 0.1, (errors, saturated)       # a limit cycle at the limits
    assert errors["new"] < 0.1 and saturated["new"] == 0.0, (errors, saturated)     # the observer's transient


def test_a_measured_ros_loop_gives_the_jitter_and_the_lost_commands(tmp_path, capsys):
    from floating_base_control.cli import main
    from floating_base_control.sim.loop import measured_loop
    bench = {"control_rate_hz": 995.0, "joint_state_age_p50_ms": 0.6, "joint_state_age_max_ms": 3.5,
             "compute_p99_ms": 0.4}
    jitter, drop = measured_loop(bench)
    assert jitter == pytest.approx(3.3e-3) and drop == pytest.approx(0.005)
    (tmp_path / "ros_loop.json").write_text(json.dumps(bench))
    main(["demo", "orbital", "--duration", "0.05", "--loop-measured", str(tmp_path / "ros_loop.json"),
          "--out", str(tmp_path)])
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["loop_delay_s"] == 1e-3
    assert summary["scenario_parameters"]["loop_jitter_s"] == pytest.approx(jitter)
    assert "loop delay 1 ms (one control period, as ros2_control), jitter up to 3.3 ms" in capsys.readouterr().out
