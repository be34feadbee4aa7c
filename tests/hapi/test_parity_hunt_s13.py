"""Parity with PaddlePaddle 3.3.1 of what `paddle.Model`'s callbacks and progress
lines print and accept; each expectation states Paddle's rule."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.hapi.progressbar import format_value
from irflow.io import TensorDataset


def test_format_value_follows_paddles_thresholds():
    """Paddle prints a float with 4 decimals only when its magnitude is above 1e-3
    (else %.4e, zero included), and a list of losses as its elements."""
    assert format_value(0.0) == "0.0000e+00"
    assert format_value(np.float64(1e-3)) == "1.0000e-03"
    assert format_value(0.25) == "0.2500"
    assert format_value([1.5, 0.0]) == "1.5000 0.0000e+00"
    assert format_value([np.float32(2.0)]) == "2.0000"


def test_early_stopping_unknown_mode_warns_and_uses_auto():
    with pytest.warns(UserWarning, match="unknown"):
        stop = paddle.callbacks.EarlyStopping(monitor="acc", mode="maximum")
    assert stop.mode == "max"  # 'auto' for an accuracy-like name


def test_early_stopping_says_where_the_best_model_is(tmp_path, capsys):
    """With patience 0 training stops after the first evaluation; Paddle then prints
    the stop and where the best model was saved."""
    x = np.linspace(-1, 1, 8, dtype="float32").reshape(4, 2)
    y = np.array([[0], [1], [0], [1]], "int64")
    data = TensorDataset([paddle.to_tensor(x), paddle.to_tensor(y)])
    net = nn.Linear(2, 2)
    model = paddle.Model(net)
    model.prepare(paddle.optimizer.SGD(0.1, parameters=net.parameters()),
                  nn.CrossEntropyLoss())
    stop = paddle.callbacks.EarlyStopping(monitor="loss", patience=0)
    model.fit(data, data, batch_size=2, epochs=3, verbose=0, shuffle=False,
              callbacks=[stop], save_dir=str(tmp_path))
    out = capsys.readouterr().out
    best = tmp_path / "best_model"
    assert "Epoch 1: Early stopping." in out
    assert f"Best checkpoint has been saved at {best}" in out
    assert (tmp_path / "best_model.pdparams").exists()
