"""How long the controller's 1 kHz loop stops while it checks a command: an end-effector target's reach check and
a gain change's stability check (issue 24), from the controller's per-tick timing log.

``mujoco_sim`` and ``floating_base_controller`` run as two processes with ``config/orbital_robot.yaml`` (its
``realtime_priority``), the robot tumbling slowly (0.1 deg/s); after the loop has settled this client sends,
every ``--every`` s, alternately a gain change (``stiffness.panda_joint1``, two stable values) and, with the task
switched to ``end_effector``, a target ``--target-cm`` (2) cm away from the end effector's pose.  The tick
periods within ``WINDOW_S`` after each command are compared with those of the same run away from any command
(p50 / p99 / max).

    python studies/off_tick_checks.py [--commands 20] [--every 0.5] [--burners 0] [--nodes-from CHECKOUT]
        [--domain 81] [--target-cm 2]

``--nodes-from``: run the nodes of another checkout (its root on their ``PYTHONPATH``), e.g. the code before.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import rclpy
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from rclpy.parameter import Parameter
from rclpy.parameter_client import AsyncParameterClient
from sensor_msgs.msg import JointState

from floating_base_control.control.end_effector import FrameWorkspace, frame_id
from floating_base_control.experiments.orbital.tasks import ee_pose
from floating_base_control.model import FloatingBaseModel
from floating_base_control.processes import die_with_parent
from floating_base_control.resources import orbital_robot_urdf, share_file
from floating_base_control.ros import messages as m
from floating_base_control.ros.loop_comparison import cpu_burners
from floating_base_control.ros.runtime import local_env, node_command

WINDOW_S = 0.1


def run(commands, every, burners, nodes_from=None, domain=81, target_cm=2.0):
    os.environ.update(local_env(domain))
    env = local_env(domain) if nodes_from is None else dict(local_env(domain), PYTHONPATH=nodes_from)
    config = share_file("config/orbital_robot.yaml")
    with tempfile.TemporaryDirectory() as tmp, cpu_burners(burners):
        log = os.path.join(tmp, "timing.csv")
        procs = [subprocess.Popen(node_command("orbital_sim", config, [("mu0_omega_deg_s", [0.1, 0.0114, 0.0])]),
                                  env=env, preexec_fn=die_with_parent()),
                 subprocess.Popen(node_command("orbital_controller", config, [("timing_log", log),
                                                                               ("hold_on_activate", True)]),
                                  env=env, preexec_fn=die_with_parent())]
        try:
            sent = client(commands, every, target_cm)
        finally:
            for p in procs:
                p.send_signal(2)
            for p in procs:
                p.wait(timeout=30)
        t = np.loadtxt(log, delimiter=",", skiprows=1, ndmin=2)[:, 0]
    return analyse(t, sent)


def client(commands, every, target_cm):
    """Send the commands; ``[(kind, wall time sent)]``."""
    rclpy.init()
    node = rclpy.create_node("off_tick_checks")
    model = FloatingBaseModel.from_urdf(orbital_robot_urdf())
    ws, fid = FrameWorkspace(model), frame_id(model, model.pin_model.frames[model.pin_model.nframes - 1].name)
    truth = {}
    node.create_subscription(JointState, "/mujoco_sim/joints", lambda msg: truth.__setitem__("q", msg), 10)
    node.create_subscription(Odometry, "/mujoco_sim/ground_truth", lambda msg: truth.__setitem__("g1", msg), 10)
    target_pub = node.create_publisher(PoseStamped, "/floating_base_controller/target_pose", 10)
    params = AsyncParameterClient(node, "/floating_base_controller")
    params.wait_for_services(timeout_sec=60.0)

    def spin(seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.01)

    def set_parameter(name, value):
        future = params.set_parameters([Parameter(name, value=value)])
        rclpy.spin_until_future_complete(node, future, timeout_sec=30.0)
        return future.result().results[0]
    while "q" not in truth or "g1" not in truth:
        spin(0.1)
    spin(3.0)                                           # the loop settles
    assert set_parameter("task", "end_effector").successful
    spin(2.0)
    sent = []
    for i in range(commands):
        now = time.time()
        if i % 2:
            q = np.array(truth["q"].position)
            target = ee_pose(ws, fid, m.g_from_pose_msg(truth["g1"].pose.pose), q)
            target[:3, 3] += [0.0, 0.01 * target_cm * (-1) ** (i // 2), 0.0]
            msg = PoseStamped()
            msg.header.frame_id = "world"
            m.fill_pose_msg(msg.pose, target)
            target_pub.publish(msg)
            sent.append(("target", now))
        else:
            result = set_parameter("stiffness.panda_joint1", 20.0 + 10.0 * ((i // 2) % 2))
            sent.append(("gains", now))
            assert result.successful, result.reason
        spin(every - (time.time() - now))
    node.destroy_node()
    rclpy.shutdown()
    return sent


def analyse(t, sent):
    """Tick periods (ms) within WINDOW_S after each kind of command, and away from all of them; and the median
    over the commands of the longest period in each one's window (away from them: over windows between
    commands)."""
    periods, ends = 1e3 * np.diff(t), t[1:]
    windows = {kind: [(ends >= at) & (ends <= at + WINDOW_S) for k, at in sent if k == kind]
               for kind in ("gains", "target")}
    near = {kind: np.any(w, axis=0) for kind, w in windows.items()}
    quiet = ~(near["gains"] | near["target"]) & (ends >= sent[0][1] - 2.0) & (ends <= sent[-1][1] + 1.0)
    gaps = [(at + 2 * WINDOW_S, at + 3 * WINDOW_S) for _, at in sent]
    windows["quiet"] = [(ends >= a) & (ends <= b) & quiet for a, b in gaps]
    out = {"load_1min": os.getloadavg()[0]}
    for name, mask, kind in (("after a gain change", near["gains"], "gains"),
                             ("after a target", near["target"], "target"), ("away from commands", quiet, "quiet")):
        p = periods[mask]
        longest = [periods[w].max() for w in windows[kind] if w.any()]
        out[name] = {"ticks": int(p.size), "period_p50_ms": float(np.percentile(p, 50)),
                     "period_p99_ms": float(np.percentile(p, 99)), "period_max_ms": float(p.max()),
                     "longest_period_per_window_median_ms": float(np.median(longest))}
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commands", type=int, default=20)
    parser.add_argument("--every", type=float, default=0.5)
    parser.add_argument("--burners", type=int, default=0)
    parser.add_argument("--nodes-from")
    parser.add_argument("--domain", type=int, default=81)
    parser.add_argument("--target-cm", type=float, default=2.0)
    args = parser.parse_args()
    json.dump(run(args.commands, args.every, args.burners, args.nodes_from, args.domain, args.target_cm), sys.stdout,
              indent=2)
    print()
