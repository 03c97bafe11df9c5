"""Algorithm 1 of [Mishra2023] (CCF surface map) on the LWR 4+ of Sec. V-B: Theorem 2 against
central differences of the mechanical connection (Def. 5).

The map is the paper's: the plane of joints 2-4, a 30 x 30 grid over the gait's bounding
box, curvature in the virtual chassis.  Central differences need four evaluations of
``A_l`` per grid point for the one pair (e_1, e_2):
``DA_l(e_1) e_2 = (d_e1 A_l) e_2 - (d_e2 A_l) e_1 - [A_l e_1, A_l e_2]``.
Timed: the whole map (medians of repeated runs, interleaved), in the virtual chassis (which
costs an eigendecomposition per point for both methods) and in the base frame, and the
agreement.
"""
import statistics
import time

import numpy as np

from common import save
from floating_base_control import FloatingBaseModel
from floating_base_control.analysis import locomotion as loc
from floating_base_control.kinematics import mechanical_connection, shape_kinematics
from floating_base_control.lie import Ad_inv, ad
from floating_base_control.resources import share_file

GRID, REPEATS, H = 30, 5, 1e-5


def ccf_central_differences(model, ws, Psi, r1, r2, frame):
    """The map of :func:`loc.ccf_map` with Def. 5 by central differences."""
    e1, e2 = Psi[:, 0], Psi[:, 1]
    out = np.empty((6, r2.size, r1.size))
    for j, b in enumerate(r2):
        for i, a in enumerate(r1):
            q = Psi @ (a, b)
            A = lambda x: mechanical_connection(model, ws, x)       # noqa: E731
            d1 = (A(q + H * e1) - A(q - H * e1)) / (2 * H)
            d2 = (A(q + H * e2) - A(q - H * e2)) / (2 * H)
            A0 = A(q)
            F = d1 @ e2 - d2 @ e1 - ad(A0 @ e1) @ (A0 @ e2)
            if frame == "chassis":
                F = Ad_inv(loc.virtual_chassis(shape_kinematics(model, ws, q))) @ F
            out[:, j, i] = F
    return out


def run():
    model = FloatingBaseModel.from_urdf(share_file("urdf/lwr4_free_floating.urdf"))
    ws = model.create_data()
    gait = loc.sec_vb_gait(model.n)
    r1, r2 = np.linspace(-0.1, 1.1, GRID), np.linspace(-0.6, 0.6, GRID)
    jobs = {f"{method}_{frame}": (lambda m=method, f=frame: loc.ccf_map(model, gait.Psi, r1, r2, frame=f)
                                  if m == "theorem_2" else
                                  ccf_central_differences(model, ws, gait.Psi, r1, r2, f))
            for frame in loc.FRAMES for method in ("theorem_2", "central_differences")}
    times = {name: [] for name in jobs}
    maps = {}
    for _ in range(REPEATS):
        for name, job in jobs.items():
            t0 = time.perf_counter()
            maps[name] = job()
            times[name].append(time.perf_counter() - t0)
    med = {name: statistics.median(v) for name, v in times.items()}
    rot = maps["theorem_2_chassis"][:3]
    return {
        "model": repr(model), "grid": [GRID, GRID],
        "median_ms_per_map": {k: round(v * 1e3, 1) for k, v in med.items()},
        "median_us_per_point": {k: round(v * 1e6 / GRID ** 2, 1) for k, v in med.items()},
        "speedup": {f: round(med[f"central_differences_{f}"] / med[f"theorem_2_{f}"], 2)
                    for f in loc.FRAMES},
        "max_relative_difference_rotational": float(
            np.abs(maps["central_differences_chassis"][:3] - rot).max() / np.abs(rot).max()),
        "max_translational_in_chassis": float(np.abs(maps["theorem_2_chassis"][3:]).max()),
    }


def report(result):
    print(result["model"], f"{result['grid'][0]} x {result['grid'][1]} grid")
    for k, v in result["median_ms_per_map"].items():
        print(f"  {k:30s} {v:9.1f} ms per map, {result['median_us_per_point'][k]:7.1f} us per point")
    for frame, x in result["speedup"].items():
        print(f"  {frame}: central differences take {x}x the time of Theorem 2")
    print(f"  max relative difference of the rotational CCF "
          f"{result['max_relative_difference_rotational']:.1e}; translational CCF in the "
          f"virtual chassis at most {result['max_translational_in_chassis']:.1e}")


if __name__ == "__main__":
    res = run()
    report(res)
    save(res, "ccf")
