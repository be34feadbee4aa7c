"""The op declarations, one module per op family; importing this package registers
every op in `irflow.ir.registry`."""
from . import (call, control, debug, elementwise, linalg, nn, random, reduce,  # noqa: F401
               shape, stack, testing)
