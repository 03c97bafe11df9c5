"""Verdicts of an orbital run, one per physical quantity: joints (deg), base rotation (rad, rad/s),
base translation (m, m/s).  Never a norm over rad and m together.

Thresholds scale with the scenario, from numbers the scenario states:

* **convergence** (means over the last second): joints within ``joint_error_deg``
  of the set-point; the observer's attitude error within
  ``1 mrad + 5 sqrt(3) (sigma_rot + sigma_bias)`` (five standard deviations of the
  sensor's noise and bias over three axes; the observer cannot see a bias), its
  position error likewise with ``sigma_pos``; the velocity errors within the pose
  threshold times the observer's bandwidth ``sqrt(max eig(M_b^-1 L))`` (1/s).
  Translation is not judged when the pose source gives attitude only.
* **divergence** (stops a run at once): a non-finite state or torque; the joint
  error growing by more than 1 rad; the observer's velocity error above
  ``1 + 2 |mu(0)|`` per part (rad/s, m/s), since ``mu_hat`` starts at zero and
  its error starts at ``|mu(0)|``: a 64 deg/s tumble starts at 1.12 rad/s, which
  the former mixed-unit threshold of 1 called a divergence at 0.02 s); the
  attitude error above 2.5 rad (near pi the logarithm flips and the observer has
  lost the attitude); the position error above ``1 m + 2 |v(0)| * 10 s``.
"""
import numpy as np

#: Joint error increase beyond the initial error that counts as divergence (rad).
JOINT_DIVERGENCE_RAD = 1.0
ATTITUDE_DIVERGENCE_RAD = 2.5


def thresholds(scenario, bandwidth):
    """``{"convergence": {...}, "divergence": {...}}`` for ``scenario`` and the observer's ``bandwidth``
    (rad/s, :attr:`~floating_base_control.estimation.sampling.SamplingCheck.natural_frequency`)."""
    s = scenario
    rot = 1e-3 + 5 * np.sqrt(3) * (s.pose_rotation_noise + s.pose_attitude_bias)
    pos = 1e-3 + 5 * np.sqrt(3) * s.pose_position_noise
    w0, v0 = np.linalg.norm(np.deg2rad(s.mu0_omega_deg_s)), np.linalg.norm(s.mu0_v)
    attitude_only = not s.pose_position
    return {
        "convergence": {"joint_error_deg": s.convergence_joint_error_deg,
                        "observer_attitude_error_rad": rot,
                        "observer_angular_velocity_error_rad_s": rot * bandwidth,
                        "observer_position_error_m": None if attitude_only else pos,
                        "observer_linear_velocity_error_m_s": None if attitude_only else pos * bandwidth},
        "divergence": {"joint_error_increase_rad": JOINT_DIVERGENCE_RAD,
                       "observer_attitude_error_rad": ATTITUDE_DIVERGENCE_RAD,
                       "observer_angular_velocity_error_rad_s": 1.0 + 2 * w0,
                       "observer_position_error_m": None if attitude_only else 1.0 + 20 * v0,
                       "observer_linear_velocity_error_m_s": None if attitude_only else 1.0 + 2 * v0},
    }


def divergence(row, tau, initial_dq_deg, limits):
    """``"completed"`` or ``"diverged: <why>"`` for one logged row (see the module docstring)."""
    if not (np.isfinite(tau).all() and np.isfinite(row["q"]).all()):
        return "diverged: non-finite state or torque"
    if np.deg2rad(row["dq_norm_deg"] - initial_dq_deg) > limits["joint_error_increase_rad"]:
        return f"diverged: joint error {row['dq_norm_deg']:.1f} deg"
    for key, name, unit in QUANTITIES:
        limit = limits[name]
        if limit is not None and row[key] > limit:
            return f"diverged: {name} = {row[key]:.3g}"
    return "completed"


#: (log key, threshold name, unit) of the observer's errors.
QUANTITIES = (("eps_rot_norm", "observer_attitude_error_rad", "rad"),
              ("mu_e_omega_norm", "observer_angular_velocity_error_rad_s", "rad_s"),
              ("eps_pos_norm", "observer_position_error_m", "m"),
              ("mu_e_v_norm", "observer_linear_velocity_error_m_s", "m_s"))


def convergence(final, limits):
    """Per-quantity verdicts ``{"joints": bool, "rotation": bool, "translation": bool or None}`` on the
    final values (``final_<threshold name>``)."""
    def below(*names):
        if any(limits[n] is None for n in names):
            return None
        return bool(all(final[f"final_{n}"] < limits[n] for n in names))
    return {"joints": below("joint_error_deg"),
            "rotation": below("observer_attitude_error_rad", "observer_angular_velocity_error_rad_s"),
            "translation": below("observer_position_error_m", "observer_linear_velocity_error_m_s")}
