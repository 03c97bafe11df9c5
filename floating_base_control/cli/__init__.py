"""The ``fbc`` command: analysis and demos of floating_base_control.

Each subcommand lives in ``floating_base_control/cli/<name>.py`` and is
listed in ``COMMANDS``.
"""
import argparse
import sys

from floating_base_control.cli import campaign, ccf, demo, gait, inspect, integrability, sweep
from floating_base_control.validation import FloatingBaseError

COMMANDS = [inspect, demo, sweep, campaign, gait, ccf, integrability]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="fbc", description="floating_base_control: dynamics, "
                                     "estimation and control of floating-base robots")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.register(sub)
    args = parser.parse_args(argv)
    try:
        args.func(args)
    except (FloatingBaseError, FileNotFoundError, ValueError) as exc:
        parser.exit(2, f"fbc {args.command}: error: {exc}\n")
    except BrokenPipeError:          # `fbc ... | head`
        sys.stderr.close()

