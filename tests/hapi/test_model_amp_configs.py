"""`Model.prepare(amp_configs=...)`: checked as Paddle 3.3.1 checks it, and on the CPU,
where Paddle's mixed precision makes no effect (its `auto_cast` and `GradScaler` only
warn so), training computes what it computes without it."""
import warnings

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.io import TensorDataset
from irflow.static import InputSpec

SPECS = ([InputSpec([None, 4], "float32", "x")], [InputSpec([None, 1], "int64", "y")])


def _data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((9, 4)).astype("float32")
    y = (x[:, :1] > 0).astype("int64")
    return TensorDataset([paddle.to_tensor(x), paddle.to_tensor(y)])


def _trained(amp_configs, specs=((), ())):
    """The weights after two epochs of Adam on `_data`, from one fixed start."""
    paddle.seed(0)
    network = nn.Linear(4, 2)
    model = paddle.Model(network, *specs)
    model.prepare(paddle.optimizer.Adam(0.1, parameters=model.parameters()),
                  nn.CrossEntropyLoss(), amp_configs=amp_configs)
    model.fit(_data(), batch_size=4, epochs=2, verbose=0, shuffle=False)
    return network.weight.numpy()


@pytest.mark.parametrize("specs", [((), ()), SPECS], ids=["eager", "compiled"])
@pytest.mark.parametrize("amp_configs", [
    "O1", "O2", {"level": "O1", "init_loss_scaling": 128.0},
    {"custom_white_list": ["matmul"], "incr_ratio": 3.0},  # no level: 'O1'
])
def test_amp_configs_train_as_without_them_and_warn(amp_configs, specs):
    with pytest.warns(UserWarning) as caught:
        weights = _trained(amp_configs, specs)
    said = " ".join(str(w.message) for w in caught)
    assert "GradScaler makes no effect" in said and "auto_cast makes no effect" in said
    np.testing.assert_array_equal(weights, _trained(None, specs))


@pytest.mark.parametrize("amp_configs", ["O0", {"level": "O0", "anything": 1}, {}])
def test_level_o0_is_plain_training_without_warnings(amp_configs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        weights = _trained(amp_configs)
    np.testing.assert_array_equal(weights, _trained(None))


@pytest.mark.parametrize("amp_configs, message", [
    ("O3", "level of amp_configs should be 'O0', 'O1' or 'O2', got 'O3'"),
    ("o1", "got 'o1'"),  # the level is case-sensitive, as in Paddle
    ({"level": "O4"}, r"amp_configs\['level'\] should be"),
    ({"level": "O1", "foo": 1}, "got 'foo'"),
    ({"use_pure_fp16": True}, "'use_pure_fp16' is not an amp_configs key"),
    ({"level": "O2", "use_fp16_guard": True}, "static-graph mode only"),
])
def test_invalid_amp_configs_raise_as_in_paddle(amp_configs, message):
    model = paddle.Model(nn.Linear(4, 2))
    with pytest.raises(ValueError, match=message):
        model.prepare(paddle.optimizer.SGD(0.1, parameters=model.parameters()),
                      nn.CrossEntropyLoss(), amp_configs=amp_configs)
