"""A CPU-only Paddle's device API, and the installation check."""
import pytest

import irflow as paddle
from irflow.context import state
from irflow.passes import DEFAULT_PIPELINE, parse_pipeline


def test_the_cpu_is_the_device():
    assert paddle.CPUPlace() == paddle.CPUPlace() and repr(paddle.CPUPlace()) == "Place(cpu)"
    assert paddle.set_device("cpu") == paddle.CPUPlace() == paddle.device.set_device("CPU:0")
    assert paddle.get_device() == paddle.device.get_device() == "cpu"
    assert not paddle.is_compiled_with_cuda() and paddle.device.get_all_device_type() == ["cpu"]
    with pytest.raises(ValueError, match="The device should not be 'gpu:0': irflow runs on the CPU"):
        paddle.set_device("gpu:0")


@pytest.mark.parametrize("static", [False, True])
def test_run_check_reports_each_stage(static, capsys):
    if static:
        state.default_programs = None
        paddle.enable_static()
    try:
        paddle.utils.run_check()
        assert paddle.in_dynamic_mode() is not static
    finally:
        paddle.disable_static()
        state.default_programs = None
    lines = capsys.readouterr().out.splitlines()
    stages = [line.split()[0] for line in lines[1:-2]]
    passes = [str(p) for p in parse_pipeline(DEFAULT_PIPELINE)]
    assert stages == ["trace", "verify", *passes, "plan", "run", "backward"]
    assert all(line.split()[1] == "ok" for line in lines[1:-2])
    assert lines[-1].startswith("irflow is installed successfully!")


def test_a_tensors_place_answers_paddles_place_queries():
    place = paddle.to_tensor([1.0]).place
    assert place.is_cpu_place() and not place.is_gpu_place() and not place.is_xpu_place()
    assert place == paddle.CPUPlace() and str(place) == "Place(cpu)"
