"""The orbital controller node as the ROS tests drive it: the demo robot's joints, parameters, an input
shape away from the set-point, and the predicates and lifecycle calls of a robot stack."""
import time

import numpy as np
from lifecycle_msgs.srv import ChangeState
from lifecycle_msgs.msg import Transition

from floating_base_control.experiments.orbital.scenario import OrbitalScenario
from helpers import ros_harness

JOINTS = [f"panda_joint{i}" for i in range(1, 8)]
S = OrbitalScenario()
Q_D = np.array(S.q_d)
PARAMS = {"control_rate_hz": 200.0, "hold_on_activate": False, "compensation": "tau2",
          "watchdog.max_joint_state_age": 0.2, "watchdog.max_base_pose_age": 0.5,
          "watchdog.safe_mode": "damping", "watchdog.safe_damping": 2.0,
          **{f"setpoint.{j}": float(v) for j, v in zip(JOINTS, S.q_d)},
          **{f"stiffness.{j}": float(v) for j, v in zip(JOINTS, S.stiffness)},
          **{f"damping.{j}": float(v) for j, v in zip(JOINTS, S.damping)}, "damping.panda_joint7": 1.0}
Q = Q_D - np.r_[0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]      # joint 1 is 0.1 rad short of its set-point
QDOT = np.r_[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5]         # joint 7 moving


def controlling(client, since):
    cmd = client.last_command(since)
    return cmd is not None and abs(cmd[0] - S.stiffness[0] * 0.1) < 0.5      # K * dq on joint 1


def stream_until(client, predicate, q=Q, qdot=QDOT, timeout=30.0, **kwargs):
    """Stream inputs (good ones by default) until ``predicate()`` holds; the first call also
    waits for the node process to start."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        client.stream(0.1, q, qdot, **kwargs)
        if predicate():
            return True
    return False


def lifecycle(client, transition_id, node="/floating_base_controller"):
    """A lifecycle transition as `ros2 lifecycle set` asks for it, while the robot stack goes on
    publishing (a service call that takes longer than the joint-state timeout must not turn the
    last control commands into safe commands)."""
    service = client.node.create_client(ChangeState, f"{node}/change_state")
    assert service.wait_for_service(timeout_sec=ros_harness.TIMEOUT), f"no lifecycle service on {node}"
    future = service.call_async(ChangeState.Request(transition=Transition(id=transition_id)))
    end = time.monotonic() + ros_harness.TIMEOUT
    while not future.done() and time.monotonic() < end:
        client.stream(0.01, Q, QDOT, pose_every=5)
    return future.done() and future.result().success
