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
as ``paddle.load`` gives; NumPy arrays with ``return_numpy=True``), NumPy scalars, NumPy
arrays (as Tensors when the object holds no Tensor, as Paddle loads them; see
`_Reader.loaded_array`), and the Python containers and scalars, dtypes and shapes
preserved.
"""
from __future__ import annotations

import io
import json
import math
import os
import secrets
import zipfile
import zlib
from collections import OrderedDict

import numpy as np

from .errors import LoadError
from .ir import dtypes
from .tensor.tensor import Tensor

__all__ = ["Archive", "load", "load_npy", "read_npy", "save", "write_file"]

FORMAT = "irflow.save"
VERSION = 1
_MANIFEST = "manifest.json"
_SCALARS = (str, int, float, bool, type(None))
_TENSOR_DTYPES = [d.np for d in dtypes.ALL]


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
    write_file(os.fspath(path), lambda f: _write_archive(f, manifest, writer.arrays))


def write_file(path: str, write) -> None:
    """Create `path` (and its directory) by ``write(file)``: written beside it and
    renamed, so that a failed save never leaves a truncated file where a good one was.
    ("x" mode: created with the usual permissions, and never over an existing file.)"""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(8)}.tmp")
    try:
        with open(tmp, "xb") as f:
            write(f)
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


class _Reader:
    def __init__(self, archive: "Archive", return_numpy: bool, root):
        self.archive = archive
        self.return_numpy = return_numpy
        self.arrays_as_tensors = not return_numpy and not _holds_tensor(root)

    def fail(self, message: str) -> LoadError:
        return self.archive.fail(message)

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
            if array.dtype not in _TENSOR_DTYPES:
                raise self.fail(f"a tensor has dtype {array.dtype}, which irflow does not "
                                "support")
            t = Tensor._from_array(array)
            name = node.get("name")
            t.name = name if isinstance(name, str) else None
            return t
        if kind == "ndarray":
            return self.loaded_array(self.array(node))
        if kind == "numpy_scalar":
            return self.array(node)[()]
        raise self.fail(f"unknown manifest entry kind {kind!r}")

    def loaded_array(self, array: np.ndarray):
        """A saved NumPy array as `load` gives it, by Paddle 3.3.1's rule: a Tensor (in
        native byte order, as Paddle converts it) when the saved object holds no Tensor
        anywhere (``paddle.save(np_array)``, a dict of arrays), and an array when it does
        (a checkpoint ``{"model": state_dict, "rng": array}`` keeps its array), and
        always with `return_numpy`; an array of a dtype no Tensor has (complex,
        strings) stays an array."""
        if not self.arrays_as_tensors:
            return array
        native = array if array.dtype.isnative else array.astype(array.dtype.newbyteorder("="))
        return Tensor._from_array(native) if native.dtype in _TENSOR_DTYPES else array

    def array(self, node: dict) -> np.ndarray:
        index = node.get("array")
        if not isinstance(index, int) or isinstance(index, bool):
            raise self.fail(f"malformed array reference {node!r}")
        member = f"arrays/{index}.npy"
        array = self.archive.array(member)
        if array.dtype.str != node.get("dtype") or list(array.shape) != node.get("shape"):
            raise self.fail(f"{member} does not match the manifest (dtype "
                            f"{node.get('dtype')}, shape {node.get('shape')})")
        return array


def _holds_tensor(node) -> bool:
    """Whether the manifest tree `node` has a saved Tensor in it (iteratively: a
    crafted manifest may nest deeper than the recursion limit)."""
    pending = [node]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            if node.get("kind") == "tensor":
                return True
            for key in ("values", "items"):
                if isinstance(node.get(key), list):
                    pending.extend(node[key])
    return False


class Archive:
    """A zip archive of ``.npy`` members (an `irflow.save` file, a ``.npz``), read
    defensively: whatever is damaged or crafted in it (truncation, a changed byte, a
    header announcing more data than the member holds, an object array, compression)
    is a `LoadError` naming the file, raised before anything is unpickled (nothing
    ever is) or allocated beyond the bytes the file holds."""

    def __init__(self, file, source: str):
        self.source = source
        file.seek(0, os.SEEK_END)
        self.size = file.tell()
        file.seek(0)
        if not self.size:
            raise self.fail("the file is empty")
        head = file.read(4)
        file.seek(0)
        if head[:1] == b"\x80":
            raise self.fail("the file is a pickle (such as Paddle's .pdparams); irflow never "
                            "unpickles, since that runs code from the file")
        try:
            self.zip = zipfile.ZipFile(file)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError):
            what = "is damaged (a truncated or changed zip archive)" if head == b"PK\x03\x04" \
                else "is not a zip archive"
            raise self.fail(f"the file {what}") from None

    def fail(self, message: str) -> LoadError:
        return LoadError(f"{self.source}: {message}")

    def __enter__(self) -> "Archive":
        return self

    def __exit__(self, *exc) -> None:
        self.zip.close()

    def names(self) -> list[str]:
        return self.zip.namelist()

    def read(self, member: str, limit: int) -> bytes:
        """The bytes of `member`, at most `limit` of them."""
        info = self._info(member)
        if info.file_size > limit:
            raise self.fail(f"{member} is too large ({info.file_size} bytes)")
        return self._guarded(member, lambda: self.zip.read(info))

    def array(self, member: str) -> np.ndarray:
        """The array in `member`, a ``.npy`` file."""
        info = self._info(member)
        return self._guarded(member, lambda: self._read_npy(member, info))

    def _info(self, member: str) -> zipfile.ZipInfo:
        try:
            info = self.zip.getinfo(member)
        except KeyError:
            raise self.fail(f"{member} is missing") from None
        if info.compress_type != zipfile.ZIP_STORED:
            raise self.fail(f"{member} is compressed; irflow reads the uncompressed archives "
                            "it writes")
        if info.header_offset + info.compress_size > self.size:
            raise self.fail(f"{member} is truncated")
        return info

    def _read_npy(self, member: str, info: zipfile.ZipInfo) -> np.ndarray:
        with self.zip.open(info) as f:
            return read_npy(f, info.file_size, lambda problem: self.fail(f"{member} {problem}"))

    def _guarded(self, member: str, read):
        try:
            return read()
        except LoadError:
            raise
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as e:
            raise self.fail(f"{member} is damaged ({e})") from None


def read_npy(f, size: int, fail) -> np.ndarray:
    """The array in the ``.npy`` file `f` of `size` bytes, read without pickle and only
    once its header matches `size` (so a header cannot make irflow allocate more than
    the file holds); ``fail(problem)`` makes the error for a file that is not one."""
    try:
        version = np.lib.format.read_magic(f)
    except ValueError:
        raise fail("is not a .npy array") from None
    if version not in ((1, 0), (2, 0)):
        raise fail(f"is a .npy file of version {version}, which irflow does not read")
    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) \
        else np.lib.format.read_array_header_2_0
    shape, _, dtype = read_header(f)
    if dtype.hasobject:
        raise fail("holds Python objects, which only pickle can read; irflow never unpickles")
    needed = f.tell() + math.prod(shape) * dtype.itemsize
    if size != needed:
        raise fail(f"is damaged: its header announces {needed} bytes, it holds {size}")
    f.seek(0)
    return np.lib.format.read_array(f, allow_pickle=False)


def load_npy(path: str) -> np.ndarray:
    """The array in the ``.npy`` file `path`; a `LoadError` naming it if it is missing,
    damaged or not a plain array."""
    def fail(problem: str) -> LoadError:
        return LoadError(f"{path}: {problem}")
    try:
        with open(path, "rb") as f:
            return read_npy(f, os.path.getsize(path), lambda problem: fail(f"the file {problem}"))
    except FileNotFoundError:
        raise fail("no such file") from None
    except LoadError:
        raise
    except (OSError, ValueError, EOFError) as e:
        raise fail(f"the file is damaged ({e})") from None


_MANIFEST_LIMIT = 1 << 26


def load(path, **configs):
    """Load an object saved by `irflow.save`. Options: ``return_numpy=True`` gives
    tensors back as NumPy arrays. A missing, damaged or foreign file (Paddle's pickles
    among them: irflow never unpickles) raises `LoadError`."""
    return_numpy = bool(configs.pop("return_numpy", False))
    if configs:
        raise ValueError(f"irflow.load does not support the options {sorted(configs)}")
    if hasattr(path, "read"):
        source = str(getattr(path, "name", None) or "<file object>")
        file = path if hasattr(path, "seek") else io.BytesIO(path.read())
        return _load(file, source, return_numpy)
    source = os.fspath(path)
    if not os.path.isfile(source):
        raise LoadError(f"irflow.load: no such file: {source}")
    with open(source, "rb") as file:
        return _load(file, source, return_numpy)


def _load(file, source: str, return_numpy: bool):
    with Archive(file, f"irflow.load: {source}") as archive:
        text = archive.read(_MANIFEST, _MANIFEST_LIMIT)
        try:
            manifest = json.loads(text)
        except (ValueError, RecursionError) as e:
            raise archive.fail(f"manifest.json is not valid JSON: {e}") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise archive.fail("not a file written by irflow.save")
        if manifest.get("version") != VERSION:
            raise archive.fail(f"format version {manifest.get('version')!r} is not supported "
                               f"(this irflow reads version {VERSION})")
        reader = _Reader(archive, return_numpy, manifest.get("root"))
        try:
            return reader.decode(manifest.get("root"))
        except RecursionError:
            raise reader.fail("the manifest is nested too deeply") from None
