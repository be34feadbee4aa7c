"""paddle.metric against hand-computed values."""
import numpy as np
import pytest

import irflow as paddle
from irflow.metric import Accuracy, Auc, Precision, Recall, accuracy

SCORES = np.array([[0.1, 0.9, 0.0], [0.8, 0.1, 0.1], [0.2, 0.3, 0.5], [0.3, 0.4, 0.3]],
                  "float32")
LABELS = np.array([[1], [1], [2], [0]])  # the label ranks 1st, 2nd (a tie: the lower
#                                          index first), 1st, 2nd


def test_accuracy_function_top_k():
    assert accuracy(paddle.to_tensor(SCORES), paddle.to_tensor(LABELS)).item() == 0.5
    got = accuracy(paddle.to_tensor(SCORES), paddle.to_tensor(LABELS), k=2)
    assert got.item() == 1.0 and got.shape == [] and got.dtype == paddle.float32


def test_accuracy_metric_accumulates_per_k():
    m = Accuracy(topk=(1, 2))
    assert m.name() == ["acc_top1", "acc_top2"]
    correct = m.compute(paddle.to_tensor(SCORES), paddle.to_tensor(LABELS))
    assert correct.shape == [4, 2] and correct.dtype == paddle.float32
    assert m.update(correct) == [0.5, 1.0]
    m.update(m.compute(paddle.to_tensor(SCORES[:2]), paddle.to_tensor([[0], [0]])))
    assert m.accumulate() == [0.5, 1.0]  # (2 + 1) / 6 and (4 + 2) / 6
    m.reset()
    assert m.accumulate() == [0.0, 0.0]


def test_accuracy_takes_flat_and_one_hot_labels():
    m = Accuracy()
    assert m.name() == ["acc"]
    assert m.update(m.compute(SCORES, np.array([1, 0, 2, 1]))) == 1.0
    assert m.update(m.compute(SCORES, np.eye(3)[[0, 0, 2, 1]])) == 0.75


def test_precision_and_recall():
    preds, labels = np.array([0.2, 0.6, 0.7, 0.4, 0.5]), np.array([0, 1, 0, 1, 1])
    p, r = Precision(), Recall()
    p.update(preds, labels)
    r.update(preds[:, None], labels[:, None])
    # predicted positive: 0.6, 0.7, 0.5 (rounds up) -> tp 2, fp 1; actual positives 3.
    assert p.accumulate() == 2 / 3 and r.accumulate() == 2 / 3
    assert (p.name(), r.name()) == ("precision", "recall")
    p.reset()
    assert p.accumulate() == 0.0


def test_auc_of_a_perfect_an_inverted_and_a_tied_ranking():
    def auc(pos_prob, labels):
        m = Auc()
        m.update(np.stack([1 - pos_prob, pos_prob], 1), np.array(labels))
        return m.accumulate()
    assert auc(np.array([0.1, 0.2, 0.8, 0.9]), [0, 0, 1, 1]) == 1.0
    assert auc(np.array([0.9, 0.8, 0.2, 0.1]), [0, 0, 1, 1]) == 0.0
    assert auc(np.array([0.5, 0.5, 0.5, 0.5]), [0, 1, 0, 1]) == 0.5
    # One positive below one negative of three pairs: 3 of 4 pairs ordered.
    assert auc(np.array([0.1, 0.6, 0.4, 0.9]), [0, 0, 1, 1]) == 0.75
    with pytest.raises(ValueError, match=r"\[N, 2\]"):
        Auc().update(np.ones(3), np.ones(3))
