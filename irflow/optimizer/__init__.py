"""Paddle's ``paddle.optimizer``: SGD, Momentum, Adam, AdamW and learning-rate
schedulers (``irflow.optimizer.lr``). Gradient clips are in `irflow.optimizer.clip`,
regularizers in `irflow.optimizer.regularizer`."""
from . import lr
from .adam import Adam
from .adamw import AdamW
from .momentum import Momentum
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Momentum", "Adam", "AdamW", "lr"]
