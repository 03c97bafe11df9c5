"""Load a URDF and compute the mechanical connection and its curvature ([Mishra2023] Def. 3, Theorem 2).

    python examples/connection_and_curvature.py [robot.urdf]

The URDF's root link is the floating base; its joints are the shape ``q``.  Default: the package's
orbital robot (a Panda arm on a spacecraft).
"""
import sys

import numpy as np

from floating_base_control import FloatingBaseModel
from floating_base_control.resources import orbital_robot_urdf

urdf = sys.argv[1] if len(sys.argv) > 1 else orbital_robot_urdf()
model = FloatingBaseModel.from_urdf(urdf)          # gravity defaults to zero (free floating)
print(model)

q = np.zeros(model.n)
qdot = np.full(model.n, 0.1)
A_l = model.mechanical_connection(q)               # 6 x n: V1 = mu - A_l qdot (eq. 9)
V1 = model.base_velocity(q, np.zeros(6), qdot)     # at zero momentum the base moves by -A_l qdot
F = model.curvature_tensor(q)                      # F[:, i, j] = DA_l(e_i) e_j (Theorem 2)

np.set_printoptions(precision=4, suppress=True)
print("A_l(q) =\n", A_l)
print("V1 = [omega; v] at mu = 0:", V1)
assert np.allclose(V1, -A_l @ qdot)
assert np.allclose(F, -F.transpose(0, 2, 1))      # a 2-form: antisymmetric in (i, j)
i, j = np.unravel_index(np.argmax(np.linalg.norm(F[:3], axis=0)), F.shape[1:])
print(f"largest rotational curvature: joints ({i + 1}, {j + 1}), DA_l(e_{i + 1}) e_{j + 1} = {F[:, i, j]}")
print("a small loop of area a in that plane turns the base by about -a times its first three entries (eq. 11)")
