"""The op declarations, one module per op family; importing this package registers
every op in `irflow.ir.registry`."""
from . import (call, control, debug, elementwise, linalg, list, matrix, nn,  # noqa: F401
               random, reduce, scan, shape, sort, stack, testing)
