"""``fbc gait``, ``fbc ccf`` and ``fbc integrability``: help, outputs, and bad input."""
import json

import numpy as np
import pytest

from floating_base_control.resources import share_file
from helpers import run_fbc

THREE_BODY = {d: share_file(f"urdf/three_body_d{d}.urdf") for d in (0, 1)}


run = run_fbc


@pytest.mark.parametrize("command", ["gait", "ccf", "integrability"])
def test_help(command, capsys):
    code, out, _ = run([command, "--help"], capsys)
    assert code == 0 and "--out" in out and "--urdf" in out


def test_gait_writes_the_sec_vb_comparison(tmp_path, capsys):
    code, out, err = run(["gait", "--samples", "24", "--out", str(tmp_path)], capsys)
    assert code == 0, err
    report = json.loads((tmp_path / "gait.json").read_text())
    assert (tmp_path / "gait.png").stat().st_size > 10_000
    assert report["paper_sec_vb"]["exact_xyz_deg"] == [-0.4228, 0.1682, -13.73]
    assert report["orientation_error_deg"] == pytest.approx(0.189, abs=1e-3)    # 24 samples per circle
    assert report["exact"]["xyz_deg"][2] == pytest.approx(-11.750, abs=1e-3)
    assert "paper" in out


def test_gait_with_a_locked_velocity(tmp_path, capsys):
    """--mu adds the dynamic phase: a slow spin about z turns the base further by about
    mu_z T (0.1 rad/s over 2 s = 11.5 deg, less the geometric phase's interplay)."""
    code, _, err = run(["gait", "--samples", "16", "--mu", "0", "0", "0.1", "0", "0", "0",
                        "--out", str(tmp_path)], capsys)
    assert code == 0, err
    report = json.loads((tmp_path / "gait.json").read_text())
    turn = report["exact_with_mu"]["xyz_deg"][2] - report["exact"]["xyz_deg"][2]
    assert turn == pytest.approx(10.834, abs=1e-3)


def test_ccf_writes_the_map(tmp_path, capsys):
    code, _, err = run(["ccf", "--grid", "4", "--samples", "12", "--out", str(tmp_path)], capsys)
    assert code == 0, err
    report = json.loads((tmp_path / "ccf.json").read_text())
    assert np.array(report["ccf"]).shape == (6, 4, 4)
    assert (tmp_path / "ccf.png").stat().st_size > 10_000
    assert np.abs(report["zeta_from_curvature"][3:]).max() < 1e-12


@pytest.mark.parametrize("d", [0, 1])
def test_integrability_verdict_and_holonomy(tmp_path, capsys, d):
    t = np.linspace(0, 1, 101)
    loop = np.column_stack([1.5 * np.pi * (np.cos(2 * np.pi * t) - 1), np.pi / 2 * np.sin(2 * np.pi * t)])
    loop[-1] = loop[0]
    np.savetxt(tmp_path / "loop.csv", loop, delimiter=",", header="s1,s2", comments="")
    code, out, err = run(["integrability", "--urdf", THREE_BODY[d], "--samples", "20",
                          "--loop", str(tmp_path / "loop.csv"), "--out", str(tmp_path)], capsys)
    assert code == 0, err
    report = json.loads((tmp_path / "integrability.json").read_text())
    assert report["flat"] == (d == 0)
    assert (report["holonomy"]["rotation_angle_deg"] > 10) == (d == 1)
    assert (report["centroidal_frame"]["path_dependence"] < 1e-12) == (d == 0)
    assert (tmp_path / "integrability.png").stat().st_size > 10_000


def _csv(path, header, rows):
    path.write_text(header + "\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n")
    return str(path)


def test_bad_input_is_rejected_with_a_clear_message(tmp_path, capsys):
    urdf = THREE_BODY[1]
    open_path = _csv(tmp_path / "open.csv", "r1,r2", [[0, 0], [1, 0], [1, 1], [0, 1]])
    nan_path = _csv(tmp_path / "nan.csv", "r1,r2", [[0, 0], [1, np.nan], [1, 1], [0, 0]])
    open_loop = _csv(tmp_path / "loop.csv", "s1,s2", [[0, 0], [1, 0], [1, 1]])
    bad_joint = _csv(tmp_path / "joint.csv", "s1,elbow", [[0, 0], [1, 0], [0, 0]])
    cases = [
        (["gait", "--urdf", urdf, "--x", "elbow=1", "--y", "s2=1", "--circle", "0", "0", "1"],
         "unknown joint 'elbow'"),
        (["ccf", "--urdf", urdf, "--x", "s1=1", "--y", "s3=1"], "unknown joint 's3'"),
        (["gait", "--urdf", urdf, "--x", "s1=1", "--y", "s2=1", "--path", open_path], "not closed"),
        (["gait", "--urdf", urdf, "--x", "s1=1", "--y", "s2=1", "--path", nan_path], "non-finite"),
        (["gait", "--circle", "0", "nan", "1"], "not a finite number"),
        (["gait", "--mu", "0", "0", "inf", "0", "0", "0"], "not a finite number"),
        (["ccf", "--x", "lwr_joint_1=1e400", "--y", "lwr_joint_2=1"], "not a finite number"),
        (["gait", "--urdf", urdf, "--x", "s1=1", "--y", "s1=2", "--circle", "0", "0", "1"],
         "linearly independent"),
        (["gait", "--urdf", urdf, "--circle", "0", "0", "1"], "give both --x and --y"),
        (["integrability", "--urdf", urdf, "--loop", open_loop], "not closed"),
        (["integrability", "--urdf", urdf, "--loop", bad_joint], "unknown joint 'elbow'"),
        (["integrability", "--urdf", urdf, "--at", "s1=1", "s1=2"], "given twice"),
        (["ccf", "--range", "1", "0", "0", "1"], "--range must be increasing"),
    ]
    for argv, message in cases:
        code, _, err = run(argv + ["--out", str(tmp_path / "o")], capsys)
        assert code == 2 and message in err, (argv, err)
