"""Every URDF of the ``example-robot-data`` package: does it load, does its plant build, why not.

    python studies/urdf_corpus.py [--json out/urdf_corpus.json]

For each URDF: :class:`FloatingBaseModel` (default options: mimic groups locked), then the MuJoCo
plant built without meshes and checked against the model at construction.  Prints one row per
robot (n shape joints, what was locked/merged, or the refusal) and the counts; any exception that
is not the package's own error is reported as FOREIGN (a bug).  test/test_urdf_corpus.py runs the
same corpus, with the cross-checks against Pinocchio and MuJoCo, in every ``make test``.
"""
import argparse
import json
import time

from floating_base_control.resources import example_robot_data_urdfs
from floating_base_control.validation import FloatingBaseError


def survey(path):
    from floating_base_control.model import FloatingBaseModel
    from floating_base_control.sim.plant import MujocoPlant
    row = {}
    t0 = time.perf_counter()
    try:
        model = FloatingBaseModel.from_urdf(path)
        row.update(status="loads", n=model.n, bodies=len(model.link_names),
                   locked=sorted(model.locked_joints))
    except FloatingBaseError as exc:
        return {**row, "status": "refused", "reason": str(exc)}
    except Exception as exc:   # noqa: BLE001 - this is what the survey is for
        return {**row, "status": "FOREIGN", "reason": f"{type(exc).__name__}: {exc}"}
    try:
        MujocoPlant.from_urdf(path, model, contacts=False)
        row["plant"] = "builds"
    except FloatingBaseError as exc:
        row.update(plant="refused", reason=str(exc))
    except Exception as exc:   # noqa: BLE001
        row.update(plant="FOREIGN", reason=f"{type(exc).__name__}: {exc}")
    row["seconds"] = round(time.perf_counter() - t0, 3)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="also write the table as JSON here")
    args = ap.parse_args()
    rows = {}
    for name, path in example_robot_data_urdfs().items():
        rows[name] = survey(path)
        r = rows[name]
        extra = r.get("reason", f"n={r.get('n')} locked={r.get('locked')} plant={r.get('plant')}")
        print(f"{name:45s} {r['status']:8s} {extra[:200]}", flush=True)
    counts = {}
    for r in rows.values():
        key = r["status"] + ("" if r["status"] != "loads" else f"/plant {r.get('plant')}")
        counts[key] = counts.get(key, 0) + 1
    print(f"\n{len(rows)} URDFs: {counts}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
