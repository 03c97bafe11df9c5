"""The first flight of the revolute hopper against the floor's stiffness and damping ([Feurstein2021],
Exp I and IV; docs/explanation/hopper.md, "The first flight").

The thesis names the floor's viscoelasticity among what decides the angular momentum at
lift-off but gives only K and D.  This runs Exp I (radial spring only) and Exp IV (the full
controller) from the same drop on a grid of floors around the thesis' (K = 10000 N/m, D = 1000
N s/m) and on MuJoCo's contact, and prints the angular momentum of the first flight and the
rotation of the CoM-foot line over it; JSON in out/studies/hopper_floor.json.

    python studies/hopper_floor.py
"""
import math
import sys
from pathlib import Path

import numpy as np

from floating_base_control.results import write_json
from floating_base_control.experiments.hopper.report import flights, summarize
from floating_base_control.experiments.hopper.scenario import experiment, run

FLOORS = [("viscoelastic", K, D) for K in (3e3, 1e4, 3e4) for D in (300.0, 1000.0, 3000.0)]
FLOORS.append(("mujoco", None, None))
DURATION = 1.5   #: s: the drop, the first stance, the first flight and the second touchdown


def first_flight(exp, floor, K, D):
    """``(angular momentum about the CoM in the first flight (N m s, thesis sign), its rotation
    (deg; NaN if it falls before landing), fell at (s or None))``."""
    kw = {} if K is None else {"floor_K": K, "floor_D": D}
    log, flows, meta = run(exp, DURATION, floor=floor, log_every=1, loop_delay_s=0.0, **kw)
    s = summarize(exp, log, flows, meta)
    hops = flights(log)
    if not hops:
        return math.nan, math.nan, s["fell_at_s"]
    t_lo, t_td = hops[0][:2]
    a = log.arrays()
    end = a["t"][-1] if math.isnan(t_td) else t_td
    in_flight = (a["t"] > t_lo + 0.002) & (a["t"] < end - 0.001)
    rotation = s["flight_rotations_deg"][0] if s["flight_rotations_deg"] else math.nan
    return float(np.median(a["L"][in_flight])), rotation, s["fell_at_s"]


def sweep():
    rows = []
    for floor, K, D in FLOORS:
        row = {"floor": floor, "K": K, "D": D}
        for name in ("I", "IV"):
            L, rot, fell = first_flight(experiment("revolute", name), floor, K, D)
            row[name] = {"L_first_flight": L, "rotation_deg": rot, "fell_at_s": fell}
        rows.append(row)
        print(f"{floor} K={K} D={D}: done", file=sys.stderr)
    return rows


def table(rows):
    lines = ["| floor | K [N/m] | D [N s/m] | Exp I: L [N m s] | Exp I: rotation [deg] | "
             "Exp IV: L [N m s] | Exp IV: rotation [deg] |", "|" + "---|" * 7]
    for r in rows:
        cells = []
        for name in ("I", "IV"):
            c = r[name]
            rot = "falls in flight" if math.isnan(c["rotation_deg"]) else f"{c['rotation_deg']:+.1f}"
            cells += [f"{c['L_first_flight']:+.2e}", rot]
        K = "" if r["K"] is None else f"{r['K']:g}"
        D = "" if r["D"] is None else f"{r['D']:g}"
        lines.append(f"| {r['floor']} | {K} | {D} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    result = sweep()
    out = Path("out/studies")
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "hopper_floor.json", result)
    print(table(result))
