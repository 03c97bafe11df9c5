"""The joint limits a reorientation plan keeps (positions narrowed by a margin, speeds, accelerations), and
the checks of shapes and joint choices against the model."""
from typing import NamedTuple

import numpy as np

from .. import validation as check
from ..validation import InputError

#: Joint position margin (rad) inside the limits, by default.
DEFAULT_MARGIN = 0.05
#: Without acceleration limits (URDFs have none), a joint reaches its speed limit from rest in this time
#: (s): 7.25 rad/s^2 on the Panda's joints 1-4, under Franka's published 7.5-20 rad/s^2.
ACCELERATION_TIME = 0.3


class JointLimits(NamedTuple):
    """The limits a plan keeps: positions already narrowed by the margin."""

    lower: np.ndarray            #: (n,) lowest position allowed (limit + margin), rad
    upper: np.ndarray            #: (n,) highest position allowed (limit - margin), rad
    velocity: np.ndarray         #: (n,) speed limits, rad/s
    acceleration: np.ndarray     #: (n,) acceleration limits, rad/s^2
    margin: float                #: rad


def joint_limits(model, margin=DEFAULT_MARGIN, position_limits=None, velocity_limits=None,
                 acceleration_limits=None):
    """:class:`JointLimits` from the model's URDF limits, or the given ones (``(n, 2)`` positions; ``(n,)``
    or a scalar for speeds and accelerations).  Accelerations default to ``velocity / ACCELERATION_TIME``."""
    n = model.n
    margin = float(check.vector("margin", [margin], 1)[0])
    if margin < 0:
        raise InputError(f"margin must be >= 0, got {margin}")
    pos = model.position_limits if position_limits is None else np.asarray(position_limits, dtype=float)
    if pos.shape != (n, 2) or np.isnan(pos).any():
        raise InputError(f"position_limits must be ({n}, 2) without NaN, got shape {pos.shape}")
    vel = _per_joint(model, "velocity_limits", model.velocity_limits if velocity_limits is None
                     else velocity_limits)
    acc = _per_joint(model, "acceleration_limits", vel / ACCELERATION_TIME if acceleration_limits is None
                     else acceleration_limits)
    lower, upper = pos[:, 0] + margin, pos[:, 1] - margin
    narrow = np.flatnonzero(~(upper > lower))
    if narrow.size:
        j = narrow[0]
        raise InputError(f"the margin {margin} rad leaves no room to move {model.joint_names[j]} "
                         f"(limits {pos[j].tolist()})")
    return JointLimits(lower, upper, vel, acc, margin)


def _per_joint(model, name, value):
    v = np.broadcast_to(np.asarray(value, dtype=float), (model.n,)).copy()
    bad = np.flatnonzero(~(np.isfinite(v) & (v > 0)))
    if bad.size:
        j = bad[0]
        raise InputError(f"{name}: {model.joint_names[j]} has {v[j]:g}; a plan needs a finite positive limit "
                         f"for every joint (pass {name} where the URDF gives none)")
    return v



def _check_within(model, name, q, limits):
    bad = np.flatnonzero((q < limits.lower) | (q > limits.upper))
    if bad.size:
        j = bad[0]
        raise InputError(f"{name}: {model.joint_names[j]} = {q[j]:.4g} rad is outside its limits minus the "
                         f"margin [{limits.lower[j]:.4g}, {limits.upper[j]:.4g}]")


def _joint_indices(model, joints):
    if joints is None:
        return np.arange(model.n)
    out = []
    for j in joints:
        if isinstance(j, str):
            if j not in model.joint_names:
                raise InputError(f"joints: unknown joint {j!r} (the model's: {list(model.joint_names)})")
            out.append(model.joint_names.index(j))
        elif isinstance(j, (int, np.integer)) and 0 <= j < model.n:
            out.append(int(j))
        else:
            raise InputError(f"joints: {j!r} is neither a joint name nor an index in [0, {model.n})")
    out = np.unique(out)
    if len(out) < 2:
        raise InputError(f"joints: a loop needs at least two joints, got {[model.joint_names[j] for j in out]}")
    return out

