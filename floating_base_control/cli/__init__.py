"""The ``fbc`` command: analysis and demos of floating_base_control.

Each subcommand lives in ``floating_base_control/cli/<name>.py`` and is
listed in ``COMMANDS``.

Every failure ends in one line on standard error, ``fbc <command>: error: <what and why>``, and a
non-zero exit status: 2 for a bad option, input file or environment (an unwritable ``--out``),
1 for anything unexpected, 130 when interrupted.  ``FBC_DEBUG=1`` in the environment lets the
exception through, with its traceback.
"""
import argparse
import sys

from floating_base_control.cli import (campaign, ccf, demo, gait, inspect, integrability, loops, plan, stability,
                                       sweep)
from floating_base_control.cli._run import ForgivingStdout
from floating_base_control.validation import debugging, one_line

COMMANDS = [inspect, demo, sweep, campaign, gait, ccf, integrability, stability, loops, plan]


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error (the usage is in ``--help``); subcommands use it too, and
    ``args.prog`` is the command that runs (``fbc demo orbital``), for its errors."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.set_defaults(prog=self.prog)

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")


def build_parser():
    """The ``fbc`` parser, every command's subparser in it."""
    parser = Parser(prog="fbc", description="floating_base_control: dynamics, "
                    "estimation and control of floating-base robots")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.register(sub)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    prog = args.prog
    stdout = sys.stdout
    sys.stdout = ForgivingStdout(stdout)      # `fbc ... | head`: the run goes on and writes its results
    try:
        args.func(args)
    except Exception as exc:
        if debugging():
            raise
        parser.exit(*failure(exc, prog))
    except KeyboardInterrupt as exc:             # a command may say what the interruption kept
        parser.exit(130, f"{prog}: interrupted{': ' + one_line(exc) if str(exc) else ''}\n")
    finally:
        sys.stdout = stdout


def failure(exc, prog):
    """``(exit status, one line)`` for an exception out of a command."""
    if isinstance(exc, ValueError):             # the package's errors (FloatingBaseError) and the commands'
        return 2, f"{prog}: error: {one_line(exc)}\n"
    if isinstance(exc, OSError):                # an output that cannot be written, a file gone, a full disk
        what = f"{exc.filename}: {exc.strerror}" if exc.filename and exc.strerror else exc
        return 2, f"{prog}: error: {one_line(what)}\n"
    return 1, (f"{prog}: unexpected error: {type(exc).__name__}: {one_line(exc)} (FBC_DEBUG=1 shows the "
               "traceback)\n")

