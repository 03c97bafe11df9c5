"""A short report of a floating-base model: locked inertia, connection and curvature.

This is what ``fbc inspect`` prints; it is the first thing to look at when a
new URDF is loaded (are mass and inertia plausible, how strongly does each joint
move the base, which joint pairs have the largest curvature).
"""
import numpy as np

from ..dynamics.centroidal import center_of_mass, inertia_at_com
from ..dynamics.curvature import curvature_tensor
from ..dynamics.rel_matrices import reduced_shape_inertia


def shape_report(model, q):
    """Dictionary of the seed 002 quantities of ``model`` at shape ``q`` (plain floats and lists)."""
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

