"""The loop family of the reorientation planner: Fourier loops in some joints based at a shape, their exact
holonomy (eq. 9) about an axis with its curvature gradient (Theorem 2), their limits and clearance as
soft-minimum constraints, the fastest loop's search (SLSQP) and the landing on an exact rotation
(Gauss-Newton).  The method: steps 1-3 of ``reorientation.py``'s module doc."""
import math
from typing import NamedTuple

import numpy as np
from scipy.linalg import null_space
from scipy.optimize import minimize

from .holonomy import loop_holonomy_gradient, path_rotation, right_jacobian_inverse, rotation_vector
from .paths import FourierLoop

#: RKMK4 steps per cycle: in the search (~1e-5 relative), and when landing (at first).
SEARCH_STEPS, LANDING_STEPS = 16, 64
#: SLSQP iterations: choosing among the first guesses (one harmonic), the search and the landing; and
#: the tolerance on the objective (relative).
SELECTION_ITERATIONS, SEARCH_ITERATIONS, SEARCH_TOLERANCE = 25, 100, 1e-6
#: Samples per cycle of the limit constraints, and the sharpness (1/rad, 1/(rad/rad)) of their soft minimum.
CONSTRAINT_SAMPLES, SHARPNESS = 128, 300.0
#: Largest rotation (rad) per cycle of the fastest loop: its rotation vector stays far from the logarithm's cut
#: at pi (a light base, as the LWR's, can turn by more than that in one large loop).
MAX_CYCLE_ROTATION = 2 * np.pi / 3
#: Samples per cycle at which a landed loop's positions are checked, and its clearance from the base.
CHECK_SAMPLES, CLEARANCE_SAMPLES = 4096, 512
#: Samples per cycle of the clearance constraint (its evaluation dominates a search that needs it).
CLEARANCE_CONSTRAINT_SAMPLES = 64
#: Rotation-vector tolerance (rad) of one cycle when landing, and of the integration's discretization (the
#: landing integration's steps double, up to MAX_LANDING_STEPS, until doubling changes less).
LANDING_TOLERANCE, DISCRETIZATION_TOLERANCE, MAX_LANDING_STEPS = 1e-11, 1e-9, 1024
#: Gauss-Newton iterations allowed when landing; from a given loop, the largest change of its rotation (relative)
#: landed at once (larger ones go through intermediate rotations).
LANDING_ITERATIONS, CONTINUATION = 12, 0.25


def _stokes_form(model, q0, axis, joints, limits):
    """``S = -D F_theta D``: the rotation about ``axis`` per unit area of a small loop (eq. 11, Theorem 2),
    as a bilinear form on joint offsets scaled by the speed limits ``D``: ``q = q0 + D (alpha (cos s - 1)
    + beta sin s)`` turns the base by ``pi alpha^T S beta`` to first order in the area."""
    F = np.einsum("a,aij->ij", axis, model.curvature_tensor(q0)[:3])[np.ix_(joints, joints)]
    D = limits.velocity[joints]
    return -(D[:, None] * F * D[None, :])


class _Lazy:
    """A value computed when called (SLSQP asks for gradients only at its iterates, not in line searches)."""

    def __init__(self, compute):
        self.compute = compute

    def __call__(self):
        return self.compute()


class _Fastest(NamedTuple):
    x: np.ndarray          #: [coefficients (raveled); tau], tau = seconds per radian of the loop parameter
    phi: np.ndarray        #: rotation vector of one cycle
    rate: float            #: rotation about the axis per second at constant path speed (rad/s)
    off_axis: float        #: rotation about the other axes per cycle (rad)


class _LoopFamily:
    """Fourier loops of ``harmonics`` harmonics in ``joints`` based at ``q0``: their holonomy about ``axis``
    with its gradient, and their limits as soft-minimum constraints over dense samples (with ``avoid_base``,
    the clearance from the base too; ``clearance``: ``(BaseClearance, metres)`` or ``None``)."""

    def __init__(self, model, q0, joints, harmonics, limits, axis, clearance=None, avoid_base=False,
                 clearance_samples=CLEARANCE_CONSTRAINT_SAMPLES):
        self.model, self.ws, self.axis, self.limits = model, model.create_data(), axis, limits
        self.clearance, self.avoid_base = clearance, avoid_base and clearance is not None
        self.template = FourierLoop(q0, joints, np.zeros((2 * harmonics, len(joints))))
        self.shape = self.template.coefficients.shape
        self.off_axes = np.linalg.svd(axis[None])[2][1:]
        self.B = self.template.basis(np.linspace(0, 2 * np.pi, CONSTRAINT_SAMPLES, endpoint=False))
        self.dense = self.template.basis(np.linspace(0, 2 * np.pi, CHECK_SAMPLES, endpoint=False))[0]
        self.sparse = self.template.basis(np.linspace(0, 2 * np.pi, CLEARANCE_SAMPLES, endpoint=False))[0]
        self.B_clear = self.template.basis(np.linspace(0, 2 * np.pi, clearance_samples, endpoint=False))[0]
        self.q0, self.lo, self.hi = q0[joints], limits.lower[joints], limits.upper[joints]
        self.v, self.a = limits.velocity[joints], limits.acceleration[joints]
        self._cache = {}

    def loop(self, c, cycles=1):
        return self.template.with_coefficients(np.reshape(c, self.shape), cycles)

    def rotation(self, c, steps=SEARCH_STEPS):
        """``phi``: the rotation vector of one cycle (one CRBA per integration node; cached)."""
        return self._cached(("phi", c.tobytes(), steps),
                            lambda: rotation_vector(path_rotation(self.model, self.ws, self.loop(c), steps)))

    def rotation_jacobian(self, c):
        """``dphi/dc`` (3, 2K x J) from the curvature along the loop (cached)."""
        def compute():
            H, G = loop_holonomy_gradient(self.model, self.ws, self.loop(c), SEARCH_STEPS)
            return right_jacobian_inverse(rotation_vector(H)) @ G
        return self._cached(("dphi", c.tobytes()), compute)

    def _cached(self, key, compute):
        if key not in self._cache:
            if len(self._cache) > 32:
                self._cache.clear()
            self._cache[key] = compute()
        return self._cache[key]

    # -- first guesses and the search --

    def stokes_guesses(self):
        """The best plane of :func:`_stokes_form` as a circle-like loop, centred on either side of ``q0``,
        scaled to 90 % of the room the position limits leave, at the constant path speed the limits allow."""
        U, _, Vt = np.linalg.svd(_stokes_form(self.model, self.template.q_base, self.axis,
                                              self.template.joints, self.limits))
        K = self.shape[0] // 2
        for sign in (1.0, -1.0):
            c = np.zeros(self.shape)
            c[0], c[K] = sign * self.v * U[:, 0], sign * self.v * Vt[0]
            c *= 0.9 * self._room(c)
            yield np.append(c.ravel(), self._path_speed_bound(c) * 1.001)

    def padded(self, found):
        """A :class:`_Fastest` of fewer harmonics as a start in this family."""
        K_old = (len(found.x) - 1) // (2 * self.shape[1])
        K = self.shape[0] // 2
        c_old = found.x[:-1].reshape(2 * K_old, -1)
        c = np.zeros(self.shape)
        c[:K_old], c[K:K + K_old] = c_old[:K_old], c_old[K_old:]
        return np.append(c.ravel(), found.x[-1])

    def _room(self, c, B=None):
        """Largest factor ``l`` with ``q0 + l B c`` within the position limits on the samples (of ``B``)."""
        dev = (self.B[0] if B is None else B) @ c
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(dev > 0, (self.hi - self.q0) / dev, np.where(dev < 0, (self.lo - self.q0) / dev, np.inf))
        return float(r.min())

    def _path_speed_bound(self, c):
        """Seconds per radian of the loop parameter at the limits (constant path speed)."""
        return max(float((np.abs(self.B[1] @ c) / self.v).max()), float(np.sqrt(np.abs(self.B[2] @ c) / self.a).max()))

    def fastest(self, x0, phi_target=None, iterations=SEARCH_ITERATIONS, keep_start_velocity=False):
        """SLSQP from ``x0``: the loop that turns the base most about the axis per second at constant path
        speed, with no rotation about the other axes; or, given ``phi_target``, the shortest cycle that
        turns it by ``phi_target`` (``reorientation.py``'s module doc), with ``keep_start_velocity`` the velocity
        at its base ``q'(0)`` that of ``x0``."""
        if phi_target is None:
            if self._rate(x0)[0] > 0:
                x0 = self._reversed(x0)
            scale = 1.0 / max(abs(self._rate(x0)[0]), 1e-12)

            def objective(x):
                f, g = self._rate(x)
                return scale * f, _Lazy(lambda: scale * g())
            E, target = self.off_axes, np.zeros(2)
            extra = [{"type": "ineq", "fun": lambda x: MAX_CYCLE_ROTATION - self.axis @ self.rotation(x[:-1]),
                      "jac": lambda x: np.append(-(self.axis @ self.rotation_jacobian(x[:-1])), 0.0)}]
        else:
            def objective(x):
                return x[-1] / x0[-1], _Lazy(lambda: np.append(np.zeros(len(x) - 1), 1 / x0[-1]))
            E, target, extra = np.eye(3), phi_target, []
            if keep_start_velocity:
                C = np.hstack([self._start_velocity_map(), np.zeros((self.shape[1], 1))])
                extra = [{"type": "eq", "fun": lambda x: C @ (x - x0), "jac": lambda x: C}]
        res = minimize(lambda x: objective(x)[0], x0, jac=lambda x: objective(x)[1](), method="SLSQP",
                       options={"maxiter": iterations, "ftol": SEARCH_TOLERANCE},
                       constraints=[{"type": "eq", "fun": lambda x: E @ self.rotation(x[:-1]) - target,
                                     "jac": lambda x: np.hstack([E @ self.rotation_jacobian(x[:-1]),
                                                                 np.zeros((len(E), 1))])},
                                    {"type": "ineq", "fun": lambda x: self.limit_margins(x)[0],
                                     "jac": lambda x: self.limit_margins(x)[1]}] + extra)
        x = res.x
        if phi_target is None and self._rate(x)[0] > 0:
            x = self._reversed(x)
        return self.evaluated(x)

    def grown(self, x0, goal, iterations=SEARCH_ITERATIONS):
        """SLSQP from the loop ``x0``: a loop turning the base by ``goal`` (rad) about the axis per cycle, none about
        the others, within the limits (the path speed free): the rotation about the axis is maximized up to ``goal``
        (from a loop within the limits the iterates stay near them, where a landing from a scaled loop outside them
        may not come back).  Its :class:`_Fastest` record, or ``None`` if it falls short of ``goal``."""
        def about(x):
            return self.axis @ self.rotation(x[:-1])

        def d_about(x):
            return np.append(self.axis @ self.rotation_jacobian(x[:-1]), 0.0)
        x0 = np.append(x0[:-1], 10 * self._path_speed_bound(x0[:-1].reshape(self.shape)))
        res = minimize(lambda x: -about(x) / goal, x0, jac=lambda x: -d_about(x) / goal, method="SLSQP",
                       options={"maxiter": iterations, "ftol": SEARCH_TOLERANCE},
                       constraints=[{"type": "ineq", "fun": lambda x: goal - about(x), "jac": lambda x: -d_about(x)},
                                    {"type": "eq", "fun": lambda x: self.off_axes @ self.rotation(x[:-1]),
                                     "jac": lambda x: np.hstack([self.off_axes @ self.rotation_jacobian(x[:-1]),
                                                                 np.zeros((2, 1))])},
                                    {"type": "ineq", "fun": lambda x: self.limit_margins(x)[0],
                                     "jac": lambda x: self.limit_margins(x)[1]}])
        return self.evaluated(res.x) if about(res.x) > goal * (1 - 1e-3) else None

    def _reversed(self, x):
        """The loop traversed backwards, ``q(-s)``: its cycle turns the base by exactly the inverse rotation."""
        c = x[:-1].reshape(self.shape).copy()
        c[self.shape[0] // 2:] *= -1
        return np.append(c.ravel(), x[-1])

    def evaluated(self, x):
        """The :class:`_Fastest` record of the loop ``x`` at its constant path speed."""
        x = np.append(x[:-1], self._path_speed_bound(x[:-1].reshape(self.shape)))
        phi = self.rotation(x[:-1])
        return _Fastest(x, phi, float(phi @ self.axis / (2 * np.pi * x[-1])),
                        float(np.linalg.norm(self.off_axes @ phi)))

    def _rate(self, x):
        """``(-rate, its gradient)``; the gradient is computed (the curvature) only when asked for."""
        phi, tau = self.rotation(x[:-1]), x[-1]
        return -(self.axis @ phi) / tau, _Lazy(lambda: np.append(
            -(self.axis @ self.rotation_jacobian(x[:-1])) / tau, (self.axis @ phi) / tau**2))

    def limit_margins(self, x):
        return self._cached(("limits", x.tobytes()), lambda: self._limit_margins(x))

    def _limit_margins(self, x):
        """Soft minima over the samples (>= 0 when the limits hold; each at most its true minimum) of the
        position room and of ``tau - |q'| / v`` and ``tau^2 - |q''| / a`` per joint, with their Jacobian."""
        c, tau = x[:-1].reshape(self.shape), x[-1]
        B0, B1, B2 = self.B
        Q, D1, D2 = self.q0 + B0 @ c, B1 @ c, B2 @ c
        one = np.ones_like(self.v)
        blocks = ((self.hi - Q, -one, B0, 0.0), (Q - self.lo, one, B0, 0.0),
                  (tau - D1 / self.v, -1 / self.v, B1, 1.0), (tau + D1 / self.v, 1 / self.v, B1, 1.0),
                  (tau**2 - D2 / self.a, -1 / self.a, B2, 2 * tau), (tau**2 + D2 / self.a, 1 / self.a, B2, 2 * tau))
        J = self.shape[1]
        values, rows = [], []
        for g, beta, B, dtau in blocks:
            low = g.min(axis=0)
            e = np.exp(-SHARPNESS * (g - low))
            total = e.sum(axis=0)
            values.append(low - np.log(total) / SHARPNESS)
            dC = (B.T @ (e / total)) * beta                     # (2K, J): constraint j depends on column j
            jac = np.zeros((J, self.shape[0], J))
            jac[np.arange(J), :, np.arange(J)] = dC.T
            rows.append(np.hstack([jac.reshape(J, -1), np.full((J, 1), dtau)]))
        if self.avoid_base:
            value, row = self._clearance_margin(self.q0 + self.B_clear @ c, self.B_clear)
            values.append([value])
            rows.append(row)
        return np.concatenate(values), np.vstack(rows)

    def _full_shapes(self, Q):
        q = np.tile(self.template.q_base, (len(Q), 1))
        q[:, self.template.joints] = Q
        return q

    def _clearance_margin(self, Q, B0):
        """Soft minimum over the samples of the base-arm distance minus the clearance, and its gradient (the
        distance's gradient only where the soft minimum's weight is not negligible)."""
        clearance, required = self.clearance
        q = self._full_shapes(Q)
        g = clearance.distances(q) - required
        low = g.min()
        e = np.exp(-SHARPNESS * (g - low))
        w = e / e.sum()
        used = w > 1e-6 * w.max()
        dq = clearance.gradients(q[used])[:, self.template.joints]              # (m, J)
        dC = np.einsum("m,mk,mj->kj", w[used], B0[used], dq)
        return low - np.log(e.sum()) / SHARPNESS, np.append(dC.ravel(), 0.0)[None]

    def clear(self, c):
        """Whether the loop keeps the clearance from the base on ``CLEARANCE_SAMPLES`` samples (or nothing is
        required)."""
        if self.clearance is None:
            return True
        clearance, required = self.clearance
        q = self._full_shapes(self.q0 + self.sparse @ np.reshape(c, self.shape))
        return bool(clearance.distances(q).min() >= required)

    # -- landing --

    def landed(self, best, phi_target, start=None, keep_start_velocity=False):
        """Coefficients of a cycle that turns the base by exactly ``phi_target``, or ``None`` if none is found
        within the position limits: from ``start`` (coefficients), or the fastest loop ``best`` scaled to the
        target (or, if the scaled loop leaves the limits, :meth:`fastest` with the target from it), then
        Gauss-Newton (minimum-norm steps) to round-off on the finer integration.  ``keep_start_velocity``: the
        steps keep ``q'(0)``, the loop's velocity at its base, that of ``start`` (a plan replacing another
        mid-motion continues its velocity)."""
        if start is None:
            scale = math.sqrt(np.linalg.norm(phi_target) / (best.phi @ self.axis))
            c = best.x[:-1] * scale
            if self._room(c.reshape(self.shape)) < 1.0:
                c = self.fastest(np.append(c, best.x[-1] * scale), phi_target).x[:-1]
        else:
            c = np.ravel(start)
        free = self._start_velocity_kept() if keep_start_velocity else None
        if start is not None:        # from afar Gauss-Newton may not converge: through intermediate rotations
            phi0 = self.rotation(c, LANDING_STEPS)
            stages = math.ceil(np.linalg.norm(phi_target - phi0) / (CONTINUATION * max(np.linalg.norm(phi0), 1e-3)))
            for k in range(1, stages):
                c = self._gauss_newton(c, phi0 + k / stages * (phi_target - phi0), LANDING_STEPS, free)
                if c is None:
                    return None
            if self._room(c.reshape(self.shape)) < 1.0:       # the minimum-norm steps left the limits
                c = self.fastest(np.append(c, self._path_speed_bound(c.reshape(self.shape))), phi_target,
                                 keep_start_velocity=keep_start_velocity).x[:-1]
        steps = LANDING_STEPS
        while c is not None:
            c = self._gauss_newton(c, phi_target, steps, free)
            if c is None or steps >= MAX_LANDING_STEPS or np.linalg.norm(
                    self.rotation(c, 2 * steps) - self.rotation(c, steps)) <= DISCRETIZATION_TOLERANCE:
                break
            steps *= 2                          # the integration is not converged: land on a finer one
        return c if c is not None and self._room(c.reshape(self.shape), self.dense) >= 1.0 and self.clear(c) else None

    def _start_velocity_map(self):
        """``C`` with ``q'(0) = C c``: the loop's velocity at its base from its coefficients (raveled)."""
        dB0 = self.template.basis(np.zeros(1))[1][0]
        J = self.shape[1]
        C = np.zeros((J, self.shape[0], J))
        C[np.arange(J), :, np.arange(J)] = dB0
        return C.reshape(J, -1)

    def _start_velocity_kept(self):
        """A basis (columns) of the coefficient changes that keep ``q'(0)``."""
        return null_space(self._start_velocity_map())

    def _gauss_newton(self, c, phi_target, steps, free=None):
        """Coefficients near ``c`` whose cycle (integrated in ``steps`` steps) turns the base by ``phi_target``
        to ``LANDING_TOLERANCE`` (minimum-norm steps, within the columns of ``free`` if given; the curvature
        Jacobian of the search), or ``None``."""
        for _ in range(LANDING_ITERATIONS):
            r = phi_target - self.rotation(c, steps)
            if np.linalg.norm(r) < LANDING_TOLERANCE:
                return c
            G = self.rotation_jacobian(c)
            c = c + (np.linalg.lstsq(G, r, rcond=None)[0] if free is None
                     else free @ np.linalg.lstsq(G @ free, r, rcond=None)[0])
        return None
