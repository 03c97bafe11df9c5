"""Gait geometry of Mishra et al. [Mishra2023], Sec. V-B and Appendix C.

* :func:`reconstruct` / :func:`net_displacement`: the base motion of a joint path by
  integrating eq. 9, ``g1_dot = g1 (mu - A_l(q) qdot)^``, on SE(3).
* :class:`PlanarGait`: a closed gait on a 2-D plane of shape space, ``q = q_c + Psi r``
  (eq. 59 with a linear ``psi``).
* :func:`virtual_chassis`: the minimum-perturbation frame {C} of Sec. V-B2: CoM and
  principal axes of the locked inertia.
* :func:`ccf_map`: Algorithm 1, the constraint curvature function (CCF) over a grid of
  the gait plane, in {C} by Prop. 6.
* :func:`stokes_estimate`: eq. 11, ``log(dg_c) ~ -(area integral of DA_l^c)``, mapped
  back to the base by ``dg1 ~ exp(Ad_1c zeta)`` (Sec. V-B1, step 3).

Sign (eq. 11): a small counter-clockwise loop of area ``a`` in the ``(x, y)`` plane at
``mu = 0`` moves the base by ``log(dg1) = -a DA_l(x) y``.
"""
from itertools import permutations
from typing import NamedTuple

import numpy as np
from scipy.interpolate import RegularGridInterpolator

from floating_base_control import validation as check
from floating_base_control.dynamics.centroidal import center_of_mass, inertia_at_com
from floating_base_control.dynamics.curvature import curvature_pairs
from floating_base_control.kinematics import shape_kinematics
from floating_base_control.analysis.reconstruction import connections, poses_along
from floating_base_control.conventions import swap_columns
from floating_base_control.lie import Ad, Ad_inv, exp, log

#: [Mishra2023] Sec. V-B2: results printed in the paper for its LWR 4+ (orientations in
#: degrees, "XYZ sense"), for comparison only.
SEC_VB_PAPER = {"exact_xyz_deg": (-0.4228, 0.1682, -13.73),
                "estimate_xyz_deg": (-0.9623, 0.9873, -13.25),
                "error_metric": 0.017, "orientation_error_deg": 1.0450}

FRAMES = ("chassis", "base")


# -- eq. 9: reconstruction of the base motion ----------------------------------------

def reconstruct(model, qs, mu=None, t=None, substeps=1):
    """Base poses ``g1(t_k)`` (N x 4 x 4) along a sampled joint path, with ``g1(0) = I``.

    Integrates [Mishra2023] eq. 9, ``g1_dot = g1 (mu - A_l(q) qdot)^``, along the
    piecewise-linear path through the samples ``qs`` (N x n) with the package's RKMK4 on SE(3)
    (``analysis/reconstruction.py``; ``substeps`` steps per segment): the poses stay exactly in
    SE(3) and the error is O(h^4) in the sample spacing.

    ``mu`` is the locked velocity (a body twist ``[omega; v]``): ``None`` (zero
    momentum: the result depends on the path only, not on its timing), a constant
    (6,), samples (N x 6) interpolated linearly in time, or a conserved momentum's
    (:func:`locked_velocity_of_momentum`, evaluated at each stage's pose).  With ``mu``, the
    sample times ``t`` (N,) are needed.
    """
    qs = checked_path(model, qs)
    if substeps < 1 or int(substeps) != substeps:
        raise check.InputError(f"substeps must be a positive integer, got {substeps!r}")
    substeps = int(substeps)
    mu_at, J, t = _locked_velocity_function(mu, t, len(qs))
    dt = np.ones(len(qs) - 1) if t is None else np.diff(t)
    segment = np.repeat(np.arange(len(qs) - 1), 2 * substeps)
    fraction = np.tile(np.arange(2 * substeps) / (2 * substeps), len(qs) - 1)
    dq = np.diff(qs, axis=0)
    nodes = np.vstack([qs[segment] + fraction[:, None] * dq[segment], qs[-1:]])
    A, Minv = connections(model, model.create_data(), nodes, J is not None)
    rate = np.repeat(dq / dt[:, None], substeps, axis=0)                 # each step's, constant on it
    xi = -np.einsum("kij,kj->ki", np.stack([A[0:-1:2], A[1::2], A[2::2]], axis=1).reshape(-1, 6, model.n),
                    np.repeat(rate, 3, axis=0)).reshape(-1, 3, 6)
    if mu_at is not None:
        t_nodes = np.append(t[segment] + fraction * dt[segment], t[-1])
        mu_nodes = swap_columns(mu_at(t_nodes))
        xi += np.stack([mu_nodes[0:-1:2], mu_nodes[1::2], mu_nodes[2::2]], axis=1)
    R, p = poses_along(xi, Minv, J, np.repeat(dt / substeps, substeps))
    poses = np.zeros((len(qs), 4, 4))
    poses[:, :3, :3], poses[:, :3, 3], poses[:, 3, 3] = R[::substeps], p[::substeps], 1.0
    return poses


def net_displacement(model, qs, mu=None, t=None, substeps=1):
    """``dg1 = g1(0)^-1 g1(T)`` (4x4) of the joint path ``qs`` ([Mishra2023] eq. 9, Fig. 2).

    See :func:`reconstruct` for the arguments; this is its last pose.
    """
    return reconstruct(model, qs, mu, t, substeps)[-1]


class MomentumLockedVelocity:
    """``mu(t, g1, q) = M_b(q)^-1 Ad_g1^T J``: the locked velocity of a conserved momentum map ``J``."""

    def __init__(self, model, J):
        self.model, self.J, self.ws = model, check.vector("J", J, 6), model.create_data()

    def __call__(self, t, g1, q):
        kin = shape_kinematics(self.model, self.ws, q)
        return np.linalg.solve(kin.M_b, Ad(g1).T @ self.J)


def locked_velocity_of_momentum(model, J):
    """``mu(t, g1, q) = M_b(q)^-1 Ad_g1^T J``: the locked velocity of a conserved momentum map.

    ``J`` is the spatial momentum ``[angular; linear]`` about the inertial origin
    (Def. 2, ``J = Ad_g1^-T M_b mu``) at ``g1(0) = I``.  With it, :func:`reconstruct`
    gives the geometric plus the dynamic phase ([Muller2023] eq. 6.5).
    """
    return MomentumLockedVelocity(model, J)


def checked_path(model, qs, name="qs", min_rows=2):
    """``qs`` as a finite (N x n) float array with ``N >= min_rows``; :class:`InputError` otherwise."""
    shape = np.shape(qs)
    if len(shape) != 2 or shape[0] < min_rows:
        raise check.InputError(f"{name} must have shape (N >= {min_rows}, {model.n}), got {shape}")
    return check.array(name, qs, (shape[0], model.n))


def _locked_velocity_function(mu, t, N):
    """``(mu(times) or None, J or None, t or None)`` from the accepted forms of ``mu``."""
    if mu is None:
        return None, None, (None if t is None else _times(t, N))
    if t is None:
        raise check.InputError("t (sample times) is required when mu is given")
    t = _times(t, N)
    if isinstance(mu, MomentumLockedVelocity):
        return None, mu.J, t
    if callable(mu):
        raise check.InputError("mu as a function: only a conserved momentum's, locked_velocity_of_momentum(model, J)")
    mu = np.asarray(mu, dtype=float)
    if mu.shape == (6,):
        mu = check.vector("mu", mu, 6)
        return (lambda s: np.tile(mu, (len(s), 1))), None, t
    mu = check.array("mu", mu, (N, 6))
    return (lambda s: np.column_stack([np.interp(s, t, col) for col in mu.T])), None, t


def _times(t, N):
    t = check.vector("t", t, N)
    if not (np.diff(t) > 0).all():
        raise check.InputError("t must be strictly increasing")
    return t


# -- the gait plane (eq. 59) ---------------------------------------------------------

class PlanarGait:
    """A closed gait on a 2-D plane of shape space: ``q = q_c + Psi r`` ([Mishra2023] eq. 59).

    ``Psi`` (n x 2) is the gait Jacobian (its columns span the plane, ``e_1, e_2`` of
    Algorithm 1), ``r`` (N x 2) the closed path in gait coordinates (first point =
    last point), ``q_c`` (n,) the origin of the plane, ``t`` (N,) optional sample times.
    """

    def __init__(self, Psi, r, q_c=None, t=None):
        Psi = np.asarray(Psi, dtype=float)
        if Psi.ndim != 2 or Psi.shape[1] != 2:
            raise check.InputError(f"Psi must be n x 2, got shape {Psi.shape}")
        self.Psi = check.array("Psi", Psi, Psi.shape)
        n = Psi.shape[0]
        if np.linalg.matrix_rank(self.Psi, tol=1e-12 * max(1.0, np.abs(Psi).max())) < 2:
            raise check.InputError("the two columns of Psi must be linearly independent")
        r = np.asarray(r, dtype=float)
        if r.ndim != 2 or r.shape[1] != 2 or r.shape[0] < 4:
            raise check.InputError(f"r must be a closed path of shape (N >= 4, 2), got {r.shape}")
        self.r = check.array("r", r, r.shape)
        gap = np.linalg.norm(self.r[-1] - self.r[0])
        if gap > 1e-9 * max(1.0, np.abs(self.r).max()):
            raise check.InputError(f"the gait path is not closed: it starts at {self.r[0].tolist()} "
                                   f"and ends at {self.r[-1].tolist()} (gap {gap:.3g})")
        self.q_c = np.zeros(n) if q_c is None else check.vector("q_c", q_c, n)
        self.t = None if t is None else _times(t, len(self.r))

    @classmethod
    def circle(cls, Psi, center, radius, samples=256, start_angle=np.pi, clockwise=False,
               q_c=None, period=None):
        """A circle in gait coordinates, ``samples`` segments, starting at ``start_angle`` (rad).

        With ``period`` (s) the samples get uniform times (constant speed).
        """
        center = check.vector("center", center, 2)
        radius = float(check.vector("radius", [radius], 1)[0])
        if radius <= 0 or int(samples) != samples or samples < 3:
            raise check.InputError("a circle needs radius > 0 and an integer samples >= 3")
        s = np.linspace(0.0, 1.0, int(samples) + 1)
        theta = start_angle + (-1.0 if clockwise else 1.0) * 2 * np.pi * s
        r = center + radius * np.column_stack([np.cos(theta), np.sin(theta)])
        r[-1] = r[0]
        return cls(Psi, r, q_c, None if period is None else period * s)

    @property
    def qs(self):
        """The joint path ``q_c + Psi r`` (N x n)."""
        return self.q_c + self.r @ self.Psi.T

    def shape(self, r):
        """``q = psi(q_c, r) = q_c + Psi r`` of a point (or points, ... x 2) of the plane."""
        return self.q_c + np.asarray(r) @ self.Psi.T

    @property
    def signed_area(self):
        """Enclosed area in gait coordinates, positive for a counter-clockwise gait (rad^2)."""
        x, y = self.r[:, 0], self.r[:, 1]
        return 0.5 * float(np.sum(x[:-1] * y[1:] - x[1:] * y[:-1]))


def sec_vb_gait(n=7, samples=256):
    """[Mishra2023] Sec. V-B2: ``Psi`` on joints 2, 3, 4 and ``rdot = pi/2 [sin(pi t), cos(pi t)]``
    from ``r(0) = 0``: a clockwise circle of radius 1/2 about ``(1/2, 0)``, period 2 s."""
    Psi = np.zeros((n, 2))
    Psi[1, 0] = Psi[2, 0] = 1 / np.sqrt(2)
    Psi[3, 1] = 1.0
    return PlanarGait.circle(Psi, (0.5, 0.0), 0.5, samples, start_angle=np.pi, clockwise=True,
                             period=2.0)


# -- the minimum-perturbation frame {C} and Algorithm 1 ------------------------------

def virtual_chassis(kin):
    """``g_1c``: the virtual chassis ([Mishra2023] Sec. V-B2, ref. [33]) seen from the base.

    Origin at the CoM of the locked system, axes along the principal axes of its
    inertia, in which ``M_b`` is diagonal.  The principal axes are ordered to match
    the base axes they are closest to (the permutation with the largest diagonal),
    signed to make that diagonal positive, and one weak axis is flipped if needed to
    make the frame right-handed: the frame then varies continuously with the shape
    (unless two principal moments cross).
    """
    _, V = np.linalg.eigh(inertia_at_com(kin))
    R = V[:, _PERMUTATIONS[np.argmax(np.abs(V[_ROWS, _PERMUTATIONS]).sum(axis=1))]]
    R = R * np.where(np.diag(R) < 0, -1.0, 1.0)
    if np.linalg.det(R) < 0:                  # a weak axis flips to make the frame right-handed
        j = np.argmin(np.abs(np.diag(R)))
        R[:, j] = -R[:, j]
    g = np.eye(4)
    g[:3, :3] = R
    g[:3, 3] = center_of_mass(kin)
    return g


_PERMUTATIONS = np.array(list(permutations(range(3))))
_ROWS = np.arange(3)


def frame_pose(kin, frame):
    """``g_1c`` of the frame in which curvature is integrated: ``"chassis"`` or ``"base"``."""
    return virtual_chassis(kin) if _checked_frame(frame) == "chassis" else np.eye(4)


def _checked_frame(frame):
    if frame not in FRAMES:
        raise check.InputError(f"frame must be one of {FRAMES}, got {frame!r}")
    return frame


def _plane_curvature(model, ws, q, Psi, frame):
    """``DA_l^c(q, e_1) e_2 = Ad_1c^-1 DA_l(q, e_1) e_2`` (Theorem 2 and Prop. 6)."""
    kin = shape_kinematics(model, ws, q)
    F = curvature_pairs(kin, Psi[:, :1], Psi[:, 1:])[:, 0, 0]
    return Ad_inv(frame_pose(kin, frame)) @ F


def ccf_map(model, Psi, r1, r2, q_c=None, frame="chassis"):
    """Algorithm 1 ([Mishra2023]): the CCF surface ``DA_l^c(q(r), e_1) e_2`` over a grid.

    ``Psi`` (n x 2) spans the gait plane through ``q_c``; ``r1`` and ``r2`` are the
    grid coordinates.  Returns a (6, len(r2), len(r1)) array: component ``k`` at
    ``(r1[i], r2[j])`` is ``[k, j, i]`` (rad/rad^2 for the rotations about the axes
    of {C}, m/rad^2 for the translations, for revolute joints).  {C} is taken at
    each grid shape (``frame="chassis"``, step 7 with Prop. 6) or is the base.
    """
    Psi = check.array("Psi", Psi, (model.n, 2))
    q_c = np.zeros(model.n) if q_c is None else check.vector("q_c", q_c, model.n)
    r1, r2 = (check.array(name, r, (np.size(r),)) for name, r in (("r1", r1), ("r2", r2)))
    _checked_frame(frame)
    ws = model.create_data()
    out = np.empty((6, r2.size, r1.size))
    for j, b in enumerate(r2):
        for i, a in enumerate(r1):
            out[:, j, i] = _plane_curvature(model, ws, q_c + Psi @ (a, b), Psi, frame)
    return out


# -- eq. 11: the Stokes estimate ------------------------------------------------------

class StokesEstimate(NamedTuple):
    """Result of :func:`stokes_estimate`."""

    dg: np.ndarray        #: (4, 4) estimated base displacement ``exp(Ad_1c zeta)``
    zeta: np.ndarray      #: (6,) ``-(area integral of DA_l^c)``, in {C} at ``q(0)`` (eq. 11)
    g_1c: np.ndarray      #: (4, 4) the frame {C} at ``q(0)``, seen from the base


def integrate_over_loop(r, f, radial=6, transverse=2):
    """``integral of f(r) w(r) dA`` over the plane, ``w`` the winding number of the closed
    polygon ``r`` (N x 2): the signed area integral of eq. 11.

    The polygon is cut into triangles fanning out from its vertex centroid (signed
    areas add up to the winding number for any closed polygon), each integrated by a
    collapsed Gauss-Legendre rule with ``radial`` x ``transverse`` points.  ``f`` maps
    a point (2,) to an array.
    """
    c = r[:-1].mean(axis=0)
    u, wu = np.polynomial.legendre.leggauss(radial)
    v, wv = np.polynomial.legendre.leggauss(transverse)
    u, wu, v, wv = (u + 1) / 2, wu / 2, (v + 1) / 2, wv / 2
    total = 0.0
    for a, b in zip(r[:-1] - c, r[1:] - c):
        area2 = a[0] * b[1] - a[1] * b[0]                      # twice the signed area
        if area2 == 0.0:
            continue
        for ui, wui in zip(u, wu):
            for vj, wvj in zip(v, wv):
                total = total + (wui * wvj * area2 * ui) * f(c + ui * ((1 - vj) * a + vj * b))
    return total


def stokes_estimate(model, gait, frame="chassis", radial=6, transverse=2):
    """Net base displacement of a closed gait from curvature: [Mishra2023] eq. 11.

    ``zeta = -(integral over the enclosed area of DA_l^c(q(r), e_1) e_2 dr_1 dr_2)``,
    signed by the orientation of the gait (counter-clockwise positive), with
    ``DA_l^c`` in the frame {C} (:func:`frame_pose`), then ``dg1 ~ exp(Ad_1c zeta)``
    with ``g_1c`` at ``q(0)`` (Sec. V-B1, steps 1-3).  Exact to first order in the
    area; the virtual chassis makes the neglected (non-commutative) terms small.
    """
    if not isinstance(gait, PlanarGait):
        raise check.InputError("gait must be a PlanarGait")
    if gait.Psi.shape[0] != model.n:
        raise check.InputError(f"the gait is for {gait.Psi.shape[0]} joints, the model has {model.n}")
    ws = model.create_data()
    g_1c = frame_pose(shape_kinematics(model, ws, gait.qs[0]), _checked_frame(frame))
    zeta = -integrate_over_loop(
        gait.r, lambda r: _plane_curvature(model, ws, gait.shape(r), gait.Psi, frame),
        radial, transverse)
    return StokesEstimate(exp(Ad(g_1c) @ zeta), zeta, g_1c)


def ccf_volume(r1, r2, ccf, r, radial=6, transverse=2):
    """``zeta`` read off a CCF map (Appendix C2, the cBVI): ``-(integral of the map over the
    area enclosed by the closed path r)``, the map interpolated bilinearly.

    ``ccf`` is the (6, len(r2), len(r1)) output of :func:`ccf_map`; the path must stay
    inside the grid.  This is the paper's way to evaluate eq. 11 from Algorithm 1's
    output; :func:`stokes_estimate` integrates the curvature itself instead.
    """
    lo, hi = np.array([r1[0], r2[0]]), np.array([r1[-1], r2[-1]])
    if (r.min(axis=0) < lo - 1e-12).any() or (r.max(axis=0) > hi + 1e-12).any():
        raise check.InputError("the gait leaves the CCF grid")
    interp = RegularGridInterpolator((r2, r1), np.moveaxis(ccf, 0, -1))
    return -integrate_over_loop(r, lambda p: interp(np.clip(p, lo, hi)[::-1])[0], radial, transverse)


def displacement_error(dg, dg_hat):
    """``|log(dg^-1 dg_hat)|``: the error metric of [Mishra2023] Sec. V-B2."""
    return float(np.linalg.norm(log(np.linalg.solve(dg, dg_hat))))
