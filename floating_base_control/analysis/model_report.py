"""A short report of a floating-base model: locked inertia, connection and curvature.

This is what ``fbc inspect`` prints; it is the first thing to look at when a
new URDF is loaded (are mass and inertia plausible, how strongly does each joint
move the base, which joint pairs have the largest curvature).
"""
import numpy as np

from floating_base_control.dynamics.centroidal import center_of_mass, inertia_at_com
from floating_base_control.dynamics.curvature import curvature_tensor
from floating_base_control.dynamics.rel_matrices import reduced_shape_inertia


def shape_report(model, q):
    """Dictionary of the [Mishra2023] quantities of ``model`` at shape ``q`` (plain floats and lists)."""
    kin = model.kinematics(q)
    A, mass = kin.A_l, kin.M_b[3, 3]
    com, I_com = center_of_mass(kin), inertia_at_com(kin)
    F = curvature_tensor(kin)
    rot = np.linalg.norm(F[:3], axis=0)                            # |rotational part| per pair
    i, j = np.unravel_index(np.argmax(np.triu(rot, 1)), rot.shape)
    Lam = reduced_shape_inertia(kin)
    return {
        "q_rad": q.tolist(),
        "mass_kg": float(mass),
        "com_in_base_m": com.tolist(),
        "principal_inertia_at_com_kgm2": np.linalg.eigvalsh(I_com).tolist(),
        "connection_rotation_per_joint": np.linalg.norm(A[:3], axis=0).tolist(),
        "connection_translation_per_joint_m": np.linalg.norm(A[3:], axis=0).tolist(),
        "reduced_shape_inertia_condition": float(np.linalg.cond(Lam)),
        "max_curvature_pair": [model.joint_names[i], model.joint_names[j]],
        "max_curvature_rotation": float(rot[i, j]),
        "max_curvature_twist": F[:, i, j].tolist(),
    }


def loading_report(model):
    """What loading the URDF changed (``model.description``, see ``urdf_loader``): plain lists and dicts."""
    from floating_base_control.urdf_loader import body_links
    d = model.description
    pm = model.pin_model
    merged = {model.link_names[j - 1]: body_links(pm, j)[1:] for j in range(1, pm.njoints)}
    return {
        "base_link": model.link_names[0],
        "dropped_root_link": d.dropped_root if d else "",
        "merged_links": {body: links for body, links in merged.items() if links},
        "locked_joints": dict(model.locked_joints),
        "mimic_joints": {f: list(v) for f, v in d.mimic.items()} if d else {},
        "joints_without_position_limits": sorted(d.unlimited_position & set(model.joint_names)) if d else [],
        "joints_without_effort_limits": sorted(d.unlimited_effort & set(model.joint_names)) if d else [],
        "joint_damping": dict(d.damping) if d else {},
        "joint_friction": dict(d.friction) if d else {},
    }
