"""``fbc loops``: the in-process loop beside the DDS loop, on the machine as it is and beside CPU burners
(``ros/loop_comparison.py``; docs/results/loops.md and the README's table)."""
from pathlib import Path

from floating_base_control.cli._options import count, positive_count, writable_dir, writable_file


def register(sub):
    p = sub.add_parser("loops", help="the motion tasks in the in-process loop (one period of delay) and over "
                                     "ROS 2 in real time, quiet and beside CPU burners (about 3 minutes)")
    p.add_argument("--burners", type=count, nargs="+", default=[0, 2], metavar="N",
                   help="run the DDS loop beside N CPU burners (yes > /dev/null), once per N (default: 0 2)")
    p.add_argument("--repeat", type=positive_count, default=1, help="DDS runs per burner count (default 1)")
    p.add_argument("--out", type=writable_dir, help="write each run's summary (JSON) into this directory")
    p.add_argument("--doc", type=writable_file, help="write the report to this Markdown file")
    p.add_argument("--readme", type=writable_file, help="replace the table between the loops markers of this README")
    p.set_defaults(func=run)


def run(args):
    from floating_base_control.ros.loop_comparison import HEADER, compare, report, update_readme

    print(HEADER, flush=True)
    rows = compare(args.burners, args.repeat, progress=lambda line: print(line, flush=True), out=args.out)
    if args.doc:
        Path(args.doc).write_text(report(rows))
    if args.readme:
        update_readme(args.readme, rows)
