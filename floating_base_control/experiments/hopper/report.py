"""Summary, CSV and plots of a hopping run (``sim/hopper_experiments.run``).

A *hop* is a flight of at least ``MIN_FLIGHT`` seconds from a lift-off to the next
touchdown (or to the end of the run): the viscoelastic floor lets the light foot
bounce off for a few milliseconds after some touchdowns (the thesis' "bursts" in the
floor forces), and those are contact episodes, not hops.  The flight rotation is the
change of ``alpha_i,cf`` over a hop, as in the thesis' Figs. 4.8d and 4.11d.
"""
import math
from dataclasses import asdict

import numpy as np

from floating_base_control import results

MIN_FLIGHT = 0.03   #: s

#: [Feurstein2021] Sect. 4.3.2, Exp VI (20 s): cumulative energy flows (Fig. 4.14f), J.
THESIS_EXP_VI_FLOWS = {"energy_in_external_J": 7.15, "energy_in_joint_J": 4.65,
                       "energy_out_touchdown_J": 2.9, "energy_out_damping_J": 5.9,
                       "energy_out_floor_J": 3.0}


def flights(log):
    """``[(t_liftoff, t_touchdown, alpha_liftoff, alpha_touchdown, radial spring energy at
    lift-off)]`` of the hops (touchdown NaN for a flight still running at the end)."""
    out = []
    for t_lo, a_lo, spring in log.liftoffs:
        nxt = next((td for td in log.touchdowns if td[0] > t_lo), None)
        t_td, a_td = (nxt[0], nxt[1]) if nxt else (math.nan, math.nan)
        if (nxt is None and log.rows[-1]["t"] - t_lo >= MIN_FLIGHT) or t_td - t_lo >= MIN_FLIGHT:
            out.append((t_lo, t_td, a_lo, a_td, spring))
    return out


def summarize(exp, log, flows, meta):
    """The run's ``summary.json`` content (SI units, angles in degrees)."""
    a = log.arrays()
    hops = flights(log)
    rotations = [math.degrees(a_td - a_lo) for _, _, a_lo, a_td, _ in hops if not math.isnan(a_td)]
    t = a["t"]
    energy_in = flows.external + flows.joint
    stored = meta["E_end"] - meta["E0"]
    residual = energy_in - (flows.damping + flows.touchdown + flows.floor) - stored
    summary = {
        "robot": exp.robot, "experiment": exp.name, "variant": exp.gains.variant,
        "description": exp.description, "thesis_tables": exp.table,
        "duration_s": float(t[-1] - t[0]), "fell": not math.isnan(log.fell_at),
        "fell_at_s": None if math.isnan(log.fell_at) else log.fell_at,
        "hops": len(hops), "contact_episodes": len(log.touchdowns),
        "mean_forward_speed": float((a["com_x"][-1] - a["com_x"][0]) / max(t[-1] - t[0], 1e-12)),
        "energy_in_external_J": flows.external, "energy_in_joint_J": flows.joint,
        "energy_out_touchdown_J": flows.touchdown, "energy_out_damping_J": flows.damping,
        "energy_out_floor_J": flows.floor, "energy_stored_J": stored,
        "energy_balance_residual_J": residual,
        "energy_balance_residual_relative": residual / energy_in if energy_in > 0 else None,
        "max_flight_rotation_deg": max((abs(r) for r in rotations), default=0.0),
        "first_flight_rotation_deg": rotations[0] if rotations else None,
        "flight_rotations_deg": rotations,
        "touchdown_loss_per_contact_J": flows.touchdown / len(log.touchdowns) if log.touchdowns else None,
        "radial_spring_energy_at_liftoff_J": float(np.mean([h[4] for h in hops])) if hops else None,
        "max_out_of_plane_m": float(a["out_of_plane"].max()),
        **thesis_energy_figures(flows, hops),
        "contact_rule": exp.gains.contact_rule, "timestep_s": meta["timestep"],
        "loop_delay_s": meta["loop_delay_s"],
        "initial_energy_J": meta["E0"], "final_energy_J": meta["E_end"],
        "gait_second_half": gait_statistics(log, hops, t[0] + 0.5 * (t[-1] - t[0])),
        "settings": {"urdf": meta.get("urdf"), "gravity": exp.gravity, "floor": meta["floor"],
                     "floor_K": meta["floor_K"], "floor_D": meta["floor_D"], "base": meta["base"],
                     "timestep_s": meta["timestep"], "control_every": meta["control_every"],
                     "gains": asdict(exp.gains), "initial_state_thesis": list(exp.initial)},
    }
    if exp.robot == "revolute" and exp.name == "VI":
        summary["thesis_exp_vi_20s"] = THESIS_EXP_VI_FLOWS
    return results.plain(summary)


def thesis_energy_figures(flows, hops):
    """The energy figures of [Feurstein2021] Sect. 4.3.2 (Exp VI), defined as the thesis does:

    * ``joint_work_full_J``: the work at "the power port of the joint torque", all of it,
      the radial damper's share included (``energy_in_joint_J`` is without that share);
    * ``external_work_J``: the base torque's work; ``radial_damping_J``: the radial damper's
      dissipation;
    * ``liftoff_spring_energy_J``: the radial spring's energy at lift-off, mean per hop;
    * ``touchdown_angle_deg``: ``alpha_i,cf`` at touchdown, mean over the hops' landings;
    * ``floor_residual_as_thesis_J``: the thesis' "floor dissipation after touchdown", computed as
      it does, as the residual ``external + full joint work - touchdown - radial damping``.  The
      full joint work already contains the damper's (negative) work, so this residual is the
      floor's measured loss minus the damping and the stored energy change.
    """
    landings = [math.degrees(h[3]) for h in hops if not math.isnan(h[3])]
    full = flows.joint - flows.damping
    return {"joint_work_full_J": full, "external_work_J": flows.external,
            "radial_damping_J": flows.damping,
            "floor_residual_as_thesis_J": flows.external + full - flows.touchdown - flows.damping,
            "liftoff_spring_energy_J": float(np.mean([h[4] for h in hops])) if hops else None,
            "touchdown_angle_deg": float(np.mean(landings)) if landings else None}


def gait_statistics(log, hops, t_from):
    """Mean and standard deviation of apex height, apex forward speed, hop period and
    touchdown angle over the hops after ``t_from``: a stationary gait has small spreads."""
    apex = np.array([(h, v) for t, h, v in log.apexes if t >= t_from]).reshape(-1, 2)
    starts = np.array([t_lo for t_lo, *_ in hops if t_lo >= t_from])
    td = np.array([math.degrees(h[3]) for h in hops if h[0] >= t_from and not math.isnan(h[3])])
    period = np.diff(starts)

    def stats(x):
        return {"mean": float(x.mean()), "std": float(x.std())} if len(x) else None
    return {"hops": int(len(starts)), "apex_height_m": stats(apex[:, 0]), "apex_forward_speed": stats(apex[:, 1]),
            "hop_period_s": stats(period), "touchdown_alpha_deg": stats(td)}


#: CSV columns and their units (the header is ``name [unit]``).
CSV_UNITS = {
    "t": "s", "com_x": "m", "com_y": "m", "com_z": "m", "com_vx": "m/s", "com_vz": "m/s",
    "base_x": "m", "base_z": "m", "q": "rad or m", "qdot": "rad/s or m/s", "L": "N m s",
    "p_x": "N s", "p_z": "N s", "alpha_cf": "rad", "alpha": "rad", "r_cf": "m", "r_cf_dot": "m/s",
    "stance": "1", "touching": "1", "kinetic": "J", "gravity": "J", "spring": "J", "E_ctrl": "J",
    "E_mech": "J", "tau": "N m or N", "base_torque": "N m", "tau_r": "N", "tau_p": "N m",
    "floor_fx": "N", "floor_fz": "N", "out_of_plane": "m", "in_external": "J", "in_joint": "J",
    "out_damping": "J", "out_touchdown": "J", "out_floor": "J", "stored": "J",
}


def write_csv(path, log):
    """The decimated time series, one row per logged step."""
    a = log.arrays()
    return results.write_csv(path, {name: a[name] for name in CSV_UNITS}, CSV_UNITS)


def plot(out_dir, exp, log, summary):
    """PNG figures in ``out_dir``: CoM trajectory, angular momentum, energies, cumulative
    energy flows (as the thesis' Fig. 4.14f) and the radial/polar quantities."""
    plt = results.pyplot()

    a = log.arrays()
    t = a["t"]
    title = f"{exp.robot} hopper, Exp {exp.name}, controller {exp.gains.variant}"
    files = []

    def save(fig, name):
        fig.suptitle(title)
        fig.tight_layout()
        fig.savefig(out_dir / name, dpi=110)
        plt.close(fig)
        files.append(name)

    def shade(ax):
        on = a["touching"] > 0
        edges = np.flatnonzero(np.diff(np.r_[0, on.astype(int), 0]))
        for i0, i1 in zip(edges[::2], edges[1::2]):
            ax.axvspan(t[i0], t[min(i1, len(t) - 1)], color="0.9", lw=0)

    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 6))
    ax1.plot(a["com_x"], a["com_z"])
    ax1.set_xlabel("CoM x [m]")
    ax1.set_ylabel("CoM height z [m]")
    ax1.set_title("CoM trajectory in the sagittal plane")
    ax1.set_aspect("equal", adjustable="datalim")
    shade(ax2)
    ax2.plot(t, a["com_x"], label="x")
    ax2.plot(t, a["com_z"], label="z (height)")
    ax2.set_xlabel("time [s]")
    ax2.set_ylabel("CoM position [m]")
    ax2.legend(loc="best")
    save(fig, "com_trajectory.png")

    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    shade(ax1)
    ax1.plot(t, a["L"])
    ax1.set_ylabel("centroidal angular momentum [N m s]")
    ax1.set_title("about the plane normal (thesis sign); grey: foot on the floor")
    shade(ax2)
    ax2.plot(t, a["p_x"], label="horizontal")
    ax2.plot(t, a["p_z"], label="vertical")
    ax2.set_xlabel("time [s]")
    ax2.set_ylabel("linear momentum [N s]")
    ax2.legend(loc="best")
    save(fig, "momentum.png")

    fig, ax = plt.subplots(figsize=(8, 4.5))
    shade(ax)
    ax.plot(t, a["kinetic"], label="kinetic")
    ax.plot(t, a["gravity"], label="gravity")
    ax.plot(t, a["spring"], label="virtual springs")
    ax.plot(t, a["E_ctrl"], label="E = kinetic + gravity + springs", lw=2)
    if exp.gains.K_E > 0:
        ax.axhline(exp.gains.E_des, color="k", ls="--", lw=1, label="E_des")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("energy [J]")
    ax.legend(loc="best", fontsize=8)
    save(fig, "energies.png")

    fig, ax = plt.subplots(figsize=(8, 4.5))
    inflow = a["in_external"] + a["in_joint"]
    ax.plot(t, a["in_external"], label="in: external (base torque)")
    ax.plot(t, a["in_joint"], label="in: joints (without damper)")
    ax.plot(t, inflow, label="in: total", lw=2)
    ax.plot(t, a["out_touchdown"], ls="--", label="out: touchdown impacts")
    ax.plot(t, a["out_damping"], ls="--", label="out: radial damping")
    ax.plot(t, a["out_floor"], ls="--", label="out: floor after impacts")
    ax.plot(t, a["stored"], ls=":", label="stored: mechanical energy change")
    ax.plot(t, a["out_touchdown"] + a["out_damping"] + a["out_floor"] + a["stored"], lw=2, ls="--",
            label="out + stored")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("cumulative energy [J]")
    ax.set_title(f"balance residual {summary['energy_balance_residual_J']:.2e} J")
    ax.legend(loc="best", fontsize=8)
    save(fig, "energy_flows.png")

    fig, (ax1, ax2, ax3) = plt.subplots(3, 1, figsize=(8, 7), sharex=True)
    shade(ax1)
    ax1.plot(t, a["r_cf"])
    ax1.axhline(exp.gains.r_des, color="k", ls="--", lw=1)
    ax1.set_ylabel("r_cf [m]")
    shade(ax2)
    ax2.plot(t, np.degrees(a["alpha_cf"]), label="alpha_i,cf")
    if exp.gains.variant == "III":
        ax2.plot(t, np.degrees(a["alpha"]), label="alpha_c (controlled)")
        ax2.legend(loc="best")
    ax2.set_ylabel("polar angle [deg]")
    shade(ax3)
    ax3.plot(t, a["floor_fz"], label="vertical")
    ax3.plot(t, a["floor_fx"], label="horizontal")
    ax3.set_ylabel("floor force [N]")
    ax3.set_xlabel("time [s]")
    ax3.legend(loc="best")
    save(fig, "radial_polar_floor.png")
    return files
