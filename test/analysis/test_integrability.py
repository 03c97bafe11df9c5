"""Saccon et al. [Saccon2017]: the three-body example, Prop. 4.1, the staircase frame of
eqs. 26-28 and holonomy (analysis/integrability.py)."""
from pathlib import Path

import numpy as np
import pytest

from helpers import saccon_three_body
from helpers import assert_close
from floating_base_control import FloatingBaseModel, InputError
from floating_base_control.analysis import integrability as itg
from floating_base_control.dynamics.centroidal import center_of_mass
from floating_base_control.lie import log, vee
from floating_base_control.resources import share_file


@pytest.fixture(scope="module", params=[0, 1], ids=["d0", "d1"])
def three_body(request):
    d = request.param
    return d, FloatingBaseModel.from_urdf(share_file(f"urdf/three_body_d{d}.urdf"))


def printed_B12(s1, s2):
    """[Saccon2017] Sec. V, d = 1: calB_12 exactly as printed, ordered [v; omega]."""
    S1, S2, C1, C2 = np.sin(s1), np.sin(s2), np.cos(s1), np.cos(s2)
    den = (2 * np.cos(s1 - s2) + 6 * S1 - 6 * S2 - 28) ** 2
    return np.array([2 * (C1 + C2) * (4 * C1 + 4 * C2 - 3 * C1 * S2 + 3 * C2 * S1),
                     2 * C1 * (4 * S1 + 4 * S2 - 3 * S1 * S2 - 3 * S2 * S2)
                     + 2 * C2 * (4 * S1 + 4 * S2 + 3 * S1 * S2 + 3 * S1 * S1),
                     0.0, 0.0, 0.0,
                     -18 * np.sin(s1 - s2) - 24 * C1 - 24 * C2]) / den


def paper_loop(samples=400):
    """[Saccon2017] Sec. V: s1 = 3 pi/2 (cos(2 pi t/T) - 1), s2 = pi/2 sin(2 pi t/T)."""
    t = np.linspace(0.0, 1.0, samples + 1)
    return np.column_stack([1.5 * np.pi * (np.cos(2 * np.pi * t) - 1),
                            0.5 * np.pi * np.sin(2 * np.pi * t)])


def test_shipped_urdfs_are_the_generator_output(three_body):
    d, model = three_body
    assert Path(share_file(f"urdf/three_body_d{d}.urdf")).read_text() \
        == saccon_three_body.urdf_text(d)
    assert model.joint_names == ("s1", "s2")


def test_theorem_2_reproduces_the_printed_curvature(three_body, rng):
    """d = 1: calB_12 = -P DA_l(e_1) e_2 equals the printed formula at random shapes;
    d = 0: it is identically zero."""
    d, model = three_body
    for s in rng.uniform(-np.pi, np.pi, (20, 2)):
        B = itg.saccon_curvature(model.kinematics(s))
        assert_close(B[:, 0, 1], printed_B12(*s) if d else np.zeros(6), 1e-14, f"calB_12 at {s}")
        assert_close(B[:, 1, 0], -B[:, 0, 1], 1e-15, "antisymmetric")


def test_verdict_of_the_scan(three_body, rng):
    d, model = three_body
    scan = itg.curvature_scan(model, itg.sample_shapes(model, 100, rng))
    assert scan.flat == (d == 0)
    if d:
        assert scan.max_rotational > 0.05 and scan.worst_pair == (0, 1)
        expected = np.abs(printed_B12(*scan.worst_shape)[5])
        assert_close(scan.max_rotational, expected, 1e-12, "max |rotational curvature|")
    else:
        assert scan.max_rotational < 1e-15 and scan.max_translational < 1e-15


def test_staircase_frame_is_path_independent_iff_flat(three_body, rng):
    """Eqs. 26-28 against integrating the locked velocity along a straight line; the CoM is
    the origin of F(s) (App. B) and, when flat, eq. 23 holds: (dF/ds_i F^-1)^v = A_l e_i."""
    d, model = three_body
    s = rng.uniform(-2, 2, 2)
    dependence = itg.path_dependence(model, s)
    assert (dependence < 1e-12) if d == 0 else (dependence > 1e-2), dependence
    F = itg.centroidal_frame(model, s)
    assert_close(F[:3, 3], center_of_mass(model.kinematics(s)), 1e-9, "origin of C at the CoM")
    if d == 0:
        h = 1e-6
        for i, e in enumerate(np.eye(2)):
            dF = (itg.centroidal_frame(model, s + h * e) - itg.centroidal_frame(model, s - h * e))
            assert_close(vee(dF / (2 * h) @ np.linalg.inv(F)), model.mechanical_connection(s)[:, i],
                         1e-8, f"eq. 23, column {i}")


def test_holonomy_of_the_paper_loop(three_body):
    """Fig. 2 of [Saccon2017]: after the loop C has turned w.r.t. the base for d = 1, not for
    d = 0; in both cases it is a rotation about the CoM (the CoM returns)."""
    d, model = three_body
    H = itg.holonomy(model, paper_loop())
    angle = np.degrees(np.linalg.norm(log(H)[:3]))
    # the angle of docs/explanation/geometry.md
    assert angle == (pytest.approx(34.011, abs=1e-3) if d else pytest.approx(0.0, abs=1e-10))
    c0 = center_of_mass(model.kinematics(np.zeros(2)))
    assert_close(H[:3, :3] @ c0 + H[:3, 3], c0, 1e-7, "CoM fixed in C")


def test_a_full_turn_of_a_link_turns_C_by_45_degrees_when_flat():
    """d = 0: A_l is constant, omega_z = (s1_dot + s2_dot) / 8 (base 4 + 2 x (1 + 1) kg m^2 at
    the CoM); the frame of a non-contractible loop on the torus is not the identity."""
    model = FloatingBaseModel.from_urdf(share_file("urdf/three_body_d0.urdf"))
    F = itg.centroidal_frame(model, [2 * np.pi, 0.0])
    assert_close(np.degrees(log(F)[2]), 45.0, 1e-9, "rotation of C")


def test_bad_input_is_rejected(orbital):
    loop = np.zeros((5, orbital.n))
    loop[-1, 0] = 0.1
    with pytest.raises(InputError, match="not closed"):
        itg.holonomy(orbital, loop)
    with pytest.raises(InputError, match="non-finite"):
        itg.curvature_scan(orbital, np.full((2, orbital.n), np.inf))
    with pytest.raises(InputError, match="shape"):
        itg.centroidal_frame(orbital, np.zeros(orbital.n + 1))
