"""``paddle.callbacks``: the callbacks of `paddle.Model` (defined in `irflow.hapi`)."""
from .hapi.callbacks import (Callback, EarlyStopping, LRScheduler, ModelCheckpoint,
                             ProgBarLogger, ReduceLROnPlateau, VisualDL,
                             WandbCallback)

__all__ = ["Callback", "ProgBarLogger", "ModelCheckpoint", "LRScheduler", "EarlyStopping",
           "ReduceLROnPlateau", "VisualDL", "WandbCallback"]
