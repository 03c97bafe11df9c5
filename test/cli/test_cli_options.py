"""Every option of every ``fbc`` command does what it says or is refused (issue 26).

The parser is walked for every command's options; each must be in :data:`APPLIED` (a run whose output,
``summary.json``, the written ``scenario.yaml`` or a command's own JSON, shows the option's value) or in
:data:`REFUSED` (a case where it would change nothing, refused in one line naming it), and the demos' option
tables (``cli/demo_orbital.py``, ``cli/demo_hopper.py``) must list exactly their parsers' options.  Runs
are short (tens of milliseconds simulated); the heavy commands (``sweep``, ``stability``, ``campaign``'s Dask
cluster, ``demo orbital --ros``) run with their engine replaced at the command's boundary, so what is checked
is that the option reaches it.
"""
import argparse
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import yaml

from floating_base_control.cli import build_parser, demo_hopper, demo_orbital
from floating_base_control.model import FloatingBaseModel
from floating_base_control.resources import example_robot_data_urdfs, hopper_urdf, orbital_robot_urdf, share_file
from helpers import run_fbc

PANDA = example_robot_data_urdfs()["panda_description/urdf/panda.urdf"]
THREE_BODY = share_file("urdf/three_body_d1.urdf")


def commands():
    """``{"demo orbital": subparser, ...}``: every command of ``fbc``."""
    found = {}

    def walk(parser, path):
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            found[" ".join(path)] = parser
        for action in subs:
            for name, child in action.choices.items():
                walk(child, path + [name])
    walk(build_parser(), [])
    return found


def options(parser):
    """``{dest: flag}`` of a command's options (``--help`` aside)."""
    return {a.dest: a.option_strings[0] for a in parser._actions
            if a.option_strings and not isinstance(a, argparse._HelpAction)}


def name(argv):
    """The command of ``argv`` as :func:`commands` names it."""
    return " ".join(argv[:2]) if argv[0] in ("demo", "plan") else argv[0]


fbc = run_fbc


def written(out):
    """``(summary.json, scenario.yaml)`` of a demo's output directory."""
    return json.loads((out / "summary.json").read_text()), yaml.safe_load((out / "scenario.yaml").read_text())


def params(out):
    return written(out)[0]["scenario_parameters"]


def urdf_element(path, tag, name):
    return next(e for e in ET.parse(path).getroot().iter(tag) if e.get("name") == name)


# -- runs where options apply: (command, argv with {out} and {tmp}, {dest: check(out, stdout)}) ---------------

def _video_frames(path):
    import imageio.v2 as imageio
    reader = imageio.get_reader(str(path))
    meta, frame = reader.get_meta_data(), reader.get_data(0)
    reader.close()
    return meta, frame


def _files(tmp):
    """The input files of the runs."""
    (tmp / "realistic.yaml").write_text("scenario: realistic\ndispersions: {pose_rate_hz: 20.0}\nduration: 0.05\n")
    (tmp / "via.yaml").write_text("via:\n- {panda_joint1: 0.1}\n- {panda_joint2: -0.2}\n")
    (tmp / "ros_loop.json").write_text(json.dumps({"joint_state_age_max_ms": 3.0, "joint_state_age_p50_ms": 1.0,
                                                   "compute_p99_ms": 0.5, "control_rate_hz": 990.0}))
    (tmp / "hopper.yaml").write_text("duration: 0.02\n")
    shutil.copy(hopper_urdf("revolute"), tmp / "my_hopper.urdf")
    t = np.linspace(0, 1, 21)
    loop = np.column_stack([-0.5 + 0.3 * np.cos(2 * np.pi * t), -2.0 + 0.3 * np.sin(2 * np.pi * t)])
    loop[-1] = loop[0]
    np.savetxt(tmp / "loop.csv", loop, delimiter=",", header="panda_joint2,panda_joint4", comments="")
    path = np.column_stack([0.2 * np.cos(2 * np.pi * t), 0.2 * np.sin(2 * np.pi * t)])
    path[-1] = path[0]
    np.savetxt(tmp / "path.csv", path, delimiter=",", header="r1,r2", comments="")


ORBITAL_IDEAL = (["demo", "orbital", "--scenario", "ideal", "--task", "setpoint", "--duration", "0.05", "--seed", "3",
                  "--compensation", "tau1", "--integral-time", "0.5", "--mass-error", "0.02", "--pose-rate", "50",
                  "--pose-noise", "2", "--latency", "0.01", "--q0", "panda_joint1=-0.1",
                  "--setpoint", "panda_joint2=-0.6", "--stiffness", "panda_joint1=40", "--damping", "panda_joint1=4",
                  "--observer-gains", "2.5", "80", "310", "--tumble", "5", "1", "0", "--tumble-scale", "2",
                  "--loop-delay", "0.002", "--loop-jitter", "0.001", "--loop-drop", "0.01", "--out", "{out}"], {
    "scenario": lambda o, _: params(o)["name"] == "ideal",
    "task": lambda o, _: written(o)[1]["task"] == "setpoint",
    "duration": lambda o, _: params(o)["duration_s"] == 0.05,
    "seed": lambda o, _: params(o)["seed"] == 3,
    "compensation": lambda o, _: params(o)["compensation"] == "tau1",
    "integral_time": lambda o, _: params(o)["integral_time_s"] == 0.5,
    "mass_error": lambda o, _: params(o)["model_mass_error"] == 0.02,
    "pose_rate": lambda o, _: params(o)["pose_rate_hz"] == 50.0,
    "pose_noise": lambda o, _: params(o)["pose_rotation_noise"] == params(o)["pose_position_noise"] == 2e-3,
    "latency": lambda o, _: params(o)["pose_latency_s"] == 0.01,
    "q0": lambda o, _: params(o)["q0"][:2] == [-0.1, -1.0],
    "setpoint": lambda o, _: params(o)["q_d"][:2] == [0.3, -0.6],
    "stiffness": lambda o, _: params(o)["stiffness"][:2] == [40.0, 30.0],
    "damping": lambda o, _: params(o)["damping"][:2] == [4.0, 3.0],
    "observer_gains": lambda o, _: params(o)["observer"] == {"k": 2.5, "l_rot": 80.0, "l_trans": 310.0},
    "tumble": lambda o, _: written(o)[1]["tumble"] == [5.0, 1.0, 0.0],
    "tumble_scale": lambda o, _: params(o)["mu0_omega_deg_s"] == [10.0, 2.0, 0.0],
    "loop_delay": lambda o, _: written(o)[0]["loop_delay_s"] == 0.002,
    "loop_jitter": lambda o, _: params(o)["loop_jitter_s"] == 0.001,
    "loop_drop": lambda o, _: params(o)["loop_drop"] == 0.01,
    "out": lambda o, _: (o / "timeseries.csv").exists() and (o / "errors.png").exists(),
})

ORBITAL_REALISTIC = (["demo", "orbital", "--config", "{tmp}/realistic.yaml", "--controller", "pdi", "--pose-position",
                      "--out", "{out}"], {
    "config": lambda o, _: params(o)["name"] == "realistic" and params(o)["pose_rate_hz"] == 20.0,
    "controller": lambda o, _: (params(o)["compensation"], params(o)["integral_time_s"]) == ("none", 2.0),
    "pose_position": lambda o, _: params(o)["pose_position"] is True and written(o)[0]["unobservable"] == [],
})

ORBITAL_ARM = (["demo", "orbital", "--arm-urdf", PANDA, "--lock", "panda_finger_joint1=0.01",
                "--spacecraft-mass", "200", "--spacecraft-inertia", "40", "50", "45", "0", "0", "0",
                "--spacecraft-com", "0", "0", "0.01", "--mount-xyz", "0.2", "0", "0.5", "--mount-rpy", "0", "0", "0.1",
                "--task", "trajectory", "--config", "{tmp}/via.yaml", "--joint-dynamics", "ideal",
                "--duration", "0.05", "--out", "{out}"], {
    "arm_urdf": lambda o, _: (written(o)[1]["arm_urdf"] == str(Path(PANDA).resolve())
                              and params(o)["urdf"] == str(o / "robot.urdf")),
    "lock": lambda o, _: urdf_element(o / "robot.urdf", "joint", "panda_finger_joint1").get("type") == "fixed",
    "spacecraft_mass": lambda o, _: urdf_element(o / "robot.urdf", "link", "spacecraft_bus").find(
        "inertial/mass").get("value") == "200.0",
    "spacecraft_inertia": lambda o, _: urdf_element(o / "robot.urdf", "link", "spacecraft_bus").find(
        "inertial/inertia").get("iyy") == "50.0",
    "spacecraft_com": lambda o, _: urdf_element(o / "robot.urdf", "link", "spacecraft_bus").find(
        "inertial/origin").get("xyz") == "0.0 0.0 0.01",
    "mount_xyz": lambda o, _: urdf_element(o / "robot.urdf", "joint", "arm_mount").find("origin").get("xyz")
    == "0.2 0.0 0.5",
    "mount_rpy": lambda o, _: urdf_element(o / "robot.urdf", "joint", "arm_mount").find("origin").get("rpy")
    == "0.0 0.0 0.1",
    "via": lambda o, _: written(o)[1]["via"][0]["panda_joint1"] == 0.1 and written(o)[0]["task"] == "trajectory",
    # the Panda's URDF joint damping, removed from the plant: no mismatch warned about
    "joint_dynamics": lambda o, _: params(o)["joint_dynamics"] == "ideal" and not (o / "warnings.log").exists(),
})

ORBITAL_URDF = (["demo", "orbital", "--urdf", orbital_robot_urdf(), "--lock", "panda_joint7=0.5", "--loop-measured",
                 "{tmp}/ros_loop.json", "--duration", "0.05", "--video", "--video-speed", "0.02", "--video-size",
                 "64x48", "--out", "{out}"], {
    "urdf": lambda o, _: written(o)[1]["urdf"] == str(Path(orbital_robot_urdf()).resolve())
    and urdf_element(o / "robot.urdf", "joint", "panda_joint7").get("type") == "fixed",
    "loop_measured": lambda o, _: (params(o)["loop_jitter_s"], params(o)["loop_drop"]) == pytest.approx((2.5e-3, 0.01)),
    "video": lambda o, _: (o / "video.mp4").exists(),
    "video_speed": lambda o, _: _video_frames(o / "video.mp4")[0]["duration"] == pytest.approx(2.5, abs=0.1),
    "video_size": lambda o, _: _video_frames(o / "video.mp4")[1].shape == (48, 64, 3),
})

ORBITAL_ROS = (["demo", "orbital", "--ros", "--compare", "--duration", "0.05", "--out", "{out}"], {
    "ros": lambda o, _: written(o)[0]["transport"] == "fake ROS 2",
    "compare": lambda o, _: "final_joint_error_deg" in written(o)[0]["ros_free"],
})

HOPPER = (["demo", "hopper", "--robot", "prismatic", "--experiment", "III", "--variant", "III", "--contact-rule",
           "foot_force", "--gain", "K_r=2500", "--initial", "0", "0.31", "-1.5707963", "0.114", "0", "0", "0", "0",
           "--duration", "0.02", "--floor", "viscoelastic", "--floor-K", "9000", "--floor-D", "900", "--base", "free",
           "--gravity", "9.7", "--timestep", "2e-4", "--control-rate", "1000", "--loop-delay", "0.001", "--no-plots",
           "--out", "{out}"], {
    "robot": lambda o, _: written(o)[0]["robot"] == "prismatic",
    "experiment": lambda o, _: written(o)[0]["experiment"] == "III",
    "variant": lambda o, _: written(o)[0]["variant"] == "III",
    "contact_rule": lambda o, _: written(o)[0]["contact_rule"] == "foot_force",
    "gains": lambda o, _: written(o)[0]["settings"]["gains"]["K_r"] == 2500.0,
    "initial": lambda o, _: written(o)[0]["settings"]["initial_state_thesis"][1] == 0.31,
    "duration": lambda o, _: written(o)[1]["duration"] == 0.02 and written(o)[0]["duration_s"] == pytest.approx(0.02),
    "floor": lambda o, _: written(o)[0]["settings"]["floor"] == "viscoelastic",
    "floor_K": lambda o, _: written(o)[0]["settings"]["floor_K"] == 9000.0,
    "floor_D": lambda o, _: written(o)[0]["settings"]["floor_D"] == 900.0,
    "base": lambda o, _: written(o)[0]["settings"]["base"] == "free",
    "gravity": lambda o, _: written(o)[0]["settings"]["gravity"] == 9.7,
    "timestep": lambda o, _: written(o)[0]["timestep_s"] == 2e-4,
    "control_rate": lambda o, _: written(o)[0]["settings"]["control_every"] == 5,
    "loop_delay": lambda o, _: written(o)[0]["loop_delay_s"] == pytest.approx(1e-3),
    "no_plots": lambda o, _: not list(o.glob("*.png")),
    "out": lambda o, _: (o / "timeseries.csv").exists(),
})

HOPPER_URDF = (["demo", "hopper", "--config", "{tmp}/hopper.yaml", "--urdf", "{tmp}/my_hopper.urdf",
                "--experiment", "I", "--floor", "mujoco", "--video", "--video-speed", "0.01", "--video-size", "64x48",
                "--out", "{out}"], {
    "config": lambda o, _: written(o)[1]["duration"] == 0.02,
    "urdf": lambda o, _: written(o)[0]["settings"]["urdf"].endswith("my_hopper.urdf"),
    "video": lambda o, _: (o / "video.mp4").exists(),
    "video_speed": lambda o, _: _video_frames(o / "video.mp4")[0]["duration"] == pytest.approx(2.0, abs=0.1),
    "video_size": lambda o, _: _video_frames(o / "video.mp4")[1].shape == (48, 64, 3),
})


def _inspect_json(out):
    return json.loads(out)


INSPECT = (["inspect", "--urdf", PANDA, "--lock", "panda_joint7=0.5", "--mimic", "lock", "--random", "1", "--seed", "4",
            "--json"], {
    "urdf": lambda _, s: _inspect_json(s)["model"].startswith(f"FloatingBaseModel({PANDA!r}"),
    "lock": lambda _, s: _inspect_json(s)["loading"]["locked_joints"]["panda_joint7"] == 0.5,
    "mimic": lambda _, s: "panda_finger_joint2" in _inspect_json(s)["loading"]["mimic_joints"],
    "random": lambda _, s: list(_inspect_json(s)["shapes"]) == ["zero", "mid-range", "random 1"],
    "seed": lambda _, s: np.allclose(_inspect_json(s)["shapes"]["random 1"]["q_rad"], _inspect_shape(4)),
    "json": lambda _, s: isinstance(_inspect_json(s), dict),
})


def _inspect_shape(seed):
    from floating_base_control.robots.orbital.spacecraft import default_shape_setpoints
    model = FloatingBaseModel.from_urdf(PANDA, locked={"panda_joint7": 0.5})
    lo, hi = model.position_limits.T
    mid = default_shape_setpoints(model)[0]
    return np.clip(mid + np.random.default_rng(seed).uniform(-1, 1, model.n), lo, hi)


def _gait(o):
    return json.loads((o / "gait.json").read_text())


GAIT = (["gait", "--x", "lwr_joint_2=1", "--y", "lwr_joint_3=1", "--center", "lwr_joint_4=0.1", "--frame", "base",
         "--circle", "0", "0", "0.2", "--start-angle", "90", "--clockwise", "--samples", "16", "--period", "1",
         "--mu", "0", "0", "0.1", "0", "0", "0", "--out", "{out}"], {
    "x": lambda o, _: np.array(_gait(o)["gait"]["Psi"])[1, 0] == 1.0,
    "y": lambda o, _: np.array(_gait(o)["gait"]["Psi"])[2, 1] == 1.0,
    "center": lambda o, _: _gait(o)["gait"]["q_c"][3] == 0.1,
    "frame": lambda o, _: _gait(o)["frame"] == "base",
    "circle": lambda o, _: np.allclose(_gait(o)["gait"]["signed_area_rad2"], -16 / 2 * 0.04 * np.sin(2 * np.pi / 16)),
    "start_angle": lambda o, _: np.allclose(_gait(o)["gait"]["start_r"], [0.0, 0.2]),
    "clockwise": lambda o, _: _gait(o)["gait"]["signed_area_rad2"] < 0,
    "samples": lambda o, _: _gait(o)["gait"]["samples"] == 16,
    "period": lambda o, _: _gait(o)["gait"]["period_s"] == 1.0,
    "mu": lambda o, _: _gait(o)["gait"]["mu"] == [0.0, 0.0, 0.1, 0.0, 0.0, 0.0] and "exact_with_mu" in _gait(o),
    "out": lambda o, _: (o / "gait.png").exists(),
})

GAIT_PATH = (["gait", "--urdf", THREE_BODY, "--x", "s1=1", "--y", "s2=1", "--path", "{tmp}/path.csv",
              "--out", "{out}"], {
    "urdf": lambda o, _: _gait(o)["model"] == THREE_BODY,
    "path": lambda o, _: _gait(o)["gait"]["samples"] == 20,
})


def _ccf(o):
    return json.loads((o / "ccf.json").read_text())


CCF = (["ccf", "--urdf", THREE_BODY, "--x", "s1=1", "--y", "s2=1", "--center", "s1=0.1", "--frame", "base", "--circle",
        "0", "0", "0.3", "--start-angle", "45", "--clockwise", "--samples", "12", "--grid", "3", "--range", "-1", "1",
        "-2", "2", "--out", "{out}"], {
    "urdf": lambda o, _: _ccf(o)["model"] == THREE_BODY,
    "x": lambda o, _: _ccf(o)["Psi"] == [[1.0, 0.0], [0.0, 1.0]],
    "y": lambda o, _: _ccf(o)["Psi"][1][1] == 1.0,
    "center": lambda o, _: _ccf(o)["q_c"] == [0.1, 0.0],
    "frame": lambda o, _: _ccf(o)["frame"] == "base",
    "circle": lambda o, _: np.allclose(np.linalg.norm(_ccf(o)["gait_r"], axis=1), 0.3),
    "start_angle": lambda o, _: np.allclose(_ccf(o)["gait_r"][0],
                                            0.3 * np.array([np.cos(np.pi / 4), np.sin(np.pi / 4)])),
    "clockwise": lambda o, _: _turn(np.array(_ccf(o)["gait_r"])[:3]) < 0,
    "samples": lambda o, _: len(_ccf(o)["gait_r"]) == 13,
    "grid": lambda o, _: len(_ccf(o)["r1"]) == 3,
    "range": lambda o, _: (_ccf(o)["r1"][0], _ccf(o)["r2"][-1]) == (-1.0, 2.0),
    "out": lambda o, _: (o / "ccf.png").exists(),
})

def _turn(points):
    """The z component of the cross product of two consecutive segments (> 0: counterclockwise)."""
    (ax, ay), (bx, by) = np.diff(points, axis=0)
    return ax * by - ay * bx


CCF_PATH = (["ccf", "--urdf", THREE_BODY, "--x", "s1=1", "--y", "s2=1", "--path", "{tmp}/path.csv", "--grid", "2",
             "--out", "{out}"], {"path": lambda o, _: len(_ccf(o)["gait_r"]) == 21})


def _itg(o):
    return json.loads((o / "integrability.json").read_text())


INTEGRABILITY = (["integrability", "--urdf", orbital_robot_urdf(), "--samples", "5", "--seed", "2", "--tol", "1e-3",
                  "--at", "panda_joint1=0.1", "--loop", "{tmp}/loop.csv", "--center", "panda_joint3=0.8",
                  "--out", "{out}"], {
    "urdf": lambda o, _: _itg(o)["model"] == orbital_robot_urdf(),
    "samples": lambda o, _: _itg(o)["samples"] == 5,
    "seed": lambda o, _: _itg(o)["seed"] == 2,
    "tol": lambda o, _: _itg(o)["tol"] == 1e-3,
    "at": lambda o, _: _itg(o)["centroidal_frame"]["s"] == [0.1] + [0.0] * 6,
    "loop": lambda o, _: _itg(o)["holonomy"]["samples"] == 21,
    "center": lambda o, _: np.allclose(_itg(o)["holonomy"]["K_T"], _holonomy(o.parent / "loop.csv", 0.8), atol=1e-12)
    and not np.allclose(_itg(o)["holonomy"]["K_T"], _holonomy(o.parent / "loop.csv", 0.0), atol=1e-6),
    "out": lambda o, _: (o / "integrability.png").exists(),
})


def _holonomy(path, joint3):
    from floating_base_control.analysis.integrability import holonomy
    values = np.loadtxt(path, delimiter=",", skiprows=1)
    loop = np.zeros((len(values), 7))
    loop[:, [1, 3]], loop[:, 2] = values, joint3
    return holonomy(FloatingBaseModel.from_urdf(orbital_robot_urdf()), loop)


SWEEP = (["sweep", "orbital", "--duration", "7", "--out", "{out}", "--doc", "{tmp}/robustness.md"], {
    "duration": lambda o, _: json.loads((o / "results.json").read_text()) == {"duration": 7.0},
    "out": lambda o, _: (o / "table.md").read_text() == "| table |\n",
    "doc": lambda o, _: (o.parent / "robustness.md").read_text().endswith("| table |\n"),
})

STABILITY = (["stability", "--demos", "--doc", "{tmp}/stability.md"], {
    "demos": lambda o, s: "demos=True" in s,
    "doc": lambda o, _: (o.parent / "stability.md").read_text() == "report demos=True",
})

LOOPS = (["loops", "--burners", "1", "3", "--repeat", "2", "--out", "{out}", "--doc", "{tmp}/loops.md", "--readme",
          "{tmp}/README.md"], {
    "burners": lambda o, _: (o.parent / "loops.md").read_text().startswith("report [([1, 3], 2, "),
    "repeat": lambda o, _: (o.parent / "loops.md").read_text().startswith("report [([1, 3], 2, "),
    "out": lambda o, _: f"'{o}'" in (o.parent / "loops.md").read_text(),
    "doc": lambda o, _: (o.parent / "loops.md").exists(),
    "readme": lambda o, _: (o.parent / "README.md").read_text() == (o.parent / "loops.md").read_text(),
})


def _campaign(o):
    return (json.loads((o / "config.json").read_text()),
            [json.loads(line) for line in (o / "runs.jsonl").read_text().splitlines()])


CAMPAIGN = (["campaign", "orbital", "--scenario", "realistic", "--runs", "1", "--seed", "2", "--controllers", "pd",
             "--duration", "0.05", "--pose-position", "--workers", "3", "--out", "{out}"], {
    "scenario": lambda o, _: _campaign(o)[0]["scenario"] == "realistic",
    "runs": lambda o, _: len(_campaign(o)[1]) == 1,
    "seed": lambda o, _: _campaign(o)[0]["seed"] == 2,
    "controllers": lambda o, _: [r["controller"] for r in _campaign(o)[1]] == ["pd"],
    "duration": lambda o, _: _campaign(o)[0]["duration_s"] == 0.05,
    "pose_position": lambda o, _: _campaign(o)[0]["pose_position"] is True,
    "workers": lambda o, _: FakeDask.seen["workers"] == 3,
    "out": lambda o, _: (o / "campaign.json").exists(),
})

CAMPAIGN_SCHEDULER = (["campaign", "orbital", "--runs", "1", "--controllers", "pd", "--duration", "0.05", "--scheduler",
                       "tcp://127.0.0.1:1", "--worker-timeout", "7", "--out", "{out}"], {
    "scheduler": lambda o, _: FakeDask.seen["address"] == "tcp://127.0.0.1:1",
    "worker_timeout": lambda o, _: FakeDask.seen["timeout"] == 7.0,
})

LWR = share_file("urdf/lwr4_free_floating.urdf")


def _plan(o):
    return json.loads((o / "plan.json").read_text())


# 5 deg about x for the LWR from a shape of its own: a short plan (a few seconds)
PLAN = (["plan", "reorient", "--urdf", LWR, "--axis", "1", "0", "0", "--angle-deg", "5", "--q0", "0", "0.1", "0", "0",
         "0", "0", "0", "--margin", "0.2", "--out", "{out}"], {
    "urdf": lambda o, _: _plan(o)["model"] == LWR and _plan(o)["joint_names"][0] == "lwr_joint_1",
    "axis": lambda o, _: np.allclose(_plan(o)["target_rotation"][2],
                                     [0.0, np.sin(np.radians(5)), np.cos(np.radians(5))]),
    "angle_deg": lambda o, _: _plan(o)["summary"]["target_rotation_deg"] == 5.0,
    "q0": lambda o, _: _plan(o)["q0"] == [0.0, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0] and _plan(o)["positions"][0][1] == 0.1,
    "margin": lambda o, _: abs(_plan(o)["summary"]["min_joint_limit_margin_rad"]
                               - _plan(o)["summary"]["min_margin_beyond_required_rad"] - 0.2) < 1e-12,
    "out": lambda o, _: (o / "plan.csv").exists(),
})

APPLIED = {"demo orbital": [ORBITAL_IDEAL, ORBITAL_REALISTIC, ORBITAL_ARM, ORBITAL_URDF, ORBITAL_ROS],
           "demo hopper": [HOPPER, HOPPER_URDF], "inspect": [INSPECT], "gait": [GAIT, GAIT_PATH],
           "ccf": [CCF, CCF_PATH], "integrability": [INTEGRABILITY], "sweep": [SWEEP],
           "stability": [STABILITY], "loops": [LOOPS], "campaign": [CAMPAIGN, CAMPAIGN_SCHEDULER],
           "plan reorient": [PLAN]}
RUNS = [(command, argv, checks) for command, runs in APPLIED.items() for argv, checks in runs]

#: (argv, the option refused, words of the reason): the issue's cases, and every other option where it changes nothing
REFUSED = [
    (["demo", "orbital", "--scenario", "realistic", "--pose-rate", "50"], "--pose-rate",
     "realistic scenario's star tracker"),
    (["demo", "orbital", "--scenario", "realistic", "--latency", "0.001"], "--latency", "RealisticConditions"),
    (["demo", "orbital", "--scenario", "realistic", "--pose-noise", "5"], "--pose-noise", "dispersions"),
    (["demo", "orbital", "--pose-position"], "--pose-position", "applies to the realistic scenario"),
    (["demo", "orbital", "--config", "{tmp}/dispersions.yaml"], "dispersions", "applies to the realistic scenario"),
    (["demo", "orbital", "--lock", "panda_joint4=-1"], "--lock", "applies to --urdf or --arm-urdf"),
    (["demo", "orbital", "--urdf", orbital_robot_urdf(), "--lock", "panda_joint4=1.0"], "--lock",
     "cannot lock 'panda_joint4' at 1: outside its range [-3.0718, -0.0698]"),
    (["demo", "orbital", "--spacecraft-mass", "100"], "--spacecraft-mass", "applies to --arm-urdf"),
    (["demo", "orbital", "--spacecraft-inertia", "1", "1", "1", "0", "0", "0"], "--spacecraft-inertia",
     "applies to --arm-urdf"),
    (["demo", "orbital", "--spacecraft-com", "0", "0", "0"], "--spacecraft-com", "applies to --arm-urdf"),
    (["demo", "orbital", "--urdf", orbital_robot_urdf(), "--mount-xyz", "0", "0", "1"], "--mount-xyz",
     "applies to --arm-urdf"),
    (["demo", "orbital", "--mount-rpy", "0", "0", "1"], "--mount-rpy", "applies to --arm-urdf"),
    (["demo", "orbital", "--compare"], "--compare", "applies to --ros"),
    (["demo", "orbital", "--axis", "1", "0", "0"], "--axis", "applies to --task reorient"),
    (["demo", "orbital", "--angle-deg", "10"], "--angle-deg", "applies to --task reorient"),
    (["demo", "orbital", "--task", "reorient", "--ros"], "--task", "runs in the ROS-free loop"),
    (["demo", "orbital", "--task", "reorient", "--axis", "0", "0", "0"], "--axis", "must not be zero"),
    (["demo", "orbital", "--joint-dynamics", "ideal"], "--joint-dynamics", "has no joint damping or friction"),
    (["demo", "orbital", "--ros", "--scenario", "realistic"], "--ros", "only the ideal scenario"),
    (["demo", "orbital", "--ros", "--mass-error", "0.05"], "--mass-error", "a ROS-free option"),
    (["demo", "orbital", "--ros", "--compensation", "truth"], "--compensation", "a ROS-free option"),
    (["demo", "orbital", "--controller", "pd", "--compensation", "tau1"], "--compensation", "--controller sets it"),
    (["demo", "orbital", "--controller", "pdi", "--integral-time", "3"], "--integral-time", "--controller sets it"),
    (["demo", "orbital", "--task", "trajectory", "--integral-time", "3"], "--integral-time", "no integral action"),
    (["demo", "orbital", "--ros", "--loop-delay", "0"], "--loop-delay", "over ROS 2 the loop is DDS's own"),
    (["demo", "orbital", "--ros", "--loop-jitter", "0.001"], "--loop-jitter", "over ROS 2 the loop is DDS's own"),
    (["demo", "orbital", "--ros", "--loop-drop", "0.1"], "--loop-drop", "over ROS 2 the loop is DDS's own"),
    (["demo", "orbital", "--ros", "--loop-measured", "{tmp}/ros_loop.json"], "--loop-measured", "DDS's own"),
    (["demo", "orbital", "--loop-measured", "{tmp}/ros_loop.json", "--loop-drop", "0.1"], "--loop-drop",
     "--loop-measured sets it"),
    (["demo", "orbital", "--scenario", "realistic", "--tumble", "1", "2", "3"], "--tumble", "draws the tumble"),
    (["demo", "orbital", "--task", "end-effector", "--setpoint", "panda_joint1=0"], "--setpoint", "end-effector task"),
    (["demo", "orbital", "--config", "{tmp}/via.yaml"], "via", "applies to --task trajectory"),
    (["demo", "orbital", "--urdf", orbital_robot_urdf(), "--task", "end-effector"], "--task", "not with --urdf"),
    (["demo", "orbital", "--urdf", orbital_robot_urdf(), "--arm-urdf", PANDA], "--arm-urdf", "not both"),
    (["demo", "orbital", "--scenario", "realistic", "--urdf", orbital_robot_urdf()], "--urdf",
     "not with another robot"),
    (["demo", "orbital", "--video-speed", "2"], "--video-speed", "applies to --video"),
    (["demo", "orbital", "--video-size", "64x48"], "--video-size", "applies to --video"),
    (["demo", "orbital", "--q0", "panda_joint4=1.0"], "--q0", "panda_joint4 = 1 is outside the joint's range"),
    (["demo", "orbital", "--config", "{tmp}/unknown.yaml"], "pose_rat",
     "unknown key 'pose_rat' (did you mean pose_rate?)"),
    (["demo", "orbital", "--config", "{tmp}/bad_rate.yaml"], "pose_rate", "pose_rate: must be > 0, got '0'"),
    (["demo", "hopper", "--floor", "mujoco", "--floor-K", "5000"], "--floor-K", "applies to the viscoelastic floor"),
    (["demo", "hopper", "--floor", "mujoco", "--floor-D", "5"], "--floor-D", "applies to the viscoelastic floor"),
    (["demo", "hopper", "--video-speed", "1"], "--video-speed", "applies to --video"),
    (["demo", "hopper", "--video-size", "64x48"], "--video-size", "applies to --video"),
    (["demo", "hopper", "--gain", "variant=II"], "--gain", "give it as the option variant"),
    (["inspect", "--random", "0", "--seed", "3"], "--seed", "applies to --random shapes"),
    (["gait", "--start-angle", "90"], "--start-angle", "applies to --circle"),
    (["gait", "--clockwise"], "--clockwise", "applies to --circle"),
    (["gait", "--urdf", THREE_BODY, "--x", "s1=1", "--y", "s2=1", "--path", "{tmp}/path.csv", "--samples", "64"],
     "--samples", "a --path has its own samples"),
    (["gait", "--period", "3"], "--period", "applies with --mu"),
    (["ccf", "--period", "3"], "--period", "the CCF map has no time"),
    (["ccf", "--clockwise"], "--clockwise", "applies to --circle"),
    (["integrability", "--center", "panda_joint1=0.1"], "--center", "applies to --loop"),
    (["campaign", "orbital", "--scenario", "ideal", "--pose-position"], "--pose-position",
     "applies to the realistic scenario"),
]


class FakeDask:
    """The campaign's Dask client (``connect``, ``finished``) running each task in this process, and the local
    cluster's worker count, the scheduler's address and the worker timeout as the command gave them."""
    seen = {}

    class Client:
        def __init__(self, address, timeout):
            FakeDask.seen.update(address=address, timeout=timeout)

        def submit(self, fn, *args, pure=True, key=None):
            result = fn(*args)
            return type("Done", (), {"result": lambda self: result})()

        def close(self):
            pass

    class Cluster:
        scheduler_address = "inproc://local"

        def close(self):
            pass


@pytest.fixture
def engines(monkeypatch):
    """The heavy engines replaced at the commands' boundaries (module doc)."""
    from floating_base_control.cli import campaign
    from floating_base_control.experiments import loop_delay
    from floating_base_control.experiments.orbital import scenario as orbital
    from floating_base_control.experiments.orbital import sweep
    from floating_base_control.ros import loop_comparison, orbital_demo

    FakeDask.seen.clear()
    monkeypatch.setattr(campaign, "connect", FakeDask.Client)
    monkeypatch.setattr(campaign, "finished", lambda client, futures, timeout: (f.result() for f in futures))
    monkeypatch.setattr(campaign, "local_cluster",
                        lambda workers: FakeDask.seen.update(workers=workers) or FakeDask.Cluster())
    monkeypatch.setattr(sweep, "sweep", lambda duration, progress: {"duration": duration})
    monkeypatch.setattr(sweep, "markdown_table", lambda results: "| table |\n")
    monkeypatch.setattr(loop_delay, "report", lambda demos: f"report demos={demos}")
    monkeypatch.setattr(loop_comparison, "compare",
                        lambda burners, repeat, progress, out: [(burners, repeat, str(out))])
    monkeypatch.setattr(loop_comparison, "report", lambda rows: f"report {rows}")
    monkeypatch.setattr(loop_comparison, "update_readme", lambda path, rows: Path(path).write_text(f"report {rows}"))

    def ros_run(scenario, progress=None, **kwargs):
        log, summary = orbital.run(scenario)
        return log, dict(summary, transport="fake ROS 2")
    monkeypatch.setattr(orbital_demo, "run", ros_run)


@pytest.fixture
def inputs(tmp_path):
    _files(tmp_path)
    (tmp_path / "dispersions.yaml").write_text("dispersions: {pose_rate_hz: 20}\n")
    (tmp_path / "unknown.yaml").write_text("pose_rat: 50\n")
    (tmp_path / "bad_rate.yaml").write_text("pose_rate: 0\n")
    return tmp_path


def test_every_option_of_every_command_is_applied_or_refused_somewhere():
    covered = {}
    for command, _, checks in RUNS:
        covered.setdefault(command, set()).update(checks)
    for argv, flag, _ in REFUSED:
        command = name(argv)
        covered.setdefault(command, set()).add(next(d for d, f in options(commands()[command]).items()
                                                    if f == flag) if flag.startswith("--") else flag)
    for command, parser in commands().items():
        missing = set(options(parser)) - covered.get(command, set())
        assert not missing, f"fbc {command}: options neither applied nor refused in a test: {sorted(missing)}"


@pytest.mark.parametrize("module", [demo_orbital, demo_hopper], ids=["orbital", "hopper"])
def test_the_demos_tables_are_their_parsers(module):
    """One place per command: the parser is built from the table, every option of it (file-only keys aside)."""
    name = module.__name__.rsplit("_", 1)[1]
    table = {o.key for o in module.TABLE if o.flags}
    assert set(options(commands()[f"demo {name}"])) == table


@pytest.mark.parametrize("command, argv, checks", RUNS, ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(RUNS)])
def test_an_option_that_applies_reaches_the_output(command, argv, checks, inputs, engines, capsys):
    out = inputs / "out"
    code, stdout, err = fbc([a.format(out=out, tmp=inputs) for a in argv], capsys)
    assert code == 0, err
    wrong = [dest for dest, check in checks.items() if not check(out, stdout)]
    assert not wrong, f"fbc {command}: these options did not reach the output: {wrong}"


@pytest.mark.parametrize("argv, flag, words", REFUSED, ids=[" ".join(a[:2]) + " " + f for a, f, _ in REFUSED])
def test_an_option_that_changes_nothing_is_refused_naming_it(argv, flag, words, inputs, capsys):
    out = ["--out", inputs / "refused"] if "out" in options(commands()[name(argv)]) else []
    code, _, err = fbc([a.format(tmp=inputs) for a in argv] + out, capsys)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert flag in err and words in err, err
    assert not (inputs / "refused" / "summary.json").exists()


def test_the_header_prints_what_the_run_uses(tmp_path, capsys):
    """--task trajectory --controller pd ran PD but printed "compensation none" and then "compensation tau2"."""
    code, out, err = fbc(["demo", "orbital", "--task", "trajectory", "--controller", "pd", "--duration", "0.02",
                          "--out", tmp_path], capsys)
    assert code == 0, err
    assert "compensation none" in out and "tau2" not in out
    assert written(tmp_path)[0]["compensation"] == "none"
