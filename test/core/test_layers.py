"""The layers stay apart: the core imports without ROS, controller-side code loads neither the
simulator nor plotting, and the nodes hold no math."""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "floating_base_control"
CONTROLLER_NODES = ["orbital_controller", "hopper_controller", "controller_base"]


def loaded(module, candidates):
    """Which of ``candidates`` are in ``sys.modules`` after importing ``module`` in a fresh interpreter."""
    code = f"import sys, {module}; print(' '.join(m for m in {candidates!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return result.stdout.split()


@pytest.mark.parametrize("node", CONTROLLER_NODES)
def test_controller_nodes_load_neither_the_simulator_nor_plotting(node):
    pytest.importorskip("rclpy")
    assert loaded(f"floating_base_control.ros.{node}", ["mujoco", "matplotlib"]) == []


@pytest.mark.parametrize("module", ["robots.orbital.controller", "robots.hopper.controller", "estimation.observer",
                                    "control.shape", "control.watchdog", "dynamics.rel_fast", "model"])
def test_the_core_of_the_controllers_loads_neither_ros_nor_the_simulator(module):
    assert loaded(f"floating_base_control.{module}", ["rclpy", "mujoco", "matplotlib"]) == []


def test_no_node_computes_with_model_matrices():
    """Every quantity a node publishes comes from a core function: no matrix products in ros/."""
    offenders = []
    for path in sorted((PACKAGE / "ros").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, ast.MatMult):
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []
