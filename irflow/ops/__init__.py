"""The op declarations, one module per op family; importing this package registers
every op in `irflow.ir.registry`."""
from . import (call, control, debug, elementwise, fused, linalg, list, matrix,  # noqa: F401
               nn, random, reduce, scan, shape, sort, stack, testing)
