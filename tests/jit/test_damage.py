"""Every kind of damage to a saved program is a LoadError of one line that names the
file and the problem, raised at load time; nothing in the files is ever run (a pickle
payload would record itself in UNPICKLED)."""
import hashlib
import io
import json
import os
import pickle
import re
import zipfile

import numpy as np
import pytest

import irflow as paddle
import irflow.nn as nn
from irflow import LoadError
from irflow.static import InputSpec
from tests.support.pickles import Payload, no_unpickling  # noqa: F401  (autouse)

@pytest.fixture
def path(tmp_path):
    net = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    net.eval()
    prefix = str(tmp_path / "net")
    paddle.jit.save(net, prefix, input_spec=[InputSpec([None, 4], name="x")])
    return prefix


def read(prefix, suffix) -> bytes:
    with open(prefix + suffix, "rb") as f:
        return f.read()


def write(prefix, suffix, data: bytes, sign: bool = False) -> None:
    """Replace a file; with `sign`, update its size and checksum in the metadata too,
    as someone crafting the files would."""
    with open(prefix + suffix, "wb") as f:
        f.write(data)
    if sign:
        role = {".irflow": "program", ".pdiparams.npz": "parameters"}[suffix]
        meta = json.loads(read(prefix, ".json"))
        meta["files"][role] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        write(prefix, ".json", json.dumps(meta).encode())


def metadata(prefix, **changes) -> None:
    meta = json.loads(read(prefix, ".json"))
    meta.update(changes)
    write(prefix, ".json", json.dumps(meta).encode())


def npz(**arrays) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for name, a in arrays.items():
            member = io.BytesIO()
            np.save(member, a, allow_pickle=True)
            z.writestr(f"{name}.npy", member.getvalue())
    return buffer.getvalue()


DAMAGE = [
    ("no files at all", lambda p: [os.remove(p + s) for s in (".json", ".irflow",
                                                               ".pdiparams.npz")],
     "", r"no saved program there \(jit.save writes net.json, net.irflow, "
              r"net.pdiparams.npz\)"),
    ("a missing file", lambda p: os.remove(p + ".irflow"), ".irflow", "missing"),
    ("empty metadata", lambda p: write(p, ".json", b""), ".json", "the file is empty"),
    ("truncated metadata", lambda p: write(p, ".json", read(p, ".json")[:40]), ".json",
     r"not valid JSON \(damaged or truncated\?\)"),
    ("deeply nested metadata", lambda p: write(p, ".json", b"[" * 100000), ".json",
     "not valid JSON"),
    ("another format", lambda p: metadata(p, format="irflow.save"), ".json",
     "not the metadata of a program saved by irflow's jit.save"),
    ("another version", lambda p: metadata(p, version=1), ".json",
     "saved in format version 1; this irflow reads versions 2, 3"),
    ("a malformed field", lambda p: metadata(p, state=[{"name": "../x"}]), ".json",
     "malformed: the field 'state' is missing or not what jit.save writes"),
    ("truncated IR", lambda p: write(p, ".irflow", read(p, ".irflow")[:50]), ".irflow",
     r"truncated \(50 bytes; \d+ when saved\)"),
    ("empty IR", lambda p: write(p, ".irflow", b""), ".irflow", "empty"),
    ("a changed byte in the IR", lambda p: write(p, ".irflow", read(p, ".irflow").replace(
        b"relu", b"tanh")), ".irflow", "does not match its checksum in net.json"),
    ("IR that does not parse", lambda p: write(p, ".irflow", b"func @Sequential(", True),
     ".irflow", "line 1, column 18: expected a %argument"),
    ("an op that does not exist", lambda p: write(p, ".irflow", read(p, ".irflow").replace(
        b"relu", b"exec"), True), ".irflow", "exec"),
    ("IR that is not text", lambda p: write(p, ".irflow", b"\xff\xfe\x00", True), ".irflow",
     "not IR text"),
    ("a signature unlike the metadata", lambda p: write(p, ".irflow", read(p, ".irflow").replace(
        b"f32[N,4]", b"f32[N,5]").replace(b"f32[4,3]", b"f32[5,3]"), True), ".irflow",
     r"input x is f32\[N,5\] in the IR; the metadata says float32\[None, 4\]"),
    ("truncated parameters", lambda p: write(p, ".pdiparams.npz",
                                             read(p, ".pdiparams.npz")[:100]),
     ".pdiparams.npz", "truncated"),
    ("truncated parameters, signed", lambda p: write(p, ".pdiparams.npz",
                                                     read(p, ".pdiparams.npz")[:300], True),
     ".pdiparams.npz", "damaged"),
    ("a parameter of the wrong shape", lambda p: write(p, ".pdiparams.npz", npz(**{
        "0.weight": np.ones((3, 4), "float32"), "0.bias": np.ones(3, "float32")}), True),
     ".pdiparams.npz", r"'0.weight' is float32\[3, 4\], the program needs float32\[4, 3\]"),
    ("a parameter of another dtype", lambda p: write(p, ".pdiparams.npz", npz(**{
        "0.weight": np.ones((4, 3)), "0.bias": np.ones(3, "float32")}), True),
     ".pdiparams.npz", r"'0.weight' is float64\[4, 3\], the program needs float32\[4, 3\]"),
    ("a pickle payload in an object array", lambda p: write(p, ".pdiparams.npz", npz(**{
        "0.weight": np.array([Payload()], dtype=object), "0.bias": np.ones(3, "float32")}),
        True), ".pdiparams.npz", "holds Python objects, which only pickle can read"),
    ("a pickle in place of the archive", lambda p: write(p, ".pdiparams.npz",
                                                         pickle.dumps(Payload()), True),
     ".pdiparams.npz", "the file is a pickle"),
    ("a missing parameter", lambda p: write(p, ".pdiparams.npz",
                                            npz(**{"0.weight": np.ones((4, 3), "float32")}),
                                            True), ".pdiparams.npz", "0.bias.npy is missing"),
    ("an extra array", lambda p: write(p, ".pdiparams.npz", npz(**{
        "0.weight": np.ones((4, 3), "float32"), "0.bias": np.ones(3, "float32"),
        "evil": np.ones(1)}), True), ".pdiparams.npz", "holds arrays the program does not "
                                                      "use: evil.npy"),
]


@pytest.mark.parametrize("damage, file, message", [d[1:] for d in DAMAGE],
                         ids=[d[0] for d in DAMAGE])
def test_damage_is_a_one_line_load_error_naming_the_file(path, damage, file, message):
    damage(path)
    with pytest.raises(LoadError) as info:
        paddle.jit.load(path)
    text = str(info.value)
    assert "\n" not in text and text.startswith(f"jit.load: {path}{file}"), text
    assert re.search(message, text), text


def test_irflow_load_reports_damage_the_same_way(tmp_path):
    file = tmp_path / "state.pdparams"
    paddle.save({"w": paddle.ones([3])}, file)
    file.write_bytes(file.read_bytes()[:-10])
    with pytest.raises(LoadError, match=f"irflow.load: {file}: the file is damaged") as info:
        paddle.load(file)
    assert "\n" not in str(info.value)


def test_a_version_2_program_loads_unless_it_has_a_bfloat16_constant(path):
    """Version 2 wrote a bfloat16 constant as its bits, version 3 as its values: an
    older program is read, unless such a constant would be read as other values."""
    metadata(path, version=2)
    x = np.ones((2, 4), np.float32)
    assert paddle.jit.load(path)(paddle.to_tensor(x)).shape == [2, 3]
    program = read(path, ".irflow").replace(b"{\n", b"{\n  %bf = const {value=16256.0} : bf16\n",
                                            1)
    write(path, ".irflow", program, True)
    with pytest.raises(LoadError, match="wrote bfloat16 constants as their bits"):
        paddle.jit.load(path)
