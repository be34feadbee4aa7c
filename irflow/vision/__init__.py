"""Paddle's ``paddle.vision``, the parts that need no download: image `transforms`
on NumPy HWC arrays and irflow tensors, the `models` LeNet, and `datasets`, whose
classes say that irflow cannot download their data."""
from . import datasets, models, transforms
from .models import LeNet

__all__ = ["LeNet", "datasets", "models", "transforms"]
