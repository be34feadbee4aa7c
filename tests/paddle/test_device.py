"""paddle.set_device and friends: the CPU is accepted, any other device refused."""
import pytest

import irflow as paddle


def test_the_cpu_is_the_device():
    place = paddle.set_device("cpu")
    assert repr(place) == "Place(cpu)" and place == paddle.CPUPlace()
    assert paddle.get_device() == "cpu" and paddle.device.get_device() == "cpu"
    assert paddle.ones([1]).place == paddle.CPUPlace()
    assert paddle.is_compiled_with_cuda() is False


@pytest.mark.parametrize("device", ["gpu", "gpu:0", "xpu"])
def test_other_devices_are_refused(device):
    with pytest.raises(ValueError, match=f"'{device}': irflow runs on the CPU only"):
        paddle.set_device(device)
