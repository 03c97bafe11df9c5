"""Hopping control on the inertially decoupled dynamics: Feurstein [Feurstein2021], Sect. 4.1.5.

:class:`HopperController` is ROS-free and reads only measurements (joint encoders, base odometry, a
foot force sensor): a node calls :meth:`~HopperController.step` once per tick.  The model is the
controller's Pinocchio model, gravity included.  A step is Pinocchio's CRBA, the connection and the
foot's Jacobian, then three stages, each in its own module next to the thesis' equations:

* ``coordinates.py``: the CoM-foot line's length ``r_cf`` and polar angle, their rates, the foot's
  height (eqs. 3.96, 4.20-4.24), one compiled kernel;
* ``contact.py``: stance or flight (``HopperGains.contact_rule``), and for controller III the angle
  ``alpha_c`` of the locked-velocity frame (``locked_frame.py``, eqs. 3.70-3.76);
* ``laws.py``: the virtual springs, damper and energy pump (eqs. 4.16-4.19), then their wrench maps
  (eqs. 4.25-4.26), one compiled kernel.

The polar spring needs a torque on the base: the thesis assumes an external one (a foot, or more
legs); the plant models it as an explicit base-torque actuator.

The robot moves in a vertical (sagittal) plane of the 3D world.  Angles are measured as in the thesis
about the plane normal ``n`` (``PLANE_NORMAL``: the thesis' planar x-y with y up is the world's x-z,
so its out-of-plane axis is world -y); the base frame's x-z plane is the sagittal plane.
"""
import math
from dataclasses import dataclass, fields

import numpy as np
import pinocchio as pin

from floating_base_control import validation as check
from floating_base_control.compiled import R1, R2, kernel
from floating_base_control.conventions import pinocchio_velocity
from floating_base_control.dynamics.centroidal import com_from_locked_inertia
from floating_base_control.dynamics.rel_fast import locked_inertia_factor
from floating_base_control.kinematics import inertia_blocks
from floating_base_control.robots.hopper.contact import CONTACT_RULES, ContactDetector
from floating_base_control.robots.hopper.coordinates import com_in_world, line_coordinates, polar_angle
from floating_base_control.robots.hopper.laws import (energy_pump, hopping_torques, mechanical_energy, polar_torque,
                                                      radial_force, virtual_spring_energy)
from floating_base_control.robots.hopper.locked_frame import LockedFrameAngle
from floating_base_control.robots.hopper.model import base_pitch
from floating_base_control.validation import InputError, ModelError


VARIANTS = ("I", "II", "III")


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
    E_des: float = 0.0             #: desired energy E (kinetic + gravity, + the springs': energy_with_springs), J
    q_ref: float = math.nan        #: variant III: shape where alpha_c = alpha_i,cf, rad or m
    #: E includes the virtual springs' potential (docs/explanation/hopper.md, "Energy E")
    energy_with_springs: bool = True
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
    base_torque: float           #: the moment about the plane normal (what the base-torque actuator applies), N m
    stance: bool                 #: contact state after hysteresis
    tau_damping: np.ndarray      #: the radial damper's part of ``tau`` (an energy outflow)
    r_cf: float                  #: CoM-foot distance, m
    r_cf_dot: float              #: its rate from the internal velocity (eq. 4.24), m/s
    alpha: float                 #: the controlled polar angle (alpha_i,cf, or alpha_c for III), rad
    alpha_dot: float             #: its rate, rad/s
    alpha_cf: float              #: alpha_i,cf whatever the variant, rad
    energy: float                #: the energy pump's E: kinetic + gravity (+ the springs': energy_with_springs), J
    tau_r: float                 #: radial force of eq. 4.16 incl. tau_E, N
    tau_E: float                 #: energy pump of eq. 4.16, N
    tau_p: float                 #: polar torque of eq. 4.17, N m
    virtual_spring_energy: float = 0.0  #: 1/2 K_r (r - r_des)^2 + (stance) 1/2 K_p (alpha - alpha_des)^2, J
    saturated: bool = False      #: a joint torque or the base torque was limited


@dataclass
class _Geometry:
    """The CoM and the foot at one shape, base frame."""

    c: np.ndarray          #: CoM
    p_f: np.ndarray        #: foot
    J_f: np.ndarray        #: the foot's Jacobian w.r.t. q (base fixed), 3 x n


class _Lines:
    """The step's buffers between its two kernels (``coordinates.line_coordinates`` fills them,
    ``laws.hopping_torques`` reads them)."""

    def __init__(self, n):
        self.J_int = np.zeros((3, n))      # internal foot Jacobian
        self.J_d = np.zeros((3, n))        # the CoM-foot vector's Jacobian w.r.t. q
        self.vectors = np.zeros((3, 3))    # rows: e_cf, d_b, J_alpha


class HopperController:
    """The hopping controller of [Feurstein2021] Sect. 4.1.5, one :meth:`step` per control tick.

    ``model`` is a :class:`~floating_base_control.model.FloatingBaseModel` with gravity (the
    energy ``E`` includes the gravity potential, with the floor at height 0); ``foot_frame``
    names the point foot.  ``gains`` may be replaced between steps (live tuning).  The joint
    torques are limited to ``torque_limits`` (default: the URDF's efforts) and the base torque
    about the plane normal to ``base_torque_limit`` (N m, default unlimited).  ``control_period``
    (s): how long each command is held, which the ``foot_height`` contact rule accounts for
    (:class:`~floating_base_control.robots.hopper.contact.ContactDetector`); 0 for a controller run
    at every step of a fine simulation.
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
        self.ws = model.create_data()        # the step's workspace: CRBA, M_b's factor, A (Pinocchio's order)
        # the foot's position, base frame: Pinocchio's own (the frame Jacobian updates it in place)
        self._p_f = self.ws.pin_data.oMf[self.foot_id].translation
        self._lines = _Lines(model.n)
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
        """CoM and foot at shape ``q`` (base frame), and the foot's Jacobian, as new arrays."""
        ws, pm, pd = self.ws, self.model.pin_model, self.ws.pin_data
        ws.q_pin[7:] = q
        M_b = inertia_blocks(self.model, ws)[1]
        J = pin.computeFrameJacobian(pm, pd, ws.q_pin, self.foot_id, pin.LOCAL_WORLD_ALIGNED)
        return _Geometry(com_from_locked_inertia(M_b), pd.oMf[self.foot_id].translation.copy(), J[:3, 6:].copy())

    def energy(self, g1, q, V1, qdot):
        """Mechanical energy (kinetic + the gravity potential ``-m g . o_c``, zero at height 0) at the
        state ``(g1, q, V1, qdot)``, J: the energy ``E`` of :meth:`step` without the virtual springs."""
        geo = self.geometry(q)
        return mechanical_energy(self._kinetic_energy(V1, qdot), self._weight, com_in_world(g1, tuple(geo.c)))

    def step(self, meas):
        """Joint torques and base wrench for one tick from :class:`HopperMeasurements`.

        One CRBA and one factorization of ``M_b`` in the workspace ``ws`` (Pinocchio's order),
        one frame Jacobian and Pinocchio's kinetic energy, then the coordinates (one kernel), the
        contact and the laws (Python floats), the wrench maps (one kernel).
        """
        g, ws, model = self.gains, self.ws, self.model
        q, qdot, g1, V1 = _checked(meas, model.n)
        if not _finite(q, qdot, g1, V1):
            _validated(meas, model.n)                       # raises, naming the field
        locked = g.variant == "III"
        if locked and self._alpha_c_offset is None:
            q_ref = q[0] if math.isnan(g.q_ref) else g.q_ref
            self._alpha_c_offset = self._leg_angle_in_base(q_ref) - self._theta_bc(q_ref)
        pm, pd = model.pin_model, ws.pin_data
        locked_inertia_factor(model, ws, q)
        J_f = pin.computeFrameJacobian(pm, pd, ws.q_pin, self.foot_id, pin.LOCAL_WORLD_ALIGNED)[:3, 6:]
        lines = self._lines
        height, height_rate, r, r_dot, alpha_cf, alpha_dot, o_c = line_coordinates(
            J_f, ws.A, ws.M, self._p_f, model.mass, g1, V1, qdot, locked, lines.J_int, lines.J_d, lines.vectors)
        stance = self.contact.update(float(meas.t), float(meas.foot_force), height, height_rate)
        alpha = _wrap(base_pitch(g1) + self._theta_bc(q) + self._alpha_c_offset) if locked else alpha_cf
        polar_on = stance and g.variant != "I"
        spring = virtual_spring_energy(r, g.r_des, g.K_r, alpha if polar_on else g.alpha_des, g.alpha_des, g.K_p)
        E = mechanical_energy(self._kinetic_energy(V1, qdot), self._weight, o_c) + (
            spring if g.energy_with_springs else 0.0)
        tau_E = energy_pump(E, g.E_des, r_dot, g.K_E)
        D_r = g.D_r_stance if stance else g.D_r_flight
        tau_r = radial_force(r, r_dot, g.r_des, g.K_r, D_r, tau_E)
        tau_p = polar_torque(alpha, alpha_dot, g.alpha_des, g.K_p, g.D_p) if polar_on else 0.0
        tau, tau_damping, base_wrench = np.empty(model.n), np.empty(model.n), np.zeros(6)
        saturated, base_torque = hopping_torques(lines.J_int, lines.J_d, ws.A, lines.vectors, g1, tau_r, -D_r * r_dot,
                                                 tau_p, polar_on, locked, self._torque_limits, self.base_torque_limit,
                                                 tau, tau_damping, base_wrench)
        return HopperCommand(tau=tau, base_wrench=base_wrench, base_torque=base_torque, stance=stance,
                             tau_damping=tau_damping, r_cf=r, r_cf_dot=r_dot, alpha=alpha, alpha_dot=alpha_dot,
                             alpha_cf=alpha_cf, energy=E, tau_r=tau_r, tau_E=tau_E, tau_p=tau_p,
                             virtual_spring_energy=spring, saturated=saturated)

    @property
    def torque_limits(self):
        """Joint torque limits (N or N m, model.joint_names order)."""
        return self._torque_limits

    @torque_limits.setter
    def torque_limits(self, limits):
        self._torque_limits = np.ascontiguousarray(np.broadcast_to(np.asarray(limits, dtype=float), (self.model.n,)))

    def _kinetic_energy(self, V1, qdot):
        """Pinocchio's kinetic energy at the shape in ``ws.q_pin`` for the base twist ``V1`` and ``qdot``, J."""
        return pin.computeKineticEnergy(self.model.pin_model, self.ws.pin_data, self.ws.q_pin,
                                        pinocchio_velocity(V1, qdot))

    def _leg_angle_in_base(self, q):
        """``alpha_i,cf - theta_ib`` at shape ``q``: alpha_i,cf with the base at zero pitch."""
        geo = self.geometry(np.atleast_1d(q))
        return polar_angle(tuple(geo.p_f - geo.c))[0]


@kernel(R1, R1, R2, R1)
def _finite(q, qdot, g1, V1):
    """Are all entries of a measurement finite?"""
    for x in (q, qdot, V1):
        for i in range(len(x)):
            if not math.isfinite(x[i]):
                return False
    for i in range(4):
        for j in range(4):
            if not math.isfinite(g1[i, j]):
                return False
    return True


def _checked(meas, n):
    """``(q, qdot, g1, V1)`` of a measurement as float arrays of the right shapes.

    Float arrays of the right shapes (what a node or the plant passes) pass as they are (the
    step checks their finiteness); anything else goes through ``validation``, which names the
    offending field.
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
