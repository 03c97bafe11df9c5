"""Errors and input checks shared by the whole package.

Every public function that takes numbers from a user checks them here, so that
a wrong shape or a NaN is reported with the argument's name instead of
surfacing later as a LinAlgError or as a silently wrong torque.
"""
import os

import numpy as np


class FloatingBaseError(ValueError):
    """Base class of the errors raised by floating_base_control."""


class ModelError(FloatingBaseError):
    """The robot description cannot be used: it does not parse, or it is not physical."""


class InputError(FloatingBaseError):
    """A numeric input has the wrong shape or is not finite."""


def vector(name, x, n):
    """``x`` as a float array of shape ``(n,)``; raise :class:`InputError` naming ``name``."""
    return array(name, x, (n,))


def array(name, x, shape):
    """``x`` as a float array of the given shape, finite everywhere."""
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be numeric with shape {shape}: {exc}") from None
    if a.shape != tuple(shape):
        raise InputError(f"{name} must have shape {tuple(shape)}, got {a.shape}")
    if not np.isfinite(a).all():
        bad = np.argwhere(~np.isfinite(a))[:5].tolist()
        raise InputError(f"{name} has non-finite entries at {bad}")
    return a


def pose(name, g, tol=1e-6):
    """``g`` as a 4x4 pose in SE(3): orthonormal rotation, last row ``[0, 0, 0, 1]``."""
    g = array(name, g, (4, 4))
    R = g[:3, :3]
    if np.abs(R.T @ R - np.eye(3)).max() > tol or np.linalg.det(R) < 0:
        raise InputError(f"{name} is not in SE(3): its rotation block is not orthonormal "
                         f"with determinant +1 (tolerance {tol})")
    if np.abs(g[3] - [0.0, 0.0, 0.0, 1.0]).max() > tol:
        raise InputError(f"{name} is not in SE(3): its last row is {g[3].tolist()}, "
                         "expected [0, 0, 0, 1]")
    return g


def one_line(text):
    """``text`` (an exception's message, say) on one line: what a command or a node says when it stops."""
    return " ".join(str(text).split())


def debugging():
    """Whether ``FBC_DEBUG`` is set (and not 0): the commands and the nodes then let an error through
    with its traceback, instead of saying it in one line."""
    return os.environ.get("FBC_DEBUG", "0") not in ("", "0")
