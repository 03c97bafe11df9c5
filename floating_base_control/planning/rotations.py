"""Target rotations of a reorientation: from an axis and angle, a quaternion or an absolute attitude, in the
base frame at the start (``R = R1(0)^T R1(T)``), and the checks and angle of a rotation matrix."""
import numpy as np

from .. import validation as check
from ..conventions import quat_wxyz_to_matrix, xyzw_to_wxyz
from ..validation import InputError
from .holonomy import rotation_matrix, rotation_vector

FRAMES = ("base", "world")


def rotation_from_axis_angle(axis, angle, frame="base", start_attitude=None):
    """The target rotation ``R = R1(0)^T R1(T)`` (base frame at the start) of turning by ``angle`` (rad)
    about ``axis``, given in the base frame at the start or in the world frame (then ``start_attitude``,
    the base's attitude ``R1(0)`` in the world, is needed)."""
    axis = check.vector("axis", axis, 3)
    norm = np.linalg.norm(axis)
    if norm < 1e-12:
        raise InputError("axis must be a non-zero vector")
    angle = float(check.vector("angle", [angle], 1)[0])
    return _in_base_frame(rotation_matrix(axis / norm * angle), frame, start_attitude)


def rotation_from_quaternion(quaternion, frame="base", start_attitude=None):
    """The target rotation of the unit quaternion ``(x, y, z, w)`` (ROS order), a rotation in the base frame
    at the start or in the world frame (see :func:`rotation_from_axis_angle`)."""
    q = check.vector("quaternion", quaternion, 4)
    norm = np.linalg.norm(q)
    if abs(norm - 1.0) > 1e-6:
        raise InputError(f"quaternion must have unit norm, got {norm:.6g}")
    return _in_base_frame(quat_wxyz_to_matrix(xyzw_to_wxyz(q)), frame, start_attitude)


def relative_rotation(target_attitude, start_attitude):
    """The target rotation ``R1(0)^T R1_target`` of an absolute attitude target (both in the world)."""
    return checked_rotation("start_attitude", start_attitude).T @ checked_rotation("target_attitude", target_attitude)


def _in_base_frame(R, frame, start_attitude):
    if frame not in FRAMES:
        raise InputError(f"frame must be one of {FRAMES}, got {frame!r}")
    if frame == "base":
        return R
    if start_attitude is None:
        raise InputError("a rotation in the world frame needs start_attitude (the base's attitude in the world)")
    R0 = checked_rotation("start_attitude", start_attitude)
    return R0.T @ R @ R0


def checked_rotation(name, R, tol=1e-6):
    """``R`` (3x3), or :class:`InputError` naming ``name`` if it is not a rotation matrix."""
    R = check.array(name, R, (3, 3))
    if np.abs(R.T @ R - np.eye(3)).max() > tol or np.linalg.det(R) < 0:
        raise InputError(f"{name} is not a rotation matrix (orthonormal, determinant +1; tolerance {tol})")
    return R


def rotation_angle(R):
    """The angle (rad) of a rotation matrix."""
    return float(np.linalg.norm(rotation_vector(R)))

