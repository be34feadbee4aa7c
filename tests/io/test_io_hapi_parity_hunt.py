"""Parity with PaddlePaddle 3.3.1 where irflow's data pipeline, high-level API and
save/load differed from it: each expected value is a NumPy reference or a hand count
that matches what Paddle gives for the same script."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.io import Dataset


def _linear(seed=1):
    """A Linear(2, 3) with fixed weights, and its NumPy forward."""
    layer = nn.Linear(2, 3)
    rng = np.random.RandomState(seed)
    w = rng.randn(2, 3).astype("float32")
    b = rng.randn(3).astype("float32")
    layer.set_state_dict({"weight": w, "bias": b})
    return layer, lambda x: x @ w + b


class TwoInputs(nn.Layer):
    def __init__(self):
        super().__init__()
        self.a, self.ref_a = _linear(1)
        self.b, self.ref_b = _linear(2)

    def forward(self, x1, x2):
        return self.a(x1) + self.b(x2)

    def reference(self, x1, x2):
        return self.ref_a(x1) + self.ref_b(x2)


class Nested(Dataset):
    """Samples ``((x1, x2), label)``, or dicts whose keys are out of order (Paddle's
    Model flattens dicts by sorted key: x1, x2, label)."""

    def __init__(self, as_dict=False):
        rng = np.random.RandomState(0)
        self.x1 = rng.randn(5, 2).astype("float32")
        self.x2 = rng.randn(5, 2).astype("float32")
        self.y = (np.arange(5) % 3)[:, None].astype("int64")
        self.as_dict = as_dict

    def __len__(self):
        return 5

    def __getitem__(self, i):
        if self.as_dict:
            return {"z_label": self.y[i], "b_x2": self.x2[i], "a_x1": self.x1[i]}
        return (self.x1[i], self.x2[i]), self.y[i]


def _accuracy_and_last_loss(logits, labels, batch_size):
    shifted = logits - logits.max(1, keepdims=True)
    nll = -(shifted - np.log(np.exp(shifted).sum(1, keepdims=True)))[
        np.arange(len(labels)), labels[:, 0]]
    last = (len(labels) - 1) // batch_size * batch_size
    return np.mean(logits.argmax(1) == labels[:, 0]), nll[last:].mean()


@pytest.mark.parametrize("as_dict", [False, True])
def test_model_flattens_nested_and_dict_batches_as_paddle(as_dict):
    # Paddle's Model runs paddle.utils.flatten on each batch: the network gets x1 and
    # x2, the loss the label. irflow passed the nested list itself to the network.
    network = TwoInputs()
    model = paddle.Model(network)
    model.prepare(loss=nn.CrossEntropyLoss(), metrics=paddle.metric.Accuracy())
    data = Nested(as_dict)
    result = model.evaluate(data, batch_size=2, verbose=0)
    logits = network.reference(data.x1, data.x2)
    acc, last_loss = _accuracy_and_last_loss(logits, data.y, 2)
    assert result["acc"] == pytest.approx(acc)
    assert result["loss"] == [pytest.approx(last_loss, rel=1e-5)]
    (stacked,) = model.predict(data, batch_size=2, stack_outputs=True, verbose=0)
    np.testing.assert_allclose(stacked, logits, rtol=1e-5, atol=1e-6)


class Points(Dataset):
    def __init__(self, n=7):
        rng = np.random.RandomState(0)
        self.x = rng.randn(n, 2).astype("float32")
        self.y = rng.randint(0, 3, (n, 1)).astype("int64")

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def test_evaluate_with_metrics_and_no_loss():
    # Paddle evaluates a Model prepared with metrics only: no 'loss' in the logs,
    # and eval_batch returns the metrics' values.
    layer, ref = _linear()
    model = paddle.Model(layer)
    model.prepare(metrics=paddle.metric.Accuracy())
    data = Points()
    expected = np.mean(ref(data.x).argmax(1) == data.y[:, 0])
    assert model.evaluate(data, batch_size=3, verbose=0) == {"acc": pytest.approx(expected)}
    assert model.eval_batch([data.x], [data.y]) == [pytest.approx(expected)]
    with pytest.raises(RuntimeError, match="needs a loss"):
        model.train_batch([data.x], [data.y])


def test_model_save_writes_no_pdopt_for_an_optimizer_without_state(tmp_path):
    # Paddle saves path.pdopt only when the optimizer's state dict is not empty.
    layer, _ = _linear()
    model = paddle.Model(layer)
    model.prepare(paddle.optimizer.SGD(0.1, parameters=model.parameters()),
                  nn.CrossEntropyLoss())
    model.save(str(tmp_path / "ck"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck.pdparams"]


def test_model_load_accepts_the_pdparams_suffix(tmp_path):
    layer, _ = _linear(1)
    paddle.Model(layer).save(str(tmp_path / "ck"))
    other, _ = _linear(2)
    paddle.Model(other).load(str(tmp_path / "ck.pdparams"))
    np.testing.assert_array_equal(other.weight.numpy(), layer.weight.numpy())
