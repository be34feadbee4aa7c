"""The op declarations, one module per op family; importing this package registers
every op in `irflow.ir.registry`."""
from . import (call, control, debug, elementwise, fused, linalg, list, nn,  # noqa: F401
               random, reduce, shape, stack, testing)
