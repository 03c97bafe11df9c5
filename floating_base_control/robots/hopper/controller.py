"""Hopping control on the inertially decoupled dynamics: Feurstein [Feurstein2021], Sect. 4.1.5.

Virtual springs between the centre of mass (CoM) and the point foot:

* a radial spring on the CoM-foot distance ``r_cf``, mapped through the
  *internal* velocity ``J^int = J_fq - A_fb M_bb^-1 M_bq`` (eq. 3.96), so that
  it produces joint torques only (eq. 4.25, first term), plus an energy pump
  ``tau_E = -K_E (E - E_des) rdot_cf`` (eq. 4.16), in stance and flight;
* a polar spring (stance only, eqs. 4.17, 4.19), in two variants:
  II on the angle ``alpha_i,cf`` of the CoM-foot line from the downward
  vertical, seen from the inertially aligned CoM frame (eqs. 4.20-4.25), and
  III on the orientation ``alpha_c = theta_b + theta_bc(q)`` of the CoM frame
  aligned with the locked velocity (eq. 4.26);
* variant I has no polar spring (under-actuated).

The polar spring needs a torque on the base: the thesis assumes an external one
(a foot, or more legs); the plant models it as an explicit base-torque actuator.

The robot moves in a vertical (sagittal) plane of the 3D world.  Angles are
measured as in the thesis about the plane normal ``n`` (``PLANE_NORMAL``: the
thesis' planar x-y with y up is the world's x-z, so its out-of-plane axis is
world -y); the base frame's x-z plane is the sagittal plane.

:class:`HopperController` is ROS-free and reads only measurements (joint
encoders, base odometry, a foot force sensor): a node calls :meth:`step` once
per tick.  The model is the controller's Pinocchio model, gravity included.  Stance and flight
come from the foot height (odometry and forward kinematics) or the foot force
(:class:`ContactDetector`, ``HopperGains.contact_rule``).
"""
import math
from dataclasses import dataclass, fields

import numpy as np
import pinocchio as pin

from floating_base_control import validation as check
from floating_base_control.conventions import generalized_from_pinocchio, list_reordering, pinocchio_velocity
from floating_base_control.dynamics.centroidal import com_from_locked_inertia
from floating_base_control.dynamics.rel_fast import locked_inertia_factor
from floating_base_control.kinematics import inertia_blocks
from floating_base_control.robots.hopper.model import PLANE_NORMAL, base_pitch
from floating_base_control.validation import InputError, ModelError


VARIANTS = ("I", "II", "III")
#: Stance/flight rules (``HopperGains.contact_rule``): the foot at or below the floor, its height
#: from odometry and encoders (default); or the foot force sensor with hysteresis and debounce.
CONTACT_RULES = ("foot_height", "foot_force")


@dataclass
class HopperGains:
    """Gains, set-points and contact thresholds of the hopping controller ([Feurstein2021] Tables
    4.8 and 4.12); every field is a plain float, bool or str, so a node can expose it as a parameter.

    ``q_ref`` (variant III): the shape at which the locked-velocity CoM frame is aligned
    with the CoM-foot line, fixing the free constant of ``theta_bc(q)`` (eq. 3.75); NaN
    takes the first measured shape.
    """

    variant: str = "II"            #: "I" radial only, "II" + polar on alpha_i,cf, "III" + polar on alpha_c
    K_r: float = 2200.0            #: radial stiffness, N/m
    D_r_flight: float = 0.0        #: radial damping in flight, N s/m (Exp IV-VI: 20)
    D_r_stance: float = 0.0        #: radial damping in stance, N s/m (0 in every experiment)
    r_des: float = 0.1411          #: radial rest length r_cf^des, m
    K_p: float = 6.0               #: polar stiffness (stance only), N m/rad
    D_p: float = 0.0               #: polar damping (stance only), N m s/rad
    alpha_des: float = 0.0         #: polar set-point, rad
    K_E: float = 0.0               #: energy gain of tau_E = -K_E (E - E_des) rdot_cf, N s/(J m)
    E_des: float = 0.0             #: desired mechanical energy (kinetic + gravity), J
    q_ref: float = math.nan        #: variant III: shape where alpha_c = alpha_i,cf, rad or m
    energy_with_springs: bool = True  #: E includes the virtual springs' potential (see module doc)
    contact_rule: str = "foot_height"  #: stance/flight rule, one of ``CONTACT_RULES`` (ContactDetector)
    touchdown_force: float = 2.0   #: foot_force rule: stance begins when the foot force rises above this, N
    liftoff_force: float = 0.5     #: foot_force rule: flight begins when it falls below this, N
    min_phase_time: float = 0.005  #: foot_force rule: a phase lasts at least this long (debounce), s

    def __post_init__(self):
        if self.variant not in VARIANTS:
            raise InputError(f"variant must be one of {VARIANTS}, got {self.variant!r}")
        if self.contact_rule not in CONTACT_RULES:
            raise InputError(f"contact_rule must be one of {CONTACT_RULES}, got {self.contact_rule!r}")
        self.energy_with_springs = bool(self.energy_with_springs)
        for f in fields(self):
            if f.name not in ("variant", "energy_with_springs", "contact_rule"):
                value = float(getattr(self, f.name))
                if not (math.isfinite(value) or (f.name == "q_ref" and math.isnan(value))):
                    raise InputError(f"gain {f.name} must be finite, got {value}")
                setattr(self, f.name, value)
        if self.liftoff_force >= self.touchdown_force:
            raise InputError(f"liftoff_force ({self.liftoff_force} N) must be below "
                             f"touchdown_force ({self.touchdown_force} N): that gap is the hysteresis")
        if min(self.K_r, self.D_r_flight, self.D_r_stance, self.K_p, self.D_p, self.r_des,
               self.min_phase_time) < 0:
            raise InputError("stiffnesses, dampings, r_des and min_phase_time must be >= 0")


@dataclass
class HopperCommand:
    """Output of one controller step, with the quantities of eqs. 4.16-4.26 for logging."""

    tau: np.ndarray              #: joint torques (all terms), model.joint_names order
    base_wrench: np.ndarray      #: [moment; force] on the base, base frame; force is always 0
    stance: bool                 #: contact state after hysteresis
    tau_damping: np.ndarray      #: the radial damper's part of ``tau`` (an energy outflow)
    r_cf: float                  #: CoM-foot distance, m
    r_cf_dot: float              #: its rate from the internal velocity (eq. 4.24), m/s
    alpha: float                 #: the controlled polar angle (alpha_i,cf, or alpha_c for III), rad
    alpha_dot: float             #: its rate, rad/s
    alpha_cf: float              #: alpha_i,cf whatever the variant, rad
    energy: float                #: mechanical energy E (kinetic + gravity), J
    tau_r: float                 #: radial force of eq. 4.16 incl. tau_E, N
    tau_E: float                 #: energy pump of eq. 4.16, N
    tau_p: float                 #: polar torque of eq. 4.17, N m
    virtual_spring_energy: float = 0.0  #: 1/2 K_r (r - r_des)^2 + (stance) 1/2 K_p (alpha - alpha_des)^2, J
    saturated: bool = False      #: a joint torque or the base torque was limited

    @property
    def base_torque(self):
        """Base moment about the plane normal (what the base-torque actuator applies), N m."""
        return float(self.base_wrench[:3] @ PLANE_NORMAL)


_NORMAL = tuple(PLANE_NORMAL.tolist())      # as floats, for the step's 3-tuples


class ContactDetector:
    """Stance or flight, by the rule ``gains.contact_rule``.

    ``"foot_height"`` (default): stance while the foot is at or below the floor (height 0 of
    the odometry frame), the foot height estimated from odometry and encoders (base pose and
    the foot's forward kinematics).  This is the thesis' floor flag ``o^y_if <= 0`` (Sect.
    4.1.4), the rule under which the controller's phases are the floor's: it reproduces the
    thesis' Exp VI energy figures (docs/HOPPER.md).  A sampled controller holds its command
    for ``hold`` seconds (its period): stance then also needs the foot, moving at its
    estimated vertical rate, to be on the floor still at the end of the hold.  Otherwise the
    stance command (the polar spring's base torque) would act on a hopper in the air for up to
    a period after lift-off, an external torque that turns its flight: at 1 kHz this alone
    makes the Exp VI gait diverge (docs/HOPPER.md, "Control rate").  ``hold = 0``: the flag
    as it is (a continuous controller).

    ``"foot_force"``: from a foot force sensor, with hysteresis and a minimum phase time.
    Stance begins when the force exceeds ``touchdown_force`` and ends when it falls below
    ``liftoff_force``; a phase that began less than ``min_phase_time`` ago does not switch.
    On the viscoelastic floor it holds "flight" for ``min_phase_time`` while the light foot,
    lifted by the stance controller just after the impact, is back on the floor.
    """

    def __init__(self, gains, stance=False, hold=0.0):
        self.gains = gains
        self.stance = stance
        self.hold = hold
        self.since = -math.inf

    def update(self, t, force, foot_height, foot_height_rate=0.0):
        """Contact state at time ``t`` (s) for the measured foot force (N), the estimated
        foot height above the floor (m) and its rate (m/s)."""
        g = self.gains
        if g.contact_rule == "foot_height":
            stance = foot_height <= 0.0 and foot_height + self.hold * foot_height_rate <= 0.0
            if stance != self.stance:
                self.stance, self.since = stance, t
        elif t - self.since >= g.min_phase_time:
            if not self.stance and force > g.touchdown_force:
                self.stance, self.since = True, t
            elif self.stance and force < g.liftoff_force:
                self.stance, self.since = False, t
        return self.stance


# -- the step's small vectors as Python floats: on a one-joint hopper a numpy call costs more than
# the arithmetic, so the step reads Pinocchio's results once.  A matrix with one column per joint
# (a Jacobian, the connection A) is a list of its columns: ``J x`` is ``_combine``, ``J^T y`` is
# ``_project``. ------------------------------------------------------------------------------------

def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _rotate(R, v):
    """``R v`` for ``R`` given by its rows."""
    return _dot(R[0], v), _dot(R[1], v), _dot(R[2], v)


def _rotate_back(R, v):
    """``R^T v`` for ``R`` given by its rows."""
    return (R[0][0] * v[0] + R[1][0] * v[1] + R[2][0] * v[2],
            R[0][1] * v[0] + R[1][1] * v[1] + R[2][1] * v[2],
            R[0][2] * v[0] + R[1][2] * v[1] + R[2][2] * v[2])


def _combine(columns, x):
    """``J x`` (a 3-tuple) of the 3-vector columns of ``J``."""
    a = b = c = 0.0
    for col, xj in zip(columns, x):
        a, b, c = a + col[0] * xj, b + col[1] * xj, c + col[2] * xj
    return a, b, c


def _project(columns, y):
    """``J^T y`` (a list) of the 3-vector columns of ``J``."""
    return [_dot(col, y) for col in columns]


# -- geometry of the CoM-foot line ([Feurstein2021] eqs. 4.20-4.24) ---------------------------------

def internal_foot_jacobian(J_f, A, p_f):
    """``J^int = J_fq - A_fb M_bb^-1 M_bq`` ([Feurstein2021] eq. 3.96), base frame, as columns: the foot's
    velocity per joint rate with the base moving by ``-A`` (a base twist ``[omega; v]`` moves the
    foot by ``v + omega x p_f``).  ``J_f``: the foot's columns (base fixed); ``A``: the mechanical
    connection's columns ``[A_omega; A_v]``."""
    out = []
    for jf, a in zip(J_f, A):
        w = _cross(a[:3], p_f)
        out.append((jf[0] - (w[0] + a[3]), jf[1] - (w[1] + a[4]), jf[2] - (w[2] + a[5])))
    return out


def radial_coordinates(d_b, v_int):
    """``(r_cf, e_cf, rdot_cf)``: CoM-foot distance, unit vector (base frame) and its rate
    through the internal velocity ``v_int = J^int qdot``, ``rdot = J_r R_cf J_v^int v`` ([Feurstein2021],
    eqs. 4.23-4.24)."""
    r = math.sqrt(_dot(d_b, d_b))
    e = (d_b[0] / r, d_b[1] / r, d_b[2] / r)
    return r, e, _dot(e, v_int)


def polar_angle(d):
    """``alpha_i,cf`` of the world CoM-foot vector ``d`` and its gradient ``J_alpha`` ([Feurstein2021],
    eqs. 4.22-4.23): the angle from the downward vertical, positive about ``PLANE_NORMAL``
    (foot ahead of the CoM).  ``FORWARD`` and ``UP`` are world x and z."""
    dx, dz = d[0], d[2]
    rho2 = dx * dx + dz * dz
    return math.atan2(dx, -dz), (-dz / rho2, 0.0, dx / rho2)


def foot_height(R, p, p_f):
    """Height of the foot above the floor (``UP`` component of ``R p_f + p``; the floor is the
    odometry frame's z = 0), from the base pose ``(R, p)`` and the foot in the base frame, m."""
    return _dot(R[2], p_f) + p[2]


def foot_height_rate(R, V, p_f, Jf_qdot):
    """Rate of :func:`foot_height`: the ``UP`` component of the foot's velocity ``R (v + omega x
    p_f + J_f qdot)``, from the base body twist ``V = [omega; v]`` and the foot's velocity
    ``J_f qdot`` relative to the base (base frame), m/s."""
    w = _cross(V[:3], p_f)
    return _dot(R[2], (V[3] + w[0] + Jf_qdot[0], V[4] + w[1] + Jf_qdot[1], V[5] + w[2] + Jf_qdot[2]))


# -- control laws ([Feurstein2021] eqs. 4.16-4.19) ------------------------------------------------------

def virtual_spring_energy(r, r_des, K_r, alpha, alpha_des, K_p):
    """Potential of the virtual radial and polar springs, ``K_r (r - r_des)^2 / 2 + K_p (alpha -
    alpha_des)^2 / 2``, J."""
    return 0.5 * K_r * (r - r_des) ** 2 + 0.5 * K_p * (alpha - alpha_des) ** 2


def energy_pump(E, E_des, r_dot, K_E):
    """``tau_E = -K_E (E - E_des) rdot_cf`` ([Feurstein2021] eq. 4.16)."""
    return -K_E * (E - E_des) * r_dot


def radial_force(r, r_dot, r_des, K_r, D_r, tau_E):
    """``tau_r = -K_r (r_cf - r_des) - D_r rdot_cf + tau_E`` ([Feurstein2021] eqs. 4.16 and 4.18)."""
    return -K_r * (r - r_des) - D_r * r_dot + tau_E


def polar_torque(alpha, alpha_dot, alpha_des, K_p, D_p):
    """``tau_p = -K_p (alpha - alpha_des) - D_p alpha_dot`` ([Feurstein2021] eq. 4.17; zero in flight, 4.19)."""
    return -K_p * (alpha - alpha_des) - D_p * alpha_dot


# -- wrench maps ([Feurstein2021] eqs. 4.25-4.26) -------------------------------------------------------

def radial_joint_torque(J_int, e, tau_r):
    """Radial term of eq. 4.25, ``J_v^int^T R_cf^T J_r^T tau_r``: joint torques only, because
    ``J^int`` has no base columns (the base wrench of this term is zero)."""
    return [x * tau_r for x in _project(J_int, e)]


def polar_wrench_leg(d_b, J_d, R, grad_alpha, tau_p):
    """Polar term of eq. 4.25 (variant II), ``J_(i o_cf dot)^T J_alpha^T tau_p``.

    ``i o_cf dot = R (omega x d_b + J_d qdot)`` does not depend on the base's linear
    velocity, so the base force is zero; returns ``(base moment (base frame), joint torques)``.
    """
    f = _rotate_back(R, grad_alpha)
    f = (f[0] * tau_p, f[1] * tau_p, f[2] * tau_p)
    return _cross(d_b, f), _project(J_d, f)


def polar_wrench_locked(A, tau_p):
    """Polar term of eq. 4.26 (variant III), ``J_(alpha_c dot)^T tau_p`` with
    ``alpha_c dot = n . (omega + A_omega qdot)``, the locked angular velocity about the normal
    (``A``'s columns: ``A_omega`` is their first three entries).

    Returns ``(base moment, joint torques) = (n tau_p, A_omega^T n tau_p)``: in the reduced
    equations ([Mishra2023] eq. 18) its shape force ``tau - A^T F_b`` is zero, so it acts on the
    locked (external) velocity only.
    """
    moment = (_NORMAL[0] * tau_p, _NORMAL[1] * tau_p, _NORMAL[2] * tau_p)
    return moment, [_dot(a[:3], moment) for a in A]


class LockedFrameAngle:
    """``theta_bc(q)`` of the CoM frame aligned with the locked velocity ([Feurstein2021] eqs. 3.70-3.76).

    Its rate is the locked angular velocity relative to the base, ``omega_bc = T_omega(q) qdot``
    with ``T_omega = n . A_omega``.  For one joint the integrability condition (3.73) holds
    trivially and ``theta_bc(q) = int_q_lo^q T_omega(s) ds``, tabulated once here on
    ``samples`` points (trapezoid rule with its end correction, error ~1e-10 rad) and
    interpolated by cubic Hermite polynomials through the values and the exact rates, so that
    ``d theta_bc / dq`` is ``T_omega`` to ~1e-9.  Several joints are refused: there (3.72)
    generally fails and the angle is path dependent.  ``periodic`` (a revolute joint without
    limits, tabulated over ``[q_lo, q_lo + 2 pi]``): beyond the table, each turn adds the
    angle of one full turn, since ``T_omega`` has period 2 pi.
    """

    def __init__(self, model, q_lo, q_hi, samples=2001, periodic=False):
        if model.n != 1:
            raise ModelError(f"controller III needs a path-independent theta_bc(q): implemented "
                             f"for one joint ([Feurstein2021] eq. 3.73), the model has {model.n}")
        ws = model.create_data()
        self.q = np.linspace(q_lo, q_hi, samples)
        self.h = self.q[1] - self.q[0]
        T = np.empty(samples)
        for i, qi in enumerate(self.q):
            ws.q_pin[7:] = qi
            T[i] = PLANE_NORMAL @ inertia_blocks(model, ws)[3][:3, 0]
        dT = np.gradient(T, self.h, edge_order=2)
        steps = 0.5 * self.h * (T[1:] + T[:-1]) + self.h ** 2 / 12.0 * (dT[:-1] - dT[1:])
        self.T = T
        self.theta = np.concatenate([[0.0], np.cumsum(steps)])
        if periodic and not math.isclose(q_hi - q_lo, 2.0 * math.pi):
            raise InputError(f"a periodic theta_bc is tabulated over one turn, got [{q_lo}, {q_hi}]")
        self.periodic = periodic

    def __call__(self, q):
        """``theta_bc(q)`` relative to ``theta_bc(q_lo) = 0``, rad."""
        q = float(np.asarray(q).reshape(-1)[0])
        if self.periodic:
            turns = math.floor((q - self.q[0]) / (2.0 * math.pi))
            return self(q - 2.0 * math.pi * turns) + turns * self.theta[-1] if turns else self._table(q)
        return self._table(q)

    def _table(self, q):
        if not self.q[0] <= q <= self.q[-1]:
            raise InputError(f"q = {q} is outside the tabulated range [{self.q[0]}, {self.q[-1]}] "
                             "of theta_bc")
        i = min(int((q - self.q[0]) / self.h), len(self.q) - 2)
        s = (q - self.q[i]) / self.h
        h00, h10, h01, h11 = (2 * s ** 3 - 3 * s ** 2 + 1, s ** 3 - 2 * s ** 2 + s,
                              -2 * s ** 3 + 3 * s ** 2, s ** 3 - s ** 2)
        return float(h00 * self.theta[i] + h10 * self.h * self.T[i]
                     + h01 * self.theta[i + 1] + h11 * self.h * self.T[i + 1])


@dataclass
class _Geometry:
    """Everything a control step needs at one shape, from one CRBA and one frame Jacobian."""

    M: np.ndarray          #: generalized inertia, the order of [V1; qdot]
    A: np.ndarray          #: mechanical connection
    c: np.ndarray          #: CoM in the base frame
    J_c: np.ndarray        #: its Jacobian w.r.t. q (base fixed), 3 x n
    p_f: np.ndarray        #: foot in the base frame
    J_f: np.ndarray        #: its Jacobian w.r.t. q (base fixed), 3 x n


class HopperController:
    """The hopping controller of [Feurstein2021] Sect. 4.1.5, one :meth:`step` per control tick.

    ``model`` is a :class:`~floating_base_control.model.FloatingBaseModel` with gravity (the
    energy ``E`` includes the gravity potential, with the floor at height 0); ``foot_frame``
    names the point foot.  ``gains`` may be replaced between steps (live tuning).  The joint
    torques are limited to ``torque_limits`` (default: the URDF's efforts) and the base torque
    about the plane normal to ``base_torque_limit`` (N m, default unlimited).  ``control_period``
    (s): how long each command is held, which the ``foot_height`` contact rule accounts for
    (:class:`ContactDetector`); 0 for a controller run at every step of a fine simulation.
    """

    def __init__(self, model, gains, foot_frame="foot", torque_limits=None, base_torque_limit=math.inf,
                 control_period=0.0):
        if not model.gravity.any():
            raise ModelError("the hopping controller needs a model with gravity (its energy E "
                             "includes the gravity potential)")
        if not model.pin_model.existFrame(foot_frame):
            raise ModelError(f"the model has no frame {foot_frame!r} for the foot")
        self.model = model
        self.gains = gains
        self.torque_limits = model.effort_limits if torque_limits is None else torque_limits
        self.base_torque_limit = base_torque_limit
        self.foot_id = model.pin_model.getFrameId(foot_frame)
        self.ws = model.create_data()        # the step's workspace: CRBA, M_b's factor, A (rel_fast's kernel)
        self._reorder = list_reordering(model.n), list_reordering()      # its results as lists of floats
        self._weight = tuple((model.mass * model.gravity).tolist())      # m g, world
        self.control_period = float(control_period)
        self.contact = ContactDetector(gains, hold=self.control_period)
        self._theta_bc = None
        self._alpha_c_offset = None
        if gains.variant == "III":
            lo, hi = model.position_limits[0]
            limited = np.isfinite([lo, hi]).all()
            self._theta_bc = (LockedFrameAngle(model, lo, hi) if limited else
                              LockedFrameAngle(model, -math.pi, math.pi, periodic=True))

    def reset(self, stance=False):
        """Restart the contact detection in ``stance`` (or flight), e.g. before a new run.

        Variant III's reference for ``alpha_c`` stays: with ``q_ref`` NaN it is the shape of
        the first step since construction.
        """
        self.contact = ContactDetector(self.gains, stance, self.control_period)

    @property
    def gains(self):
        return self._gains

    @gains.setter
    def gains(self, gains):
        if not isinstance(gains, HopperGains):
            raise InputError(f"gains must be HopperGains, got {type(gains).__name__}")
        if hasattr(self, "_gains") and gains.variant != self._gains.variant:
            raise InputError("the controller variant cannot change while running; build a new controller")
        if hasattr(self, "_gains") and not _same(gains.q_ref, self._gains.q_ref):
            self._alpha_c_offset = None          # the reference of alpha_c moves with q_ref
        self._gains = gains
        if hasattr(self, "contact"):
            self.contact.gains = gains

    def geometry(self, q):
        """Locked inertia, connection, CoM and foot at shape ``q`` (base frame), as new arrays; the
        connection ``A`` in the paper's order ``[A_omega; A_v]``."""
        ws, pm, pd = self.ws, self.model.pin_model, self.ws.pin_data
        ws.q_pin[7:] = q
        M, M_b, M_bq, A = inertia_blocks(self.model, ws)
        J = pin.computeFrameJacobian(pm, pd, ws.q_pin, self.foot_id, pin.LOCAL_WORLD_ALIGNED)
        p_f = pd.oMf[self.foot_id].translation.copy()
        m = self.model.mass
        return _Geometry(generalized_from_pinocchio(M), A, np.array(com_from_locked_inertia(M_b)), M_bq[3:] / m, p_f,
                         J[:3, 6:].copy())

    def energy(self, geo, g1, V1, qdot):
        """Mechanical energy ``E = 1/2 v^T M v + U_g`` with ``v = [V1; qdot]`` at the
        :meth:`geometry` ``geo`` and the gravity potential ``-m g . o_ic`` (zero at height 0), J."""
        v = np.concatenate([V1, qdot])
        com = g1[:3, :3] @ geo.c + g1[:3, 3]
        return float(0.5 * v @ geo.M @ v - self.model.mass * self.model.gravity @ com)

    def step(self, meas):
        """Joint torques and base wrench for one tick from :class:`HopperMeasurements`.

        One CRBA and one factorization of ``M_b`` in the workspace ``ws`` (``rel_fast``'s kernel),
        one frame Jacobian and Pinocchio's kinetic energy; their results are read once as
        Python floats, on which the rest of the step runs.
        """
        g, ws, model = self.gains, self.ws, self.model
        q, qdot, g1, V1 = _checked(meas, model.n)
        qd, G, V = qdot.tolist(), g1.tolist(), V1.tolist()
        if not math.isfinite(sum(qd) + sum(V) + sum(map(sum, G)) + sum(q.tolist())):
            _validated(meas, model.n)                       # raises, naming the field
        pm, pd = model.pin_model, ws.pin_data
        locked_inertia_factor(model, ws, q)
        J_f = pin.computeFrameJacobian(pm, pd, ws.q_pin, self.foot_id, pin.LOCAL_WORLD_ALIGNED)[:3, 6:].T.tolist()
        p_f = pd.oMf[self.foot_id].translation.tolist()
        reorder, reorder_twist = self._reorder
        A = list(map(reorder_twist, ws.A.T.tolist()))           # the connection's columns [A_omega; A_v]
        M = list(map(reorder, reorder_twist(ws.M.tolist())))    # CRBA's base rows: [M_b, M_bq]
        c = com_from_locked_inertia(M)
        m = model.mass
        J_d = [(jf[0] - M[3][j] / m, jf[1] - M[4][j] / m, jf[2] - M[5][j] / m)   # M_bq's linear rows: m J_c
               for j, jf in enumerate(J_f, 6)]
        R, p = G[:3], (G[0][3], G[1][3], G[2][3])         # rows of g1: R is their first three columns
        stance = self.contact.update(float(meas.t), float(meas.foot_force), foot_height(R, p, p_f),
                                     foot_height_rate(R, V, p_f, _combine(J_f, qd)))
        d_b = (p_f[0] - c[0], p_f[1] - c[1], p_f[2] - c[2])
        J_int = internal_foot_jacobian(J_f, A, p_f)
        r, e, r_dot = radial_coordinates(d_b, _combine(J_int, qd))
        alpha_cf, grad_alpha = polar_angle(_rotate(R, d_b))
        alpha, alpha_dot = self._polar_coordinates(R, d_b, J_d, V, A, q, qd, alpha_cf, grad_alpha)
        polar_on = stance and g.variant != "I"
        spring = virtual_spring_energy(r, g.r_des, g.K_r, alpha if polar_on else g.alpha_des,
                                       g.alpha_des, g.K_p)
        com = _rotate(R, c)
        E = (pin.computeKineticEnergy(pm, pd, ws.q_pin, pinocchio_velocity(V1, qdot))
             - _dot(self._weight, (com[0] + p[0], com[1] + p[1], com[2] + p[2]))
             + (spring if g.energy_with_springs else 0.0))
        tau_E = energy_pump(E, g.E_des, r_dot, g.K_E)
        D_r = g.D_r_stance if stance else g.D_r_flight
        tau_r = radial_force(r, r_dot, g.r_des, g.K_r, D_r, tau_E)
        tau_damping = radial_joint_torque(J_int, e, -D_r * r_dot)
        tau = radial_joint_torque(J_int, e, tau_r)
        moment = (0.0, 0.0, 0.0)
        tau_p = 0.0
        if polar_on:
            tau_p = polar_torque(alpha, alpha_dot, g.alpha_des, g.K_p, g.D_p)
            if g.variant == "II":
                moment, tau_polar = polar_wrench_leg(d_b, J_d, R, grad_alpha, tau_p)
            else:
                moment, tau_polar = polar_wrench_locked(A, tau_p)
            tau = [a + b for a, b in zip(tau, tau_polar)]
        limited = [min(max(t, -lim), lim) for t, lim in zip(tau, self._torque_limits)]
        moment, base_clipped = self._limit_base_torque(moment)
        return HopperCommand(tau=np.array(limited), base_wrench=np.array([*moment, 0.0, 0.0, 0.0]),
                             stance=stance, tau_damping=np.array(tau_damping), r_cf=r, r_cf_dot=r_dot,
                             alpha=alpha, alpha_dot=alpha_dot, alpha_cf=alpha_cf, energy=E, tau_r=tau_r,
                             tau_E=tau_E, tau_p=tau_p, virtual_spring_energy=spring,
                             saturated=limited != tau or base_clipped)

    @property
    def torque_limits(self):
        """Joint torque limits (N or N m, model.joint_names order)."""
        return self._torque_limits_array

    @torque_limits.setter
    def torque_limits(self, limits):
        self._torque_limits_array = np.broadcast_to(np.asarray(limits, dtype=float), (self.model.n,))
        self._torque_limits = self._torque_limits_array.tolist()

    def _limit_base_torque(self, moment):
        """``moment`` (a float 3-tuple) with its component about the plane normal (what the
        base-torque actuator applies) within ``base_torque_limit``."""
        about_normal = _dot(moment, _NORMAL)
        limit = self.base_torque_limit
        limited = min(max(about_normal, -limit), limit)
        if limited == about_normal:
            return moment, False
        delta = limited - about_normal
        return tuple(m + delta * n for m, n in zip(moment, _NORMAL)), True

    def _polar_coordinates(self, R, d_b, J_d, V, A, q, qd, alpha_cf, grad_alpha):
        """``(alpha, alpha_dot)`` of the variant: alpha_i,cf (I, II) or alpha_c (III)."""
        if self.gains.variant != "III":
            w, Jd_qdot = _cross(V[:3], d_b), _combine(J_d, qd)
            d_dot = _rotate(R, (w[0] + Jd_qdot[0], w[1] + Jd_qdot[1], w[2] + Jd_qdot[2]))
            return alpha_cf, _dot(grad_alpha, d_dot)
        theta_b = base_pitch(R)
        if self._alpha_c_offset is None:
            q_ref = q[0] if math.isnan(self.gains.q_ref) else self.gains.q_ref
            self._alpha_c_offset = self._leg_angle_in_base(q_ref) - self._theta_bc(q_ref)
        alpha_c = _wrap(theta_b + self._theta_bc(q) + self._alpha_c_offset)
        # the locked angular velocity omega + A_omega qdot ([Mishra2023] Def. 3) about the normal
        A_omega_qdot = _combine([a[:3] for a in A], qd)
        return alpha_c, _dot(_NORMAL, (V[0] + A_omega_qdot[0], V[1] + A_omega_qdot[1], V[2] + A_omega_qdot[2]))

    def _leg_angle_in_base(self, q):
        """``alpha_i,cf - theta_ib`` at shape ``q``: alpha_i,cf with the base at zero pitch."""
        geo = self.geometry(np.atleast_1d(q))
        return polar_angle(geo.p_f - geo.c)[0]


def _checked(meas, n):
    """``(q, qdot, g1, V1)`` of a measurement as float arrays of the right shapes.

    Float arrays of the right shapes (what a node or the plant passes) pass as they are (the
    step checks their finiteness on its floats); anything else goes through ``validation``,
    which names the offending field.
    """
    q, qdot, g1, V1 = x = (meas.q, meas.qdot, meas.g1, meas.V1)
    if (type(q) is type(qdot) is type(g1) is type(V1) is np.ndarray
            and q.dtype is qdot.dtype is g1.dtype is V1.dtype is _FLOAT64
            and (q.shape, qdot.shape, g1.shape, V1.shape) == ((n,), (n,), (4, 4), (6,))):
        return x
    return _validated(meas, n)


_FLOAT64 = np.dtype(float)


def _validated(meas, n):
    """The fields of a measurement checked by ``validation`` (shape and finiteness, named)."""
    return (check.vector("q", meas.q, n), check.vector("qdot", meas.qdot, n),
            check.array("g1", meas.g1, (4, 4)), check.vector("V1", meas.V1, 6))


def _wrap(angle):
    """``angle`` wrapped to [-pi, pi)."""
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


def _same(a, b):
    """Equal, with NaN equal to NaN (``q_ref = NaN`` means "the first measured shape")."""
    return a == b or (math.isnan(a) and math.isnan(b))
