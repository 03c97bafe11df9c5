"""The in-process loop beside the DDS loop (issue 24): ``fbc loops``, ``make loops``; docs/results/loops.md and the
README's table.

The orbital demo's motion tasks (``--task trajectory`` and ``--task end-effector``, the ideal scenario at the
paper's tumble, default gains) run in the in-process loop with its default delay (one control period,
``sim/loop.py``) and over ROS 2 (``orbital_demo.run``: ``mujoco_sim`` and ``floating_base_controller`` as two
processes over shared-memory DDS in real time, with ``config/orbital_robot.yaml``'s scheduling,
``realtime_priority`` and ``cpu_affinity``), on the machine as it is and beside CPU burners (``yes > /dev/null``,
started here and killed after each run).  The machine's load (1-minute average, sampled every second during the
run) and the nodes' scheduling are reported with each run: on a shared machine the load is part of the result.

Verdicts (issue 24): the trajectory's RMS joint error on the ground truth within :data:`RMS_FACTOR` of the
in-process loop's; the end effector's final error under :data:`EE_POSITION_M` and :data:`EE_ORIENTATION_DEG`
with its final second within the physically possible hold; no position or velocity limit overrun; no torque
saturation.
"""
import contextlib
import glob
import os
import subprocess
import threading
import time
from pathlib import Path

import numpy as np

from floating_base_control.experiments.orbital import tasks
from floating_base_control.experiments.orbital.scenario import OrbitalScenario
from floating_base_control.results import write_json
from floating_base_control.ros import orbital_demo

TASKS = ("trajectory", "end-effector")
#: The DDS loop's trajectory RMS joint error may be at most this multiple of the in-process loop's ...
RMS_FACTOR = 2.0
#: ... and the end effector's final error at most this (m, deg).
EE_POSITION_M, EE_ORIENTATION_DEG = 2e-3, 0.2
#: This process while it runs the DDS demo (orbital_demo.RECORDER_PRIORITY), whose scheduling is reported too.
RECORDER = "orbital_demo (recorder, client)"
#: The node processes whose scheduling is reported.
NODES = {"mujoco_sim": "ros.orbital_sim", "floating_base_controller": "ros.orbital_controller"}


class MachineWatch:
    """The 1-minute load average every ``period`` s while it runs, the scheduling of the node processes
    (children of this process, ``/proc``) and of this one (the demo's recorder and client) as last seen, and the
    other user processes seen with real-time scheduling (they compete with the nodes for the cores, which CPU
    burners cannot)."""

    def __init__(self, period=1.0):
        self.loads, self.scheduling, self.period, self.others = [], {}, period, set()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()

    def _watch(self):
        while True:
            self.loads.append(os.getloadavg()[0])
            ours = set()
            for name, pid in node_children(NODES):
                self.scheduling[name] = scheduling(pid)
                ours.add(pid)
            here = scheduling(os.getpid())    # real-time (RECORDER_PRIORITY) only while the nodes run
            if here != "SCHED_OTHER" or RECORDER not in self.scheduling:
                self.scheduling[RECORDER] = here
            self.others |= {p for p in realtime_processes() if p[0] not in ours and p[0] != os.getpid()}
            if self.done.wait(self.period):
                return

    def load(self):
        """``(mean, max)`` of the 1-minute load average during the run."""
        return float(np.mean(self.loads)), float(np.max(self.loads))


def node_children(nodes):
    """``(name, pid)`` of each child process of this one that runs a node of ``nodes`` (``{name: module}``,
    e.g. :data:`NODES`; Linux ``/proc``)."""
    for path in glob.glob("/proc/self/task/*/children"):
        with contextlib.suppress(OSError):         # a child that just ended
            for pid in open(path).read().split():
                command = open(f"/proc/{pid}/cmdline").read()
                for name, module in nodes.items():
                    if module in command:
                        yield name, int(pid)


def realtime_processes():
    """``{(pid, command)}`` of the user processes (not kernel threads) scheduled SCHED_FIFO or SCHED_RR."""
    out = set()
    for stat in glob.glob("/proc/[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = open(stat).read().rsplit(")", 1)[1].split()
            pid = int(stat.split("/")[2])
            command = open(f"/proc/{pid}/cmdline").read().replace("\0", " ").strip()
            if command and int(fields[38]) in (os.SCHED_FIFO, os.SCHED_RR):      # policy, proc(5) field 41
                out.add((pid, command[:80]))
    return out


def scheduling(pid):
    """How process ``pid`` is scheduled: ``"SCHED_FIFO 50 on CPU 1"``, ``"SCHED_OTHER"``, ... (its CPUs if
    fewer than this process may use)."""
    try:
        policy, priority = os.sched_getscheduler(pid), os.sched_getparam(pid).sched_priority
        cpus = os.sched_getaffinity(pid)
    except OSError:
        return "unknown"
    name = {os.SCHED_FIFO: "SCHED_FIFO", os.SCHED_RR: "SCHED_RR"}.get(policy, "SCHED_OTHER")
    where = "" if cpus >= os.sched_getaffinity(0) else f" on CPU {', '.join(map(str, sorted(cpus)))}"
    return (f"{name} {priority}" if priority else name) + where


@contextlib.contextmanager
def cpu_burners(count):
    """``count`` processes of ``yes > /dev/null`` (ordinary scheduling), killed on leaving."""
    procs = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(count)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def task_scenario(task, settings):
    return OrbitalScenario(duration_s=tasks.default_duration(task, settings))


def in_process(task, settings):
    """The task's summary in the in-process loop with its default delay (one control period)."""
    return tasks.run_task(task_scenario(task, settings), task, settings)[1]


def over_dds(task, settings, burners=0, domain_id=None):
    """The task's summary over ROS 2 beside ``burners`` CPU burners, with the machine's load and scheduling."""
    from dataclasses import replace
    scenario = replace(tasks.task_scenario(task_scenario(task, settings), task, settings),
                       stiffness=settings.stiffness, damping=settings.damping)       # as `fbc demo --ros --task`
    with cpu_burners(burners), MachineWatch() as watch:
        summary = orbital_demo.run(scenario, domain_id=domain_id, task=task, settings=settings)[1]
    mean, peak = watch.load()
    summary["machine"] = {"cpu_burners": burners, "load_1min_mean": mean, "load_1min_max": peak,
                          "cpu_count": os.cpu_count(), "scheduling": dict(watch.scheduling),
                          "other_realtime_processes": sorted(command for _, command in watch.others)}
    return summary


def verdicts(task, summary, reference):
    """``{check: passed}`` of a DDS run's ``summary`` against the in-process ``reference`` (module doc)."""
    out = {"no limit overrun": summary["max_position_limit_overrun_rad"] == 0.0
           and summary["max_velocity_limit_overrun_rad_s"] == 0.0,
           "no torque saturation": summary["torque_saturated_fraction"] == 0.0,
           "completed": summary["status"] == "completed"}
    if task == "trajectory":
        out[f"RMS within {RMS_FACTOR:g}x"] = (summary["tracking_rms_joint_error_deg"]
                                              <= RMS_FACTOR * reference["tracking_rms_joint_error_deg"])
    else:
        out[f"under {1e3 * EE_POSITION_M:g} mm / {EE_ORIENTATION_DEG:g} deg"] = (
            summary["final_ee_position_error_m"] < EE_POSITION_M
            and summary["final_ee_orientation_error_deg"] < EE_ORIENTATION_DEG)
        out["within the hold"] = bool(summary.get("ee_final_window_within_hold"))
    return out


def compare(burners=(0, 2), repeat=1, progress=print, domain_id=None, out=None):
    """``[(task, loop, summary, verdicts)]``: each task in-process, then over DDS beside each count of
    ``burners``, ``repeat`` times; each run's summary (with its verdicts) in ``out/<task>-<n>.json`` if given."""
    settings, rows = tasks.TaskSettings(), []
    for task in TASKS:
        reference = in_process(task, settings)
        rows.append((task, "in-process, one period of delay", reference, None))
        progress(row_text(*rows[-1]))
        for count in burners:
            for _ in range(repeat):
                started = time.monotonic()
                summary = over_dds(task, settings, count, domain_id)
                summary["wall_s"] = time.monotonic() - started
                loop = "DDS, " + (f"beside {count} CPU burners" if count else "the machine as it is")
                rows.append((task, loop, summary, verdicts(task, summary, reference)))
                progress(row_text(*rows[-1]))
        if out is not None:
            for i, (_, loop, summary, checks) in enumerate(r for r in rows if r[0] == task):
                write_json(Path(out) / f"{task}-{i}.json", {**summary, "loop": loop, "verdicts": checks})
    return rows


def _error(task, s):
    if task == "trajectory":
        return f"{s['tracking_rms_joint_error_deg']:.4f} / {s['max_joint_error_deg']:.4f} deg"
    hold = "" if s.get("ee_final_window_within_hold") is None else (
        " (in the hold)" if s["ee_final_window_within_hold"] else " (past the hold)")
    return f"{1e3 * s['final_ee_position_error_m']:.2f} mm / {s['final_ee_orientation_error_deg']:.3f} deg{hold}"


def row_text(task, loop, s, checks):
    """One Markdown table row of :data:`HEADER`."""
    machine, ros = s.get("machine"), s.get("ros_loop")
    load = "-" if machine is None else f"{machine['load_1min_mean']:.1f} (max {machine['load_1min_max']:.1f})"
    rate = "-" if ros is None else (f"{ros['control_rate_hz']:.0f} Hz, period p99 {ros['period_p99_ms']:.2f} / max "
                                    f"{ros['period_max_ms']:.1f} ms, age p99 {ros['joint_state_age_p99_ms']:.2f} ms")
    limits = (f"{s['max_position_limit_overrun_rad']:.3g} rad / {s['max_velocity_limit_overrun_rad_s']:.3g} rad/s, "
              f"{100 * s['torque_saturated_fraction']:.2g} %")
    verdict = "-" if checks is None else ("pass" if all(checks.values()) else
                                          "FAIL: " + ", ".join(k for k, ok in checks.items() if not ok))
    return f"| {task} | {loop} | {load} | {_error(task, s)} | {limits} | {rate} | {verdict} |"


HEADER = ("| task | loop | load (1-min mean) | error (trajectory: RMS / max joint; end effector: final) | "
          "limit overrun (position / velocity), torque saturated | DDS loop | verdict |\n"
          "|---|---|---|---|---|---|---|")


def table(rows):
    return "\n".join([HEADER, *(row_text(*row) for row in rows)])


def report(rows):
    """The Markdown of docs/results/loops.md."""
    scheduling = sorted({f"{node}: {policy}" for _, _, s, _ in rows for node, policy in
                         s.get("machine", {}).get("scheduling", {}).items()})
    others = sorted({c for _, _, s, _ in rows for c in s.get("machine", {}).get("other_realtime_processes", [])})
    return DOC.format(cpus=os.cpu_count(), factor=RMS_FACTOR, mm=1e3 * EE_POSITION_M, deg=EE_ORIENTATION_DEG,
                      scheduling="; ".join(scheduling) or "not seen", table=table(rows),
                      others="; ".join(others) or "none")


DOC = """# The in-process loop beside the DDS loop

Generated by `make loops` (`fbc loops --doc docs/results/loops.md --readme README.md`;
`floating_base_control/ros/loop_comparison.py`) on a {cpus}-core machine.  The orbital demo's motion tasks (`fbc
demo orbital --task trajectory` and `--task end-effector`: the ideal scenario at the paper's tumble, default gains)
in the in-process loop with its default delay (each command acts one control period after its state, `sim/loop.py`)
and over ROS 2 (`--ros`: `mujoco_sim` and `floating_base_controller` as two processes over shared-memory DDS, in
real time, with `config/orbital_robot.yaml`'s `realtime_priority` and `cpu_affinity`), on the machine as it is and
beside CPU burners (`yes > /dev/null`, killed after the run).  Errors on the simulator's ground truth, recorded by
the demo's own process (its four topics matched by stamp; the process is also the task's client, real-time below the
nodes while they run, so that it keeps up and commands on time); the load is the 1-minute load average during each
run (the machine is shared); the DDS loop's rate, period and joint-state age are the controller's own per-tick log
(`ros_loop` in `summary.json`).
Scheduling seen: {scheduling}; other user processes with real-time scheduling during the runs (they compete with the
nodes, which burners at ordinary scheduling cannot): {others}.

Verdicts: the trajectory's RMS joint error within {factor:g}x the in-process loop's; the end effector under
{mm:g} mm / {deg:g} deg over the final second, which lies within the physically possible hold; no limit
overrun; no torque saturation.

{table}
"""

#: The README's copy of the table lies between these lines.
README_BEGIN, README_END = "<!-- loops: generated by make loops -->", "<!-- /loops -->"


def update_readme(path, rows):
    """Replace the table between :data:`README_BEGIN` and :data:`README_END` in the README at ``path``."""
    text = open(path).read()
    begin, end = text.index(README_BEGIN) + len(README_BEGIN), text.index(README_END)
    with open(path, "w") as f:
        f.write(text[:begin] + "\n" + table(rows) + "\n" + text[end:])
