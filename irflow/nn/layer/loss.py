"""Loss layers: each holds its options and calls its `irflow.nn.functional` loss."""
from __future__ import annotations

from .. import functional as F
from ..functional.loss import accepts_target, check_reduction
from .layers import Layer


class CrossEntropyLoss(Layer):
    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean",
                 soft_label: bool = False, axis: int = -1, use_softmax: bool = True,
                 label_smoothing: float = 0.0, name=None):
        super().__init__()
        self.weight = weight
        self.ignore_index, self.reduction, self.soft_label = ignore_index, reduction, soft_label
        self.axis, self.use_softmax, self.label_smoothing = axis, use_softmax, label_smoothing

    @accepts_target
    def forward(self, input, label):
        return F.cross_entropy(input, label, self.weight, self.ignore_index, self.reduction,
                               self.soft_label, self.axis, self.use_softmax,
                               self.label_smoothing)


class NLLLoss(Layer):
    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean",
                 name=None):
        super().__init__()
        self.weight, self.ignore_index, self.reduction = weight, ignore_index, reduction

    def forward(self, input, label):
        return F.nll_loss(input, label, self.weight, self.ignore_index, self.reduction)


class MSELoss(Layer):
    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, label):
        return F.mse_loss(input, label, self.reduction)


class L1Loss(Layer):
    def __init__(self, reduction: str = "mean", name=None):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, label):
        return F.l1_loss(input, label, self.reduction)


class BCELoss(Layer):
    def __init__(self, weight=None, reduction: str = "mean", name=None):
        super().__init__()
        self.weight, self.reduction = weight, reduction

    def forward(self, input, label):
        return F.binary_cross_entropy(input, label, self.weight, self.reduction)


class BCEWithLogitsLoss(Layer):
    def __init__(self, weight=None, reduction: str = "mean", pos_weight=None, name=None):
        super().__init__()
        self.weight, self.reduction, self.pos_weight = weight, reduction, pos_weight

    def forward(self, logit, label):
        return F.binary_cross_entropy_with_logits(logit, label, self.weight, self.reduction,
                                                  self.pos_weight)


class SmoothL1Loss(Layer):
    def __init__(self, reduction: str = "mean", delta: float = 1.0, is_huber: bool = True,
                 name=None):
        super().__init__()
        self.reduction, self.delta, self.is_huber = reduction, delta, is_huber

    @accepts_target
    def forward(self, input, label):
        return F.smooth_l1_loss(input, label, self.reduction, self.delta, self.is_huber)


class KLDivLoss(Layer):
    def __init__(self, reduction: str = "mean", log_target: bool = False):
        super().__init__()
        self.reduction, self.log_target = reduction, log_target

    def forward(self, input, label):
        return F.kl_div(input, label, self.reduction, self.log_target)


class MarginRankingLoss(Layer):
    def __init__(self, margin: float = 0.0, reduction: str = "mean", name=None):
        super().__init__()
        self.margin, self.reduction = margin, reduction

    def forward(self, input, other, label):
        return F.margin_ranking_loss(input, other, label, self.margin, self.reduction)


class SoftMarginLoss(Layer):
    def __init__(self, reduction: str = "mean", name=None):
        super().__init__()
        check_reduction(reduction)
        self.reduction, self.name = reduction, name

    def forward(self, input, label):
        return F.soft_margin_loss(input, label, self.reduction)


class HingeEmbeddingLoss(Layer):
    def __init__(self, margin: float = 1.0, reduction: str = "mean", name=None):
        super().__init__()
        self.margin, self.reduction, self.name = margin, reduction, name

    def forward(self, input, label):
        return F.hinge_embedding_loss(input, label, self.margin, self.reduction)


class CosineEmbeddingLoss(Layer):
    """`F.cosine_embedding_loss`; the margin, compared with a cosine, must lie in
    [-1, 1], as Paddle's layer requires."""

    def __init__(self, margin: float = 0, reduction: str = "mean", name=None):
        super().__init__()
        if not -1 <= margin <= 1:
            raise ValueError(f"CosineEmbeddingLoss: margin must be in [-1, 1], got {margin}")
        check_reduction(reduction)
        self.margin, self.reduction, self.name = margin, reduction, name

    def forward(self, input1, input2, label):
        return F.cosine_embedding_loss(input1, input2, label, self.margin, self.reduction)


class TripletMarginLoss(Layer):
    def __init__(self, margin: float = 1.0, p: float = 2.0, epsilon: float = 1e-06,
                 swap: bool = False, reduction: str = "mean", name=None):
        super().__init__()
        check_reduction(reduction)
        self.margin, self.p, self.epsilon, self.swap = margin, p, epsilon, swap
        self.reduction, self.name = reduction, name

    def forward(self, input, positive, negative):
        return F.triplet_margin_loss(input, positive, negative, self.margin, self.p,
                                     self.epsilon, self.swap, self.reduction)


class MultiLabelSoftMarginLoss(Layer):
    def __init__(self, weight=None, reduction: str = "mean", name=None):
        super().__init__()
        check_reduction(reduction)
        self.weight, self.reduction, self.name = weight, reduction, name

    def forward(self, input, label):
        return F.multi_label_soft_margin_loss(input, label, self.weight, self.reduction)


class PoissonNLLLoss(Layer):
    def __init__(self, log_input: bool = True, full: bool = False, epsilon: float = 1e-08,
                 reduction: str = "mean", name=None):
        super().__init__()
        if epsilon <= 0:
            raise ValueError(f"PoissonNLLLoss: epsilon must be positive, got {epsilon}")
        check_reduction(reduction)
        self._log_input, self._full, self._epsilon = log_input, full, epsilon
        self._reduction, self._name = reduction, name

    def forward(self, input, label):
        return F.poisson_nll_loss(input, label, self._log_input, self._full, self._epsilon,
                                  self._reduction)


class GaussianNLLLoss(Layer):
    def __init__(self, full: bool = False, epsilon: float = 1e-06, reduction: str = "mean",
                 name=None):
        super().__init__()
        check_reduction(reduction)
        self.full, self.epsilon, self.reduction, self.name = full, epsilon, reduction, name

    def forward(self, input, label, variance):
        return F.gaussian_nll_loss(input, label, variance, self.full, self.epsilon,
                                   self.reduction)


class CTCLoss(Layer):
    """`F.ctc_loss` with the blank, reduction and `zero_infinity` given here;
    `norm_by_times` is an argument of each call, as in Paddle."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__()
        self.blank, self.reduction, self.zero_infinity = blank, reduction, zero_infinity

    def forward(self, log_probs, labels, input_lengths, label_lengths,
                norm_by_times: bool = False):
        return F.ctc_loss(log_probs, labels, input_lengths, label_lengths, self.blank,
                          self.reduction, norm_by_times, self.zero_infinity)
