"""The layers stay apart: the core imports without ROS, controller-side code loads neither the
simulator nor plotting, and the nodes hold no math."""
import ast
import functools
from pathlib import Path

import pytest
from helpers.fresh_imports import modules_loaded

PACKAGE = Path(__file__).resolve().parents[2] / "floating_base_control"
CONTROLLER_NODES = ["orbital_controller", "hopper_controller", "controller_base"]
CORE = ["robots.orbital.controller", "robots.hopper.controller", "estimation.observer", "control.shape",
        "control.watchdog", "dynamics.rel_fast", "model"]


@functools.cache
def fresh_imports():
    """``{module: what importing it loads}``, each imported in a fresh interpreter (``import sys,
    <module>``: the package's ``__init__`` first, run once and forked, helpers.fresh_imports)."""
    modules = [f"floating_base_control.ros.{node}" for node in CONTROLLER_NODES]
    modules += [f"floating_base_control.{module}" for module in CORE]
    return modules_loaded("import sys, floating_base_control", {m: f"import {m}" for m in modules})


def loaded(module, candidates):
    """Which of ``candidates`` are in ``sys.modules`` after importing ``module`` in a fresh interpreter."""
    modules = fresh_imports()[module]
    assert isinstance(modules, set), modules             # else the traceback of the import
    return [m for m in candidates if m in modules]


@pytest.mark.parametrize("node", CONTROLLER_NODES)
def test_controller_nodes_load_neither_the_simulator_nor_plotting(node):
    pytest.importorskip("rclpy")
    assert loaded(f"floating_base_control.ros.{node}", ["mujoco", "matplotlib"]) == []


@pytest.mark.parametrize("module", CORE)
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


@functools.cache
def import_graph():
    """``{module: the package's modules it imports}`` over every import statement, deferred ones included
    (read, not changed, by the tests)."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {}
    for name, path in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE.name):
                targets |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                            for a in node.names}
            elif isinstance(node, ast.Import):
                targets |= {a.name for a in node.names if a.name.startswith(PACKAGE.name)}
        graph[name] = targets & modules.keys() - {name}
    return graph


def test_the_package_has_no_import_cycle():
    graph, done, path = import_graph(), set(), []

    def visit(module):
        if module in path:
            raise AssertionError("import cycle: " + " -> ".join(path[path.index(module):] + [module]))
        if module not in done:
            path.append(module)
            for target in sorted(graph[module]):
                visit(target)
            path.pop()
            done.add(module)
    for module in sorted(graph):
        visit(module)


#: What each layer may import besides the core's top-level modules, lowest layer first
#: (docs/explanation/architecture.md).
ALLOWED = {
    "core": {"dynamics"},
    "dynamics": {"dynamics"},
    "estimation": {"dynamics", "estimation"},
    "control": {"dynamics", "control"},
    "analysis": {"dynamics", "control", "analysis"},
    "planning": {"dynamics", "control", "analysis", "planning"},
    "robots": {"dynamics", "estimation", "control", "robots"},
    "sim": {"dynamics", "sim", "robots.hopper.model"},
}


def test_each_layer_imports_only_the_layers_below_it_and_the_plants_no_controller():
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    offenders = []
    for module, targets in import_graph().items():
        layer = module.split(".")[1] if module.count(".") and module.split(".")[1] in packages else "core"
        for target in targets:
            inner = target.split(".", 1)[1]
            if layer in ALLOWED and "." in inner and not any(inner == a or inner.startswith(a + ".")
                                                            for a in ALLOWED[layer]):
                offenders.append(f"{module} imports {target}")
    assert offenders == []
