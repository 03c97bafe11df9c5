"""``fbc demo <family> ...``: simulated demonstrations, one sub-subcommand per robot family.

``fbc demo orbital`` runs [Mishra2023]'s orbital-robot scenario (Sec. V-A) or another robot's
(``cli/demo_orbital.py``); ``fbc demo hopper`` a hopping experiment of [Feurstein2021]
(``cli/demo_hopper.py``).  Each takes its options from the command line and a ``--config`` YAML file, and
writes ``summary.json``, ``timeseries.csv``, PNG plots, ``scenario.yaml`` (the configuration that ran) and,
with ``--video``, ``video.mp4``.  A family registers itself in ``FAMILIES``: a module whose ``register``
adds its parser to the ``demo`` subparsers.
"""
from floating_base_control.cli import demo_hopper, demo_orbital

FAMILIES = [demo_orbital, demo_hopper]


def register(sub):
    p = sub.add_parser("demo", help="simulated demonstrations (MuJoCo plant, the package's controllers)")
    families = p.add_subparsers(dest="family", required=True, metavar="FAMILY")
    for family in FAMILIES:
        family.register(families)
