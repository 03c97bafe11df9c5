"""Around a demo's run (issue 26): figures that read right where a quantity is unobservable, the video of the
run, progress with the time left, warnings kept in a file, and a standard output closed early (``| head``)."""
import gc
import io
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from floating_base_control.cli import _run, main
from floating_base_control.experiments.orbital import report
from helpers import run_fbc


def fbc(argv, capsys):
    code, out, err = run_fbc(argv, capsys)
    assert code == 0, err
    return out, err


@pytest.fixture(scope="module")
def realistic(tmp_path_factory):
    """The realistic demo, half its default 60 s (converged, the unestimated position drifted by 0.2 m: the
    picture of the issue at half the cost), its printed figures and the curves of its plots."""
    out = tmp_path_factory.mktemp("realistic")
    figures = {}
    save = report._save

    def keep(fig, path):
        figures[path.name] = [(ax.get_title(), [(line.get_label(), line.get_ydata()) for line in ax.get_lines()])
                              for ax in fig.axes]
        save(fig, path)
    report._save = keep
    stdout = io.StringIO()
    try:
        sys.stdout, saved = stdout, sys.stdout
        main(["demo", "orbital", "--scenario", "realistic", "--duration", "30", "--out", str(out)])
    finally:
        sys.stdout, report._save = saved, save
    text = stdout.getvalue()
    return json.loads(text[text.index("{"):]), json.loads((out / "summary.json").read_text()), figures


def test_the_realistic_demo_prints_the_observable_part_and_names_the_rest(realistic):
    printed, summary, _ = realistic
    assert summary["converged"] and summary["unobservable"] == ["base position", "base linear velocity"]
    # the figures that mixed the unobservable position in (0.43 at the end) are not printed; their observable
    # parts are, each below its convergence threshold, as the verdict says
    assert "final_observer_pose_error" not in printed and "final_observer_velocity_error" not in printed
    limits = summary["convergence_thresholds"]
    assert printed["final_observer_attitude_error_rad"] < limits["observer_attitude_error_rad"]
    assert printed["final_observer_angular_velocity_error_rad_s"] < limits["observer_angular_velocity_error_rad_s"]
    assert "base position and base linear velocity" in printed["unobservable"]
    assert summary["final_observer_pose_error"] > 0.1                   # the key stays, and still drifts
    assert summary["final_observer_observable_pose_error"] == summary["final_observer_attitude_error_rad"]


def test_no_plot_of_a_converged_run_suggests_divergence(realistic):
    """Every curve of the plots that is judged ends below where it was after the first second (W without the
    unobservable translation's terms, the observable errors); the unobservable ones are in a panel of their own
    whose title says so."""
    _, summary, figures = realistic
    for name, axes in figures.items():
        for title, lines in axes:
            if title.startswith("unobservable with"):
                assert [label for label, _ in lines] == ["position error [m]", "linear velocity error [m/s]"]
                continue
            for label, y in lines:
                y = np.asarray(y, dtype=float)
                if len(y) > 100 and ("W" in label or "error" in label):
                    assert np.nanmean(y[-100:]) < np.nanmax(y[100:200]), (name, title, label)
    fig6 = figures["fig6_convergence.png"][0]
    assert "converged" in fig6[0] and any("without the base translation" in label for label, _ in fig6[1])
    assert any("unobservable" in title for title, _ in figures["errors.png"])


def frame_shows_the_robot(frame, rgba):
    """The share of pixels of the robot's base colour (``sim/video.py``) in the middle half of the frame."""
    h, w, _ = frame.shape
    middle = frame[h // 4: 3 * h // 4, w // 4: 3 * w // 4].astype(float)
    colour = 255 * np.asarray(rgba[:3])
    near = np.linalg.norm(middle - colour, axis=2) < 90     # lit or shaded
    return near.mean()


def decoded(path):
    import imageio.v2 as imageio
    reader = imageio.get_reader(str(path))
    meta, frames = reader.get_meta_data(), [f for f in reader]
    reader.close()
    return meta, frames


def test_the_hopper_demo_renders_its_video(tmp_path, capsys):
    from floating_base_control.sim.video import BASE_RGBA
    out, _ = fbc(["demo", "hopper", "--duration", "0.2", "--video", "--video-size", "320x240", "--no-plots",
                  "--out", tmp_path], capsys)
    meta, frames = decoded(tmp_path / "video.mp4")
    assert meta["duration"] == pytest.approx(0.2 / 0.25, abs=0.05) and frames[0].shape == (240, 320, 3)
    assert "video.mp4 (0.8 s" in out
    # the trunk in the middle of the picture in the first and the last frame (the camera follows the robot as it
    # hops forward), and the floor below the horizon
    assert frame_shows_the_robot(frames[0], BASE_RGBA) > 0.005 and frame_shows_the_robot(frames[-1], BASE_RGBA) > 0.005
    assert frames[-1][-20:].mean() > 15


def test_progress_says_how_far_and_the_time_left():
    clock = iter([0.0, 1.0, 4.0, 5.0, 20.0])
    stream = io.StringIO()
    progress = _run.Progress(30.0, stream=stream, clock=lambda: next(clock))
    progress(1.0)            # 1 s of wall time: too early to say
    progress(10.0)           # 4 s: 10 of 30 simulated, 8 s left at that pace
    progress(12.0)           # 5 s: not a TTY, at most one line every 10 s
    progress(30.0)           # 20 s
    assert stream.getvalue().splitlines() == [
        "  10 / 30 s simulated ( 33 %), 4 s elapsed, about 8 s left",
        "  30 / 30 s simulated (100 %), 20 s elapsed, about 0 s left"]


def test_warnings_go_to_the_file_and_only_the_packages_own_to_the_terminal(tmp_path):
    stream = io.StringIO()
    with _run.warnings_to(tmp_path / "warnings.log", stream):
        warnings.warn_explicit("the plant has URDF joint damping", UserWarning,
                               "/x/floating_base_control/sim/plant.py", 1)
        warnings.warn_explicit("Port 8787 is already in use", UserWarning, "/x/distributed/node.py", 2)
    logged = (tmp_path / "warnings.log").read_text()
    assert "URDF joint damping" in logged and "Port 8787" in logged
    assert stream.getvalue().splitlines() == ["warning: the plant has URDF joint damping",
                                              f"(1 warning of other libraries in {tmp_path / 'warnings.log'})"]


def test_the_arm_demos_warning_is_one_line_and_logged(tmp_path, capsys):
    from floating_base_control.resources import example_robot_data_urdfs
    panda = example_robot_data_urdfs()["panda_description/urdf/panda.urdf"]
    gc.collect()     # earlier tests' garbage (an unclosed file's ResourceWarning) is not this run's to report
    _, err = fbc(["demo", "orbital", "--arm-urdf", panda, "--duration", "0.02", "--out", tmp_path], capsys)
    assert err.startswith("warning: ") and "URDF joint damping" in err and len(err.splitlines()) == 1, \
        (err, (tmp_path / "warnings.log").read_text())
    assert "UserWarning" in (tmp_path / "warnings.log").read_text()


def test_a_run_piped_into_head_still_writes_its_results(tmp_path):
    """``fbc demo orbital | head``: once head has exited, every print fails with a broken pipe; the run goes on,
    writes its results and exits 0 (it aborted at its first print)."""
    read, write = os.pipe()
    os.close(read)                                   # the reader (head) has gone before the first line
    try:
        run = subprocess.run([sys.executable, "-m", "floating_base_control.cli", "demo", "orbital", "--duration",
                              "0.05", "--out", str(tmp_path)], stdout=write, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write)
    assert run.returncode == 0 and "Traceback" not in run.stderr and "BrokenPipe" not in run.stderr, run.stderr
    assert json.loads((tmp_path / "summary.json").read_text())["duration_s"] == pytest.approx(0.05)
    assert (tmp_path / "errors.png").exists()
