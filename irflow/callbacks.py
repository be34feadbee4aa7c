"""``paddle.callbacks``: the callbacks of `paddle.Model` (defined in `irflow.hapi`)."""
from .hapi.callbacks import (Callback, EarlyStopping, LRScheduler, ModelCheckpoint,
                             ProgBarLogger, VisualDL)

__all__ = ["Callback", "ProgBarLogger", "ModelCheckpoint", "LRScheduler", "EarlyStopping",
           "VisualDL"]
