"""``python -m irflow opt FILE -p PIPELINE``: see `irflow.cli`."""
import sys

from .cli import main

sys.exit(main())
