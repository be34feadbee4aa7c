"""irflow.nn.summary: Paddle's table, layer numbering and parameter totals."""

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow.nn.summary import summary


@pytest.fixture
def fresh_names():
    """Layer numbering as in a fresh process (Paddle numbers layers process-wide)."""
    with paddle.utils.unique_name.guard():
        yield


class MLP(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 512)
        self.fc2 = nn.Linear(512, 256)
        self.fc3 = nn.Linear(256, 10)

    def forward(self, x):
        return self.fc3(nn.functional.relu(self.fc2(nn.functional.relu(self.fc1(x)))))


PADDLE_MLP_TABLE = """\
---------------------------------------------------------------------------
 Layer (type)       Input Shape          Output Shape         Param #    
===========================================================================
   Linear-1          [[1, 784]]            [1, 512]           401,920    
   Linear-2          [[1, 512]]            [1, 256]           131,328    
   Linear-3          [[1, 256]]            [1, 10]             2,570     
===========================================================================
Total params: 535,818
Trainable params: 535,818
Non-trainable params: 0
---------------------------------------------------------------------------
Input size (MB): 0.00
Forward/backward pass size (MB): 0.01
Params size (MB): 2.04
Estimated Total Size (MB): 2.05
---------------------------------------------------------------------------

"""


def test_mlp_table_is_paddles(fresh_names, capsys):
    info = summary(MLP(), input_size=(1, 784))
    assert info == {"total_params": 535818, "trainable_params": 535818}
    assert capsys.readouterr().out == PADDLE_MLP_TABLE


PADDLE_CNN_ROWS = """\
     Conv2D-1          [[2, 3, 8, 8]]        [2, 8, 8, 8]           224      
   BatchNorm2D-1       [[2, 8, 8, 8]]        [2, 8, 8, 8]           32       
      ReLU-1           [[2, 8, 8, 8]]        [2, 8, 8, 8]            0       
    MaxPool2D-1        [[2, 8, 8, 8]]        [2, 8, 4, 4]            0       
AdaptiveAvgPool2D-1    [[2, 8, 4, 4]]        [2, 8, 1, 1]            0       
     Flatten-1         [[2, 8, 1, 1]]           [2, 8]               0       
     Linear-1             [[2, 8]]             [2, 10]              90       
"""


def test_containers_get_no_row_and_running_stats_are_non_trainable(fresh_names, capsys):
    model = nn.Sequential(nn.Conv2D(3, 8, 3, padding=1), nn.BatchNorm2D(8), nn.ReLU(),
                          nn.MaxPool2D(2), nn.AdaptiveAvgPool2D(1), nn.Flatten(),
                          nn.Linear(8, 10))
    info = summary(model, (2, 3, 8, 8))
    assert info == {"total_params": 346, "trainable_params": 330}
    out = capsys.readouterr().out
    assert PADDLE_CNN_ROWS in out
    assert "Non-trainable params: 16\n" in out and "Sequential" not in out


def test_restores_training_mode_and_leaves_no_hooks():
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    summary(model, (2, 4))
    assert model.training and model[1].training
    assert not any(layer._forward_post_hooks for layer in model.sublayers(include_self=True))
    model.eval()
    summary(model, (2, 4))
    assert not model.training


def test_batch_dim_none_several_inputs_and_given_tensors(capsys):
    class Two(nn.Layer):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(3, 2)
            self.b = nn.Linear(5, 2)

        def forward(self, x, y):
            return self.a(x) + self.b(y)

    info = summary(Two(), [(None, 3), (-1, 5)])
    assert info["total_params"] == 8 + 12
    assert "[[1, 3]]" in capsys.readouterr().out
    info = summary(Two().a, input=paddle.ones([4, 3]))
    assert info["total_params"] == 8
    assert "[[4, 3]]" in capsys.readouterr().out


def test_a_model_without_sublayers_is_its_own_row(capsys):
    class Scale(nn.Layer):
        def __init__(self):
            super().__init__()
            self.w = self.create_parameter([3])

        def forward(self, x):
            return x * self.w

    assert summary(Scale(), (2, 3)) == {"total_params": 3, "trainable_params": 3}
    assert "Scale-" in capsys.readouterr().out


def test_integer_inputs_through_dtypes(capsys):
    model = nn.Sequential(nn.Embedding(10, 4), nn.Flatten())
    info = summary(model, (2, 3), dtypes="int64")
    assert info["total_params"] == 40
    assert "[2, 12]" in capsys.readouterr().out


def test_bad_input_sizes():
    with pytest.raises(ValueError, match="only the dim of batch_size"):
        summary(MLP(), (None, None))
    with pytest.raises(ValueError, match="greater than zero"):
        summary(MLP(), (0, 784))
    with pytest.raises(ValueError, match="input_size or input"):
        summary(MLP())


def test_summary_leaves_every_layer_mode_as_it_was():
    """summary runs the model as in eval mode without changing any flag (Paddle's
    switches the model to eval and back to train, putting a sublayer the user had
    in eval mode into training mode)."""
    net = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.BatchNorm1D(4))
    net.train()
    net[1].eval()
    before = net[2]._mean.numpy().copy()
    paddle.summary(net, (2, 4))
    np.testing.assert_array_equal(net[2]._mean.numpy(), before)  # ran in eval mode
    assert [net.training, net[0].training, net[1].training, net[2].training] == \
        [True, True, False, True]
