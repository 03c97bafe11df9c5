"""Adding a pose sensor model is a class and one registration line (docs/explanation/architecture.md):
one registered here is built by the orbital scenario from its name."""
import numpy as np
import pytest

from floating_base_control.experiments.orbital.scenario import OrbitalScenario, run
from floating_base_control.sim import sensors
from floating_base_control.sim.sensors import PoseSensor, register_pose_sensor
from floating_base_control.validation import InputError

SHORT = dict(duration_s=0.25, log_rate_hz=100.0)


@pytest.fixture
def registry(monkeypatch):
    """The registry as it was before the test, after it."""
    monkeypatch.setattr(sensors, "POSE_SENSORS", dict(sensors.POSE_SENSORS))


def test_a_registered_pose_sensor_model_is_built_by_the_scenario(registry):
    class NoiselessPoseSensor(PoseSensor):
        """The true pose at the sensor's rate and latency: the noise parameters are ignored."""

        def __post_init__(self):
            self.rotation_noise = self.position_noise = 0.0
            super().__post_init__()

    register_pose_sensor(NoiselessPoseSensor)              # the one registration line
    noisy = OrbitalScenario(**SHORT)
    log, summary = run(OrbitalScenario(pose_sensor="NoiselessPoseSensor", **SHORT))
    exact, _ = run(OrbitalScenario(pose_rotation_noise=0.0, pose_position_noise=0.0, **SHORT))
    default, _ = run(noisy)
    assert noisy.pose_rotation_noise > 0                   # the registered model, not the default, ran
    for key in ("eps_norm", "mu_e_norm", "tau"):
        assert np.array_equal(log[key], exact[key], equal_nan=True)     # no estimate before the first sample
    assert not np.array_equal(log["eps_norm"], default["eps_norm"], equal_nan=True)
    assert summary["scenario_parameters"]["pose_sensor"] == "NoiselessPoseSensor"


def test_an_unknown_pose_sensor_model_is_named():
    with pytest.raises(InputError, match="pose_sensor must be one of \\('PoseSensor',\\), got 'Camera'"):
        run(OrbitalScenario(pose_sensor="Camera", **SHORT))
