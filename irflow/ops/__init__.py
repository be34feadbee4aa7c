"""The op declarations, one module per op family; importing this package registers
every op in `irflow.ir.registry`."""
from . import (call, control, debug, elementwise, linalg, list, nn, random,  # noqa: F401
               reduce, shape, stack, testing)
