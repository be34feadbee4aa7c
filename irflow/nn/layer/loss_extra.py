"""Layers of the losses in `irflow.nn.functional.loss_extra`: each holds its options
(and HSigmoidLoss its tree's weights) and calls its functional loss."""
from __future__ import annotations

from ..functional import loss_extra as F
from ..functional.loss import check_reduction
from .layers import Layer


class MultiMarginLoss(Layer):
    """`F.multi_margin_loss` as a layer: a multi-class hinge loss on [N, C] scores."""

    def __init__(self, p: int = 1, margin: float = 1.0, weight=None, reduction: str = "mean",
                 name=None):
        super().__init__()
        check_reduction(reduction)
        self.p, self.margin, self.weight = p, margin, weight
        self.reduction, self.name = reduction, name

    def forward(self, input, label):
        return F.multi_margin_loss(input, label, self.p, self.margin, self.weight,
                                   self.reduction)


class MultiLabelMarginLoss(Layer):
    """`F.multi_label_margin_loss` as a layer: a hinge loss between each sample's target
    classes and the others."""

    def __init__(self, reduction: str = "mean", name=None):
        super().__init__()
        check_reduction(reduction)
        self.reduction, self.name = reduction, name

    def forward(self, input, label):
        return F.multi_label_margin_loss(input, label, self.reduction)


class TripletMarginWithDistanceLoss(Layer):
    """`F.triplet_margin_with_distance_loss` as a layer. Paddle 3.3's layer drops its
    distance_function (its forward never passes it on, so the 2-norm is always used);
    here the function given is used, as documented."""

    def __init__(self, distance_function=None, margin: float = 1.0, swap: bool = False,
                 reduction: str = "mean", name=None):
        super().__init__()
        check_reduction(reduction)
        self.distance_function, self.margin, self.swap = distance_function, margin, swap
        self.reduction, self.name = reduction, name

    def forward(self, input, positive, negative):
        return F.triplet_margin_with_distance_loss(input, positive, negative,
                                                   self.distance_function, self.margin,
                                                   self.swap, self.reduction)


class HSigmoidLoss(Layer):
    """`F.hsigmoid_loss` with its node weights [nodes, feature_size] and biases
    [nodes, 1] as parameters: num_classes - 1 nodes for the default tree, num_classes
    for a custom one (`is_custom`), whose paths are passed to forward."""

    def __init__(self, feature_size: int, num_classes: int, weight_attr=None, bias_attr=None,
                 is_custom: bool = False, is_sparse: bool = False, name=None):
        super().__init__()
        if num_classes < 2 and not is_custom:
            raise ValueError(f"HSigmoidLoss: num_classes must be at least 2 with the default "
                             f"tree, got {num_classes}")
        self._num_classes, self._is_custom, self._is_sparse = num_classes, is_custom, is_sparse
        nodes = num_classes if is_custom else num_classes - 1
        self.weight = self.create_parameter([nodes, feature_size], weight_attr)
        self.bias = self.create_parameter([nodes, 1], bias_attr, is_bias=True)

    def forward(self, input, label, path_table=None, path_code=None):
        return F.hsigmoid_loss(input, label, self._num_classes, self.weight, self.bias,
                               path_table, path_code, self._is_sparse)
