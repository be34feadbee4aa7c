"""``python -m irflow COMMAND ...``: the ``irflow`` command (see `irflow.cli`)."""
import sys

from .cli import main

sys.exit(main())
