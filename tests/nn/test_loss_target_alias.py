"""Paddle 3.3 accepts the torch-style name ``target`` for the label of
F.cross_entropy, CrossEntropyLoss and SmoothL1Loss: ported code that passes it must
give the same loss as passing ``label``."""
import numpy as np
import pytest

import irflow as paddle

F = paddle.nn.functional


def _logits_and_labels():
    rng = np.random.RandomState(0)
    return (paddle.to_tensor(rng.randn(4, 3).astype("float32")),
            paddle.to_tensor(np.array([0, 2, 1, 2])))


def test_cross_entropy_takes_target():
    x, y = _logits_and_labels()
    np.testing.assert_allclose(F.cross_entropy(x, target=y).numpy(),
                               F.cross_entropy(x, label=y).numpy())


def test_cross_entropy_loss_layer_takes_target():
    x, y = _logits_and_labels()
    layer = paddle.nn.CrossEntropyLoss(reduction="sum")
    np.testing.assert_allclose(layer(x, target=y).numpy(), layer(x, y).numpy())


def test_smooth_l1_layer_takes_target():
    x, _ = _logits_and_labels()
    layer = paddle.nn.SmoothL1Loss(delta=0.5)
    np.testing.assert_allclose(layer(x, target=x * 2).numpy(), layer(x, x * 2).numpy())


def test_label_and_target_together_is_an_error():
    x, y = _logits_and_labels()
    with pytest.raises(ValueError, match="label and its alias target"):
        F.cross_entropy(x, label=y, target=y)
