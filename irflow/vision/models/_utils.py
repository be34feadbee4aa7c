"""Building blocks shared by the models, as Paddle defines them (``paddle.vision.ops.
ConvNormActivation``, ``_make_divisible``), and the refusal to download weights."""
from __future__ import annotations

from ... import nn


def _make_divisible(v, divisor: int = 8, min_value: int | None = None) -> int:
    """`v` rounded to a multiple of `divisor` (at least `min_value`), and up once more
    if that lost over 10%: the channel counts of the scaled MobileNets, so that a
    scaled model has the shapes of Paddle's (and loads its weights)."""
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class ConvNormActivation(nn.Sequential):
    """Conv2D, then `norm_layer` (None: none) and `activation_layer` (None: none), as
    sublayers ``0``, ``1``, ``2`` (Paddle's state-dict names). The convolution has a
    bias only without a norm layer, unless `bias` says otherwise; the default padding
    keeps the size at stride 1."""

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None,
                 groups=1, norm_layer=nn.BatchNorm2D, activation_layer=nn.ReLU,
                 dilation=1, bias=None) -> None:
        if padding is None:
            padding = (kernel_size - 1) // 2 * dilation
        if bias is None:
            bias = norm_layer is None
        layers = [nn.Conv2D(in_channels, out_channels, kernel_size, stride, padding,
                            dilation=dilation, groups=groups, bias_attr=bias)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer())
        super().__init__(*layers)


def no_pretrained(arch: str, pretrained: bool) -> None:
    """Paddle downloads the ImageNet weights for ``pretrained=True``; irflow downloads
    nothing, so it says how to load a ``.pdparams`` file of them instead."""
    if pretrained:
        raise NotImplementedError(
            f"paddle.vision.models.{arch}(pretrained=True) downloads its weights, which "
            "irflow cannot do. Download the .pdparams file, build the model with "
            "pretrained=False and load it: "
            "model.set_state_dict(paddle.load('<arch>.pdparams')).")
