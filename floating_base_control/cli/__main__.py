"""``python -m floating_base_control.cli``: the ``fbc`` command without its console script."""
from floating_base_control.cli import main

main()
