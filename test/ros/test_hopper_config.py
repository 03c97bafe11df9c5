"""config/hopper.yaml carries the same gains and plant settings as `fbc demo hopper` (Exp VI)."""
from dataclasses import asdict
from pathlib import Path

import pytest
from helpers import node_sections

from floating_base_control.robots.hopper.controller import HopperGains
from floating_base_control.sim.hopper import FLOOR_D, FLOOR_K
from floating_base_control.experiments.hopper.scenario import experiment

CONFIG = Path(__file__).resolve().parents[2] / "config" / "hopper.yaml"


@pytest.fixture(scope="module")
def config():
    return node_sections(CONFIG)


def test_controller_parameters_are_the_exp_vi_gains(config):
    params = config["hopper_controller"]
    exp = experiment("revolute", "VI")
    gains = HopperGains(**{k: params[k] for k in asdict(exp.gains)})
    assert gains == exp.gains
    assert params["gravity"] == exp.gravity and params["robot"] == exp.robot


def test_sim_parameters_are_the_demo_plant(config):
    params = config["hopper_sim"]
    exp = experiment("revolute", "VI")
    assert params["initial_state"] == list(exp.initial)
    assert (params["floor_K"], params["floor_D"]) == (FLOOR_K, FLOOR_D)
    assert params["gravity"] == exp.gravity and params["physics_rate_hz"] == 1e4
