"""`paddle.callbacks.LRScheduler`: it steps the optimizer's scheduler after each batch
(`by_step`, the default) or each epoch (`by_epoch`); with ``by_step=False`` alone it
never steps, leaving that to the user, as in Paddle 3.3.1, and asking for both is an
error there and here."""
import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.callbacks import LRScheduler
from irflow.io import TensorDataset


def _fit_steps(callback, epochs=2, samples=6, batch_size=2):
    """The learning rate after `fit` with `callback`, under a StepDecay that halves it
    at every scheduler step, starting from 1.0: 0.5 ** (number of steps taken)."""
    x = paddle.to_tensor(np.ones((samples, 3), "float32"))
    y = paddle.to_tensor(np.zeros((samples, 1), "int64"))
    model = paddle.Model(nn.Linear(3, 2))
    scheduler = paddle.optimizer.lr.StepDecay(1.0, step_size=1, gamma=0.5)
    model.prepare(paddle.optimizer.SGD(scheduler, parameters=model.parameters()),
                  nn.CrossEntropyLoss())
    model.fit(TensorDataset([x, y]), batch_size=batch_size, epochs=epochs, verbose=0,
              shuffle=False, callbacks=[callback] if callback else None)
    return scheduler()


@pytest.mark.parametrize("callback, steps", [
    (None, 6),                                     # the default one: each of 3 x 2 batches
    (LRScheduler(), 6),
    (LRScheduler(by_step=False, by_epoch=True), 2),
    (LRScheduler(by_step=False), 0),               # neither: the user steps it
    (LRScheduler(by_step=False, by_epoch=False), 0),
])
def test_scheduler_steps(callback, steps):
    assert _fit_steps(callback) == pytest.approx(0.5 ** steps)


def test_by_step_and_by_epoch_together_raise():
    with pytest.raises(ValueError, match="mutually exclusive"):
        LRScheduler(by_step=True, by_epoch=True)
