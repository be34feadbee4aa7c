"""The op declarations, one module per op family; importing this package registers
every op in `irflow.ir.registry`."""
from . import (call, control, elementwise, linalg, nn, random, reduce, shape,  # noqa: F401
               stack, testing)
