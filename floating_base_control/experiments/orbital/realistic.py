"""The realistic orbital scenario of one run: its dispersions drawn from the run's seed.

``fbc demo orbital --scenario realistic`` and ``fbc campaign orbital`` use
:func:`realistic_scenario`; the ideal scenario is :class:`~.scenario.OrbitalScenario`'s
defaults, the realistic conditions and their bounds are in :mod:`.dispersions`.

Dispersions are drawn from one seed per run, so a run is re-run alone from its seed, and every
controller of a campaign meets the same dispersed runs (common random numbers).
"""
from dataclasses import replace

import numpy as np

from floating_base_control.experiments.orbital.dispersions import REALISTIC
from floating_base_control.experiments.orbital.scenario import OrbitalScenario


def realistic_scenario(seed, conditions=REALISTIC, **overrides):
    """The realistic :class:`OrbitalScenario` of run ``seed``: dispersions drawn from ``seed`` (the
    controller's model is drawn from it too, in :func:`~.dispersions.perturbed_urdf`); ``overrides`` last (e.g. the
    controller, ``pose_position=False``)."""
    c = conditions
    rng = np.random.default_rng([seed, 15])
    axis = rng.standard_normal(3)
    omega = rng.uniform(*c.tumble_deg_s) * axis / np.linalg.norm(axis)
    v = rng.standard_normal(3)
    v *= rng.uniform(0.0, c.drift_m_s) / np.linalg.norm(v)
    # the plant's RK4 at the control rate, not at twice it: half the cost of a campaign's run, the momentum still
    # kept to ~1e-12 (docs/explanation/orbital.md, "The plant's integration")
    scenario = OrbitalScenario(
        name="realistic", duration_s=c.duration_s, seed=seed, sim_substeps=1,
        friction_scale=tuple(1.0 + c.friction_dispersion * rng.uniform(-1, 1, 7)),
        model_dispersion=True, encoder_resolution=c.encoder_resolution_rad,
        velocity_filter_hz=c.velocity_filter_hz, qdot_noise=0.0,
        pose_rate_hz=c.pose_rate_hz, pose_rotation_noise=c.pose_rotation_noise,
        pose_position_noise=c.pose_position_noise, pose_latency_s=c.pose_latency_s,
        pose_attitude_bias=c.pose_attitude_bias, pose_bias_time_s=c.pose_bias_time_s,
        pose_rate_jitter=c.pose_rate_jitter, pose_latency_jitter_s=c.pose_latency_jitter_s,
        pose_dropout=c.pose_dropout, pose_position=c.pose_position,
        mu0_omega_deg_s=tuple(float(w) for w in omega), mu0_v=tuple(float(x) for x in v))
    return replace(scenario, **overrides)
