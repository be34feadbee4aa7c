"""`irflow.save` / `irflow.load`: Paddle's ``paddle.save``/``paddle.load`` for state dicts,
in a format that never executes code when read.

Paddle pickles; unpickling a file runs whatever code the file names, so a model
downloaded from somewhere is a program. irflow's file is instead a zip archive
holding

- ``manifest.json``: the structure of the saved object (dicts, lists, tuples,
  strings, numbers, booleans, None) in which every array is a reference, and
- ``arrays/<k>.npy``: one NumPy ``.npy`` file per tensor or array, written and read
  with ``allow_pickle=False`` (so object arrays, which would need pickle, are refused
  both ways).

Loading gives back what was saved: Tensors (with their names, ``stop_gradient=True``,
as ``paddle.load`` gives; NumPy arrays with ``return_numpy=True``), NumPy arrays and
scalars, and the Python containers and scalars, dtypes and shapes preserved.
"""
from __future__ import annotations

import io
import json
import math
import os
import secrets
import zipfile
from collections import OrderedDict

import numpy as np

from .ir import dtypes
from .tensor.tensor import Tensor

__all__ = ["save", "load"]

FORMAT = "irflow.save"
VERSION = 1
_MANIFEST = "manifest.json"
_SCALARS = (str, int, float, bool, type(None))


class _Writer:
    """Turns an object into a JSON-able manifest tree plus the list of its arrays."""

    def __init__(self):
        self.arrays: list[np.ndarray] = []

    def encode(self, obj, where: str):
        if isinstance(obj, Tensor):
            return {"kind": "tensor", "name": obj.name,
                    **self.array(obj._concrete("irflow.save"), where)}
        if isinstance(obj, np.ndarray):
            return {"kind": "ndarray", **self.array(obj, where)}
        if isinstance(obj, np.generic):
            return {"kind": "numpy_scalar", **self.array(np.asarray(obj), where)}
        if isinstance(obj, float) and not math.isfinite(obj):
            return {"kind": "float", "value": repr(obj)}
        if isinstance(obj, _SCALARS):
            return obj
        if isinstance(obj, dict):
            for k in obj:
                if not isinstance(k, _SCALARS) or \
                        (isinstance(k, float) and not math.isfinite(k)):
                    raise TypeError(f"irflow.save: {where} has a key of type "
                                    f"{type(k).__name__}; keys must be strings, numbers, "
                                    "booleans or None")
            return {"kind": "ordered_dict" if isinstance(obj, OrderedDict) else "dict",
                    "keys": list(obj),
                    "values": [self.encode(v, f"{where}[{k!r}]") for k, v in obj.items()]}
        if isinstance(obj, (list, tuple)):
            return {"kind": "list" if isinstance(obj, list) else "tuple",
                    "items": [self.encode(v, f"{where}[{i}]") for i, v in enumerate(obj)]}
        raise TypeError(f"irflow.save: {where} is a {type(obj).__name__}; irflow saves "
                        "tensors, NumPy arrays, Python scalars and strings, and dicts, lists "
                        "and tuples of them")

    def array(self, array: np.ndarray, where: str) -> dict:
        if array.dtype.hasobject:
            raise TypeError(f"irflow.save: {where} is an array of Python objects, which "
                            "cannot be saved without pickle")
        self.arrays.append(array)
        return {"array": len(self.arrays) - 1, "dtype": array.dtype.str,
                "shape": list(array.shape)}


def save(obj, path, protocol: int = 4, **configs) -> None:
    """Save `obj` (e.g. a model's or an optimizer's ``state_dict()``) to `path` (a file
    name, whose directory is created if needed, or a binary file object). `protocol`
    is accepted for compatibility with Paddle, which pickles; irflow does not."""
    if configs:
        raise ValueError(f"irflow.save does not support the options {sorted(configs)}")
    writer = _Writer()
    manifest = {"format": FORMAT, "version": VERSION, "root": writer.encode(obj, "obj")}
    if hasattr(path, "write"):
        _write_archive(path, manifest, writer.arrays)
        return
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    # Write beside the target and rename, so that a failed save never leaves a
    # truncated file where a good one was. ("x" mode: created with the usual
    # permissions, and never over an existing file.)
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(8)}.tmp")
    try:
        with open(tmp, "xb") as f:
            _write_archive(f, manifest, writer.arrays)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _write_archive(f, manifest: dict, arrays: list[np.ndarray]) -> None:
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        archive.writestr(_MANIFEST, json.dumps(manifest, allow_nan=False))
        for i, array in enumerate(arrays):
            with archive.open(f"arrays/{i}.npy", "w", force_zip64=True) as member:
                np.save(member, array, allow_pickle=False)


class FormatError(ValueError):
    """The file is not an irflow save file, or it is damaged."""


class _Reader:
    def __init__(self, archive: zipfile.ZipFile, source: str, return_numpy: bool):
        self.archive = archive
        self.source = source
        self.return_numpy = return_numpy

    def fail(self, message: str) -> FormatError:
        return FormatError(f"irflow.load: {self.source}: {message}")

    def decode(self, node):
        if not isinstance(node, dict):
            if isinstance(node, _SCALARS):
                return node
            raise self.fail(f"unexpected manifest entry {node!r}")
        kind = node.get("kind")
        if kind in ("dict", "ordered_dict"):
            keys, values = node.get("keys"), node.get("values")
            if not isinstance(keys, list) or not isinstance(values, list) or \
                    len(keys) != len(values) or not all(isinstance(k, _SCALARS) for k in keys):
                raise self.fail("malformed dict entry in the manifest")
            pairs = zip(keys, (self.decode(v) for v in values))
            return OrderedDict(pairs) if kind == "ordered_dict" else dict(pairs)
        if kind in ("list", "tuple"):
            items = node.get("items")
            if not isinstance(items, list):
                raise self.fail("malformed list entry in the manifest")
            decoded = [self.decode(v) for v in items]
            return decoded if kind == "list" else tuple(decoded)
        if kind == "float":
            if node.get("value") not in ("nan", "inf", "-inf"):
                raise self.fail(f"malformed float entry {node!r}")
            return float(node["value"])
        if kind == "tensor":
            array = self.array(node)
            if self.return_numpy:
                return array
            if array.dtype not in [d.np for d in dtypes.ALL]:
                raise self.fail(f"a tensor has dtype {array.dtype}, which irflow does not "
                                "support")
            t = Tensor._from_array(array)
            name = node.get("name")
            t.name = name if isinstance(name, str) else None
            return t
        if kind == "ndarray":
            return self.array(node)
        if kind == "numpy_scalar":
            return self.array(node)[()]
        raise self.fail(f"unknown manifest entry kind {kind!r}")

    def array(self, node: dict) -> np.ndarray:
        index = node.get("array")
        if not isinstance(index, int) or isinstance(index, bool):
            raise self.fail(f"malformed array reference {node!r}")
        member = f"arrays/{index}.npy"
        self.check_size(member, node)
        try:
            with self.archive.open(member) as f:
                array = np.load(f, allow_pickle=False)
        except KeyError:
            raise self.fail(f"{member} is missing") from None
        except (ValueError, OSError) as e:  # e.g. an object array, which would need pickle
            raise self.fail(f"{member} cannot be read without pickle: {e}") from None
        if not isinstance(array, np.ndarray) or array.dtype.str != node.get("dtype") or \
                list(array.shape) != node.get("shape"):
            raise self.fail(f"{member} does not match the manifest (dtype "
                            f"{node.get('dtype')}, shape {node.get('shape')})")
        return array


    def check_size(self, member: str, node: dict) -> None:
        """Refuse a member smaller than the array the manifest announces, before
        allocating that array (a damaged or crafted file must not exhaust memory)."""
        shape = node.get("shape")
        try:
            itemsize = np.dtype(node.get("dtype")).itemsize
            valid = isinstance(shape, list) and all(
                isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)
        except TypeError:
            valid = False
        if not valid:
            raise self.fail(f"malformed array entry {node!r}")
        try:
            size = self.archive.getinfo(member).file_size
        except KeyError:
            raise self.fail(f"{member} is missing") from None
        if size < math.prod(shape) * itemsize:
            raise self.fail(f"{member} is too small for an array of shape {shape}")


def load(path, **configs):
    """Load an object saved by `irflow.save`. Options: ``return_numpy=True`` gives
    tensors back as NumPy arrays. Files written by Paddle (pickles) are refused: irflow
    never unpickles."""
    return_numpy = bool(configs.pop("return_numpy", False))
    if configs:
        raise ValueError(f"irflow.load does not support the options {sorted(configs)}")
    source = getattr(path, "name", None) if hasattr(path, "read") else os.fspath(path)
    source = str(source or "<file object>")
    if hasattr(path, "read"):
        path = io.BytesIO(path.read()) if not hasattr(path, "seek") else path
    elif not os.path.isfile(source):
        raise FileNotFoundError(f"irflow.load: no such file: {source}")
    if not zipfile.is_zipfile(path):
        raise FormatError(f"irflow.load: {source} is not a file written by irflow.save "
                          "(irflow never reads pickled files such as Paddle's)")
    with zipfile.ZipFile(path) as archive:
        reader = _Reader(archive, source, return_numpy)
        try:
            manifest = json.loads(archive.read(_MANIFEST))
        except KeyError:
            raise reader.fail("the archive has no manifest.json") from None
        except ValueError as e:
            raise reader.fail(f"manifest.json is not valid JSON: {e}") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise reader.fail("not a file written by irflow.save")
        if manifest.get("version") != VERSION:
            raise reader.fail(f"format version {manifest.get('version')!r} is not supported "
                              f"(this irflow reads version {VERSION})")
        return reader.decode(manifest.get("root"))
