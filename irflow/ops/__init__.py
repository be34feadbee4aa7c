"""The op declarations, one module per op family; importing this package registers
every op in `irflow.ir.registry`."""
from . import control, elementwise  # noqa: F401  (imported to register the ops)
