"""config/*.yaml and launch/*.launch.py against the nodes' declared parameters and executables.

The ``ros2 launch`` tool and the launch packages are not installable on plain
Python machines; the launch files are checked statically here (executables,
parameter files, parameter names, remappings) and built for real when the
launch packages are present.
"""
import ast
import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from helpers import node_sections
from helpers.launch_files import node_launch

from floating_base_control import FloatingBaseModel
from floating_base_control.ros.params import controller_params, hopper_controller_params, hopper_sim_params, sim_params
from floating_base_control.resources import orbital_robot_urdf
from floating_base_control.experiments.orbital.scenario import OrbitalScenario

ROOT = Path(__file__).resolve().parents[2]
LAUNCH_FILES = sorted((ROOT / "launch").glob("*.launch.py"))


def flatten(d, prefix=""):
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


@pytest.fixture(scope="module")
def specs():
    m = FloatingBaseModel.from_urdf(orbital_robot_urdf())
    return {"floating_base_controller": {s.name: s for s in controller_params(m.joint_names, m.position_limits,
                                                                              m.effort_limits)},
            "mujoco_sim": {s.name: s for s in sim_params()},
            "hopper_controller": {s.name: s for s in hopper_controller_params()},
            "hopper_sim": {s.name: s for s in hopper_sim_params()}}


@pytest.fixture(scope="module")
def config():
    return node_sections(ROOT / "config" / "orbital_robot.yaml")


@pytest.mark.parametrize("name", ["orbital_robot.yaml", "orbital_hardware.yaml", "hopper.yaml"])
def test_every_configured_parameter_is_declared_with_its_type(name, specs):
    for node, section in node_sections(ROOT / "config" / name).items():
        for name, value in flatten(section).items():
            if name == "use_sim_time":                      # declared by rclpy itself
                assert isinstance(value, bool)
                continue
            spec = specs[node].get(name)
            assert spec is not None, f"{node}: {name} is not a parameter of the node"
            assert type(value) is type(spec.default), f"{node}: {name} = {value!r} but declared as {spec.default!r}"
            if spec.range is not None:
                assert spec.range[0] <= value <= spec.range[1], f"{node}: {name} = {value} out of {spec.range}"
            if spec.choices:
                assert value in spec.choices


def test_config_reproduces_the_default_scenario(config):
    s = OrbitalScenario()
    ctl = flatten(config["floating_base_controller"])
    sim = flatten(config["mujoco_sim"])
    joints = ctl["joints"]
    assert [ctl[f"setpoint.{j}"] for j in joints] == list(s.q_d)
    assert [ctl[f"stiffness.{j}"] for j in joints] == list(s.stiffness)
    assert [ctl[f"damping.{j}"] for j in joints] == list(s.damping)
    assert (ctl["observer.k"], ctl["observer.l_rot"], ctl["observer.l_trans"]) == (s.observer.k, s.observer.l_rot,
                                                                                   s.observer.l_trans)
    assert ctl["compensation"] == s.compensation and ctl["control_rate_hz"] == s.control_rate_hz
    assert sim["physics_rate_hz"] == s.control_rate_hz * s.sim_substeps
    for name in ("pose_rate_hz", "pose_rotation_noise", "pose_position_noise", "pose_latency_s", "q_noise",
                 "qdot_noise", "seed"):
        assert sim[name] == getattr(s, name), name
    assert sim["q0"] == list(s.q0) and sim["mu0_omega_deg_s"] == list(s.mu0_omega_deg_s)


def test_the_hardware_launch_holds_the_arm_and_the_simulation_launches_keep_the_demo():
    """orbital_hardware.launch.py (its arguments at their defaults) gives no set-point or task and holds on
    activation; orbital_sim.launch.py runs the demo: its set-points, not held."""
    hardware = node_launch(ROOT / "launch" / "orbital_hardware.launch.py", "floating_base_controller")
    params = hardware.parameters("floating_base_controller")
    assert params["hold_on_activate"] is True and hardware.overrides["hold_on_activate"] is True
    assert not [name for name in params if name.startswith(("setpoint.", "task"))], params
    demo = node_launch(ROOT / "launch" / "orbital_sim.launch.py", "floating_base_controller")
    params = demo.parameters("floating_base_controller")
    assert params["hold_on_activate"] is False
    assert [params[f"setpoint.{j}"] for j in params["joints"]] == list(OrbitalScenario().q_d)


#: The modules whose publishers and subscriptions each node has.
NODE_MODULES = {"floating_base_controller": ["orbital_controller", "controller_base", "motion_commands"],
                "mujoco_sim": ["orbital_sim"], "hopper_controller": ["hopper_controller", "controller_base"],
                "hopper_sim": ["hopper_sim"]}
#: What rclpy adds to every node (rosout, parameter events, /clock for use_sim_time, lifecycle transitions).
RCLPY_TOPICS = {"publish": {"rosout", "/parameter_events", "~/transition_event"},
                "subscribe": {"/parameter_events", "/clock"}}


def code_topics(node, specs):
    """``{"publish": names, "subscribe": names}`` of the node's code: literal names and ``*_topic`` parameters
    (at their defaults) of its ``create_*publisher`` and ``create_subscription`` calls."""
    out = {"publish": set(), "subscribe": set()}
    for module in NODE_MODULES[node]:
        tree = ast.parse((ROOT / "floating_base_control" / "ros" / f"{module}.py").read_text())
        for call in ast.walk(tree):
            method = getattr(call.func, "attr", "") if isinstance(call, ast.Call) else ""
            if method in ("create_publisher", "create_lifecycle_publisher", "create_subscription"):
                name = call.args[1]
                name = name.value if isinstance(name, ast.Constant) else specs[node][name.args[0].value].default
                out["subscribe" if method == "create_subscription" else "publish"].add(name)
    return out


def test_the_sros2_policy_allows_each_node_exactly_the_topics_its_code_uses(specs):
    """config/sros2_policy.xml (docs/reference/ros.md; untested with DDS-Security here) against the nodes' code."""
    import xml.etree.ElementTree as ET
    enclaves = ET.parse(ROOT / "config" / "sros2_policy.xml").getroot().find("enclaves")
    assert sorted(e.get("path") for e in enclaves) == sorted(f"/floating_base_control/{n}" for n in NODE_MODULES)
    for enclave in enclaves:
        profile = enclave.find("profiles/profile")
        node = profile.get("node")
        allowed = {kind: {t.text for topics in profile.findall("topics") if topics.get(kind) == "ALLOW"
                          for t in topics} for kind in ("publish", "subscribe")}
        used = code_topics(node, specs)
        for kind in used:
            assert used[kind] <= allowed[kind], (node, kind, used[kind] - allowed[kind])
            assert allowed[kind] - used[kind] <= RCLPY_TOPICS[kind], (node, kind, allowed[kind] - used[kind])


def launch_nodes(path):
    """``(package, executable, parameter dicts, remappings)`` of every ``Node(...)`` in a launch file."""
    tree = ast.parse(path.read_text())
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "Node":
            kw = {k.arg: k.value for k in call.keywords}
            package = kw["package"].value if isinstance(kw["package"], ast.Constant) else "floating_base_control"
            params = [ast.literal_eval(d) if isinstance(d, ast.Dict) and all(isinstance(v, ast.Constant)
                                                                             for v in d.values)
                      else {k.value: None for k in d.keys}
                      for d in getattr(kw.get("parameters"), "elts", []) if isinstance(d, ast.Dict)]
            remaps = [ast.literal_eval(e.elts[0]) for e in getattr(kw.get("remappings"), "elts", [])]
            yield package, kw["executable"].value, params, remaps


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file_executables_parameters_and_files_exist(path, specs):
    scripts = re.findall(r'"(\w+) = floating_base_control', (ROOT / "setup.py").read_text())
    ours = [n for n in launch_nodes(path) if n[0] == "floating_base_control"]
    assert ours, "launches none of the package's nodes"
    for _, executable, params, remaps in ours:
        assert executable in scripts, f"{executable} is not a console script"
        node = executable
        for d in params:
            for name in d:
                assert name == "use_sim_time" or name in specs[node], f"{path.name}: {name} not declared by {node}"
        topics = {spec.default for name, spec in specs[node].items() if name.endswith("_topic")}
        for source in remaps:
            assert source in topics, f"{path.name}: remaps {source}, which {node} does not use"
    for relative in re.findall(r'"(config|urdf|worlds)", "([\w.]+)"', path.read_text()):
        assert (ROOT / relative[0] / relative[1]).exists(), f"{path.name} refers to missing {relative}"


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file_builds_a_launch_description(path):
    if importlib.util.find_spec("launch_ros") is None:     # ("launch" alone would find this repo's folder)
        pytest.skip("the ROS 2 launch packages are not installed here (they are not on PyPI)")
    spec = importlib.util.spec_from_file_location(path.stem.replace(".", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.generate_launch_description().entities


def test_gazebo_pieces_are_consistent():
    urdf = (ROOT / "urdf" / "orbital_robot.urdf").read_text()
    controllers = yaml.safe_load((ROOT / "config" / "gz_controllers.yaml").read_text())
    joints = controllers["effort_controller"]["ros__parameters"]["joints"]
    assert controllers["effort_controller"]["ros__parameters"]["interface_name"] == "effort"
    block = urdf[urdf.index("<ros2_control"):urdf.index("</ros2_control>")]
    assert re.findall(r'<joint name="(\w+)">', block) == joints
    assert "gz_ros2_control/GazeboSimSystem" in block and "@CONTROLLERS_YAML@" in urdf
    world = (ROOT / "worlds" / "zero_gravity.sdf").read_text()
    assert np.allclose([float(x) for x in re.search(r"<gravity>(.*)</gravity>", world).group(1).split()], 0)


def launch_arguments(path):
    """``{name: description or None}`` of every ``DeclareLaunchArgument`` in a launch file."""
    out = {}
    for call in ast.walk(ast.parse(path.read_text())):
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "DeclareLaunchArgument":
            kw = {k.arg: k.value for k in call.keywords}
            description = kw.get("description")
            out[call.args[0].value] = "".join(
                c.value for c in ast.walk(description) if isinstance(c, ast.Constant)) if description else None
    return out


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_every_launch_argument_has_a_description(path):
    arguments = launch_arguments(path)
    assert arguments and all(arguments.values()), {k: v for k, v in arguments.items() if not v}


def test_gazebo_starts_the_arm_at_mujocos_q0_and_can_run_headless(config):
    urdf = (ROOT / "urdf" / "orbital_robot.urdf").read_text()
    block = urdf[urdf.index("<ros2_control"):urdf.index("</ros2_control>")]
    initial = dict(re.findall(r'<joint name="(\w+)">.*?<param name="initial_value">([-\d.e]+)</param>', block, re.S))
    sim = config["mujoco_sim"]
    assert [float(initial[j]) for j in sim["joints"]] == sim["q0"]
    lo, hi = FloatingBaseModel.from_urdf(orbital_robot_urdf()).position_limits.T
    assert np.all((lo < sim["q0"]) & (np.array(sim["q0"]) < hi))            # panda_joint4: [-3.07, -0.07]
    gazebo = (ROOT / "launch" / "orbital_gazebo.launch.py").read_text()
    assert "headless" in launch_arguments(ROOT / "launch" / "orbital_gazebo.launch.py")
    assert re.search(r"'-s ' if '\", LaunchConfiguration\(\"headless\"\)", gazebo)    # gz sim -s: server only


def test_sim_time_in_the_orbital_simulation_comes_from_mujoco_sim():
    nodes = {executable: params for _, executable, params, _ in launch_nodes(ROOT / "launch" / "orbital_sim.launch.py")}
    assert any("publish_clock" in d for d in nodes["mujoco_sim"])              # the clock source
    assert not any("use_sim_time" in d for d in nodes["mujoco_sim"])           # ... does not wait for itself
    assert any("use_sim_time" in d for d in nodes["floating_base_controller"])
