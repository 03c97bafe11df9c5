"""``fbc plan reorient``: the files a user gets, checked against an independent eq. 9."""
import csv
import json
import math

import numpy as np
import pytest

from helpers.reconstruction_oracle import reconstruct
from floating_base_control import FloatingBaseModel
from floating_base_control.planning.rotations import rotation_angle, rotation_from_axis_angle
from floating_base_control.resources import share_file
from helpers import run_fbc

LWR = share_file("urdf/lwr4_free_floating.urdf")
#: plan.json's keys that issue 27 lists
KEYS = {"times", "positions", "joint_names", "predicted_rotation", "cycles", "duration_s", "planning_time_s"}


run = run_fbc


@pytest.mark.slow
def test_plan_reorient_writes_a_plan_whose_joint_samples_turn_the_base_to_the_target(tmp_path, capsys):
    """90 deg about z for the LWR of [Mishra2023] Sec. V-B from q = 0: the joint samples of plan.json, integrated
    by the tests' numpy eq. 9 (the polyline through the 10 ms samples: its chords cost 0.003 deg), turn the base
    to the predicted rotation, which is the target; the trajectory starts and ends at q0, within the limits."""
    code, out, err = run(["plan", "reorient", "--urdf", LWR, "--axis", "0", "0", "1", "--angle-deg", "90",
                          "--out", str(tmp_path)], capsys)
    assert code == 0, err
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert KEYS <= set(plan)
    model = FloatingBaseModel.from_urdf(LWR)
    q, t = np.array(plan["positions"]), np.array(plan["times"])
    assert plan["joint_names"] == list(model.joint_names) and q.shape == (len(t), model.n)
    assert np.abs(q[0]).max() < 1e-12 and np.abs(q[-1]).max() < 1e-9 and t[-1] == pytest.approx(plan["duration_s"])
    R_target, R_predicted = rotation_from_axis_angle([0, 0, 1], math.radians(90)), np.array(plan["predicted_rotation"])
    assert math.degrees(rotation_angle(R_target.T @ R_predicted)) < 1e-5
    R_oracle = reconstruct(model, q)[-1, :3, :3]
    assert math.degrees(rotation_angle(R_predicted.T @ R_oracle)) < 0.01
    lower, upper = model.position_limits.T
    assert np.all(q >= lower + 0.05 - 1e-9) and np.all(q <= upper - 0.05 + 1e-9)
    assert np.all(np.abs(plan["velocities"]) <= model.velocity_limits * (1 + 1e-9))
    with open(tmp_path / "plan.csv", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert len(rows) == len(t) + 1 and rows[0][0] == "t" and len(rows[0]) == 1 + 2 * model.n + 3
    assert (tmp_path / "plan.png").stat().st_size > 0
    assert f"{plan['cycles']} cycles" in out


def test_plan_reorient_refuses_a_q0_of_the_wrong_length(tmp_path, capsys):
    code, _, err = run(["plan", "reorient", "--urdf", LWR, "--q0", "0", "0", "--out", str(tmp_path)], capsys)
    assert code == 2 and "--q0 has 2 values, the model has 7 joints" in err
