"""A user's URDF named in the controller node's parameters: loaded as the API loads it (mimic groups
locked, joints locked from ``locked_joints``/``locked_positions``), or refused with the API's error."""
import time

import numpy as np
import pytest

ros_harness = pytest.importorskip("helpers.ros_harness")

from floating_base_control import FloatingBaseModel, ModelError  # noqa: E402
from floating_base_control.resources import example_robot_data_urdfs  # noqa: E402

PANDA = example_robot_data_urdfs()["panda_description/urdf/panda.urdf"]
LOCKED = {"panda_joint7": 0.5}
MODEL = FloatingBaseModel.from_urdf(PANDA, locked=LOCKED)


def test_controller_node_loads_the_user_urdf_with_locked_joints():
    joints = list(MODEL.joint_names)
    assert joints == [f"panda_joint{i}" for i in range(1, 7)]
    domain = ros_harness.domain_for(__name__)
    # joint 1's gains stable at 200 Hz where the set-points put the arm (the node refuses gains unstable at its
    # shape: with joint 2 at 0 joints 1 and 3 are aligned, and their relative motion has little inertia)
    params = {"urdf": PANDA, "locked_joints": "[panda_joint7]", "locked_positions": "[0.5]",
              "control_rate_hz": 200.0, "hold_on_activate": False, "stiffness.panda_joint1": 10.0,
              "damping.panda_joint1": 0.5, "setpoint.panda_joint1": 0.1, "setpoint.panda_joint2": -0.5,
              "setpoint.panda_joint4": -1.5}
    proc = ros_harness.start_node("orbital_controller", domain, params)
    client = ros_harness.Client(domain, joints)
    try:
        end, cmd = time.monotonic() + 30.0, None
        while time.monotonic() < end and not (cmd is not None and abs(cmd[0] - 10.0 * 0.1) < 0.5):
            client.stream(0.1, np.zeros(6), np.zeros(6))          # K (q_d - q) on joint 1, once controlling
            cmd = client.last_command()
        assert cmd is not None and len(cmd) == 6 and abs(cmd[0] - 10.0 * 0.1) < 0.5, f"last command {cmd}"
    finally:
        client.close()
        output = ros_harness.stop(proc)
    assert "Traceback" not in output, output


def test_controller_node_refuses_as_the_api_does():
    with pytest.raises(ModelError) as api:
        FloatingBaseModel.from_urdf(PANDA, mimic="error")
    proc = ros_harness.start_node("orbital_controller", ros_harness.domain_for(__name__ + "2"),
                                  {"urdf": PANDA, "mimic": "error"})
    output = ros_harness.output(proc, timeout=60)
    assert proc.returncode != 0 and str(api.value) in output
