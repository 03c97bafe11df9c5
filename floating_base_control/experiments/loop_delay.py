"""The loop delay's report (docs/results/stability.md, ``fbc stability``): the margins of every task's gains with
the delay (``control/stability.py``) and, with ``demos``, the in-process runs with and without it.

Margins are the worst over the shapes each task visits: the set-point's straight line from ``q0`` to
``q_d``, the trajectory's reference (``tasks.trajectory_shapes``), the end effector's shapes in its
in-process demo from the target's start on, the node's sampled shapes
(``control.stability.sample_configurations``), the hopper's knee angles in Exp VI.
"""
from dataclasses import replace

import numpy as np

from floating_base_control.control import stability as st
from floating_base_control.control.end_effector import CartesianGains, FrameWorkspace, frame_id
from floating_base_control.experiments.hopper.report import summarize as hopper_summary
from floating_base_control.experiments.hopper.scenario import experiment, run as hopper_run
from floating_base_control.experiments.orbital import tasks
from floating_base_control.experiments.orbital.campaign import INTEGRAL_TIME_S
from floating_base_control.experiments.orbital.scenario import OrbitalScenario, integral_gains, run as orbital_run
from floating_base_control.model import FloatingBaseModel
from floating_base_control.resources import orbital_robot_urdf
from floating_base_control.robots.hopper.model import hopper_model
from floating_base_control.robots.orbital.spacecraft import default_shape_gains, default_shape_setpoints

H = 1e-3                                    #: the orbital node's and scenario's control period, s
DELAYS = (("one period", H), (f"one period + {1e3 * st.DDS_LATENCY_S:g} ms (DDS)", H + st.DDS_LATENCY_S))
#: The gains before the loop delay was modelled (issue 24), for comparison.
OLD = {"trajectory": ((600.0, 600.0, 400.0, 400.0, 100.0, 100.0, 50.0), (60.0, 60.0, 30.0, 30.0, 5.0, 5.0, 1.5)),
       "node Cartesian": CartesianGains([50.0] * 3 + [2000.0] * 3, [2.0] * 3 + [150.0] * 3, np.full(7, 5.0),
                                        np.full(7, 0.2)),
       "DDS demo Cartesian": CartesianGains([5.0] * 3 + [300.0] * 3, [0.05] * 3 + [5.0] * 3, np.full(7, 1.0),
                                            np.full(7, 0.02), 0.7),
       "demo Cartesian": CartesianGains([300.0] * 3 + [4000.0] * 3, [2.0] * 3 + [150.0] * 3,
                                        (20.0, 20.0, 20.0, 20.0, 5.0, 5.0, 2.0), (5.0, 5.0, 2.0, 2.0, 0.5, 0.5, 0.2),
                                        0.7)}


def worst_margins(loops, h, delay):
    """:class:`~floating_base_control.control.stability.Margins`, the worst over the loops ``(M, K, D, K_i)``."""
    return st.worst([st.margins(M, K, D, h, delay, K_i) for M, K, D, K_i in loops])


def _line(q0, q1, count=7):
    return [np.asarray(q0) + s * (np.asarray(q1) - np.asarray(q0)) for s in np.linspace(0.0, 1.0, count)]


def ee_shapes(log, settings, every_s=0.25):
    """The shapes of an end-effector demo's log: its start, then every ``every_s`` from the target's start."""
    t = log["t"]
    picked = [0] + [i for i in np.flatnonzero(t >= settings.ee_start_s)
                    if abs(t[i] / every_s - round(t[i] / every_s)) < 1e-6]
    return [log["q"][i] for i in picked]


def joint_rows(model, scenario=OrbitalScenario(), settings=tasks.TaskSettings()):
    """``[(task, gains, shapes, loops)]`` of the joint-space tasks on the orbital robot."""
    setpoint = [model.reduced_shape_inertia(q) for q in _line(scenario.q0, scenario.q_d)]
    path = [model.reduced_shape_inertia(q) for q in tasks.trajectory_shapes(settings, model, scenario.q0,
                                                                             scenario.q_d, 13)]
    sampled = [model.reduced_shape_inertia(q) for q in st.sample_configurations(model, 16)]
    q0, q_d = default_shape_setpoints(model)
    arm = default_shape_gains(model, q0, q_d)
    paper_i = integral_gains(replace(scenario, integral_time_s=INTEGRAL_TIME_S))
    node = st.robot_joint_gains(model)
    return [
        ("set-point (eq. 52)", "the paper's (scenario default, underdamped as Fig. 6)", "q0 to q_d",
         [(M, scenario.stiffness, scenario.damping, None) for M in setpoint]),
        ("set-point (eq. 52)", f"the paper's + integral (T_i = {INTEGRAL_TIME_S:g} s)", "q0 to q_d",
         [(M, scenario.stiffness, scenario.damping, paper_i) for M in setpoint]),
        ("trajectory", "before (K = 600 ... 50, D = 60 ... 1.5)", "its reference", [(M, *OLD["trajectory"], None)
                                                                                  for M in path]),
        ("trajectory", "now (delay_robust_joint_gains)", "its reference",
         [(M, settings.stiffness, settings.damping, None) for M in path]),
        ("set-point / joint (node)", "node defaults, from the robot", "16 sampled shapes",
         [(M, *node, None) for M in sampled]),
        ("set-point (arm on a spacecraft)", "scaled from the robot (its q0 aligns joints 1 and 3)", "q0 to q_d",
         [(M, arm.stiffness, arm.damping, None) for M in
          (model.reduced_shape_inertia(q) for q in _line(q0, q_d))]),
    ]


def cartesian_rows(model, shapes, settings=tasks.TaskSettings()):
    """``[(task, gains, shapes, loops)]`` of the end-effector impedance at ``shapes``."""
    ws, fid = FrameWorkspace(model), frame_id(model, settings.ee_frame)
    now = CartesianGains(settings.ee_stiffness, settings.ee_damping, settings.nullspace_stiffness,
                         settings.nullspace_damping, settings.ee_damping_ratio)
    rows = [("node defaults before (50 N m/rad, 2 N m s/rad per axis; 2000 N/m, 150 N s/m)", OLD["node Cartesian"]),
            ("DDS demo before (5 N m/rad, 300 N/m, damping ratio 0.7)", OLD["DDS demo Cartesian"]),
            ("demo before (300 N m/rad, 4000 N/m, damping ratio 0.7)", OLD["demo Cartesian"]),
            ("now (30 N m/rad, 2000 N/m, damping ratio 0.7; posture 5, 1)", now)]
    out = []
    for name, gains in rows:
        loops = [(*st.cartesian_joint_gains(model, ws, fid, q, gains), None) for q in shapes]
        out.append(("end effector", name, "its demo's", loops))
    return out


def task_inertia_range(model, shapes, frame):
    """Smallest and largest eigenvalue of the rotational block of the task inertia over ``shapes``, kg m^2."""
    ws, fid = FrameWorkspace(model), frame_id(model, frame)
    w = np.array([np.linalg.eigvalsh(st.task_inertia(model, ws, fid, q)[:3, :3]) for q in shapes])
    return float(w.min()), float(w.max())


def hopper_rows(knee_range, rates=(10000.0, 5000.0, 1000.0)):
    """``[(rate, delay, Margins, radial mass range)]`` of the hopper's flight radial loop (thesis' Exp VI gains)."""
    exp = experiment("revolute", "VI")
    model = hopper_model("revolute", exp.gravity)
    foot = model.pin_model.getFrameId("foot")
    loops = [(*st.radial_loop(model, foot, [q], exp.gains.K_r, exp.gains.D_r_flight), None)
             for q in np.linspace(*knee_range, 5)]
    masses = [M[0, 0] * exp.gains.K_r / K[0] for M, K, _, _ in loops]
    rows = []
    for rate in rates:
        for delay in (0.0, 1.0 / rate):
            rows.append((rate, delay, worst_margins(loops, 1.0 / rate, delay)))
    return rows, (min(masses), max(masses))


# -- in-process runs ------------------------------------------------------------------------------------------

#: The loops of the side-by-side runs: the papers', the default, and two DDS-like ones (the latency as jitter
#: on each command, and as a fixed delay).
LOOPS = (("zero delay (papers')", dict(loop_delay_s=0.0)), ("one period (default)", {}),
         (f"one period + jitter up to {1e3 * st.DDS_LATENCY_S:g} ms", dict(loop_jitter_s=st.DDS_LATENCY_S)),
         (f"one period + {1e3 * st.DDS_LATENCY_S:g} ms", dict(loop_delay_s=H + st.DDS_LATENCY_S)))


def demo_runs():
    """``{(task, loop): summary}`` of the in-process demos (set-point 30 s, trajectory, end effector) in each
    loop of :data:`LOOPS` with the default gains, and with the former gains (:data:`OLD`) in the last loop;
    and the end-effector log of the default loop (its shapes)."""
    out, ee_log = {}, None
    settings = tasks.TaskSettings()
    old = replace(settings, stiffness=OLD["trajectory"][0], damping=OLD["trajectory"][1],
                  ee_stiffness=tuple(OLD["demo Cartesian"].stiffness),
                  nullspace_stiffness=tuple(OLD["demo Cartesian"].nullspace_stiffness),
                  nullspace_damping=tuple(OLD["demo Cartesian"].nullspace_damping))
    runs = [(loop, fields, settings) for loop, fields in LOOPS]
    runs.append((f"{LOOPS[-1][0]}, former gains", LOOPS[-1][1], old))
    for loop, fields, gains in runs:
        if gains is settings:
            out["set-point", loop] = orbital_run(OrbitalScenario(duration_s=30.0, **fields))[1]
        for task in ("trajectory", "end-effector"):
            log, summary = tasks.run_task(OrbitalScenario(duration_s=tasks.default_duration(task, gains), **fields),
                                          task, gains)
            out[task, loop] = summary
            if task == "end-effector" and not fields:
                ee_log = log
    return out, ee_log


def hopper_runs(rates=(10000.0, 5000.0, 1000.0)):
    """``({(rate, delay): summary}, knee range)`` of Exp VI (20 s) in-process at each control rate with zero
    delay and one period, the contact rule's hold the command's (as ``fbc demo hopper --control-rate``); the
    knee's range is that of the default loop (the first rate, one period)."""
    exp = experiment("revolute", "VI")
    out, knee = {}, None
    for rate in rates:
        every = max(1, round(1.0 / (rate * exp.timestep)))
        period = every * exp.timestep
        for delay in (0.0, period):
            hold = period + delay if every > 1 else 0.0
            log, flows, meta = hopper_run(exp, control_every=every, control_period=hold, loop_delay_s=delay,
                                          log_every=100)
            out[rate, delay] = hopper_summary(exp, log, flows, meta)
            if knee is None and delay:
                q = log.arrays()["q"]
                knee = (float(q.min()), float(q.max()))
    return out, knee


def orbital_model():
    return FloatingBaseModel.from_urdf(orbital_robot_urdf())


# -- the report ------------------------------------------------------------------------------------------------

def _margins_table(rows):
    lines = ["| task | gains | shapes | loop delay | spectral radius | gain margin | phase margin | delay margin |",
             "|---|---|---|---|---|---|---|---|"]
    for task, gains, shapes, loops in rows:
        for name, delay in DELAYS:
            m = worst_margins(loops, H, delay)
            stable = m.radius < st.UNSTABLE_RADIUS
            lines.append(f"| {task} | {gains} | {shapes} | {name} | {m.radius:.4f} | {m.gain_margin:.2f} | "
                         + (f"{m.phase_margin_deg:.0f} deg | {1e3 * m.delay_margin_s:.1f} ms |" if stable
                            else "unstable | unstable |"))
    return "\n".join(lines)


def _hopper_table(rows):
    lines = ["| control rate | loop delay | spectral radius | gain margin | phase margin |", "|---|---|---|---|---|"]
    for rate, delay, m in rows:
        lines.append(f"| {rate / 1e3:g} kHz | {1e3 * delay:g} ms | {m.radius:.4f} | {m.gain_margin:.2f} | "
                     + (f"{m.phase_margin_deg:.0f} deg |" if m.radius < st.UNSTABLE_RADIUS else "unstable |"))
    return "\n".join(lines)


def _fmt(x, unit, scale=1.0, digits=3):
    return "-" if x is None else f"{scale * x:.{digits}g} {unit}"


def _runs_table(runs):
    lines = ["| task | loop | final joint error | RMS joint error | max joint error | end effector final | "
             "limit overrun (position / velocity) | torque saturated |", "|---|---|---|---|---|---|---|---|"]
    for (task, loop), s in runs.items():
        ee = (f"{_fmt(s.get('final_ee_position_error_m'), 'mm', 1e3)} / "
              f"{_fmt(s.get('final_ee_orientation_error_deg'), 'deg')}"
              if s.get("final_ee_position_error_m") is not None else "-")
        rms = s.get("tracking_rms_joint_error_deg") if task != "set-point" else None
        lines.append(f"| {task} | {loop} | {_fmt(s['final_joint_error_deg'], 'deg')} | {_fmt(rms, 'deg')} | "
                     f"{_fmt(s.get('max_joint_error_deg'), 'deg')} | {ee} | "
                     f"{s['max_position_limit_overrun_rad']:.3g} rad / {s['max_velocity_limit_overrun_rad_s']:.3g} "
                     f"rad/s | {100 * s['torque_saturated_fraction']:.2g} % |")
    return "\n".join(lines)


def _hopper_runs_table(runs):
    lines = ["| control rate | loop delay | hops | fell | mean forward speed |", "|---|---|---|---|---|"]
    for (rate, delay), s in runs.items():
        fell = f"at {s['fell_at_s']:.2f} s" if s["fell"] else "no"
        lines.append(f"| {rate / 1e3:g} kHz | {1e3 * delay:g} ms | {s['hops']} | {fell} | "
                     f"{s['mean_forward_speed']:.3f} m/s |")
    return "\n".join(lines)


def report(demos=True):
    """The Markdown of docs/results/stability.md (the in-process runs only with ``demos``; the end effector's and the
    hopper's shapes come from runs in either case)."""
    model, settings = orbital_model(), tasks.TaskSettings()
    if demos:
        runs, ee_log = demo_runs()
        hops, knee = hopper_runs()
    else:
        ee_log = tasks.run_task(OrbitalScenario(duration_s=tasks.default_duration("end-effector", settings)),
                                "end-effector", settings)[0]
        log = hopper_run(experiment("revolute", "VI"), log_every=100)[0].arrays()
        knee = (float(log["q"].min()), float(log["q"].max()))
    shapes = ee_shapes(ee_log, settings)
    hopper, masses = hopper_rows(knee)
    lo, hi = task_inertia_range(model, shapes, settings.ee_frame)
    old = OLD["node Cartesian"].damping[0]
    text = [HEADER.format(gm=st.REQUIRED["gain_margin"], pm=st.REQUIRED["phase_margin_deg"],
                          gm_dds=st.REQUIRED_DDS["gain_margin"], pm_dds=st.REQUIRED_DDS["phase_margin_deg"],
                          latency=1e3 * st.DDS_LATENCY_S, beta=st.JOINT_VELOCITY_BANDWIDTH,
                          zeta=st.JOINT_DAMPING_RATIO),
            _margins_table(joint_rows(model)),
            EE.format(lo=lo, hi=hi, ratio=hi / lo, old=old, bandwidth=old / lo,
                      quarter=1e3 * np.pi / 2 / (old / lo), count=len(shapes)),
            _margins_table(cartesian_rows(model, shapes)),
            HOPPER.format(lo=masses[0], hi=masses[1], q0=knee[0], q1=knee[1]),
            _hopper_table(hopper)]
    if demos:
        text += [RUNS, _runs_table(runs), HOPPER_RUNS, _hopper_runs_table(hops)]
    return "\n".join(text) + "\n"


HEADER = """# Stability of the control loop with its delay

Generated by `make stability` (`fbc stability --demos --doc docs/results/stability.md`; the analysis:
`control/stability.py`).  On a robot the command computed from the state read at one tick acts from the
next (ros2_control reads, updates, then writes; over DDS a simulator applies a command when it arrives), and
the in-process loop now does the same (`sim/loop.py`, `loop_delay_s`: one control period by default, 0 for
the papers' loop).  Each task's law, linearized on the reduced shape dynamics `Lambda_q e'' = u` (eq. 18 with
eq. 45's compensation), sampled with the delay, gives one linear map per period; its spectral radius says
whether the loop is stable, and its gain, phase and delay margins how far from the boundary it is (the worst
over the shapes each task visits).

The package's defaults are chosen to have a gain margin of at least {gm:g} and a phase margin of at least
{pm:g} deg with one period of delay, and at least {gm_dds:g} and {pm_dds:g} deg with {latency:g} ms more (a DDS
loop: the joint state's age at the tick, the command's way back and the simulator's step).  Joint gains:
`D = c diag(Lambda_q)` with the fastest mode's velocity loop at {beta:g} rad/s and `K = alpha D` with the
least damped mode at a damping ratio of {zeta:g} (`delay_robust_joint_gains`).

## Orbital robot, joint space (1 kHz)
"""

EE = """
The paper's set-point gains are stable with any of these delays by a wide margin; their phase margin is
that of their underdamping (chosen to show Fig. 6's oscillation), not of the delay.  The trajectory's gains
before this analysis (wrist joints at 50-100 rad/s) had no margin left for a DDS loop's latency.

## Orbital robot, end effector (1 kHz)

Why the node's former Cartesian defaults were unstable over DDS: over the end-effector demo's {count} shapes,
the rotational task inertia `Lambda_x` the impedance drives spans {lo:.2g} to {hi:.2g} kg m^2 (a factor
{ratio:.0f}; the smallest about the flange's axis: the hand alone).  A per-axis rotational damping of
{old:g} N m s/rad on {lo:.2g} kg m^2 is a velocity loop of {bandwidth:.0f} rad/s, whose phase runs out (a
quarter turn) at {quarter:.1f} ms of total delay: one period, the zero-order hold's half period and a
millisecond or two of DDS latency.  No constant per-axis damping damps every direction of a task inertia
that spans that much: the defaults set the damping from the task inertia (damping ratio), with a rotational
stiffness the delay allows.
"""

HOPPER = """
## Hopper (Exp VI, the thesis' gains)

In flight the radial spring of eq. 4.16 drives the light leg: seen through the CoM-foot distance over the
knee angles of Exp VI ({q0:.2f} to {q1:.2f} rad), a radial mass of {lo:.3f} to {hi:.3f} kg, on which
`K_r = 2200 N/m` and `D_r = 20 N s/m` are a loop of a few hundred rad/s.  It needs a fast loop: stable with
margin at the in-process 10 kHz with one period of delay, marginal at 1 kHz without delay (the lockstep ROS
loop answers each state before the physics goes on), unstable at 1 kHz with one period of delay.
"""

RUNS = """
## In-process runs, with and without the loop delay

The demos of `fbc demo orbital` (ideal scenario: set-point 30 s, `--task trajectory`, `--task end-effector`
at the paper's tumble) with the default gains, in the papers' loop (zero delay, `--loop-delay 0`), the default
loop (one period), with each command further delayed by up to the DDS latency (`--loop-jitter`) and by all of
it (`--loop-delay`); in the last loop also with the former gains (trajectory `K = 600 ... 50`, end effector
300 N m/rad, 4000 N/m), which it destabilizes.
Errors on the simulator's ground truth: joint errors (to the reference for the trajectory; "final" the mean
over the last second); the end effector's position / orientation error over the final second of its hold.
"""

HOPPER_RUNS = """
`fbc demo hopper --experiment VI` (20 s) at each control rate, without and with one period of delay:
"""
