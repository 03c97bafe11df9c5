"""The orbital demo over DDS, short: two node processes, recorded through topics only."""
import numpy as np
import pytest

pytest.importorskip("rclpy")

from floating_base_control.ros import orbital_demo as demo  # noqa: E402
from floating_base_control.experiments.orbital.scenario import OrbitalScenario  # noqa: E402
from helpers.ros_harness import domain_for  # noqa: E402

JOINTS = [f"panda_joint{i}" for i in range(1, 8)]


def test_ros_demo_runs_the_given_scenario_and_reports():
    """A set-point 0.2 rad from the start (the YAML's is 76 deg away): the run converges to it only
    if the scenario reaches the nodes."""
    q0 = OrbitalScenario().q0
    scenario = OrbitalScenario(duration_s=4.0, q_d=tuple(np.add(q0, [0.2, 0, 0, 0, 0, 0, 0])))
    log, summary = demo.run(scenario, domain_id=domain_for(__name__), timeout_factor=20.0)   # a loaded machine's pace
    assert summary["status"] == "completed"
    assert summary["duration_s"] >= 4.0
    assert log["dq_norm_deg"][0] == pytest.approx(np.degrees(0.2), abs=0.05)
    assert log["dq_norm_deg"][-1] < 0.5 * log["dq_norm_deg"][0]          # converging to that set-point
    assert summary["momentum_drift_rel"] < 1e-9
    assert "shared memory" in summary["transport"]
    # no modelled delay over DDS: the loop the controller measured (its per-tick log, after 2 s of start-up)
    assert summary["loop_delay_s"] is None and summary["ros_loop"]["ticks"] > 100
    assert 0 < summary["ros_loop"]["period_p50_ms"] < summary["ros_loop"]["period_max_ms"]


def test_what_a_ros_run_cannot_honour_is_refused_by_name():
    with pytest.raises(ValueError, match="--mass-error and --compensation truth"):
        demo.scenario_overrides(OrbitalScenario(compensation="truth"), JOINTS)
    controller, sim = demo.scenario_overrides(OrbitalScenario(pose_rate_hz=20.0, seed=3), JOINTS)
    assert ("pose_rate_hz", 20.0) in sim and ("seed", 3) in sim
    assert ("setpoint.panda_joint4", -2.05) in controller and ("compensation", "tau2") in controller


def test_a_motion_task_demo_gives_the_node_the_tasks_parameters():
    from floating_base_control.experiments.orbital.tasks import TaskSettings
    settings = TaskSettings()
    overrides = dict(demo.task_overrides("end-effector", settings, JOINTS))
    assert overrides["task"] == "joint" and overrides["hold_on_activate"] is True     # holds until the target
    assert overrides["end_effector.frame"] == "panda_link8"
    assert overrides["end_effector.stiffness.z"] == settings.ee_stiffness[5]
    assert overrides["end_effector.damping_ratio"] > 0
    assert "end_effector.frame" not in dict(demo.task_overrides("trajectory", settings, JOINTS))
    assert demo.task_overrides("setpoint", settings, JOINTS) == []


def make_demo_command():
    """The ``fbc`` arguments of the Makefile's ``demo`` target."""
    from pathlib import Path
    lines = (Path(__file__).resolve().parents[2] / "Makefile").read_text().splitlines()
    recipe = lines[lines.index("demo: $(STAMP)") + 1].split()
    return recipe[recipe.index("$(VENV)/bin/fbc") + 1:]


def test_make_demo_writes_a_video_of_the_orbital_run(tmp_path, monkeypatch, capsys):
    """`make demo`'s command, shortened to 1.5 s simulated and small frames: the ROS run, the ROS-free one beside
    it, and video.mp4 of at least a few seconds (two per simulated second) whose frames show the robot (the
    spacecraft's colour in the middle of the picture: the camera follows the robot)."""
    import imageio.v2 as imageio

    from floating_base_control.cli import main
    from floating_base_control.sim.video import BASE_RGBA
    argv = make_demo_command()
    assert {"--ros", "--compare", "--video"} <= set(argv)
    monkeypatch.setenv("FBC_ROS_DOMAIN", str(domain_for(__name__)))
    out = tmp_path / "orbital"
    main([*argv[:argv.index("--out")], "--duration", "1.5", "--video-size", "160x120", "--out", str(out)])
    summary = __import__("json").loads((out / "summary.json").read_text())
    assert summary["status"] == "completed" and "shared memory" in summary["transport"] and "ros_free" in summary
    reader = imageio.get_reader(str(out / "video.mp4"))
    duration, frames = reader.get_meta_data()["duration"], [frame for frame in reader]   # no len(): ffmpeg
    reader.close()
    assert duration >= 2.9 and frames[0].shape == (120, 160, 3)
    gold = 255 * np.array(BASE_RGBA[:3])
    for frame in (frames[0], frames[len(frames) // 2], frames[-1]):
        middle = frame[30:90, 40:120].astype(float)
        assert (np.linalg.norm(middle - gold, axis=2) < 90).mean() > 0.05
    assert "video.mp4" in capsys.readouterr().out


def test_the_recorder_pairs_the_ground_truth_of_one_instant_by_its_stamp():
    """The four ground-truth topics arrive in any order (on a loaded machine, one topic 0.1 s behind another): a
    sample holds the messages of one stamp, whatever arrived last of the others; an instant with a lost message
    gives no sample."""
    import rclpy
    from geometry_msgs.msg import TwistStamped, WrenchStamped
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import JointState

    from floating_base_control.ros.messages import seconds_to_stamp, stamp_to_seconds

    def message(kind, t):
        msg = kind()
        msg.header.stamp = seconds_to_stamp(100.0 + t)
        return msg
    rclpy.init(domain_id=domain_for(__name__))
    try:
        recorder = demo.Recorder()
        times = np.round(0.01 * np.arange(12), 2)
        for t in times:                                   # the joint states ten instants ahead of the rest
            recorder._on_truth("joints", message(JointState, t))
        for t in times[:10]:
            for key, kind in (("truth", Odometry), ("mu", TwistStamped), ("momentum", WrenchStamped)):
                if not (t == 0.05 and key == "mu"):       # lost
                    recorder._on_truth(key, message(kind, t))
        stamps = [[stamp_to_seconds(m.header.stamp) - 100.0 for m in (joints, *(o[k] for k in ("truth", "mu",
                   "momentum")))] for joints, o in recorder.samples]
        expected = [t for t in times[:10] if t != 0.05]
        assert np.allclose(stamps, np.repeat(np.array(expected)[:, None], 4, axis=1), atol=1e-6)
        assert recorder.elapsed == pytest.approx(0.09, abs=1e-6)
        recorder.destroy_node()
    finally:
        rclpy.try_shutdown()
