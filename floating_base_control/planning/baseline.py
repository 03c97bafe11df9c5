"""The naive baseline of the reorientation planner: the best single circle of the CCF maps ([Mishra2023]
Algorithm 1) in one joint plane, repeated (:func:`naive_baseline`, :func:`baseline_plan`)."""
import math
from itertools import combinations
from typing import NamedTuple

import numpy as np
from scipy.interpolate import RegularGridInterpolator

from .. import validation as check
from ..analysis.locomotion import ccf_map
from .holonomy import path_rotation, rotation_vector
from .limits import DEFAULT_MARGIN, _joint_indices, joint_limits
from .loops import CLEARANCE_SAMPLES, LANDING_STEPS
from .paths import FourierLoop, LinePath
from .reorientation import CLEARANCE, SAMPLE_PERIOD, TIMING_INTERVALS, ReorientationPlan, _clocks, _elapsed
from .clearance import _base_clearance
from .rotations import checked_rotation
from .timing import TimedPath, Trajectory, time_path

#: The baseline's CCF grid (points per joint) and the circles it checks on the exact eq. 9.
BASELINE_GRID, BASELINE_CANDIDATES = 15, 8


class BaselineCircle(NamedTuple):
    """The best single circle of the CCF maps for an axis (see :func:`naive_baseline`)."""

    joints: tuple            #: the plane's two joints (indices)
    center: np.ndarray       #: (2,) centre in the plane's coordinates (offsets from q0, rad)
    radius: float            #: rad
    clockwise: bool
    estimate: float          #: rotation about the axis per cycle from the CCF map (eq. 11), rad
    loop: FourierLoop        #: the circle as a loop based at its start point
    phi: np.ndarray          #: exact rotation vector per cycle (eq. 9), rad


def naive_baseline(model, q0, axis, joints=None, margin=DEFAULT_MARGIN, position_limits=None,
                   velocity_limits=None, clearance=CLEARANCE, grid=BASELINE_GRID, candidates=BASELINE_CANDIDATES):
    """The naive loop: the single circle in one joint plane through ``q0`` that the CCF maps
    ([Mishra2023] Algorithm 1, in the base frame) say turns the base most about ``axis`` per cycle.

    For every pair of allowed joints, the CCF map over the plane's position limits (minus the margin,
    ``grid`` x ``grid`` points); every grid point is a centre, with the largest circle the limits allow
    and half and three quarters of it; eq. 11 (the map's volume under the circle) ranks them, and the exact
    eq. 9 decides among the best ``candidates`` whose circle and moves from and to ``q0`` keep the
    clearance from the base (as :func:`plan_reorientation`'s).
    """
    q0 = check.vector("q0", q0, model.n)
    axis = check.vector("axis", axis, 3)
    axis = axis / np.linalg.norm(axis)
    limits = joint_limits(model, margin, position_limits, velocity_limits)
    allowed = _joint_indices(model, joints)
    base = _base_clearance(model, clearance)
    ranked = sorted((c for i, j in combinations(allowed, 2)
                     for c in _plane_circles(model, q0, axis, (i, j), limits, grid)),
                    key=lambda c: -abs(c[-1]))
    ws = model.create_data()
    best, tried = None, 0
    for (i, j), center, radius, estimate in ranked:
        loop = _circle_loop(model, q0, (i, j), center, radius, clockwise=estimate < 0)
        if base is not None and not _clear_path(base, [LinePath(q0, loop.q_base), loop]):
            continue
        tried += 1
        if tried > candidates:
            break
        phi = rotation_vector(path_rotation(model, ws, loop, LANDING_STEPS))
        if best is None or phi @ axis > best.phi @ axis:
            best = BaselineCircle((i, j), center, radius, estimate < 0, abs(estimate), loop, phi)
    return best


def _clear_path(base, paths):
    """Whether the paths keep the clearance from the base (``CLEARANCE_SAMPLES`` samples each)."""
    clearance, required = base
    return all(clearance.distances(p.derivatives(np.linspace(0.0, p.length, CLEARANCE_SAMPLES))[0]).min()
               >= required for p in paths)


def _plane_circles(model, q0, axis, pair, limits, grid):
    """``(pair, centre, radius, estimated rotation about axis for a counter-clockwise cycle)`` of the
    candidate circles in the plane of ``pair`` (eq. 11 on the CCF map, polar quadrature)."""
    i, j = pair
    lo, hi = limits.lower[[i, j]] - q0[[i, j]], limits.upper[[i, j]] - q0[[i, j]]
    r1, r2 = np.linspace(lo[0], hi[0], grid), np.linspace(lo[1], hi[1], grid)
    Psi = np.zeros((model.n, 2))
    Psi[i, 0] = Psi[j, 1] = 1.0
    ccf = np.einsum("a,ayx->yx", axis, ccf_map(model, Psi, r1, r2, q_c=q0, frame="base")[:3])
    interp = RegularGridInterpolator((r2, r1), ccf)
    centers = np.stack(np.meshgrid(r1, r2), axis=-1).reshape(-1, 2)
    room = np.minimum(centers - lo, hi - centers).min(axis=1)
    u, wu = np.polynomial.legendre.leggauss(8)
    rho, w_rho = (u + 1) / 2, wu / 2                     # radial fraction on [0, 1]
    ang = np.linspace(0, 2 * np.pi, 32, endpoint=False)
    offsets = rho[:, None, None] * np.stack([np.cos(ang), np.sin(ang)], -1)[None]     # (8, 32, 2)
    weights = (w_rho * rho)[:, None] * (2 * np.pi / len(ang))                          # r dr dtheta
    out = []
    for fraction in (0.5, 0.75, 1.0):
        radius = fraction * room
        ok = radius > 1e-3
        points = centers[ok, None, None] + radius[ok, None, None, None] * offsets
        values = interp(np.clip(points, [lo[0], lo[1]], [hi[0], hi[1]])[..., ::-1])
        volume = (values * weights).sum(axis=(1, 2)) * radius[ok] ** 2
        out += [(pair, c, r, -v) for c, r, v in zip(centers[ok], radius[ok], volume)]
    return out


def _circle_loop(model, q0, pair, center, radius, clockwise):
    """The circle as a :class:`FourierLoop` based at its point of angle pi (as ``PlanarGait.circle``)."""
    i, j = pair
    q_start = q0.copy()
    q_start[i] += center[0] - radius
    q_start[j] += center[1]
    return FourierLoop(q_start, [i, j], [[-radius, 0.0], [0.0, radius if clockwise else -radius]])


def baseline_plan(model, q0, target, circle=None, margin=DEFAULT_MARGIN, position_limits=None,
                  velocity_limits=None, acceleration_limits=None, joints=None, clearance=CLEARANCE,
                  sample_period=SAMPLE_PERIOD):
    """The naive plan: move to the start of the :func:`naive_baseline` circle for the target's axis, repeat it
    until the rotation about the axis is reached (rounded up to whole cycles), move back; nothing corrects
    the rotation about the other axes."""
    start = _clocks()
    target = checked_rotation("target", target)
    theta = rotation_vector(target)
    axis = theta / np.linalg.norm(theta)
    limits = joint_limits(model, margin, position_limits, velocity_limits, acceleration_limits)
    if circle is None:
        circle = naive_baseline(model, q0, axis, joints, margin, position_limits, velocity_limits, clearance)
    cycles = math.ceil(np.linalg.norm(theta) / (circle.phi @ axis) - 1e-9)
    loop = circle.loop.with_coefficients(circle.loop.coefficients, cycles)
    paths = [LinePath(q0, loop.q_base), loop, LinePath(loop.q_base, q0)]
    pieces = [TimedPath(p, time_path(p, limits.velocity, limits.acceleration,
                                     TIMING_INTERVALS * (cycles if p is loop else 1))) for p in paths]
    plan = ReorientationPlan(model, Trajectory(pieces), target, circle.loop, cycles, circle.phi, limits,
                             sample_period=sample_period, name="baseline")
    plan.planning_time, plan.planning_cpu_time = _elapsed(start)
    return plan
