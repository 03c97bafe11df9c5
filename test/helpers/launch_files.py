"""What a launch file starts a node with, read from its source (the ROS 2 launch packages are not on PyPI).

:func:`node_launch` resolves the ``Node(...)`` of an executable with every launch argument at its default:
parameter files (``PathJoinSubstitution([FindPackageShare(...), "config", name])`` is this repository's
``config/name``), parameter overrides (a substitution's text is read as YAML, as launch_ros does) and
remappings.  Only the forms the package's launch files use are understood; anything else fails loudly.
"""
import ast
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SUBSTITUTIONS = {"arg", "LaunchConfiguration"}


class NodeLaunch:
    """``params_files`` (paths), ``overrides`` ({name: value}, applied after the files, in order) and
    ``remappings`` ({from: to}) of one node."""

    def __init__(self, params_files, overrides, remappings):
        self.params_files, self.overrides, self.remappings = params_files, overrides, remappings

    def parameters(self, node_name):
        """``{dotted name: value}`` the node starts with (its sections of the files, then the overrides)."""
        out = {}
        for path in self.params_files:
            sections = yaml.safe_load(path.read_text())
            out.update(_flatten(sections.get(f"/**/{node_name}", {}).get("ros__parameters", {})))
        return {**out, **self.overrides}


def node_launch(path, executable):
    tree = ast.parse(Path(path).read_text())
    variables = {t.id: node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
                 for t in node.targets if isinstance(t, ast.Name)}
    defaults = {}
    for call in _calls(tree, "DeclareLaunchArgument"):
        kw = {k.arg: k.value for k in call.keywords}
        defaults[call.args[0].value] = _value(kw["default_value"], {}, variables)
    nodes = [c for c in _calls(tree, "Node")
             if any(k.arg == "executable" and k.value.value == executable for k in c.keywords)]
    assert len(nodes) == 1, f"{path}: {len(nodes)} nodes run {executable}"
    kw = {k.arg: k.value for k in nodes[0].keywords}
    files, overrides = [], {}
    for entry in kw["parameters"].elts:
        if isinstance(entry, ast.Dict):
            overrides.update({k.value: _parameter(_value(v, defaults, variables)) for k, v in zip(entry.keys,
                                                                                                   entry.values)})
        else:
            files.append(Path(_value(entry, defaults, variables)))
    remappings = {_value(e.elts[0], defaults, variables): _value(e.elts[1], defaults, variables)
                  for e in getattr(kw.get("remappings"), "elts", [])}
    return NodeLaunch(files, overrides, remappings)


def _calls(tree, name):
    return [c for c in ast.walk(tree) if isinstance(c, ast.Call) and getattr(c.func, "id", None) == name]


def _value(expr, defaults, variables):
    """A constant, a launch argument at its default, or a file of this repository."""
    if isinstance(expr, ast.Name):
        return _value(variables[expr.id], defaults, variables)
    if isinstance(expr, ast.Constant):
        return expr.value
    if isinstance(expr, ast.Call) and getattr(expr.func, "id", None) in SUBSTITUTIONS:
        return defaults[expr.args[0].value]
    if isinstance(expr, ast.Call) and getattr(expr.func, "id", None) == "PathJoinSubstitution":
        parts = expr.args[0].elts
        share = variables.get(parts[0].id) if isinstance(parts[0], ast.Name) else parts[0]
        assert getattr(share.func, "id", None) == "FindPackageShare", ast.dump(expr)
        return str(ROOT.joinpath(*(p.value for p in parts[1:])))
    raise AssertionError(f"launch expression not understood: {ast.dump(expr)}")


def _parameter(value):
    """A parameter's value: a substitution's text (a launch argument) is read as YAML, as launch_ros does."""
    return yaml.safe_load(value) if isinstance(value, str) else value


def _flatten(d, prefix=""):
    out = {}
    for k, v in d.items():
        out.update(_flatten(v, f"{prefix}{k}.") if isinstance(v, dict) else {f"{prefix}{k}": v})
    return out
