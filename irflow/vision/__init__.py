"""Paddle's ``paddle.vision``, the parts that need no download: image `transforms`
on NumPy HWC arrays and irflow tensors, the `models` (also here by name, as in
Paddle: ``paddle.vision.resnet18``), and `datasets`, whose classes say that irflow
cannot download their data."""
from . import datasets, models, transforms
from .models import *  # noqa: F403  (Paddle's paddle.vision exports every model)
from .models import __all__ as _models_all

__all__ = [*_models_all, "datasets", "models", "transforms"]
