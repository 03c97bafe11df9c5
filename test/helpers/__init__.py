"""What the tests share that is not a fixture: random states, tolerance checks, test models, config
sections; and the oracles and harnesses of this package (reference implementations written out
from the papers, Pinocchio-based references, the ROS process harness)."""
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from floating_base_control import lie
from floating_base_control.resources import orbital_robot_urdf
from helpers.random_tree import random_tree_urdf

#: Seeds of the random kinematic trees every model test also runs on.
TREE_SEEDS = (1, 2, 3)
MODEL_NAMES = ["orbital"] + [f"tree{s}" for s in TREE_SEEDS]


def model_urdf(name):
    """URDF text of a test model: the orbital robot or random tree ``tree<seed>``."""
    if name == "orbital":
        with open(orbital_robot_urdf()) as f:
            return f.read()
    return random_tree_urdf(int(name[4:]))


def random_state(model, rng):
    """``(q, qdot, V1, mu)``: a random shape inside the joint limits and random velocities."""
    lo, hi = model.position_limits.T
    lo, hi = np.where(np.isfinite(lo), lo, -np.pi), np.where(np.isfinite(hi), hi, np.pi)
    q = rng.uniform(lo, hi)
    qdot = rng.normal(size=model.n)
    V1 = rng.normal(size=6) * 0.5
    return q, qdot, V1, rng.normal(size=6) * 0.5


def assert_close(actual, expected, tol=1e-9, what=""):
    """``max|actual - expected| <= tol * max(1, max|expected|)``."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    err = float(np.abs(actual - expected).max(initial=0.0))
    assert err <= tol * scale, f"{what}: error {err:.3e} > {tol:g} * {scale:.3g}"


def node_sections(config_path):
    """A ROS 2 parameter file as ``{node name: its parameters}`` (keys are ``/**/<node>``)."""
    import yaml
    sections = yaml.safe_load(Path(config_path).read_text())
    assert all(key.startswith("/**/") for key in sections), f"{config_path}: keys must be /**/<node>"
    return {key.removeprefix("/**/"): section["ros__parameters"] for key, section in sections.items()}


def random_pose(rng):
    return np.block([[Rotation.random(random_state=rng).as_matrix(), rng.normal(size=(3, 1))],
                     [np.zeros((1, 3)), np.ones((1, 1))]])


def random_inertia(rng):
    m = rng.uniform(1, 5)
    R = Rotation.random(random_state=rng).as_matrix()
    Ic = R @ np.diag(rng.uniform(0.1, 0.3, 3)) @ R.T
    c = rng.normal(size=3) * 0.3
    cx = lie.skew(c)
    return np.block([[Ic - m * cx @ cx, m * cx], [-m * cx, m * np.eye(3)]])


def run_fbc(argv, capture):
    """``(exit status, stdout, stderr)`` of ``fbc argv`` run in this process; ``capture``: pytest's ``capsys``
    (what Python wrote) or ``capfd`` (what reached file descriptors 1 and 2, as a terminal gets it)."""
    from floating_base_control.cli import main
    try:
        main([str(a) for a in argv])
        code = 0
    except SystemExit as exc:
        code = exc.code
    out = capture.readouterr()
    return code, out.out, out.err
