"""The floating-base robot model in the notation of Mishra et al. [Mishra2023].

:class:`FloatingBaseModel` holds the Pinocchio model built from a URDF and the
constant per-link data, all read-only (its arrays are not writeable).  Its methods
are the checked public entry points (shapes and NaN are validated, errors name the
argument); each evaluates the shape kinematics once and calls the plain functions in
``floating_base_control.dynamics``, which the inner loops of the estimator and
controllers call directly with a :class:`Workspace` of their own
(:meth:`FloatingBaseModel.create_data`, as Pinocchio's ``model.createData()``).

What the model caches: exactly one scratch :class:`Workspace`, ``model.scratch``,
created with the model, which the checked methods overwrite on every call (their
results are fresh arrays).  So a model is not shared between threads: give each thread
its own model, or its own workspace for the plain functions.
"""
import numpy as np
import pinocchio as pin

from floating_base_control import validation as check
from floating_base_control.conventions import swap_halves, to_pinocchio
from floating_base_control.dynamics import curvature as _curv
from floating_base_control.dynamics import hamel as _hamel
from floating_base_control.dynamics import rel_matrices as _rel
from floating_base_control.dynamics import rel_fast as _terms
from floating_base_control.kinematics import Workspace, shape_kinematics
from floating_base_control.urdf_loader import build_pinocchio_model, describe_urdf, read_urdf
from floating_base_control.validation import ModelError

#: Smallest eigenvalue, relative to the largest, accepted for M_b and Lambda_q.
DEGENERACY_TOL = 1e-12
#: Random shapes (within the limits) at which Lambda_q is checked, besides q = 0 and mid-range.
REGULARITY_SAMPLES = 4


class FloatingBaseModel:
    """A free-floating multibody system: base {1} (the URDF root link) and ``n`` shape joints.

    Attributes
    ----------
    pin_model : pinocchio.Model
        Free-flyer model (treat as read-only).  Its gravity is the one given.
    joint_names : tuple of str
        Shape joints in the order of ``q`` (Pinocchio's depth-first order).
    link_names : tuple of str
        One URDF link per rigid body (fixed links merged), base first.
    n : int
        Number of shape joints.
    gravity : ndarray (3,)
        Gravity in the inertial frame, m/s^2.
    position_limits, velocity_limits, effort_limits : ndarray
        ``(n, 2)`` lower/upper positions and ``(n,)`` symmetric limits from the URDF
        (infinite where the URDF gives none, see ``urdf_loader``).
    description : urdf_loader.URDFDescription or None
        The URDF as loaded (locked joints fixed, ``world`` root dropped) and what was
        changed: what the plant is built from (``sim/plant.py``).
    locked_joints : dict
        Joint -> position of the joints locked at load time (mimic groups included).
    """

    def __init__(self, pin_model, source="<model>", description=None):
        self.pin_model = pin_model
        self.source = source
        self.description = description
        self.locked_joints = dict(description.locked) if description else {}
        self.n = pin_model.nv - 6
        if pin_model.nq != pin_model.nv + 1 or pin_model.joints[1].shortname() != "JointModelFreeFlyer":
            raise ModelError(f"{source}: expected a free-flyer root and 1-DoF shape joints")
        self.joint_names = tuple(pin_model.names[2:])
        self.link_names = tuple(_link_names(pin_model))
        self.gravity = pin_model.gravity.linear.copy()
        self.mass = sum(Y.mass for Y in pin_model.inertias)
        self.position_limits = np.column_stack([pin_model.lowerPositionLimit[7:],
                                                pin_model.upperPositionLimit[7:]])
        self.velocity_limits = pin_model.velocityLimit[6:].copy()
        self.effort_limits = pin_model.effortLimit[6:].copy()
        self.link_inertia_pin = np.array([Y.matrix() for Y in pin_model.inertias[1:]])
        self.support = np.array([[j in pin_model.supports[k] for j in range(2, pin_model.njoints)]
                                 for k in range(1, pin_model.njoints)])
        self.support3 = self.support[:, None, :].astype(float)   # (nb, 1, n) mask of Z_k columns
        #: zero-gravity copy: CC forces from nonLinearEffects (rel_terms)
        self.cc_pin_model = pin.Model(pin_model)
        self.cc_pin_model.gravity = pin.Motion.Zero()
        for array in (self.position_limits, self.velocity_limits, self.effort_limits, self.link_inertia_pin,
                      self.support, self.support3, self.gravity):
            array.setflags(write=False)
        self.scratch = Workspace(self)
        self._check_nondegenerate()

    @classmethod
    def from_urdf(cls, path, gravity=(0.0, 0.0, 0.0), locked=None, mimic="lock"):
        """Load a URDF whose root link is the floating base.

        ``gravity`` (m/s^2, inertial frame) defaults to zero: the free-floating
        (orbital) case, where the momentum map is conserved.  Pass
        ``(0, 0, -9.81)`` for a robot on Earth.  ``locked`` maps joints to hold
        fixed (a gripper, a head) to their positions; the shape is the other joints.
        ``mimic``: ``"lock"`` holds each mimic group at its leader's position (from
        ``locked``, default 0 within the limits), ``"error"`` refuses mimic joints.
        See ``urdf_loader`` for what else a real URDF may contain and how it is read.
        """
        return cls.from_urdf_string(read_urdf(path), gravity, source=str(path), locked=locked, mimic=mimic)

    @classmethod
    def from_urdf_string(cls, xml, gravity=(0.0, 0.0, 0.0), source="<string>", locked=None, mimic="lock"):
        """Like :meth:`from_urdf`, from the URDF text."""
        gravity = check.vector("gravity", gravity, 3)
        description = describe_urdf(xml, source, locked, mimic)
        return cls(build_pinocchio_model(description, gravity), source, description)

    def create_data(self):
        """A new :class:`~floating_base_control.kinematics.Workspace` for this model."""
        return Workspace(self)

    def __repr__(self):
        return (f"FloatingBaseModel({self.source!r}, n={self.n}, "
                f"mass={self.mass:.3f} kg, joints={list(self.joint_names)})")

    # -- checked entry points -------------------------------------------------------

    def kinematics(self, q, qdot=None):
        """:class:`~floating_base_control.kinematics.ShapeKinematics` at a checked shape."""
        q = check.vector("q", q, self.n)
        qdot = None if qdot is None else check.vector("qdot", qdot, self.n)
        return shape_kinematics(self, self.scratch, q, qdot)


    def locked_inertia(self, q):
        """Locked inertia ``M_b(q)`` (6x6, [Mishra2023] eq. 7)."""
        return self.kinematics(q).M_b

    def mechanical_connection(self, q):
        """Local mechanical connection ``A_l(q) = M_b^-1 M_bq`` (6 x n, Def. 3)."""
        return self.kinematics(q).A_l

    def locked_velocity(self, q, V1, qdot):
        """Locked velocity ``mu = V1 + A_l qdot`` (Def. 3)."""
        V1 = check.vector("V1", V1, 6)
        return _rel.locked_velocity(self.kinematics(q), V1, check.vector("qdot", qdot, self.n))

    def base_velocity(self, q, mu, qdot):
        """Base body twist ``V1 = mu - A_l qdot`` (eq. 9)."""
        mu = check.vector("mu", mu, 6)
        return _rel.base_velocity(self.kinematics(q), mu, check.vector("qdot", qdot, self.n))

    def momentum_map(self, g1, q, V1, qdot):
        """Spatial momentum ``J = Ad_g1^-T (M_b V1 + M_bq qdot)`` (Def. 2), ``[angular; linear]``."""
        g1 = check.pose("g1", g1)
        V1 = check.vector("V1", V1, 6)
        return _rel.momentum_map(self.kinematics(q), g1, V1, check.vector("qdot", qdot, self.n))

    def reduced_shape_inertia(self, q):
        """``Lambda_q(q)`` (n x n, eq. 19a)."""
        return _rel.reduced_shape_inertia(self.kinematics(q))

    def locked_inertia_velocity(self, q, x):
        """LIV matrix ``P(q, x)`` (6x6, eq. 19b); ``P(q, qdot) = dM_b/dt``."""
        return _rel.locked_inertia_velocity(self.kinematics(q), check.vector("x", x, self.n))

    def locked_inertia_derivative(self, q, mu):
        """LID matrix ``S(q, mu)`` (6 x n, eq. 19c)."""
        return _rel.locked_inertia_derivative(self.kinematics(q), check.vector("mu", mu, 6))

    def reduced_shape_coriolis(self, q, qdot):
        """Reduced shape CC matrix ``Gamma~'_q(q, qdot)`` (n x n, eq. 19d)."""
        return _rel.reduced_shape_coriolis(self.kinematics(q, qdot))

    def gyroscopic_matrix(self, q, mu):
        """Curvature-related skew matrix ``B~(q, mu)`` (n x n, eq. 19e)."""
        return _rel.gyroscopic_matrix(self.kinematics(q), check.vector("mu", mu, 6))

    def cc_matrices(self, q, mu, qdot):
        """``(D_qdot, D_mu)`` of Theorem 1 (eq. 18)."""
        return _rel.cc_matrices(self.kinematics(q, qdot), check.vector("mu", mu, 6))

    def reduced_inertia(self, q):
        """``Lambda = diag(M_b, Lambda_q)`` of Theorem 1 (eq. 18)."""
        return _rel.reduced_inertia(self.kinematics(q))

    def hamel_matrices(self, q, V1, qdot):
        """``(M, C)`` of Lemma 1 (eqs. 5-6), ordered ``[V1 = (omega, v); qdot]``."""
        return _hamel.hamel_matrices(self.kinematics(q, qdot), check.vector("V1", V1, 6))

    def generalized_gravity(self, g1, q):
        """Gravity forces ``(F1_g, tau_g)`` at pose ``g1``: base wrench ``[moment; force]`` and joints.

        These enter the REL equations on the force side (``F`` of eq. 18).
        """
        g1 = check.pose("g1", g1)
        q_pin = to_pinocchio(g1, check.vector("q", q, self.n))
        g = -pin.computeGeneralizedGravity(self.pin_model, self.scratch.pin_data, q_pin)
        return swap_halves(g[:6]), g[6:]

    def rel_terms(self, q, qdot, mu):
        """:class:`~floating_base_control.dynamics.rel_fast.RELTerms`: inertias and CC forces of
        the REL equations (eq. 18) at ``(q, qdot, mu)``, split by velocity dependency."""
        q, qdot = check.vector("q", q, self.n), check.vector("qdot", qdot, self.n)
        return _terms.rel_terms(self, self.scratch, q, qdot, check.vector("mu", mu, 6))

    def forward_dynamics_reduced(self, q, mu, qdot, tau, F1=None, g1=None):
        """``(mu_dot, qddot)`` from the REL equations (Theorem 1, eq. 18).

        ``tau`` are the joint torques, ``F1`` an external body wrench on the base
        ``[moment; force]`` (default zero).  With non-zero gravity the base pose
        ``g1`` is needed for the gravity forces.
        """
        terms = self.rel_terms(q, qdot, mu)
        tau = check.vector("tau", tau, self.n)
        F1 = np.zeros(6) if F1 is None else check.vector("F1", F1, 6)
        if self.gravity.any():
            if g1 is None:
                raise check.InputError("g1 is required: the model has non-zero gravity "
                                       f"{self.gravity.tolist()}")
            F1_g, tau_g = self.generalized_gravity(g1, q)
            F1, tau = F1 + F1_g, tau + tau_g
        return _terms.forward_dynamics(terms, tau, F1)

    def curvature(self, q, x, y):
        """Local curvature ``DA_l(q, x) y`` by Theorem 2 (eq. 35), a twist ``[omega; v]``.

        Sign as in eq. 11: a small counter-clockwise loop of area ``a`` in the
        ``(x, y)`` plane at ``mu = 0`` moves the base by ``-a DA_l(q, x) y``.
        """
        x = check.vector("x", x, self.n)
        return _curv.curvature(self.kinematics(q), x, check.vector("y", y, self.n))

    def curvature_tensor(self, q):
        """``F[:, i, j] = DA_l(q, e_i) e_j`` for all joint pairs (6 x n x n), by Theorem 2."""
        return _curv.curvature_tensor(self.kinematics(q))

    # -- construction checks --------------------------------------------------------

    def _check_nondegenerate(self):
        if self.n == 0:
            raise ModelError(f"{self.source}: no movable joints: a floating base needs a shape (n >= 1)")
        M = pin.crba(self.pin_model, self.scratch.pin_data, self.scratch.q_pin)
        if np.abs(M - M.T).max() > 1e-12 * np.abs(M).max():
            raise ModelError("this Pinocchio build returns a non-symmetric crba(); "
                             f"floating_base_control needs pin >= 3 ({pin.__version__} found)")
        ev = np.linalg.eigvalsh(M[:6, :6])          # M_b up to the order of its rows and columns
        if ev.min() <= DEGENERACY_TOL * ev.max():
            raise ModelError(f"{self.source}: the locked inertia M_b is singular (eigenvalues "
                             f"{ev.min():.3g} .. {ev.max():.3g}): the robot needs mass and a "
                             "non-degenerate rotational inertia")
        self._check_regular()

    def regularity_shapes(self):
        """Shapes at which :meth:`_check_regular` evaluates ``Lambda_q``: ``q = 0`` and mid-range
        (clipped to the limits), and :data:`REGULARITY_SAMPLES` fixed random shapes within the limits
        (``[-pi, pi]`` where unlimited)."""
        lo, hi = self.position_limits.T
        lo_f, hi_f = np.where(np.isfinite(lo), lo, -np.pi), np.where(np.isfinite(hi), hi, np.pi)
        rng = np.random.default_rng(0)
        return [np.clip(np.zeros(self.n), lo, hi), 0.5 * (lo_f + hi_f),
                *(rng.uniform(lo_f, hi_f) for _ in range(REGULARITY_SAMPLES))]

    def _check_regular(self):
        """``Lambda_q`` (eq. 19a) must be regular at some shape within the limits; a robot whose
        ``Lambda_q`` is singular at every checked shape has joints that move no inertia."""
        best = None
        for q in self.regularity_shapes():
            Lam = _rel.reduced_shape_inertia(self.kinematics(q))
            ev, vecs = np.linalg.eigh(Lam)
            ratio = ev[0] / max(ev[-1], 1e-300)
            if ratio > DEGENERACY_TOL:
                return
            if best is None or ratio > best[0]:
                best = (ratio, vecs[:, 0], q)
        _, null, q = best
        big = np.abs(null) > 0.05 * np.abs(null).max()
        combo = " ".join(f"{c:+.3g} {self.joint_names[j]}" for j, c in enumerate(null) if big[j])
        dead = [self.joint_names[j] for j in np.flatnonzero(big)] if big.sum() == 1 else None
        raise ModelError(f"{self.source}: the reduced shape inertia Lambda_q is singular at every "
                         f"checked shape ({len(self.regularity_shapes())}, within the limits); "
                         f"joints moving no inertia: {dead or 'the combination ' + combo}")


def _link_names(pin_model):
    """First BODY frame of each joint 1.. (the URDF link it carries)."""
    names = {}
    for frame in pin_model.frames:
        if frame.type == pin.FrameType.BODY and frame.parentJoint not in names:
            names[frame.parentJoint] = frame.name
    return [names.get(j, pin_model.names[j]) for j in range(1, pin_model.njoints)]
