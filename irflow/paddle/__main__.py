"""``python -m irflow.paddle SCRIPT [ARGS]``: see `irflow.paddle`."""
import sys

from .runner import main

sys.exit(main())
