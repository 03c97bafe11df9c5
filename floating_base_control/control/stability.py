"""Stability of the sampled control loop with its loop delay: closed-loop eigenvalues and margins.

**The loop.**  With eq. 45's compensation the shape row of eq. 18 ([Mishra2023]), linearized about a
state at rest, is the double integrator ``Lambda_q(q) e'' = u`` (its CC terms are quadratic in the
velocities; the observer's ``mu_hat`` moves at its own 1-2 rad/s, far below the loop's crossover).  Each
task law of the package is, linearized, a state feedback with gain matrices::

    u = -K e - D e' - K_i z,   z' = e

* set-point, eq. 52 extended (``control/setpoint.py``) and joint tracking (``control/tracking.py``):
  ``K, D, K_i`` diagonal; near a limit the limit potential and the velocity guard add their ``K_lim`` and
  ``d_v`` to the joints concerned;
* end-effector impedance (``control/end_effector.py``, :func:`cartesian_joint_gains`): with the
  world-aligned error ``e_w = B J* e`` (``B = blkdiag(R_e, R_e)``)::

      K = J*^T B^T K_x B J* + N^T K_n,   D = J*^T B^T D_x B J* + N^T D_n.

The command computed from the state at ``t_k`` acts from ``t_k + tau`` and is held until the next one
arrives (``sim/loop.py``; ``tau = h``, one period ``h``, in ros2_control and the DDS loop).  Sampling with a
delay ``tau = (m + f) h``, ``m`` an integer and ``0 <= f < 1`` (Astrom and Wittenmark, *Computer-Controlled
Systems*, 3rd ed., sec. 2.3, eqs. 2.10-2.12)::

    x_{k+1} = Phi x_k + Gamma_0 u_{k-m} + Gamma_1 u_{k-m-1},     x = [e; e']
    Phi = e^{A h},   Gamma_0 = int_0^{h - f h} e^{A s} ds B,   Gamma_1 = e^{A (h - f h)} int_0^{f h} e^{A s} ds B

(:func:`sampled_with_delay`; for the double integrator these are polynomials in ``h``).  With the
commands still in flight, ``u_{k-1} .. u_{k-m-1}``, as states, the loop is one linear map
(:func:`closed_loop_matrix`), stable iff its spectral radius is below one.

**Margins** (of the loop at one configuration):

* gain margin (:func:`gain_margin`): the factor ``a`` on all gains together (``a K, a D, a K_i``) at which
  the loop becomes unstable; below 1 the loop is unstable and ``a`` says by how much to reduce them;
* phase margin (:func:`phase_margin`): the phase lag that every loop can take at once: with the
  controller's output rotated by ``e^{-j phi}`` a closed-loop pole reaches the unit circle at
  ``z = e^{j w h}`` exactly where a characteristic locus of the loop transfer matrix ``L(z)`` passes
  through ``-e^{j phi}`` (generalized Nyquist criterion, MacFarlane and Postlethwaite 1977): the smallest
  such ``phi`` is the angle, from ``-1``, of the loci where their gain is one;
* delay margin (:func:`delay_margin`): the further loop delay (s) at which the loop becomes unstable:
  what a DDS loop's latency may add.

**Default joint gains** (:func:`delay_robust_joint_gains`).  With diagonal ``D`` and ``K = alpha D`` the
loop's modes are the generalized eigenvectors of ``(D, Lambda_q)``, which diagonalize ``K`` too: each mode is
``e'' + delta e' + alpha delta e = 0`` with ``delta`` a generalized eigenvalue.  The fastest mode's velocity
loop ``delta_max`` is what a delay limits (its phase runs out at ``delta_max tau ~ pi/2``), the slowest
(``delta_min``) is the least damped, ``zeta = sqrt(delta_min / alpha) / 2``, which sets the phase margin.  The
defaults take ``D`` proportional to the diagonal of ``Lambda_q`` (the best diagonal scaling of the orbital
robot's ``Lambda_q`` narrows ``delta_max / delta_min``, 15-16, by less than 10 %), ``delta_max =``
:data:`JOINT_VELOCITY_BANDWIDTH` and ``zeta_min =`` :data:`JOINT_DAMPING_RATIO` over the configurations
given: on the orbital robot's trajectory, the margins of :data:`REQUIRED` at one period and of
:data:`REQUIRED_DDS` with :data:`DDS_LATENCY_S` more (docs/how-to/command-motion.md).

**Hopper** (:func:`radial_loop`).  The radial spring of eq. 4.16 ([Feurstein2021]) acts on the CoM-foot
distance ``r(q)``; in flight the knee's reduced inertia seen through ``dr/dq`` is a radial mass of about
0.02 kg (the light leg), so ``K_r`` and ``D_r`` form the same loop in the knee coordinate with
``K = K_r (dr/dq)^2``, ``D = D_r (dr/dq)^2``.

The module is ROS-free and imports neither MuJoCo nor matplotlib: the controller nodes check their parameters
with it (``ros/orbital_controller.py``, ``ros/hopper_controller.py``).
"""
import functools
from typing import NamedTuple

import numpy as np
import pinocchio as pin
from scipy.linalg import eigh

from floating_base_control.control.end_effector import (damping_matrix, frame_kinematics, generalized_jacobian,
                                                       world_inertia)
from floating_base_control.dynamics.rel_fast import locked_inertia_factor
from floating_base_control.conventions import swap_halves
from floating_base_control.validation import InputError

#: Spectral radius above which the loop counts as unstable (a neutral mode, e.g. zero stiffness, sits at 1).
UNSTABLE_RADIUS = 1.0 + 1e-9
#: What the package's defaults must have at one control period of delay: gain margin, phase margin (deg) ...
REQUIRED = {"gain_margin": 3.0, "phase_margin_deg": 45.0}
#: ... and at a DDS loop's further latency (``DDS_LATENCY_S`` more than one period).
REQUIRED_DDS = {"gain_margin": 2.0, "phase_margin_deg": 30.0}
#: Further latency of a DDS loop beyond one period, s: the joint state's age at the tick (p99 ~1.2 ms,
#: max 3.5 ms, bench/ros_loop.py) plus the command's way back and the simulator's physics step.
DDS_LATENCY_S = 0.003
#: Default joint gains (:func:`delay_robust_joint_gains`): the fastest mode's velocity loop, rad/s ...
JOINT_VELOCITY_BANDWIDTH = 150.0
#: ... and the least damped mode's damping ratio.
JOINT_DAMPING_RATIO = 0.45


def sampled_with_delay(M, h, delay):
    """``(Phi, Gamma_0, Gamma_1, m)`` of ``M e'' = u`` sampled at ``h`` with the command ``delay`` seconds late
    (module doc).  ``M``: the (n x n) inertia."""
    if not (h > 0 and delay >= 0):
        raise InputError(f"sampling needs a period > 0 and a delay >= 0, got {h}, {delay}")
    m = int(np.floor(delay / h + 1e-9))
    f = max(delay / h - m, 0.0)
    n = len(M)
    Mi = np.linalg.inv(M)
    I = np.eye(n)
    Phi = np.block([[I, h * I], [0 * I, I]])
    a, b = (1.0 - f) * h, f * h                    # the new command's share of the period, and the old one's
    Gamma_0 = np.vstack((0.5 * a * a * Mi, a * Mi))
    Gamma_1 = np.vstack(((0.5 * b * b + a * b) * Mi, b * Mi))
    return Phi, Gamma_0, Gamma_1, m


def closed_loop_matrix(M, K, D, h, delay, K_i=None, scale=1.0):
    """The map of one period of the delayed loop (module doc) on ``[e; e'; z; u_{k-1}; ..; u_{k-m-1}]``
    (``z`` only with ``K_i``).  ``K, D, K_i``: (n x n) gains or per-joint vectors; ``scale`` multiplies the
    controller's output (a real factor for the gain margin, ``e^{-j phi}`` for the phase margin)."""
    Phi, G0, G1, m = sampled_with_delay(np.atleast_2d(M), h, delay)
    n = len(Phi) // 2
    gains = [_matrix(K, n), _matrix(D, n)] + ([] if K_i is None else [_matrix(K_i, n)])
    F = scale * np.hstack(gains)                                  # u_k = -F [e; e'; z]
    nx = F.shape[1]
    N = nx + n * (m + 1)
    A = np.zeros((N, N), dtype=np.result_type(F, float))
    A[:2 * n, :2 * n] = Phi
    if K_i is not None:
        A[2 * n:nx, 2 * n:nx] = np.eye(n)
        A[2 * n:nx, :n] = h * np.eye(n)                           # z_{k+1} = z_k + h e_k (control/setpoint.py)
    buffer = [slice(nx + i * n, nx + (i + 1) * n) for i in range(m + 1)]     # u_{k-1-i}
    if m == 0:
        A[:2 * n, :nx] -= G0 @ F
    else:
        A[:2 * n, buffer[m - 1]] = G0
    A[:2 * n, buffer[m]] = G1
    A[buffer[0], :nx] = -F
    for i in range(1, m + 1):
        A[buffer[i], buffer[i - 1]] = np.eye(n)
    return A


def _matrix(gain, n):
    gain = np.asarray(gain, dtype=float)
    return np.diag(gain) if gain.ndim == 1 else np.broadcast_to(gain, (n, n))


def spectral_radius(A):
    """Largest eigenvalue modulus of ``A``."""
    return float(np.abs(np.linalg.eigvals(A)).max())


def is_stable(M, K, D, h, delay, K_i=None, scale=1.0):
    """The delayed loop (:func:`closed_loop_matrix`) has every pole inside the unit circle (a neutral one on it
    counts as stable: :data:`UNSTABLE_RADIUS`)."""
    return spectral_radius(closed_loop_matrix(M, K, D, h, delay, K_i, scale)) < UNSTABLE_RADIUS


def _boundary(stable, lo, hi, grid, tol):
    """The first point of ``grid`` (increasing, from ``lo``) where ``stable`` turns false, refined by bisection
    to ``tol``; ``hi`` if it never does."""
    previous = lo
    for x in grid:
        if not stable(x):
            a, b = previous, x
            while b - a > tol * max(1.0, abs(b)):
                mid = 0.5 * (a + b)
                a, b = (mid, b) if stable(mid) else (a, mid)
            return 0.5 * (a + b)
        previous = x
    return hi


def gain_margin(M, K, D, h, delay, K_i=None, max_factor=100.0, tol=1e-4):
    """The factor on all gains at which the delayed loop becomes unstable (module doc): above 1 a margin, below
    1 the reduction an unstable loop needs; ``max_factor`` if stable up to it."""
    stable = lambda a: is_stable(M, K, D, h, delay, K_i, a)        # noqa: E731
    if stable(1.0):
        return _boundary(stable, 1.0, max_factor, np.geomspace(1.02, max_factor, 120), tol)
    down = np.geomspace(1.0, 1.0 / max_factor, 120)
    first = next((a for a in down if stable(a)), None)
    if first is None:
        return 0.0
    lo, hi = first, down[list(down).index(first) - 1]
    while hi - lo > tol * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if stable(mid) else (lo, mid)
    return 0.5 * (lo + hi)


def phase_margin(M, K, D, h, delay, K_i=None, tol=1e-3):
    """The phase lag (rad) that all loops can take together before the delayed loop becomes unstable (module
    doc); 0 if it is unstable, ``pi`` if no lag destabilizes it."""
    if not is_stable(M, K, D, h, delay, K_i):
        return 0.0
    stable = lambda phi: is_stable(M, K, D, h, delay, K_i, np.exp(-1j * phi))   # noqa: E731
    return _boundary(stable, 0.0, np.pi, np.linspace(np.pi / 180, np.pi, 180), tol)


def delay_margin(M, K, D, h, delay, K_i=None, max_extra=None, tol=1e-3):
    """The further loop delay (s) beyond ``delay`` at which the loop becomes unstable; 0 if it is unstable,
    ``max_extra`` (default 10 periods) if it stays stable up to it."""
    max_extra = 10 * h if max_extra is None else max_extra
    if not is_stable(M, K, D, h, delay, K_i):
        return 0.0
    stable = lambda extra: is_stable(M, K, D, h, delay + extra, K_i)     # noqa: E731
    steps = int(np.ceil(4 * max_extra / h))                             # a quarter period apart
    return _boundary(stable, 0.0, max_extra, np.arange(1, steps + 1) * max_extra / steps, tol * h / max_extra)


class Margins(NamedTuple):
    """Margins of the delayed loop at one configuration (module doc)."""

    radius: float               #: spectral radius of the loop (< 1: stable)
    gain_margin: float          #: factor on all gains at the stability boundary
    phase_margin_deg: float     #: phase lag all loops take together, deg
    delay_margin_s: float       #: further loop delay, s


def margins(M, K, D, h, delay, K_i=None):
    """:class:`Margins` of the delayed loop ``M e'' = -K e - D e' - K_i z`` sampled at ``h``, ``delay`` late."""
    return Margins(spectral_radius(closed_loop_matrix(M, K, D, h, delay, K_i)), gain_margin(M, K, D, h, delay, K_i),
                   float(np.rad2deg(phase_margin(M, K, D, h, delay, K_i))), delay_margin(M, K, D, h, delay, K_i))


def worst(margins_list):
    """The smallest of each margin (and the largest radius) over several configurations."""
    columns = list(zip(*margins_list))
    return Margins(max(columns[0]), *(min(c) for c in columns[1:]))


def cartesian_joint_gains(model, ws, fid, q, gains, R_e=None):
    """``(Lambda_q, K, D)`` of the end-effector impedance linearized at ``q`` (module doc), ``gains`` a
    :class:`~.end_effector.CartesianGains`; ``ws`` a :class:`~.end_effector.FrameWorkspace`; ``R_e``: the end
    effector's world rotation (default: its rotation with the base at the identity; per-axis gains equal on
    the three rotations and on the three translations make it irrelevant)."""
    q = np.asarray(q, dtype=float)
    locked_inertia_factor(model, ws.inertia, q)
    g_1e, J_e = frame_kinematics(ws, fid, q)
    J, _ = generalized_jacobian(g_1e, J_e, swap_halves(ws.inertia.A))
    Lambda_q = model.reduced_shape_inertia(q)
    R = g_1e[:3, :3] if R_e is None else R_e
    B = np.zeros((6, 6))
    B[:3, :3] = B[3:, 3:] = R
    Li_JT = np.linalg.solve(Lambda_q, J.T)
    Lambda_x = np.linalg.inv(J @ Li_JT)
    N_T = np.eye(model.n) - J.T @ (Lambda_x @ Li_JT.T)             # I - J*^T J*#^T
    D_x = damping_matrix(gains, world_inertia(R, Lambda_x))
    JB = B @ J
    K = JB.T @ (gains.stiffness[:, None] * JB) + N_T * gains.nullspace_stiffness
    D = JB.T @ D_x @ JB + N_T * gains.nullspace_damping
    return Lambda_q, K, D


def task_inertia(model, ws, fid, q):
    """``Lambda_x = (J* Lambda_q^-1 J*^T)^-1`` at ``q`` (body axes): the inertia the end effector's impedance
    drives (control/end_effector.py)."""
    locked_inertia_factor(model, ws.inertia, q)
    g_1e, J_e = frame_kinematics(ws, fid, np.asarray(q, dtype=float))
    J, _ = generalized_jacobian(g_1e, J_e, swap_halves(ws.inertia.A))
    return np.linalg.inv(J @ np.linalg.solve(model.reduced_shape_inertia(q), J.T))


def delay_robust_joint_gains(inertias, velocity_bandwidth=JOINT_VELOCITY_BANDWIDTH,
                             damping_ratio=JOINT_DAMPING_RATIO):
    """Diagonal ``(K, D)`` of the module doc for the reduced inertias ``Lambda_q`` of ``inertias`` (the
    configurations a task visits): ``D = c m`` with ``m`` the smallest diagonal of ``Lambda_q`` over them and
    ``c`` such that the largest generalized eigenvalue ``delta`` of ``(D, Lambda_q)`` over them is
    ``velocity_bandwidth``; ``K = alpha D`` with ``alpha = delta_min / (4 zeta^2)``, the least damped mode's
    damping ratio ``zeta = damping_ratio``."""
    m = np.min([np.diag(M) for M in inertias], axis=0)
    deltas = np.array([eigh(np.diag(m), M, eigvals_only=True) for M in inertias])
    c = velocity_bandwidth / deltas.max()
    D = c * m
    return c * deltas.min() / (4.0 * damping_ratio ** 2) * D, D


def sample_configurations(model, count=8, seed=0):
    """The middle of the joint range and ``count`` shapes drawn uniformly within the limits (``[-pi, pi]`` for
    an unlimited joint): where a node that does not know its task's path checks its gains."""
    lo, hi = model.position_limits.T
    bounded = np.isfinite(lo) & np.isfinite(hi)
    lo, hi = np.where(bounded, lo, -np.pi), np.where(bounded, hi, np.pi)
    rng = np.random.default_rng(seed)
    return [0.5 * (lo + hi)] + [rng.uniform(lo, hi) for _ in range(count)]


def shape_joint_gains(model, shapes, control_period=1e-3):
    """:func:`delay_robust_joint_gains` over the reduced inertias at ``shapes``, the velocity bandwidth slowed down
    for a control period longer than 1 ms (the design's)."""
    bandwidth = JOINT_VELOCITY_BANDWIDTH * min(1.0, 1e-3 / control_period)
    return delay_robust_joint_gains([model.reduced_shape_inertia(q) for q in shapes], bandwidth)


def robot_joint_gains(model, control_period=1e-3, count=16):
    """:func:`shape_joint_gains` over :func:`sample_configurations` (``count`` random shapes): joint gains for a
    robot whose task is not known."""
    return shape_joint_gains(model, sample_configurations(model, count), control_period)


def radial_loop(model, foot_id, q, K_r, D_r, h=1e-6):
    """``(M, K, D)`` of the hopper's radial spring in the joint coordinate (module doc; one joint): ``M`` the
    reduced inertia ``Lambda_q``, ``K = K_r (dr/dq)^2``, ``D = D_r (dr/dq)^2`` with ``r`` the CoM-foot
    distance (a function of the shape only), ``dr/dq`` by central differences."""
    q = np.asarray(q, dtype=float)
    if model.n != 1:
        raise InputError(f"the radial loop is that of a one-joint hopper, the model has {model.n} joints")
    data, q_pin = model.pin_model.createData(), pin.neutral(model.pin_model)

    def distance(x):
        q_pin[7:] = x
        c = pin.centerOfMass(model.pin_model, data, q_pin)
        pin.updateFramePlacements(model.pin_model, data)
        return np.linalg.norm(data.oMf[foot_id].translation - c)
    J_r = (distance(q + h) - distance(q - h)) / (2 * h)
    return model.reduced_shape_inertia(q), np.atleast_1d(K_r * J_r ** 2), np.atleast_1d(D_r * J_r ** 2)


def loop_verdict(M, K, D, h, K_i=None):
    """``(unstable, thin)`` for a controller node's parameter check: why the loop is unstable with one period
    ``h`` of delay or with :data:`DDS_LATENCY_S` more (``None`` if it is stable with both: a node that talks
    to its robot over DDS runs with that latency), and which margins of :data:`REQUIRED` (at one period) and
    :data:`REQUIRED_DDS` (with the latency) it lacks (``None`` if none).  A few eigenvalue problems: the gain
    and phase margins are checked at the required values, not searched."""
    cases = ((h, REQUIRED, "one control period"),
             (h + DDS_LATENCY_S, REQUIRED_DDS, f"one control period and {1e3 * DDS_LATENCY_S:g} ms of DDS latency"))
    for delay, _, where in cases:
        radius = spectral_radius(closed_loop_matrix(M, K, D, h, delay, K_i))
        if not radius < UNSTABLE_RADIUS:
            gm = gain_margin(M, K, D, h, delay, K_i)
            scale = (f"gains {gm:.2f} times these are at the boundary" if gm > 0 else
                     "unstable at any common scale of these gains: too little damping for the stiffness")
            return (f"unstable with {where} ({1e3 * delay:g} ms) of loop delay (spectral radius {radius:.4f}; "
                    f"{scale})"), None
    lacking = []
    for delay, required, where in cases:
        gm, pm = required["gain_margin"], required["phase_margin_deg"]
        if not is_stable(M, K, D, h, delay, K_i, gm):
            lacking.append(f"gain margin below {gm:g} with {where}")
        if not is_stable(M, K, D, h, delay, K_i, np.exp(-1j * np.deg2rad(pm))):
            lacking.append(f"phase margin below {pm:g} deg with {where}")
    return None, ("; ".join(lacking) or None)


def smallest_joint_inertias(model, count=64):
    """Per joint, the smallest inertia its torque drives over :func:`sample_configurations` (``count`` random
    shapes): ``1 / (Lambda_q^-1)_jj``, the other joints free, which is what a fast loop on that joint alone sees
    (the others' gains act little at its bandwidth; the largest generalized eigenvalue of a damping on joint
    ``j`` alone is ``d (Lambda_q^-1)_jj``)."""
    return np.min([1.0 / np.diag(np.linalg.inv(model.reduced_shape_inertia(q)))
                   for q in sample_configurations(model, count)], axis=0)



#: The limit terms' damping (:func:`limit_term_gains`) on a joint's smallest inertia, rad/s: half the joint gains'
#: velocity loop (the PD's own damping acts on that joint too).
LIMIT_VELOCITY_BANDWIDTH = 0.5 * JOINT_VELOCITY_BANDWIDTH


def limit_term_gains(inertias, stiffness, damping, control_period=1e-3):
    """``(K_lim, d)``: the limit terms of the set-point controller (``control/setpoint.py``: the wall's stiffness
    beyond the limit margins; the damping of the velocity guard and of the wall) capped for the loop with its
    delay.  On joint ``j``'s smallest inertia ``m`` (:func:`smallest_joint_inertias`) the damping is at most a
    velocity loop of :data:`LIMIT_VELOCITY_BANDWIDTH` (slowed down for a period longer than 1 ms, as
    :func:`robot_joint_gains`), and the wall's stiffness the largest with which that one-joint loop has the
    margins of :data:`REQUIRED` at one period and of :data:`REQUIRED_DDS` with a DDS loop's latency
    (:func:`wall_stiffness_ratio`).  ``stiffness``, ``damping``: the terms without the cap (the effort limit over
    the margin, and over the velocity limit: ``inf`` for a joint without one)."""
    m = np.asarray(inertias, dtype=float)
    d = np.minimum(damping, LIMIT_VELOCITY_BANDWIDTH * min(1.0, 1e-3 / control_period) * m)
    ratios = [wall_stiffness_ratio(float(b), float(control_period)) for b in d / m]
    return np.minimum(stiffness, np.multiply(ratios, m)), d


@functools.lru_cache(maxsize=64)
def wall_stiffness_ratio(velocity_bandwidth, h, tol=1e-3):
    """The largest ``K / m`` of the one-joint loop ``m e'' = -K e - d e'`` with ``d / m = velocity_bandwidth`` whose
    :func:`loop_verdict` finds it neither unstable nor short of a margin (by bisection to ``tol``, relative); 0 if
    none (the velocity loop alone is short of one)."""
    clean = lambda ratio: loop_verdict([[1.0]], [ratio], [velocity_bandwidth], h) == (None, None)     # noqa: E731
    lo, hi = 0.0, velocity_bandwidth ** 2 / 4.0 + 1.0          # a critically damped wall at most: the first try
    while clean(hi):
        lo, hi = hi, 2.0 * hi
    if lo == 0.0 and not clean(tol * hi):
        return 0.0
    while hi - lo > tol * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if clean(mid) else (lo, mid)
    return lo
