"""paddle.metric against hand-computed values and Paddle 3.3.1's, eagerly, compiled
and in a static program."""
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


def test_accuracy_counts_and_a_nan_score_as_paddle():
    scores = paddle.to_tensor([[1.0, 2.0, 3.0], [4.0, 5.0, -6.0], [0.3, 0.4, 0.3]])
    labels = paddle.to_tensor(np.array([[2], [0], [0]]))
    correct, total = paddle.zeros([], "int32"), paddle.zeros([], "int32")
    got = accuracy(scores, labels, k=2, correct=correct, total=total)
    # Paddle 3.3.1: 1.0, correct 3 and total 3 (int32).
    assert got.item() == 1.0 and correct.dtype == total.dtype == paddle.int32
    assert (correct.item(), total.item()) == (3, 3)
    correct, total = paddle.zeros([1], "int32"), paddle.zeros([1], "int32")  # the usual
    accuracy(scores, labels, k=1, correct=correct, total=total)
    assert (correct.numpy().tolist(), total.numpy().tolist()) == ([1], [3])
    assert accuracy(paddle.zeros([0, 3]), paddle.zeros([0, 1], "int64")).item() == 0.0
    # Paddle 3.3.1 ranks a NaN score first (its topk's order): label 1 is the top-1.
    nan_row = paddle.to_tensor([[1.0, float("nan"), 2.0]])
    assert [accuracy(nan_row, paddle.to_tensor([[c]])).item() for c in range(3)] == \
        [0.0, 1.0, 0.0]


def test_accuracy_compiled_matches_eager():
    @paddle.jit.to_static
    def top_1_and_2(scores, labels):
        return accuracy(scores, labels), accuracy(scores, labels, k=2)
    top1, top2 = top_1_and_2(paddle.to_tensor(SCORES), paddle.to_tensor(LABELS))
    assert (top1.item(), top2.item()) == (0.5, 1.0)


def test_accuracy_in_a_static_program():
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [-1, 3], "float32")
            label = paddle.static.data("label", [-1, 1], "int64")
            top1, top3 = accuracy(x, label), accuracy(x, label, k=3)
        exe = paddle.static.Executor()
        exe.run(startup)
        x_rows = np.array([[1, 2, 3], [4, 5, -6], [0.3, 0.4, 0.3]], "float32")
        labels = np.array([[2], [0], [0]])
        # Paddle 3.3.1 fetches [0.33333334, 1.0], then 0.5 for the first two rows.
        got = exe.run(main, feed={"x": x_rows, "label": labels}, fetch_list=[top1, top3])
        assert [(a.dtype, a.shape) for a in got] == [(np.float32, ())] * 2
        assert [a.item() for a in got] == [np.float32(1 / 3), 1.0]
        got, = exe.run(main, feed={"x": x_rows[:2], "label": labels[:2]}, fetch_list=[top1])
        assert got.item() == 0.5
    finally:
        paddle.disable_static()


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
    # Precision's positives: 0.6, 0.7, 0.5 (floor(p + 0.5)) -> tp 2, fp 1. Recall rounds
    # half to even, as Paddle's: 0.5 is negative -> tp 1 of 3 actual positives.
    assert p.accumulate() == 2 / 3 and r.accumulate() == 1 / 3
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


# As Paddle 3.3.1 computes them (its numbers printed on the same inputs).

def test_recall_rounds_half_to_even():
    m = paddle.metric.Recall()
    m.update(np.array([0.5, 0.7, 0.2, 0.5], "float32"), np.array([1, 1, 1, 0]))
    # Paddle 3.3.1: 0.3333333333333333 (only 0.7 counts as a positive prediction)
    assert m.accumulate() == 0.3333333333333333


def test_recall_of_a_zero_initialised_model_in_hapi():
    rng = np.random.RandomState(0)
    xs = rng.randn(10, 4).astype("float32")
    ys = rng.randint(0, 2, (10, 1)).astype("float32")

    class Data(paddle.io.Dataset):
        def __len__(self):
            return 10

        def __getitem__(self, i):
            return xs[i], ys[i]

    zero = paddle.nn.initializer.Constant(0.0)
    net = paddle.nn.Sequential(paddle.nn.Linear(4, 1, weight_attr=zero, bias_attr=zero),
                               paddle.nn.Sigmoid())
    model = paddle.Model(net)
    model.prepare(None, paddle.nn.BCELoss(),
                  [paddle.metric.Precision(), paddle.metric.Recall()])
    got = model.evaluate(Data(), batch_size=5, verbose=0)
    # Paddle 3.3.1: {'loss': [0.6931471824645996], 'precision': 0.4, 'recall': 0.0}
    assert got["precision"] == 0.4
    assert got["recall"] == 0.0


def test_precision_rounds_in_the_predictions_dtype():
    m = paddle.metric.Precision()
    m.update(np.array([0.49999997, 0.9], "float32"), np.array([1, 0]))
    # Paddle 3.3.1: 0.5 (both rows predicted positive: tp 1, fp 1)
    assert m.accumulate() == 0.5


def test_auc_accumulate_bit_exact():
    r = np.random.RandomState(5)
    p1 = r.rand(10).astype("float32")
    labels = r.randint(0, 2, (10,)).astype("int64")
    m = paddle.metric.Auc(num_thresholds=10)
    m.update(np.stack([1 - p1, p1], 1), labels)
    # Paddle 3.3.1: np.float64(0.8571428571428572)
    assert m.accumulate() == 0.8571428571428572


def test_auc_accepts_curve_pr():
    m = paddle.metric.Auc(curve="PR", num_thresholds=10)
    m.update(np.array([[0.9, 0.1], [0.4, 0.6], [0.2, 0.8], [0.7, 0.3]], "float32"),
             np.array([0, 1, 0, 1]))
    # Paddle 3.3.1: np.float64(0.5)
    assert m.accumulate() == 0.5


def test_accuracy_accumulate_after_reset_is_a_python_float():
    # Paddle 3.3.1: (['float', 'float'], 'float')
    assert [type(v) for v in paddle.metric.Accuracy(topk=(1, 2)).accumulate()] == \
        [float, float]
    assert type(paddle.metric.Accuracy().accumulate()) is float


