"""Paddle's ``paddle.optimizer``: SGD, Momentum, Adam, AdamW, Adamax, Adagrad,
Adadelta, RMSProp, Lamb, NAdam, RAdam, ASGD, Rprop, LBFGS and learning-rate
schedulers (``irflow.optimizer.lr``).
Gradient clips are in `irflow.optimizer.clip`, regularizers in
`irflow.optimizer.regularizer`."""
from . import lr
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lamb import Lamb
from .lbfgs import LBFGS
from .momentum import Momentum
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSProp
from .rprop import Rprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Momentum", "Adam", "AdamW", "Adamax", "Adagrad",
           "Adadelta", "RMSProp", "Lamb", "NAdam", "RAdam", "ASGD", "Rprop", "LBFGS",
           "lr"]
