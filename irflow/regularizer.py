"""Paddle's ``paddle.regularizer``: weight decay attached to parameters or optimizers."""
from .optimizer.regularizer import L1Decay, L2Decay, WeightDecayRegularizer

__all__ = ["L1Decay", "L2Decay", "WeightDecayRegularizer"]
