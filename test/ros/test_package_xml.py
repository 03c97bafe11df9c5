"""package.xml declares what the nodes import: `rosdep install` must give a robot everything the
four executables load.  Each node is built in a fresh interpreter; of the modules then loaded, those
the package's sources import (not rclpy's own internals) must be exec_depends."""
import ast
import functools
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers.fresh_imports import modules_loaded

from floating_base_control.ros.runtime import local_env

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "floating_base_control"
NODES = {"orbital_controller": "ControllerNode", "orbital_sim": "SimNode",
         "hopper_controller": "HopperControllerNode", "hopper_sim": "HopperSimNode"}

#: Python module -> rosdep key, where they differ (message and ROS packages are named alike).
ROSDEP_KEYS = {"numpy": "python3-numpy", "scipy": "python3-scipy", "transforms3d": "python3-transforms3d",
               "matplotlib": "python3-matplotlib", "mujoco": "python3-mujoco", "yaml": "python3-yaml",
               "pinocchio": "pinocchio", "numba": "python3-numba"}


@functools.cache
def package_imports():
    """Top-level names of every module the package's sources import (outside the package)."""
    names = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names.add(node.module.split(".")[0])
    return names - {"floating_base_control"} - set(sys.stdlib_module_names)


@functools.cache
def loaded_by_nodes():
    """``{node: modules loaded once it is built}`` (autostart: configured, active), each node built in a fresh
    interpreter (``import sys, rclpy`` and the package's ``__init__`` first, run once and forked,
    helpers.fresh_imports)."""
    cases = {node: (f"from floating_base_control.ros.{node} import {cls} as N; rclpy.init(); n = N()",
                    "n.destroy_node(); rclpy.shutdown()") for node, cls in NODES.items()}
    return modules_loaded("import sys, rclpy, floating_base_control", cases, timeout=120 * len(cases),
                          env=local_env(231))      # away from the test modules' 100-199


def external_imports(node):
    """What the package imports that is loaded once ``node`` is built."""
    modules = loaded_by_nodes()[node]
    assert isinstance(modules, set), modules             # else the traceback of the node's start
    return {m.split(".")[0] for m in modules} & package_imports()


def exec_depends():
    root = ET.parse(ROOT / "package.xml").getroot()
    return {e.text for tag in ("exec_depend", "depend") for e in root.iter(tag)}


@pytest.mark.parametrize("node", list(NODES))
def test_every_module_a_node_imports_is_an_exec_depend(node):
    declared = exec_depends()
    missing = {name: ROSDEP_KEYS.get(name, name) for name in external_imports(node)
               if ROSDEP_KEYS.get(name, name) not in declared}
    assert not missing, f"{node} imports {sorted(missing)}; package.xml lacks {sorted(missing.values())}"


def test_the_import_scan_sees_the_dependencies_it_must():
    assert {"rclpy", "numpy", "pinocchio"} <= external_imports("orbital_controller")
    assert "mujoco" in external_imports("orbital_sim") and "mujoco" not in external_imports("hopper_controller")
