"""The free-floating LWR 4+ of [Mishra2023] Sec. V-B (urdf/lwr4_free_floating.urdf): traceable to
the published parameters, physically consistent, and the projection is minimal."""
from pathlib import Path

import numpy as np
import pinocchio as pin

from helpers import lwr_gaz2016 as lwr
from helpers import assert_close
from floating_base_control import FloatingBaseModel
from floating_base_control.resources import share_file

URDF = share_file("urdf/lwr4_free_floating.urdf")


def test_shipped_urdf_is_the_generator_output():
    assert Path(URDF).read_text() == lwr.urdf_text(), \
        "regenerate: python test/lwr_gaz2016.py > urdf/lwr4_free_floating.urdf"


def _published_gravity(q, g0=9.81):
    """Joint gravity torques of the published set in its own classic-DH frames (no URDF)."""
    def potential(q):
        T, u = np.eye(4), 0.0
        T[2, 3] = lwr.DH_BASE_HEIGHT
        for qi, d, alpha, m, c in zip(q, lwr.DH_D, lwr.DH_ALPHA, lwr.MASS, lwr.COM):
            T = T @ lwr.dh(qi, d, alpha)
            u += m * g0 * (T[:3, :3] @ c + T[:3, 3])[2]
        return u
    h = 1e-6
    return np.array([(potential(q + h * e) - potential(q - h * e)) / (2 * h) for e in np.eye(7)])


def test_masses_and_gravity_moments_are_the_published_ones(rng):
    """Keeping m and c keeps every gravity torque: the URDF (through Pinocchio, base fixed at
    the identity) against the published DH-frame parameters."""
    model = FloatingBaseModel.from_urdf(URDF, gravity=(0, 0, -9.81))
    assert_close(model.mass, lwr.BASE_MASS + lwr.MASS.sum(), 1e-12, "total mass")
    for _ in range(5):
        q = rng.uniform(-2, 2, 7)
        q_pin = np.r_[np.zeros(3), 0, 0, 0, 1, q]
        tau = pin.computeGeneralizedGravity(model.pin_model, model.pin_model.createData(), q_pin)
        assert_close(tau[6:], _published_gravity(q), 1e-7, "gravity torques")


def test_projection_is_the_nearest_consistent_inertia(rng):
    """Same principal axes, triangle inequalities hold with the margin, an already consistent
    tensor is unchanged, and no consistent tensor nearby is closer (random search)."""
    _, _, published = lwr.published_in_urdf_frames()
    _, _, projected = lwr.projected_parameters()
    for k, (I, P) in enumerate(zip(published, projected)):
        a, b, c = np.linalg.eigvalsh(P)
        assert a + b >= c + 0.99 * lwr.MARGIN, f"link {k + 1} violates the triangle inequality"
        assert_close(I @ P, P @ I, 1e-12, f"link {k + 1}: principal axes kept")
        d = np.linalg.norm(P - I)
        for _ in range(200 if d > 0 else 0):
            S = rng.normal(size=(3, 3))
            Q = P + 1e-3 * d * (S + S.T)
            ev = np.sort(np.linalg.eigvalsh(Q))
            if ev[0] + ev[1] >= ev[2] + lwr.MARGIN:
                assert np.linalg.norm(Q - I) >= d * (1 - 1e-9), f"link {k + 1}: not nearest"
    assert_close(projected[3], published[3], 0, "link 4 was consistent: unchanged")


def test_mujoco_accepts_the_urdf():
    from floating_base_control.sim.plant import MujocoPlant
    model = FloatingBaseModel.from_urdf(URDF)
    plant = MujocoPlant.from_urdf(URDF, model)
    assert_close(plant.model.body_mass.sum(), model.mass, 1e-9, "MuJoCo total mass")
