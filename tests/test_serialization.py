"""irflow.save / irflow.load: round trips of nested state, and files that must be
refused without ever being unpickled."""
import io
import json
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import irflow
from irflow.optimizer import Adam
from irflow.optimizer import lr as L
from irflow.errors import LoadError
from irflow.serialization import load, save
from tests.support.pickles import Payload, no_unpickling  # noqa: F401  (autouse)


def tensor(array, name=None):
    t = irflow.to_tensor(array)
    t.name = name
    return t


def nested():
    return {
        "model": OrderedDict([("fc.weight", tensor(np.arange(6, dtype="float32").reshape(2, 3),
                                                    "fc.w_0")),
                              ("fc.bias", tensor(np.zeros(3), "fc.b_0"))]),
        "ints": tensor(np.array([[1, 2]], dtype="int32")),
        "flags": tensor(np.array([True, False])),
        "scalar": tensor(np.float64(2.5)),
        "arrays": [np.arange(4, dtype=np.uint8), np.ones((0, 2), dtype=np.float16),
                   np.asfortranarray(np.arange(6.0).reshape(2, 3))],
        "numpy_scalar": np.float32(1.5),
        3: ("text", 7, 2.25, True, None, float("inf"), float("-inf")),
        "nan": float("nan"),
        "empty": {},
    }


def assert_same(got, want):
    assert type(got) is type(want) or (isinstance(want, irflow.Tensor) and
                                       type(got) is irflow.Tensor)
    if isinstance(want, irflow.Tensor):
        assert got.dtype == want.dtype and got.shape == want.shape and got.name == want.name
        assert got.stop_gradient
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    elif isinstance(want, np.ndarray | np.generic):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    elif isinstance(want, dict):
        assert list(got) == list(want)
        for k in want:
            assert type(k) is type(next(g for g in got if g == k))
            assert_same(got[k], want[k])
    elif isinstance(want, list | tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w)
    elif isinstance(want, float) and np.isnan(want):
        assert np.isnan(got)
    else:
        assert got == want


def as_loaded(obj: dict) -> dict:
    """`nested()` as `load` gives it back: unchanged, since it holds Tensors, so its
    NumPy arrays stay arrays (Paddle 3.3.1 makes a saved object's arrays Tensors only
    when it holds no Tensor)."""
    return obj


def test_round_trip_preserves_structure_dtypes_and_names(tmp_path):
    path = tmp_path / "state.pdparams"
    obj = nested()
    save(obj, str(path))
    assert_same(load(str(path)), as_loaded(obj))
    assert_same(load(path), as_loaded(obj))  # path-like objects too
    arrays = load(path, return_numpy=True)["arrays"]
    assert_same(arrays, obj["arrays"])


def test_parameters_come_back_as_tensors(tmp_path):
    p = irflow.Parameter(np.ones((2, 2), "float32"), name="linear_0.w_0")
    save({"weight": p}, tmp_path / "m.pdparams")
    back = load(tmp_path / "m.pdparams")["weight"]
    assert type(back) is irflow.Tensor and back.name == "linear_0.w_0" and back.stop_gradient
    assert not back.persistable


def test_return_numpy(tmp_path):
    save({"w": tensor(np.ones(3, "float32"))}, tmp_path / "a")
    back = load(tmp_path / "a", return_numpy=True)["w"]
    assert isinstance(back, np.ndarray) and back.dtype == np.float32


def test_file_objects():
    buf = io.BytesIO()
    save(nested(), buf)
    buf.seek(0)
    assert_same(load(buf), as_loaded(nested()))


def test_creates_directories_and_replaces_files(tmp_path):
    path = tmp_path / "a" / "b" / "opt.pdopt"
    save({"x": 1}, path)
    save({"x": 2}, path)
    assert load(path) == {"x": 2}
    assert os.listdir(path.parent) == ["opt.pdopt"]  # no temporary files left behind


def test_failed_save_keeps_the_old_file(tmp_path):
    path = tmp_path / "s"
    save({"x": 1}, path)
    with pytest.raises(TypeError):
        save({"x": object()}, path)
    assert load(path) == {"x": 1}
    assert os.listdir(tmp_path) == ["s"]


def test_optimizer_state_round_trip(tmp_path):
    def setup():
        w = irflow.Parameter(np.linspace(-1, 1, 6).reshape(2, 3), name="w")
        sched = L.StepDecay(0.1, 1, 0.5)
        return w, Adam(sched, parameters=[w]), sched

    w, opt, sched = setup()
    for _ in range(3):
        w.grad = np.ones((2, 3))
        opt.step()
        sched.step()
    save({"model": {"w": w}, "opt": opt.state_dict()}, tmp_path / "ckpt")
    w2, opt2, sched2 = setup()
    ckpt = load(tmp_path / "ckpt")
    w2.set_value(ckpt["model"]["w"])
    opt2.set_state_dict(ckpt["opt"])
    assert sched2.last_epoch == sched.last_epoch and opt2.get_lr() == opt.get_lr()
    for p, o in [(w, opt), (w2, opt2)]:
        p.grad = np.full((2, 3), 0.5)
        o.step()
    np.testing.assert_array_equal(w2.numpy(), w.numpy())
    for k, v in opt.state_dict().items():
        if k != "LR_Scheduler":
            np.testing.assert_array_equal(opt2.state_dict()[k].numpy(), v.numpy())


@pytest.mark.parametrize("obj, match", [
    ({"x": {1, 2}}, r"obj\['x'\] is a set"),
    ([Payload()], r"obj\[0\] is a Payload"),
    ({"a": np.array([Payload()], dtype=object)}, "Python objects"),
    ({(1, 2): 3}, "key of type tuple"),
    ({float("nan"): 3}, "key of type float"),
])
def test_unsupported_values_are_refused(obj, match, tmp_path):
    with pytest.raises(TypeError, match=match):
        save(obj, tmp_path / "x")


def test_unknown_options():
    with pytest.raises(ValueError, match="use_binary_format"):
        save({}, io.BytesIO(), use_binary_format=True)
    with pytest.raises(ValueError, match="keep_name_table"):
        load(io.BytesIO(), keep_name_table=True)


def test_missing_file(tmp_path):
    with pytest.raises(LoadError, match="no such file: .*nope"):
        load(tmp_path / "nope")


# ---------------------------------------------------------------- hostile files

def test_pickle_files_are_refused(tmp_path):
    path = tmp_path / "paddle.pdparams"
    path.write_bytes(pickle.dumps({"w": Payload()}))
    with pytest.raises(LoadError, match="is a pickle .*irflow never unpickles"):
        load(path)


def archive(members: dict) -> io.BytesIO:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    buf.seek(0)
    return buf


def npy(array, allow_pickle=False) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=allow_pickle)
    return buf.getvalue()


def manifest(root) -> str:
    return json.dumps({"format": "irflow.save", "version": 1, "root": root})


def test_object_arrays_are_never_unpickled():
    evil = np.array([Payload()], dtype=object)
    entry = {"kind": "ndarray", "array": 0, "dtype": "|O", "shape": [1]}
    f = archive({"manifest.json": manifest(entry), "arrays/0.npy": npy(evil, True)})
    with pytest.raises(LoadError, match="holds Python objects, .* irflow never unpickles"):
        load(f)


def test_a_pickle_in_place_of_an_array_is_never_unpickled():
    entry = {"kind": "tensor", "array": 0, "dtype": "<f8", "shape": []}
    f = archive({"manifest.json": manifest(entry),
                 "arrays/0.npy": pickle.dumps(Payload()) + b"\0" * 16})
    with pytest.raises(LoadError, match="arrays/0.npy is not a .npy array"):
        load(f)


@pytest.mark.parametrize("members, match", [
    ({"other.txt": "x"}, "manifest.json is missing"),
    ({"manifest.json": "{not json"}, "not valid JSON"),
    ({"manifest.json": json.dumps({"format": "something else"})}, "not a file written"),
    ({"manifest.json": json.dumps({"format": "irflow.save", "version": 99})}, "version 99"),
    ({"manifest.json": manifest({"kind": "module", "name": "os"})}, "unknown manifest entry"),
    ({"manifest.json": manifest({"kind": "dict", "keys": ["a"], "values": []})}, "malformed"),
    ({"manifest.json": manifest({"kind": "ndarray", "array": 0, "dtype": "<f8",
                                 "shape": [2]})}, "missing"),
    ({"manifest.json": manifest({"kind": "ndarray", "array": 0, "dtype": "<f8", "shape": [2]}),
      "arrays/0.npy": npy(np.ones(2, "float32"))}, "does not match"),
    ({"manifest.json": manifest({"kind": "ndarray", "array": 0, "dtype": "<f8",
                                 "shape": [10 ** 6, 10 ** 6]}),
      "arrays/0.npy": npy(np.ones(2))}, "does not match"),
    ({"manifest.json": manifest({"kind": "ndarray", "array": 0, "dtype": "<f8",
                                 "shape": [-1]}),
      "arrays/0.npy": npy(np.ones(2))}, "does not match"),
    ({"manifest.json": manifest({"kind": "tensor", "array": 0, "dtype": "<u4", "shape": [2]}),
      "arrays/0.npy": npy(np.ones(2, "uint32"))}, "does not support"),
])
def test_damaged_or_crafted_archives(members, match):
    with pytest.raises(LoadError, match=match):
        load(archive(members))


def flipped(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 1]) + data[at + 1:]


@pytest.mark.parametrize("damage, match", [
    (lambda data: data[:len(data) // 2], "damaged|truncated"),
    (lambda data: flipped(data, data.index(b"\x93NUMPY") + 130), "Bad CRC-32"),
    (lambda data: b"", "the file is empty"),
    (lambda data: b"just some text", "is not a zip archive"),
])
def test_damaged_files_are_refused_with_one_line(damage, match, tmp_path):
    path = tmp_path / "state.pdparams"
    save({"w": np.arange(64, dtype="float32")}, path)
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(LoadError, match=match) as info:
        load(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_members_must_hold_what_their_header_announces():
    entry = {"kind": "ndarray", "array": 0, "dtype": "<f8", "shape": [1000000, 1000000]}
    lying = io.BytesIO()
    np.lib.format.write_array_header_1_0(lying, {"descr": "<f8", "fortran_order": False,
                                                 "shape": (1000000, 1000000)})
    f = archive({"manifest.json": manifest(entry), "arrays/0.npy": lying.getvalue() + b"\0" * 16})
    with pytest.raises(LoadError, match="header announces 8000000000128 bytes, it holds 144"):
        load(f)


def test_compressed_members_are_refused():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("manifest.json", manifest({"kind": "ndarray", "array": 0, "dtype": "<f8",
                                              "shape": [2]}))
    buf.seek(0)
    with pytest.raises(LoadError, match="manifest.json is compressed"):
        load(buf)
