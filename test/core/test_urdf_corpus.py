"""Every robot of ``example-robot-data`` (69 real URDFs): it loads, or it is refused with the package's
error naming the cause; every one that loads agrees with Pinocchio and MuJoCo.

The whole corpus runs in every ``make test`` (about 20 s: loading, the plant and the checks at one
random state per robot), so no sampling is needed.  ``studies/urdf_corpus.py`` prints the survey.
Tolerances are relative to the largest entry of the reference, 1e-8, looser only by the reference's
own conditioning (``EPS_COND * cond``, printed in the message) where that is larger.
"""
import functools

import numpy as np
import pinocchio as pin
import pytest

from floating_base_control import FloatingBaseModel, ModelError
from floating_base_control.conventions import to_pinocchio
from floating_base_control.lie import Ad, Ad_inv
from floating_base_control.resources import example_robot_data_urdfs
from floating_base_control.sim.plant import MujocoPlant, check_plant_matches
from helpers import random_state
from helpers.pinocchio_reference import reduced_rates_from_pinocchio
from helpers.pinocchio_reference import PinRef

ROBOTS = example_robot_data_urdfs()
TOL = 1e-8
EPS_COND = 1e-14

#: The refused robots: the error must contain the text, and the reason is physical.
REFUSED = {
    "alex_description/urdf/alex_psyonic_hands.urdf": (
        "mimics 'index_q1', which is not a joint of the URDF",
        "a broken description: its finger joints mimic a joint it does not contain, so the coupling "
        "(and the shape) is undefined"),
    "hector_description/robots/quadrotor_base.urdf": (
        "no movable joints",
        "one rigid body: there is no shape q, nothing for [Mishra2023]'s shape dynamics to act on"),
    "iris_description/robots/iris_simple.urdf": (
        "no movable joints", "one rigid body, as the quadrotor above"),
    "romeo_description/urdf/romeo_laas_small.urdf": (
        "negative principal moment",
        "the trunk (base_link and five links merged by fixed joints) has a principal moment of "
        "-0.021 kg m^2 against 0.099: no mass distribution has a negative moment of inertia"),
    "romeo_description/urdf/romeo_small.urdf": (
        "link 'RShoulderYawLink' is not physically consistent",
        "principal moments 0.00066 + 0.00068 < 0.0066 kg m^2: the triangle inequality holds for every "
        "real mass distribution"),
    "ur_description/urdf/ur3.urdf": (
        "has no <link>", "an empty <robot/> (the file holds no description, only a comment)"),
}
LOADING = [name for name in ROBOTS if name not in REFUSED]


def test_the_corpus_is_all_there():
    assert len(ROBOTS) == 69 and set(REFUSED) <= set(ROBOTS)
    assert len(LOADING) == 63


@functools.lru_cache(maxsize=None)
def _model(name):
    return FloatingBaseModel.from_urdf(ROBOTS[name])


def _rng(name):
    return np.random.default_rng(sum(map(ord, name)))


def _check(actual, expected, what, cond=1.0):
    scale = np.abs(expected).max()
    err = np.abs(actual - expected).max() / scale
    tol = max(TOL, EPS_COND * cond)
    assert err <= tol, f"{what}: relative error {err:.3g} > {tol:.3g} (cond of the reference {cond:.3g})"


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_with_the_cause(name):
    text, _why = REFUSED[name]
    with pytest.raises(ModelError) as err:
        FloatingBaseModel.from_urdf(ROBOTS[name])
    assert text in str(err.value)


@pytest.mark.parametrize("name", LOADING)
def test_loads_and_agrees_with_pinocchio_and_mujoco(name):
    model = _model(name)
    rng = _rng(name)
    q, qdot, V1, _ = random_state(model, rng)
    M = PinRef(model, q).M()
    cond = np.linalg.cond(M)
    # REL forward dynamics (eq. 18) against ABA
    tau, F1 = rng.normal(size=model.n), rng.normal(size=6)
    mu = model.locked_velocity(q, V1, qdot)
    mu_dot, qddot = reduced_rates_from_pinocchio(model, q, V1, qdot, tau, F1)
    got = model.forward_dynamics_reduced(q, mu, qdot, tau, F1)
    _check(got[1], qddot, f"{name}: qddot vs ABA", cond)
    _check(got[0], mu_dot, f"{name}: mu_dot vs ABA", cond)
    # locked velocity = the centroidal average velocity of ccrba
    g1 = pin.exp6(pin.Motion(rng.normal(size=6))).homogeneous
    pm = pin.Model(model.pin_model)
    pd = pm.createData()
    pin.ccrba(pm, pd, *to_pinocchio(g1, q, V1, qdot))
    Ig = pd.Ig.matrix()
    v_G = np.linalg.solve(Ig, pd.hg.vector)                        # [v; omega] at the CoM, world axes
    g_G = np.eye(4)
    g_G[:3, 3] = pd.com[0]
    _check(Ad_inv(g_G) @ Ad(g1) @ mu, np.r_[v_G[3:], v_G[:3]], f"{name}: mu vs ccrba", np.linalg.cond(Ig))
    # the plant: built without meshes, and equal to the model at another random state
    plant = MujocoPlant.from_urdf(ROBOTS[name], model, joint_dynamics="ideal", contacts=False)
    err_M, err_J = check_plant_matches(plant, model, seed=1)
    assert err_M <= TOL and err_J <= TOL, f"{name}: plant vs model {err_M:.3g}, {err_J:.3g}"
