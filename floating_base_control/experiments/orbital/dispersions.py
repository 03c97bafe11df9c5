"""The realistic orbital conditions: every parameter in one place, and the controller's model drawn from them.

``fbc demo orbital --scenario realistic`` and ``fbc campaign orbital`` use
:func:`~.realistic.realistic_scenario`; the ideal scenario is :class:`~.scenario.OrbitalScenario`'s
defaults.  What changes from the ideal one (values marked *representative* are
of the usual magnitude for such hardware, not from a datasheet of ours):

=============================  ===============================================================
joint friction (plant only)    Gaz et al. 2019 identified model of the Panda (``sim/friction.py``:
                               0.30-1.28 N m Coulomb span, 0.7-2.0 N m s/rad viscous near rest),
                               each joint's level dispersed by ``friction_scale`` (+-20 %)
controller's model             arm links: mass +-10 %, CoM +-1 cm per axis, inertia about the CoM
                               scaled +-10 % and its principal axes turned up to 0.1 rad;
                               spacecraft: mass and inertia +-5 %, CoM +-2 cm per axis, axes up to
                               0.05 rad.  Uniform draws; a scaled and rotated inertia keeps its
                               triangle inequalities, so every drawn model is physically consistent
joint encoders                 representative: 2^16 counts per turn (9.6e-5 rad), velocity by
                               differentiation filtered at 50 Hz (what a drive reports)
base pose: star tracker        representative: attitude noise 1e-4 rad (20 arcsec) per axis, a
                               Gauss-Markov bias of 1e-4 rad with a 600 s correlation time, 10 Hz
                               with +-10 % period jitter, 50 ms latency + up to 20 ms jitter,
                               5 % of samples dropped; attitude only by default: tau_hat_2
                               depends on the angular part of mu only (the Galilean invariance
                               of eq. 45), so no position is needed; ``pose_position=True`` adds
                               a position from relative navigation at 1 cm per axis
initial tumble                 mu_omega(0) of 5-15 deg/s about a random axis, mu_v(0) up to
                               2 cm/s; the same start, set-point and gains as the ideal scenario
duration                       60 s (the controllers with integral action need it to settle)
plant integration              MuJoCo's RK4 at the control rate, 1 kHz (the ideal scenario: 2 kHz), the
                               friction torque held over each step: ``docs/explanation/orbital.md``
=============================  ===============================================================

Dispersions are drawn from one seed per run (:func:`~.realistic.realistic_scenario`), so a
run is re-run alone from its seed, and every controller of a campaign meets
the same dispersed runs (common random numbers).
"""
from dataclasses import dataclass
import xml.etree.ElementTree as ET

import numpy as np

from floating_base_control import urdf_loader
from floating_base_control.lie import exp
from floating_base_control.model import FloatingBaseModel


@dataclass(frozen=True)
class RealisticConditions:
    """The bounds and sensor parameters of the realistic scenario (see the module docstring)."""

    duration_s: float = 60.0
    friction_dispersion: float = 0.2
    arm_mass_error: float = 0.10
    arm_com_error_m: float = 0.01
    arm_inertia_error: float = 0.10
    arm_axes_error_rad: float = 0.1
    spacecraft_mass_error: float = 0.05
    spacecraft_com_error_m: float = 0.02
    spacecraft_axes_error_rad: float = 0.05
    encoder_resolution_rad: float = 2 * np.pi / 2 ** 16
    velocity_filter_hz: float = 50.0
    pose_rotation_noise: float = 1e-4
    pose_attitude_bias: float = 1e-4
    pose_bias_time_s: float = 600.0
    pose_position_noise: float = 0.01
    pose_rate_hz: float = 10.0
    pose_rate_jitter: float = 0.1
    pose_latency_s: float = 0.05
    pose_latency_jitter_s: float = 0.02
    pose_dropout: float = 0.05
    pose_position: bool = False
    tumble_deg_s: tuple = (5.0, 15.0)
    drift_m_s: float = 0.02


REALISTIC = RealisticConditions()


def controller_model(scenario, urdf_path):
    """The controller's model: the plant's URDF, with every link's inertial drawn within the realistic
    bounds (``model_dispersion``) and the spacecraft's mass and inertia off by ``model_mass_error``."""
    with open(urdf_path) as f:
        xml = f.read()
    if scenario.model_dispersion:
        xml = perturbed_urdf(xml, scenario.seed)
    if scenario.model_mass_error:
        xml = urdf_loader.scale_link_inertial(xml, None, 1.0 + scenario.model_mass_error)
    return FloatingBaseModel.from_urdf_string(xml, source=f"{urdf_path} (controller)")


def perturbed_urdf(xml, seed, conditions=REALISTIC):
    """The controller's URDF: every link's inertial drawn within the bounds (see the module docstring);
    the root link is the spacecraft."""
    c = conditions
    rng = np.random.default_rng([seed, 16])
    root = ET.fromstring(xml)
    children = {j.find("child").get("link") for j in root.findall("joint")}
    for link in root.findall("link"):
        inertial = link.find("inertial")
        if inertial is None:
            continue
        if link.get("name") in children:
            bounds = (c.arm_mass_error, c.arm_com_error_m, c.arm_inertia_error, c.arm_axes_error_rad)
        else:
            bounds = (c.spacecraft_mass_error, c.spacecraft_com_error_m, c.spacecraft_mass_error,
                      c.spacecraft_axes_error_rad)
        _perturb_inertial(inertial, rng, *bounds)
    return ET.tostring(root, encoding="unicode")


def _perturb_inertial(inertial, rng, mass_error, com_error, inertia_error, axes_error):
    mass = inertial.find("mass")
    mass.set("value", repr(float(mass.get("value")) * (1.0 + rng.uniform(-mass_error, mass_error))))
    origin = inertial.find("origin")
    if origin is None:
        origin = ET.SubElement(inertial, "origin", xyz="0 0 0")
    xyz = np.array([float(x) for x in origin.get("xyz", "0 0 0").split()]) + rng.uniform(-com_error, com_error, 3)
    origin.set("xyz", " ".join(repr(float(x)) for x in xyz))
    el = inertial.find("inertia")
    i = {k: float(el.get(k, "0")) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
    inertia = np.array([[i["ixx"], i["ixy"], i["ixz"]], [i["ixy"], i["iyy"], i["iyz"]],
                        [i["ixz"], i["iyz"], i["izz"]]])
    axis = rng.standard_normal(3)
    R = exp(np.r_[rng.uniform(0, axes_error) * axis / np.linalg.norm(axis), np.zeros(3)])[:3, :3]
    inertia = (1.0 + rng.uniform(-inertia_error, inertia_error)) * R @ inertia @ R.T
    for k, (a, b) in {"ixx": (0, 0), "ixy": (0, 1), "ixz": (0, 2), "iyy": (1, 1), "iyz": (1, 2),
                      "izz": (2, 2)}.items():
        el.set(k, repr(float(inertia[a, b])))
