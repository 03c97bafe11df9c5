"""fbc loops' verdicts and report (ros/loop_comparison.py), and the DDS demo's loop statistics, on made-up runs
(the runs themselves are `make loops`)."""
import numpy as np
import pytest

pytest.importorskip("rclpy")

from floating_base_control.ros import loop_comparison as lc  # noqa: E402
from floating_base_control.ros.orbital_demo import loop_statistics  # noqa: E402

LIMITS = {"max_position_limit_overrun_rad": 0.0, "max_velocity_limit_overrun_rad_s": 0.0,
          "torque_saturated_fraction": 0.0, "status": "completed"}


def trajectory(rms, **changes):
    return {**LIMITS, "tracking_rms_joint_error_deg": rms, "max_joint_error_deg": 3 * rms, **changes}


def end_effector(mm, deg, within=True, **changes):
    return {**LIMITS, "final_ee_position_error_m": mm * 1e-3, "final_ee_orientation_error_deg": deg,
            "ee_final_window_within_hold": within, **changes}


def test_the_verdicts_are_the_issues_done_when_lines():
    reference = trajectory(0.0146)
    assert all(lc.verdicts("trajectory", trajectory(0.029), reference).values())
    failed = lc.verdicts("trajectory", trajectory(0.0293, max_velocity_limit_overrun_rad_s=0.1), reference)
    assert [k for k, ok in failed.items() if not ok] == ["no limit overrun", "RMS within 2x"]
    assert all(lc.verdicts("end-effector", end_effector(1.9, 0.19), None).values())
    failed = lc.verdicts("end-effector", end_effector(2.1, 0.1, within=False, torque_saturated_fraction=0.01), None)
    assert [k for k, ok in failed.items() if not ok] == ["no torque saturation", "under 2 mm / 0.2 deg",
                                                        "within the hold"]


def test_the_readme_table_is_replaced_between_its_markers(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"before\n{lc.README_BEGIN}\nold table\n{lc.README_END}\nafter\n")
    machine = {"load_1min_mean": 6.25, "load_1min_max": 8.0}
    ros = {"control_rate_hz": 995.0, "period_p99_ms": 1.41, "period_max_ms": 6.2, "joint_state_age_p99_ms": 1.2}
    rows = [("trajectory", "in-process", trajectory(0.0146), None),
            ("trajectory", "DDS", trajectory(0.05, machine=machine, ros_loop=ros),
             lc.verdicts("trajectory", trajectory(0.05), trajectory(0.0146)))]
    lc.update_readme(readme, rows)
    text = readme.read_text()
    assert text.startswith(f"before\n{lc.README_BEGIN}\n| task |") and text.endswith(f"{lc.README_END}\nafter\n")
    assert "old table" not in text and text.count("| trajectory |") == 2
    assert "| 6.2 (max 8.0) | 0.0500 / 0.1500 deg |" in text and "FAIL: RMS within 2x" in text
    assert "995 Hz, period p99 1.41 / max 6.2 ms, age p99 1.20 ms" in text


def test_the_loop_statistics_are_those_of_the_timing_log(tmp_path):
    """Ticks 1 ms apart but one 5 ms late, after 2 s of start-up that are left out."""
    t = np.r_[np.arange(0.0, 2.0, 0.1), 2.0 + 1e-3 * np.r_[np.arange(100), 104 + np.arange(100)]]
    compute, age = np.full(t.size, 2e-4), np.full(t.size, 5e-4)
    age[-1] = 4e-3
    path = tmp_path / "timing.csv"
    np.savetxt(path, np.c_[t, compute, age, np.zeros(t.size), np.zeros(t.size)], delimiter=",",
               header="t,compute_s,joint_state_age_s,after_tick_s,gc_s", comments="")
    s = loop_statistics(path, skip_s=2.0)
    assert s["ticks"] == 200 and s["period_max_ms"] == pytest.approx(5.0) and s["period_p50_ms"] == pytest.approx(1.0)
    assert s["control_rate_hz"] == pytest.approx(199 / 0.203)
    assert s["compute_p99_ms"] == pytest.approx(0.2) and s["joint_state_age_max_ms"] == pytest.approx(4.0)


def test_a_run_hardly_longer_than_its_start_up_keeps_all_its_ticks(tmp_path):
    """A test's 1.5 s run with the demo's 2 s of start-up left out: its statistics are of all its ticks, not of
    none."""
    t = 1e-3 * np.arange(1500)
    path = tmp_path / "timing.csv"
    np.savetxt(path, np.c_[t, np.full(t.size, 2e-4), np.full(t.size, 5e-4), np.zeros(t.size), np.zeros(t.size)],
               delimiter=",", header="t,compute_s,joint_state_age_s,after_tick_s,gc_s", comments="")
    s = loop_statistics(path, skip_s=2.0)
    assert s["ticks"] == 1500 and s["control_rate_hz"] == pytest.approx(1000.0)
