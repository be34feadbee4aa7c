"""Layers several test modules share."""
import irflow.nn as nn
import irflow.nn.functional as F


class LayerNormGelu(nn.Layer):
    """``LayerNorm(x + GELU(x*w + b))``, the Transformer block of the fusion and LLVM
    issues."""

    def __init__(self, width: int):
        super().__init__()
        self.w = self.create_parameter([width])
        self.b = self.create_parameter([width])
        self.ln = nn.LayerNorm(width)

    def forward(self, x):
        return self.ln(x + F.gelu(x * self.w + self.b))
