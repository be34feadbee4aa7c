"""python -m irflow.paddle / irflow paddle: a script written for Paddle runs unchanged,
its imports resolve to irflow in that process only, and unsupported APIs say so.
Each script runs in a subprocess of its own (the hook lasts for its process)."""
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from irflow.paddle import PaddleFinder

ROOT = pathlib.Path(__file__).resolve().parents[2]
TIMEOUT = 60


def run(tmp_path, source, *args, command=("-m", "irflow.paddle")):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(source))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, *command, str(script), *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=TIMEOUT, env=env)


TRAINING = """
    import sys
    import numpy as np
    import paddle
    import paddle.nn as nn
    from paddle import nn as nn_again
    import paddle.nn.functional as F
    from paddle.io import DataLoader, TensorDataset

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)

        def forward(self, x):
            return self.fc(x)

    paddle.seed(0)
    x = paddle.to_tensor(np.arange(24, dtype="float32").reshape(8, 3) / 24)
    y = paddle.to_tensor(np.array([0, 1] * 4))
    net = Net()
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=net.parameters())
    for xb, yb in DataLoader(TensorDataset([x, y]), batch_size=4, num_workers=1, timeout=30):
        loss = F.cross_entropy(net(xb), yb)
        loss.backward()
        opt.step()
        opt.clear_grad()
    import irflow
    assert nn is nn_again and nn.Linear is irflow.nn.Linear and F.relu is irflow.nn.functional.relu
    assert isinstance(loss, paddle.Tensor) and type(loss) is irflow.Tensor
    print("args", sys.argv[1:], "name", __name__, "loss", round(loss.item(), 3))
"""


@pytest.mark.parametrize("command", [("-m", "irflow.paddle"), ("-m", "irflow", "paddle")])
def test_an_unchanged_training_script_runs(tmp_path, command):
    result = run(tmp_path, TRAINING, "--epochs", "2", command=command)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("args ['--epochs', '2'] name __main__ loss ")


def test_the_script_folder_is_importable(tmp_path):
    (tmp_path / "helpers.py").write_text("import paddle\nSCALE = paddle.to_tensor(3.0)\n")
    result = run(tmp_path, "from helpers import SCALE\nprint(SCALE.item())\n")
    assert result.returncode == 0 and result.stdout == "3.0\n", result.stderr


def test_an_unsupported_api_is_named(tmp_path):
    result = run(tmp_path, """
        import paddle
        print(hasattr(paddle, "no_such_function"))
        paddle.nn.NoSuchLayer(3)
    """)
    assert result.returncode == 1 and result.stdout == "False\n"
    assert result.stderr.startswith("irflow paddle: ") and result.stderr.count("\n") == 1
    assert ("script.py:4: paddle.nn.NoSuchLayer: irflow does not provide this Paddle API "
            "yet") in result.stderr  # the script's own line


def test_an_unsupported_module_is_named(tmp_path):
    result = run(tmp_path, """
        try:
            import paddle.distributed.fleet
        except ImportError as e:
            print(type(e).__name__, e.name)
        from paddle.audio import features
    """)
    assert result.stdout == "UnsupportedPaddleModule paddle.distributed\n"  # the first missing
    assert "No module named 'paddle.audio': irflow does not provide this Paddle module " \
           "yet" in result.stderr


def test_exit_status_and_errors_of_the_script(tmp_path):
    assert run(tmp_path, "import sys\nsys.exit(3)\n").returncode == 3
    failed = run(tmp_path, "raise ValueError('bad input')\n")
    assert failed.returncode == 1 and "ValueError: bad input" in failed.stderr
    missing = subprocess.run([sys.executable, "-m", "irflow.paddle", "nowhere.py"],
                             capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert missing.returncode == 1 and missing.stderr == "irflow paddle: nowhere.py: no such script\n"


def test_nothing_is_installed_outside_the_runner(tmp_path):
    # Without the runner, `import paddle` is whatever the environment has (real
    # Paddle or nothing); this test process never had the hook either.
    plain = subprocess.run([sys.executable, "-c", "import irflow.paddle, sys; "
                            "print(any(type(f).__name__ == 'PaddleFinder' "
                            "for f in sys.meta_path))"],
                           capture_output=True, text=True, timeout=TIMEOUT,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert plain.stdout == "False\n"
    assert not any(isinstance(f, PaddleFinder) for f in sys.meta_path)
    assert "paddle" not in sys.modules or not sys.modules["paddle"].__name__.startswith(
        "irflow")


def test_views_leave_irflow_modules_unchanged(tmp_path):
    result = run(tmp_path, """
        import paddle, irflow
        paddle.custom_flag = 1            # lands on the view
        print(hasattr(irflow, "custom_flag"), paddle.nn.__name__, irflow.nn.__name__)
    """)
    assert result.stdout == "False paddle.nn irflow.nn\n", result.stderr
