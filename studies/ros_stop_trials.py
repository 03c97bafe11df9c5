"""How floating_base_controller stops, over many trials: SIGINT to the process group, SIGINT twice,
SIGTERM, and the lifecycle active -> shutdown transition, each ``--trials`` times (default 20), at
1 kHz with a robot stack's inputs streaming.  A trial succeeds when the last command the subscriber
received is exactly one zero command and the process exits 0.  (Not run by the tests:
test/test_ros_stop.py runs each case once.)

    nice .venv/bin/python studies/ros_stop_trials.py [--trials 20] [--cases "SIGINT twice" ...]
"""
import argparse
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))

import ros_harness  # noqa: E402
from lifecycle_msgs.msg import Transition  # noqa: E402
from test_ros_controller import JOINTS, controlling, stream_until  # noqa: E402
from test_ros_stop import STOP_PARAMS, lifecycle, signal_stop, stream_until_exit, trailing_zeros  # noqa: E402

CASES = {
    "SIGINT to the group": lambda proc, client: signal_stop(proc, client, [signal.SIGINT]),
    "SIGINT twice": lambda proc, client: signal_stop(proc, client, [signal.SIGINT, signal.SIGINT]),
    "SIGTERM": lambda proc, client: signal_stop(proc, client, [signal.SIGTERM]),
    "active -> shutdown": lambda proc, client: (lifecycle(client, Transition.TRANSITION_ACTIVE_SHUTDOWN),
                                                stream_until_exit(client, proc))[1],
}


def trial(case, domain):
    proc = ros_harness.start_node("orbital_controller", domain, STOP_PARAMS)
    client = ros_harness.Client(domain, JOINTS)
    try:
        t0 = time.monotonic()
        if not stream_until(client, lambda: controlling(client, t0)):
            return "never controlling"
        code = CASES[case](proc, client)
        zeros = trailing_zeros(client.commands)
        return None if code == 0 and zeros == 1 else f"exit {code}, {zeros} trailing zero commands"
    finally:
        client.close()
        ros_harness.stop(proc)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--cases", nargs="*", choices=list(CASES), default=list(CASES))
    args = parser.parse_args()
    domain = ros_harness.domain_for("ros_stop_trials")
    for case in args.cases:
        failures = [f for f in (trial(case, domain) for _ in range(args.trials)) if f]
        print(f"{case}: {args.trials - len(failures)}/{args.trials} ended with one zero command and exit 0"
              + (f"; failures: {failures}" if failures else ""), flush=True)


if __name__ == "__main__":
    main()
