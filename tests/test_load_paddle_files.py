"""irflow.load of the files Paddle's ``paddle.save`` writes (pickles): state dicts,
checkpoints and tensors load as ``paddle.load`` gives them, and a pickle naming
anything ``paddle.save`` does not write is refused before anything in it is called.

Two files below were written by PaddlePaddle 3.3.1 itself (base64)::

    fc = paddle.nn.Linear(3, 2)
    fc.weight.set_value(np.arange(6, dtype="float32").reshape(3, 2) / 4)
    fc.bias.set_value(np.array([0.5, -1.0], dtype="float32"))
    paddle.save(fc.state_dict(), f, protocol=p)                       # STATE_DICT_P<p>
    paddle.save({"model": fc.state_dict(), "epoch": 3, "step": np.int64(7),
                 "rng": np.arange(3, dtype="int64")}, f, protocol=p)  # CHECKPOINT_P<p>

The others are built here in the layout Paddle's ``paddle/framework/io.py`` writes:
a state dict as ``_build_saved_state_dict`` makes it (its tensors as arrays, their
names in ``StructuredToParameterName@@``), any other object with each Tensor
pickled by ``reduce_varbase`` as ``tuple((name, array))``.
"""
import base64
import io
import pickle
import struct

import numpy as np
import pytest

import irflow
from irflow.errors import LoadError
from irflow.optimizer import Adam
from irflow.optimizer import lr as L
from irflow.serialization import load, save
from tests.support.pickles import Payload, no_unpickling  # noqa: F401  (autouse)

STATE_DICT_P2 = (
    "gAJ9cQAoWAYAAAB3ZWlnaHRxAWNudW1weS5fY29yZS5tdWx0aWFycmF5Cl9yZWNvbnN0cnVjdApxAmNudW1weQpu"
    "ZGFycmF5CnEDSwCFcQRjX2NvZGVjcwplbmNvZGUKcQVYAQAAAGJxBlgGAAAAbGF0aW4xcQeGcQhScQmHcQpScQso"
    "SwFLA0sChnEMY251bXB5CmR0eXBlCnENWAIAAABmNHEOiYiHcQ9ScRAoSwNYAQAAADxxEU5OTkr/////Sv////9L"
    "AHRxEmKJaAVYGwAAAAAAAAAAAMKAPgAAAD8AAEA/AADCgD8AAMKgP3ETaAeGcRRScRV0cRZiWAQAAABiaWFzcRdo"
    "AmgDSwCFcRhoCYdxGVJxGihLAUsChXEbaBCJaAVYCgAAAAAAAD8AAMKAwr9xHGgHhnEdUnEedHEfYlgbAAAAU3Ry"
    "dWN0dXJlZFRvUGFyYW1ldGVyTmFtZUBAcSB9cSEoaAFYDAAAAGxpbmVhcl8wLndfMHEiaBdYDAAAAGxpbmVhcl8w"
    "LmJfMHEjdXUu")
STATE_DICT_P4 = (
    "gASVIQEAAAAAAAB9lCiMBndlaWdodJSMFm51bXB5Ll9jb3JlLm11bHRpYXJyYXmUjAxfcmVjb25zdHJ1Y3SUk5SM"
    "BW51bXB5lIwHbmRhcnJheZSTlEsAhZRDAWKUh5RSlChLAUsDSwKGlGgFjAVkdHlwZZSTlIwCZjSUiYiHlFKUKEsD"
    "jAE8lE5OTkr/////Sv////9LAHSUYolDGAAAAAAAAIA+AAAAPwAAQD8AAIA/AACgP5R0lGKMBGJpYXOUaARoB0sA"
    "hZRoCYeUUpQoSwFLAoWUaBGJQwgAAAA/AACAv5R0lGKMG1N0cnVjdHVyZWRUb1BhcmFtZXRlck5hbWVAQJR9lCho"
    "AYwMbGluZWFyXzAud18wlGgWjAxsaW5lYXJfMC5iXzCUdXUu")
CHECKPOINT_P2 = (
    "gAJ9cQAoWAUAAABtb2RlbHEBY2NvbGxlY3Rpb25zCk9yZGVyZWREaWN0CnECKVJxAyhYBgAAAHdlaWdodHEEY19f"
    "YnVpbHRpbl9fCnR1cGxlCnEFWAwAAABsaW5lYXJfMC53XzBxBmNudW1weS5fY29yZS5tdWx0aWFycmF5Cl9yZWNv"
    "bnN0cnVjdApxB2NudW1weQpuZGFycmF5CnEISwCFcQljX2NvZGVjcwplbmNvZGUKcQpYAQAAAGJxC1gGAAAAbGF0"
    "aW4xcQyGcQ1ScQ6HcQ9ScRAoSwFLA0sChnERY251bXB5CmR0eXBlCnESWAIAAABmNHETiYiHcRRScRUoSwNYAQAA"
    "ADxxFk5OTkr/////Sv////9LAHRxF2KJaApYGwAAAAAAAAAAAMKAPgAAAD8AAEA/AADCgD8AAMKgP3EYaAyGcRlS"
    "cRp0cRtihnEchXEdUnEeWAQAAABiaWFzcR9oBVgMAAAAbGluZWFyXzAuYl8wcSBoB2gISwCFcSFoDodxIlJxIyhL"
    "AUsChXEkaBWJaApYCgAAAAAAAD8AAMKAwr9xJWgMhnEmUnEndHEoYoZxKYVxKlJxK3VYBQAAAGVwb2NocSxLA1gE"
    "AAAAc3RlcHEtY251bXB5Ll9jb3JlLm11bHRpYXJyYXkKc2NhbGFyCnEuaBJYAgAAAGk4cS+JiIdxMFJxMShLA2gW"
    "Tk5OSv////9K/////0sAdHEyYmgKWAgAAAAHAAAAAAAAAHEzaAyGcTRScTWGcTZScTdYAwAAAHJuZ3E4aAdoCEsA"
    "hXE5aA6HcTpScTsoSwFLA4VxPGgxiWgKWBgAAAAAAAAAAAAAAAEAAAAAAAAAAgAAAAAAAABxPWgMhnE+UnE/dHFA"
    "YnUu")
CHECKPOINT_P4 = (
    "gASV1gEAAAAAAAB9lCiMBW1vZGVslIwLY29sbGVjdGlvbnOUjAtPcmRlcmVkRGljdJSTlClSlCiMBndlaWdodJSM"
    "CGJ1aWx0aW5zlIwFdHVwbGWUk5SMDGxpbmVhcl8wLndfMJSMFm51bXB5Ll9jb3JlLm11bHRpYXJyYXmUjAxfcmVj"
    "b25zdHJ1Y3SUk5SMBW51bXB5lIwHbmRhcnJheZSTlEsAhZRDAWKUh5RSlChLAUsDSwKGlGgOjAVkdHlwZZSTlIwC"
    "ZjSUiYiHlFKUKEsDjAE8lE5OTkr/////Sv////9LAHSUYolDGAAAAAAAAIA+AAAAPwAAQD8AAIA/AACgP5R0lGKG"
    "lIWUUpSMBGJpYXOUaAmMDGxpbmVhcl8wLmJfMJRoDWgQSwCFlGgSh5RSlChLAUsChZRoGolDCAAAAD8AAIC/lHSU"
    "YoaUhZRSlHWMBWVwb2NolEsDjARzdGVwlGgLjAZzY2FsYXKUk5RoF4wCaTiUiYiHlFKUKEsDaBtOTk5K/////0r/"
    "////SwB0lGJDCAcAAAAAAAAAlIaUUpSMA3JuZ5RoDWgQSwCFlGgSh5RSlChLAUsDhZRoM4lDGAAAAAAAAAAAAQAA"
    "AAAAAAACAAAAAAAAAJR0lGJ1Lg==")

WEIGHT = np.arange(6, dtype="float32").reshape(3, 2) / 4
BIAS = np.array([0.5, -1.0], dtype="float32")



class PaddleTensor:
    """Pickles as ``paddle.save`` pickles a Tensor (``reduce_varbase``)."""

    def __init__(self, name, array):
        self.name, self.array = name, np.asarray(array)

    def __reduce__(self):
        return (tuple, ((self.name, self.array),))


def paddle_state_dict(tensors: dict, **other) -> dict:
    """A state dict as ``paddle.save`` pickles it (``_build_saved_state_dict``)."""
    saved = {k: t.numpy() for k, t in tensors.items()}
    return {**saved, **other,
            "StructuredToParameterName@@": {k: t.name for k, t in tensors.items()}}


def from_bytes(data: bytes, **configs):
    return load(io.BytesIO(data), **configs)


# ---------------------------------------------------------------- files Paddle wrote

@pytest.mark.parametrize("data", [STATE_DICT_P2, STATE_DICT_P4], ids=["protocol2", "protocol4"])
def test_a_state_dict_paddle_wrote_loads_with_its_tensor_names(data):
    state = from_bytes(base64.b64decode(data))
    assert type(state) is dict and list(state) == ["weight", "bias"]  # the name table is gone
    for key, value, name in [("weight", WEIGHT, "linear_0.w_0"), ("bias", BIAS, "linear_0.b_0")]:
        t = state[key]
        assert isinstance(t, irflow.Tensor) and t.name == name and t.stop_gradient
        assert t.numpy().dtype == np.float32
        np.testing.assert_array_equal(t.numpy(), value)
    arrays = from_bytes(base64.b64decode(data), return_numpy=True)
    assert all(type(a) is np.ndarray for a in arrays.values())
    np.testing.assert_array_equal(arrays["weight"], WEIGHT)


def test_a_layer_computes_with_weights_paddle_wrote():
    fc = irflow.nn.Linear(3, 2)
    missing, unexpected = fc.set_state_dict(from_bytes(base64.b64decode(STATE_DICT_P4)))
    assert missing == [] and unexpected == []
    x = np.array([[1.0, -2.0, 0.5]], dtype="float32")
    np.testing.assert_allclose(fc(irflow.to_tensor(x)).numpy(), x @ WEIGHT + BIAS, rtol=1e-6)


@pytest.mark.parametrize("data", [CHECKPOINT_P2, CHECKPOINT_P4], ids=["protocol2", "protocol4"])
def test_a_checkpoint_paddle_wrote_loads_as_paddle_loads_it(data):
    """Its Tensors (pickled as ``(name, array)``) come back as Tensors, the state
    dict an OrderedDict as saved; its NumPy array and scalars stay NumPy, since the
    object holds Tensors."""
    ckpt = from_bytes(base64.b64decode(data))
    model = ckpt["model"]
    assert type(model).__name__ == "OrderedDict" and list(model) == ["weight", "bias"]
    assert model["weight"].name == "linear_0.w_0" and model["bias"].name == "linear_0.b_0"
    np.testing.assert_array_equal(model["weight"].numpy(), WEIGHT)
    np.testing.assert_array_equal(model["bias"].numpy(), BIAS)
    assert ckpt["epoch"] == 3 and type(ckpt["epoch"]) is int
    assert ckpt["step"] == 7 and type(ckpt["step"]) is np.int64
    assert type(ckpt["rng"]) is np.ndarray
    np.testing.assert_array_equal(ckpt["rng"], np.arange(3))


# ---------------------------------------------------------------- Paddle's layout

def test_tensors_saved_alone_or_nested_come_back_with_their_name_shape_and_dtype():
    bits = np.array([0x3F80, 0x4000], dtype=np.uint16)  # bfloat16 1.0 and 2.0, Paddle's uint16
    obj = {"scalar": PaddleTensor("s", np.float32(1.5)), "bf16": PaddleTensor("b", bits),
           "empty": [PaddleTensor("e", np.zeros((0, 3), "float32"))], "text": "x"}
    got = from_bytes(pickle.dumps(obj, protocol=4))
    assert got["scalar"].shape == [] and got["scalar"].name == "s"
    assert float(got["scalar"]) == 1.5
    assert got["bf16"].dtype == irflow.bfloat16
    np.testing.assert_array_equal(got["bf16"].astype("float32").numpy(), [1.0, 2.0])
    assert got["empty"][0].shape == [0, 3] and got["text"] == "x"
    tensor = from_bytes(pickle.dumps(PaddleTensor("w", np.eye(2)), protocol=2))
    assert tensor.name == "w" and tensor.dtype == irflow.float64


def test_arrays_of_an_object_with_no_tensor_load_as_tensors():
    """``paddle.save([array, 1])``: with no Tensor in it, ``paddle.load`` makes every
    array a Tensor (and `return_numpy` keeps them arrays); one of a dtype no irflow
    Tensor has (complex) stays an array, as in an irflow file."""
    data = pickle.dumps([np.ones(2), (np.arange(3, dtype="int32"),), 1,
                         np.array([1.5, -2.0], dtype=">f4"), np.ones(2, np.complex64)],
                        protocol=4)
    got = from_bytes(data)
    assert isinstance(got[0], irflow.Tensor) and got[0].dtype == irflow.float64
    assert isinstance(got[1], tuple) and got[1][0].dtype == irflow.int32 and got[2] == 1
    assert got[3].dtype == irflow.float32  # big-endian bytes, native values
    np.testing.assert_array_equal(got[3].numpy(), [1.5, -2.0])
    assert type(got[4]) is np.ndarray and got[4].dtype == np.complex64
    assert type(from_bytes(data, return_numpy=True)[0]) is np.ndarray


def test_arrays_paddle_split_to_pickle_them_are_joined():
    """With protocol 2 or 3 Paddle pickles an array of over 2**30 bytes as slices
    ``<key>@@.<i>`` of its flattened values, listed with its shape in
    ``UnpackBigParamInfor@@`` (``_unpack_saved_dict``); here in miniature."""
    w = np.arange(12, dtype="float32").reshape(3, 4)
    saved = {"w@@.0": w.ravel()[:5], "w@@.1": w.ravel()[5:],
             "UnpackBigParamInfor@@": {"w": {"OriginShape": (3, 4),
                                              "slices": ["w@@.0", "w@@.1"]}},
             "StructuredToParameterName@@": {"w": "linear_0.w_0"}}
    got = from_bytes(pickle.dumps(saved, protocol=2))
    assert list(got) == ["w"] and got["w"].name == "linear_0.w_0"
    np.testing.assert_array_equal(got["w"].numpy(), w)


def test_training_resumes_from_a_checkpoint_in_paddles_layout_as_if_uninterrupted():
    """Model and Adam state (moments, beta powers, the StepDecay scheduler) saved as
    ``paddle.save`` writes them, loaded into a fresh model and optimizer: the next
    steps give the losses and weights of training that never stopped."""
    rng = np.random.default_rng(0)
    x, y = (irflow.to_tensor(rng.standard_normal(s).astype("float32")) for s in ((8, 3), (8, 2)))
    init = {"weight": rng.standard_normal((3, 2)).astype("float32"),
            "bias": rng.standard_normal(2).astype("float32")}

    def make():
        with irflow.utils.unique_name.guard():
            fc = irflow.nn.Linear(3, 2)
        fc.set_state_dict(init)
        sched = L.StepDecay(0.05, step_size=2, gamma=0.5)
        return fc, Adam(learning_rate=sched, parameters=fc.parameters()), sched

    def step(fc, opt, sched):
        loss = ((fc(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        sched.step()
        return float(loss)

    full, opt, sched = make()
    uninterrupted = [step(full, opt, sched) for _ in range(6)]
    fc, opt, sched = make()
    resumed = [step(fc, opt, sched) for _ in range(3)]
    opt_state = opt.state_dict()
    tensors = {k: v for k, v in opt_state.items() if isinstance(v, irflow.Tensor)}
    model_file = pickle.dumps(paddle_state_dict(fc.state_dict()), protocol=4)
    opt_file = pickle.dumps(paddle_state_dict(tensors, LR_Scheduler=opt_state["LR_Scheduler"]),
                            protocol=2)
    fresh, opt, sched = make()
    fresh.set_state_dict(from_bytes(model_file))
    opt.set_state_dict(from_bytes(opt_file))
    resumed += [step(fresh, opt, sched) for _ in range(3)]
    assert resumed == uninterrupted
    np.testing.assert_array_equal(fresh.weight.numpy(), full.weight.numpy())
    np.testing.assert_array_equal(fresh.bias.numpy(), full.bias.numpy())


# ---------------------------------------------------------------- hostile pickles

def _numpy_global(name: bytes) -> bytes:
    return b"\x8c\x16numpy._core.multiarray\x8c" + bytes([len(name)]) + name + b"\x93"


HOSTILE = [
    ("a function of the test module", pickle.dumps({"w": Payload()}, protocol=4),
     r"is a pickle naming .*_record, which paddle.save never writes.*irflow never unpickles"),
    ("numpy.ndarray called with a huge shape",
     b"\x80\x04\x8c\x05numpy\x8c\x07ndarray\x93J\x00\x00\x00\x40\x85R.", "not callable"),
    ("numpy's _reconstruct with a huge shape",
     b"\x80\x04" + _numpy_global(b"_reconstruct") + b"\x8c\x05numpy\x8c\x07ndarray\x93"
     b"J\x00\x00\x00\x40\x85C\x01b\x87R.", "called with arguments NumPy never pickles"),
    ("an array whose shape its bytes do not fill",
     pickle.dumps(np.zeros(2, np.float32), protocol=4).replace(b"K\x02\x85", b"J\x00\x00\x00\x40\x85"),
     "buffer size does not match"),
    ("bytes announcing more than the file holds",
     b"\x80\x04\x8e" + struct.pack("<Q", 10 ** 11) + b"xx.", "expected 100000000000 bytes"),
    ("an array of Python objects", pickle.dumps(np.array([1, "a"], dtype=object), protocol=4),
     "an array of Python objects"),
    ("setting an attribute of numpy.dtype's stand-in",
     b"\x80\x04\x8c\x05numpy\x8c\x05dtype\x93N}\x8c\x08__call__K\x01s\x86b.", "read-only"),
    ("setting an attribute of _reconstruct's stand-in",
     b"\x80\x04" + _numpy_global(b"_reconstruct") + b"N}\x8c\x03fooK\x01s\x86b.", "no attribute"),
    ("a list that contains itself", b"\x80\x04]\x94(h\x00K\x01e.", "contains itself"),
    ("a truncated file", pickle.dumps({"w": np.ones(100)}, protocol=4)[:300], "expected 800 bytes"),
]


@pytest.mark.parametrize("data, match", [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE])
def test_a_pickle_paddle_save_would_not_write_is_refused_before_it_runs(data, match):
    with pytest.raises(LoadError, match=match):
        from_bytes(data)
    good = from_bytes(pickle.dumps({"w": PaddleTensor("w", np.ones(2, "float32"))}, protocol=2))
    np.testing.assert_array_equal(good["w"].numpy(), [1.0, 1.0])  # later loads unaffected


def test_a_container_shared_many_times_is_converted_once():
    """Pickle shares a container met twice; 80 levels of ``[x, x]`` name 2**80 paths
    to one array, which loading must not walk."""
    x = [np.ones(1)]
    for _ in range(80):
        x = [x, x]
    got = from_bytes(pickle.dumps(x, protocol=4))
    assert got[0] is got[1]
    leaf = got
    while isinstance(leaf, list) and len(leaf) == 2:
        leaf = leaf[0]
    assert isinstance(leaf[0], irflow.Tensor)


# ---------------------------------------------------------------- save's protocol

@pytest.mark.parametrize("protocol, match", [(1, "must be 2, 3 or 4"), (5, "must be 2, 3 or 4"),
                                             ("4", "must be an int"), (True, "must be an int")])
def test_save_checks_its_protocol_as_paddle_does(tmp_path, protocol, match):
    with pytest.raises(ValueError, match=match):
        save({"w": irflow.ones([1])}, tmp_path / "x.pd", protocol=protocol)
    for ok in (2, 3, 4):
        save({"w": irflow.ones([1])}, tmp_path / "x.pd", protocol=ok)
