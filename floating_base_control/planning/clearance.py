"""Clearance between the base and the arm: distances of their URDF collision geometries (Pinocchio, coal).

A loop that turns the base well may swing the arm into the spacecraft.  The pairs checked are every
collision geometry fixed to the base (the root body, with the fixed links merged into it) against every
geometry of a link that is not a child of the base: a child touches the base at its joint by design (and a
physics engine such as MuJoCo does not collide a body with its parent either).  Distances are signed
(negative: penetration depth), in metres, with the base at the identity: they depend on the shape only.
"""
import numpy as np
import pinocchio as pin

from .. import validation as check
from ..lie import skew


class BaseClearance:
    """Signed distances between the base's and the arm's collision geometries at shapes ``q``."""

    def __init__(self, model):
        self.model = model
        pm = model.pin_model
        xml = model.description.urdf if model.description is not None else None
        self.geometry = (pin.buildGeomFromUrdfString(pm, xml, pin.GeometryType.COLLISION) if xml
                         else pin.GeometryModel())
        objects = self.geometry.geometryObjects
        base = [i for i, g in enumerate(objects) if g.parentJoint == 1]
        arm = [i for i, g in enumerate(objects) if g.parentJoint > 1 and pm.parents[g.parentJoint] != 1]
        for a in base:
            for b in arm:
                self.geometry.addCollisionPair(pin.CollisionPair(a, b))
        self.pairs = [(a, b) for a in base for b in arm]
        self.data, self.geometry_data = pm.createData(), pin.GeometryData(self.geometry)
        self.q_pin = pin.neutral(pm)

    @property
    def available(self):
        """Whether the URDF gives collision geometry to both the base and the arm."""
        return bool(self.pairs)

    def distances(self, qs):
        """Smallest distance (m) over the pairs at each shape of ``qs`` (N x n)."""
        return np.array([self._closest(q)[0] for q in qs])

    def gradients(self, qs):
        """Gradients (N x n) of :meth:`distances` with respect to ``q``: ``n^T J_p`` of the arm's nearest
        point ``p`` along the normal ``n`` from the base."""
        pm, data, gm = self.model.pin_model, self.data, self.geometry
        out = np.empty((len(qs), self.model.n))
        for i, q in enumerate(qs):
            _, k, result = self._closest(q, jacobians=True)
            joint = gm.geometryObjects[self.pairs[k][1]].parentJoint
            J = pin.getJointJacobian(pm, data, joint, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)[:, 6:]
            arm_point = result.getNearestPoint2() - data.oMi[joint].translation
            out[i] = result.normal @ (J[:3] - skew(arm_point) @ J[3:])
        return out

    def _closest(self, q, jacobians=False):
        """``(distance, pair index, coal's result)`` of the closest pair at ``q`` (with the joint Jacobians in
        ``self.data`` if asked for)."""
        pm, data, gm, gd = self.model.pin_model, self.data, self.geometry, self.geometry_data
        self.q_pin[7:] = q
        if jacobians:
            pin.computeJointJacobians(pm, data, self.q_pin)
            pin.updateGeometryPlacements(pm, data, gm, gd)
            k = pin.computeDistances(gm, gd)
        else:
            k = pin.computeDistances(pm, data, gm, gd, self.q_pin)
        result = gd.distanceResults[k]
        return result.min_distance, k, result


def _base_clearance(model, clearance):
    """``(BaseClearance, clearance)``, or ``None`` if not asked for or the URDF has no collision geometry."""
    if clearance is None:
        return None
    clearance = float(check.vector("clearance", [clearance], 1)[0])
    base = BaseClearance(model)
    return (base, clearance) if base.available else None
