"""`paddle.vision.models.LeNet` against Paddle (parameter names, shapes, numbers) and
`paddle.vision.datasets` saying that irflow downloads nothing."""
import numpy as np
import pytest

import irflow as paddle
from irflow.vision import datasets

# From Paddle 3.3.1: paddle.vision.models.LeNet().state_dict() as [(key, shape)].
PADDLE_STATE = [("features.0.weight", [6, 1, 3, 3]), ("features.0.bias", [6]),
                ("features.3.weight", [16, 6, 5, 5]), ("features.3.bias", [16]),
                ("fc.0.weight", [400, 120]), ("fc.0.bias", [120]),
                ("fc.1.weight", [120, 84]), ("fc.1.bias", [84]),
                ("fc.2.weight", [84, 10]), ("fc.2.bias", [10])]


def test_lenet_matches_paddle():
    model = paddle.vision.models.LeNet()
    state = model.state_dict()
    assert [(k, list(v.shape)) for k, v in state.items()] == PADDLE_STATE
    for i, p in enumerate(state.values()):
        size = int(np.prod(p.shape))
        p.set_value((np.sin(np.arange(size) * 0.37 + i) * 0.2).reshape(p.shape)
                    .astype(np.float32))
    x = np.cos(np.arange(2 * 28 * 28) * 0.01).reshape(2, 1, 28, 28).astype(np.float32)
    # From Paddle 3.3.1, the same parameters and input.
    expected = [[-2.6870317, -2.8328862, -2.5953207, -2.006493, -1.1460954, -0.13057774,
                 0.90261173, 1.813637, 2.4791958, 2.8092074],
                [2.9687803, 2.9673924, 2.5643802, 1.8142924, 0.81864953, -0.28779638,
                 -1.3552889, -2.239349, -2.8203242, -3.019583]]
    np.testing.assert_allclose(model(paddle.to_tensor(x)).numpy(), expected, rtol=1e-5,
                               atol=1e-5)


def test_lenet_without_classifier_and_training_step():
    assert paddle.vision.LeNet(num_classes=0)(paddle.ones([1, 1, 28, 28])).shape == \
        [1, 16, 5, 5]
    model = paddle.vision.models.LeNet(num_classes=3)
    loss = paddle.nn.functional.cross_entropy(model(paddle.randn([4, 1, 28, 28])),
                                              paddle.to_tensor(np.array([0, 1, 2, 1])))
    loss.backward()
    assert all(p.grad is not None for p in model.parameters())


@pytest.mark.parametrize("name", ["MNIST", "FashionMNIST", "Cifar10", "Cifar100",
                                  "Flowers", "VOC2012"])
def test_datasets_explain_that_irflow_cannot_download(name):
    with pytest.raises(NotImplementedError, match=f"{name} downloads.*paddle.io.Dataset"):
        getattr(datasets, name)(mode="train")
