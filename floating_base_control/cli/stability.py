"""``fbc stability``: the margins of the default gains with the loop delay, and the in-process runs with and
without it (``experiments/loop_delay.py``; docs/results/stability.md)."""
from pathlib import Path


def register(sub):
    p = sub.add_parser("stability", help="stability margins of the default gains with the loop delay "
                                         "(control/stability.py) and, with --demos, in-process runs with and "
                                         "without the delay")
    p.add_argument("--demos", action="store_true", help="also run the demos in each loop (about 10 minutes)")
    p.add_argument("--doc", help="write the report to this Markdown file")
    p.set_defaults(func=run)


def run(args):
    from floating_base_control.experiments.loop_delay import report

    text = report(demos=args.demos)
    if args.doc:
        Path(args.doc).write_text(text)
    print(text)
