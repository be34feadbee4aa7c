"""Paddle's ``paddle.metric``: `Metric`, `Accuracy` (top-k), `Precision`, `Recall`,
`Auc` and the function `accuracy`."""
from .metrics import Accuracy, Auc, Metric, Precision, Recall, accuracy

__all__ = ["Metric", "Accuracy", "Precision", "Recall", "Auc", "accuracy"]
