"""Layers and steps several test modules share."""
import irflow
import irflow.nn as nn
import irflow.nn.functional as F


def mlp(*widths):
    """Linear layers of these widths with a ReLU between each two."""
    layers = []
    for a, b in zip(widths, widths[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


def train_step(model, opt):
    """``step(x, labels) -> loss``: one step of `opt` on the cross-entropy of `model`."""
    def step(x, labels):
        loss = F.cross_entropy(model(x), labels)
        loss.backward()
        opt.step()
        opt.clear_grad()
        return loss
    return step


def sgd_step(model, learning_rate):
    """`train_step` of SGD at `learning_rate`."""
    return train_step(model, irflow.optimizer.SGD(learning_rate=learning_rate,
                                                  parameters=model.parameters()))


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
