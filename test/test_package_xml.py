"""package.xml declares what the nodes import: `rosdep install` must give a robot everything the
four executables need.  The imports are read from the source (every module a node reaches inside the
package, lazy imports included), so the check needs neither ROS nor the dependencies installed."""
import ast
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "floating_base_control"
NODES = ["orbital_controller", "orbital_sim", "hopper_controller", "hopper_sim"]

#: Python module -> rosdep key, where they differ (message and ROS packages are named alike).
ROSDEP_KEYS = {"numpy": "python3-numpy", "scipy": "python3-scipy", "transforms3d": "python3-transforms3d",
               "matplotlib": "python3-matplotlib", "mujoco": "python3-mujoco", "yaml": "python3-yaml",
               "pinocchio": "pinocchio"}


def module_file(dotted):
    """The file of ``floating_base_control.<...>`` (a module or a package), or ``None``."""
    path = ROOT.joinpath(*dotted.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


def dotted_name(path):
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path.name == "__init__.py"


def imports(path):
    """``(modules of the package, external top-level names)`` that ``path`` imports."""
    name, is_package = dotted_name(path)
    here = name.split(".") if is_package else name.split(".")[:-1]
    inside, outside = set(), set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(here[:len(here) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else node.module
            targets = [(base, [a.name for a in node.names])]
        else:
            continue
        for module, names in targets:
            if module.split(".")[0] != "floating_base_control":
                outside.add(module.split(".")[0])
                continue
            inside.add(module)
            inside.update(f"{module}.{n}" for n in names if module_file(f"{module}.{n}"))
    return {f for f in map(module_file, inside) if f}, outside


def external_imports(node):
    todo, seen, outside = [PACKAGE / "nodes" / f"{node}.py"], set(), set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        inside, names = imports(path)
        todo += inside
        outside |= names
    return outside - set(sys.stdlib_module_names)


def exec_depends():
    root = ET.parse(ROOT / "package.xml").getroot()
    return {e.text for tag in ("exec_depend", "depend") for e in root.iter(tag)}


@pytest.mark.parametrize("node", NODES)
def test_every_module_a_node_imports_is_an_exec_depend(node):
    declared = exec_depends()
    missing = {name: ROSDEP_KEYS.get(name, name) for name in external_imports(node)
               if ROSDEP_KEYS.get(name, name) not in declared}
    assert not missing, f"{node} imports {sorted(missing)}; package.xml lacks {sorted(missing.values())}"


def test_the_import_scan_sees_the_dependencies_it_must():
    assert {"rclpy", "numpy", "pinocchio"} <= external_imports("orbital_controller")
    assert "mujoco" in external_imports("orbital_sim") and "mujoco" not in external_imports("hopper_controller")
