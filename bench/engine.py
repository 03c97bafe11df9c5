"""Speed of the [Mishra2023] engine on the orbital robot, against Pinocchio in the same run.

Timed (medians over many calls, cycling through random states inside the
joint limits):

* Pinocchio ``crba`` + ``computeCoriolisMatrix`` (the reference cost),
* the REL terms of eq. 18 from Pinocchio recursions (``rel_terms``), alone and
  with the compensation torques of eq. 45 from them (all ten terms, the paper's order),
* what the control tick evaluates of them (``rel_fast``'s kernel, Pinocchio's order):
  ``M_b`` factorized, ``A_l qdot``, the ``(mu, mu)`` CC forces and ``tau_hat_2`` (the
  default compensation), and with the ``(mu, qdot)`` cross terms ``tau_hat_1``,
* all REL matrices of Theorem 1 from the per-link sums (the paper's form),
* the curvature for all joint pairs by Theorem 2 and by central differences
  of ``A_l`` (Def. 5), with their agreement.

Also: bytes allocated per call of ``rel_terms`` (tracemalloc).
"""
import gc
import os
import statistics
import time
import tracemalloc

import numpy as np
import pinocchio as pin

from common import save
from floating_base_control import FloatingBaseModel
from floating_base_control.control.shape import CompensationTorques
from floating_base_control.dynamics import curvature as curv
from floating_base_control.dynamics import rel_matrices as rel
from floating_base_control.dynamics.rel_fast import (connection_velocity, locked_inertia_factor, mu_mu_cc_forces,
                                                     rel_terms)
from floating_base_control.conventions import SWAP
from floating_base_control.kinematics import mechanical_connection, shape_kinematics
from floating_base_control.resources import orbital_robot_urdf

SAMPLES, CALLS = 300, 20


def median_us(fns, states):
    """Median over SAMPLES of the mean time of CALLS consecutive calls, in microseconds.

    The functions are interleaved sample by sample, so that a slow spell of the
    machine affects all of them alike and the ratios stay fair.
    """
    samples = {name: [] for name in fns}
    gc.disable()
    try:
        for i in range(SAMPLES):
            s = states[i % len(states)]
            for name, fn in fns.items():
                t0 = time.perf_counter()
                for _ in range(CALLS):
                    fn(*s)
                samples[name].append((time.perf_counter() - t0) / CALLS * 1e6)
    finally:
        gc.enable()
    return {name: statistics.median(v) for name, v in samples.items()}


def allocated_bytes(fn, state, calls=100):
    """Peak traced allocation of one call (after warm-up), in bytes."""
    fn(*state)
    tracemalloc.start()
    for _ in range(calls):
        tracemalloc.reset_peak()
        fn(*state)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def run():
    model = FloatingBaseModel.from_urdf(orbital_robot_urdf())
    ws = model.create_data()
    rng = np.random.default_rng(0)
    lo, hi = model.position_limits.T
    states = [(rng.uniform(lo, hi), rng.normal(size=model.n), rng.normal(size=6) * 0.2)
              for _ in range(32)]
    pm, pd = model.cc_pin_model, model.cc_pin_model.createData()

    def pinocchio(q, qdot, mu):
        ws.q_pin[7:], ws.v_cc[6:], ws.v_cc[:6] = q, qdot, mu
        pin.crba(pm, pd, ws.q_pin)
        pin.computeCoriolisMatrix(pm, pd, ws.q_pin, ws.v_cc)

    def terms_and_compensation(q, qdot, mu):           # eq. 45's tau_hat_1 and tau_hat_2 read off the terms
        t = rel_terms(model, ws, q, qdot, mu)
        return t.shape_mu_mu + t.shape_mu_qdot, t.shape_mu_mu

    def terms_only(q, qdot, mu):
        return rel_terms(model, ws, q, qdot, mu)

    def tick_tau2(q, qdot, mu):
        mu = mu[SWAP]
        locked_inertia_factor(model, ws, q)
        connection_velocity(ws.A, qdot, ws.A_qdot)
        return CompensationTorques(model, ws, mu, qdot, mu_mu_cc_forces(model, ws, mu)).tau_hat_2

    def tick_tau1(q, qdot, mu):
        mu = mu[SWAP]
        locked_inertia_factor(model, ws, q)
        connection_velocity(ws.A, qdot, ws.A_qdot)
        return CompensationTorques(model, ws, mu, qdot, mu_mu_cc_forces(model, ws, mu)).tau_hat_1

    def matrices(q, qdot, mu):
        kin = shape_kinematics(model, ws, q, qdot)
        return rel.reduced_inertia(kin), rel.cc_matrices(kin, mu)

    def curvature_theorem_2(q, qdot, mu):
        return curv.curvature_tensor(shape_kinematics(model, ws, q))

    def curvature_differences(q, qdot, mu):
        return curv.curvature_tensor_fd(lambda x: mechanical_connection(model, ws, x), q)

    timings = median_us({
        "pinocchio_crba_plus_coriolis_matrix": pinocchio,
        "rel_terms": terms_only,
        "rel_terms_plus_compensation": terms_and_compensation,
        "tick_terms_plus_compensation_tau2": tick_tau2,
        "tick_terms_plus_compensation_tau1": tick_tau1,
        "rel_matrices_per_link": matrices,
        "curvature_all_pairs_theorem_2": curvature_theorem_2,
        "curvature_all_pairs_central_differences": curvature_differences,
    }, states)
    agreement = max(
        np.abs(curvature_theorem_2(*s) - curvature_differences(*s)).max()
        / np.abs(curvature_theorem_2(*s)).max() for s in states)
    base = timings["pinocchio_crba_plus_coriolis_matrix"]
    return {
        "model": repr(model),
        "median_us": {k: round(v, 2) for k, v in timings.items()},
        "ratio_to_pinocchio": {k: round(v / base, 2) for k, v in timings.items()},
        "curvature_speedup_over_differences": round(
            timings["curvature_all_pairs_central_differences"] / timings["curvature_all_pairs_theorem_2"], 2),
        "curvature_max_relative_difference": float(agreement),
        "rel_terms_bytes_per_call": allocated_bytes(lambda *s: rel_terms(model, ws, *s), states[0]),
        "tick_terms_plus_compensation_tau2_bytes_per_call": allocated_bytes(tick_tau2, states[0]),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }


def report(result):
    print(result["model"])
    print(f"{'':46s}{'median us':>12s}{'x Pinocchio':>13s}")
    for k, v in result["median_us"].items():
        print(f"  {k:44s}{v:12.1f}{result['ratio_to_pinocchio'][k]:13.2f}")
    print(f"  curvature: Theorem 2 is {result['curvature_speedup_over_differences']}x faster than "
          f"central differences; max relative difference {result['curvature_max_relative_difference']:.2e}")
    print(f"  rel_terms allocates {result['rel_terms_bytes_per_call']} bytes per call")


if __name__ == "__main__":
    res = run()
    report(res)
    save(res, "engine")
