"""[Mishra2023] Sec. V-B2 reproduced on urdf/lwr4_free_floating.urdf, with the table of
docs/explanation/geometry.md and a sensitivity study of the choices the paper leaves open.

    python studies/sec_vb.py            (about a minute; JSON in out/studies/sec_vb.json)

Rows: the exact displacement (eq. 9, 4096-segment circle), the Stokes estimate (eq. 11)
in the virtual chassis and in the base frame, and zeta read off a 30 x 30 CCF map as in
the paper (Appendix C2).  Variants: link inertias set to zero (how much the projected
inertias matter), the base CoM 0.15 m below the arm mount, link 7's CoM 0.078 m further
out (DH d7 = 0.078 instead of 0).
"""
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from floating_base_control import FloatingBaseModel
from floating_base_control.analysis import locomotion as loc
from floating_base_control.lie import Ad, exp, log
from floating_base_control.resources import share_file
from floating_base_control.results import write_json

URDF = share_file("urdf/lwr4_free_floating.urdf")
SAMPLES = 4096


def variant(change):
    root = ET.parse(URDF).getroot()
    change(root)
    return FloatingBaseModel.from_urdf_string(ET.tostring(root, encoding="unicode"))


def zero_link_inertias(root):
    for link in root.findall("link")[1:]:
        for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"):
            link.find("inertial/inertia").set(k, "0")


def base_com_below_mount(root):
    root.find("link/inertial/origin").set("xyz", "0 0 -0.15")


def link7_com_out(root):
    origin = root.findall("link")[-1].find("inertial/origin")
    x, y, z = map(float, origin.get("xyz").split())
    origin.set("xyz", f"{x} {y} {z + 0.078}")


def xyz(g):
    return Rotation.from_matrix(g[:3, :3]).as_euler("XYZ", degrees=True)


def angle_deg(a, b):
    return float(np.degrees(np.linalg.norm(log(np.linalg.solve(a, b))[:3])))


def study(model, fine):
    dg = loc.net_displacement(model, fine.qs)
    rows = {"exact (eq. 9)": dg}
    for frame in loc.FRAMES:
        rows[f"Stokes, {frame} frame (eq. 11)"] = loc.stokes_estimate(model, fine, frame).dg
    r1, r2 = np.linspace(-0.05, 1.05, 30), np.linspace(-0.55, 0.55, 30)
    ccf = loc.ccf_map(model, fine.Psi, r1, r2)
    g_1c = loc.virtual_chassis(model.kinematics(fine.qs[0]))
    rows["30 x 30 CCF map (App. C2)"] = exp(Ad(g_1c) @ loc.ccf_volume(r1, r2, ccf, fine.r))
    return {name: {"xyz_deg": xyz(g).tolist(), "translation_mm": (1e3 * g[:3, 3]).tolist(),
                   "error_metric": loc.displacement_error(dg, g),
                   "orientation_error_deg": angle_deg(dg, g)} for name, g in rows.items()}


def run():
    fine = loc.sec_vb_gait(7, SAMPLES)
    models = {"LWR 4+ (shipped URDF)": FloatingBaseModel.from_urdf(URDF),
              "link inertias zero": variant(zero_link_inertias),
              "base CoM 0.15 m below the mount": variant(base_com_below_mount),
              "link 7 CoM +0.078 m (d7)": variant(link7_com_out)}
    result = {"samples": SAMPLES, "paper": loc.SEC_VB_PAPER}
    for name, model in models.items():
        result[name] = study(model, fine) if name.startswith("LWR") else \
            {"exact (eq. 9)": study_exact(model, fine)}
    return result


def study_exact(model, fine):
    dg = loc.net_displacement(model, fine.qs)
    est = loc.stokes_estimate(model, fine).dg
    return {"xyz_deg": xyz(dg).tolist(), "translation_mm": (1e3 * dg[:3, 3]).tolist(),
            "stokes_xyz_deg": xyz(est).tolist(), "orientation_error_deg": angle_deg(dg, est),
            "error_metric": loc.displacement_error(dg, est)}


def report(result):
    f = lambda v: "(" + ", ".join(f"{x:.4f}" for x in v) + ")"      # noqa: E731
    p = result["paper"]
    print("| | final base orientation XYZ (deg) | translation (mm) | error metric | orientation error (deg) |")
    print("|---|---|---|---|---|")
    print(f"| paper, exact | {f(p['exact_xyz_deg'])} | | | |")
    print(f"| paper, estimate | {f(p['estimate_xyz_deg'])} | | {p['error_metric']} | "
          f"{p['orientation_error_deg']} |")
    for name, r in result["LWR 4+ (shipped URDF)"].items():
        print(f"| {name} | {f(r['xyz_deg'])} | {f(r['translation_mm'])} | "
              f"{r['error_metric']:.4f} | {r['orientation_error_deg']:.4f} |")
    print("\n| variant | exact XYZ (deg) | Stokes (chassis) XYZ (deg) | orientation error (deg) |")
    print("|---|---|---|---|")
    for name, r in result.items():
        if name in ("samples", "paper", "LWR 4+ (shipped URDF)"):
            continue
        r = r["exact (eq. 9)"]
        print(f"| {name} | {f(r['xyz_deg'])} | {f(r['stokes_xyz_deg'])} | "
              f"{r['orientation_error_deg']:.4f} |")


if __name__ == "__main__":
    res = run()
    report(res)
    out = Path("out/studies")
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "sec_vb.json", res)
