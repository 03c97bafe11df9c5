"""Subcommands of ``fbc``: each module defines ``register(subparsers)``."""
