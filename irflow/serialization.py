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

`load` also reads the files Paddle's ``paddle.save`` writes (``.pdparams``, ``.pdopt``,
a saved tensor or nested object), so Paddle checkpoints and pretrained weights load,
but with an unpickler that resolves only the few names such a file holds (NumPy's
array and scalar constructors, ``tuple``, ``set``, ``OrderedDict``; see
`_PADDLE_GLOBALS`), each checked, so a file naming any other function is refused
before anything in it is called. Paddle cannot read irflow's files.
"""
from __future__ import annotations

import codecs
import io
import json
import math
import os
import pickle
import pickletools
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
    is checked as Paddle checks it (a pickle protocol, 2 to 4) so that code passing a
    wrong one fails here as it would there; irflow's format does not pickle."""
    if configs:
        raise ValueError(f"irflow.save does not support the options {sorted(configs)}")
    if not isinstance(protocol, int) or isinstance(protocol, bool):
        raise ValueError(f"irflow.save: protocol must be an int, got "
                         f"{type(protocol).__name__}")
    if not 2 <= protocol <= 4:
        raise ValueError(f"irflow.save: protocol must be 2, 3 or 4 (as in Paddle), got "
                         f"{protocol}")
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
    """Load an object saved by `irflow.save` or by Paddle's ``paddle.save``. Options:
    ``return_numpy=True`` gives tensors back as NumPy arrays. A missing, damaged or
    foreign file (a pickle naming anything ``paddle.save`` does not write among them)
    raises `LoadError`."""
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
    head = file.read(1)
    file.seek(0)
    if head == b"\x80":
        return _load_paddle(file.read(), f"irflow.load: {source}", return_numpy)
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


# ---------------------------------------------------------------- Paddle's pickles

_PADDLE_NAMES = "StructuredToParameterName@@"
_PADDLE_BIG = "UnpackBigParamInfor@@"  # typos: disable-line (Paddle's spelling)
_NUMPY_RECONSTRUCT = np.ndarray(0).__reduce__()[0]
_NUMPY_SCALAR = np.float32(0).__reduce__()[0]


_NDARRAY = object()  # what ``numpy.ndarray`` names: see `_Reconstruct`


class _Checked:
    """A function a Paddle pickle may call, which checks its arguments. Its instances
    have no attributes, so that a file's BUILD opcode (``setattr``) cannot change
    how later loads behave."""
    __slots__ = ()

    def fail(self, message: str) -> pickle.UnpicklingError:
        return pickle.UnpicklingError(f"{type(self).__name__[1:]}: {message}")


class _Reconstruct(_Checked):
    """NumPy's ``_reconstruct`` as pickled arrays call it: an empty array that BUILD
    then fills from the file's bytes (NumPy checks their number against the shape).
    ``numpy.ndarray`` itself is a marker allowed only here, so a file cannot have an
    array of a size it chooses allocated (``numpy.ndarray(shape)``)."""
    __slots__ = ()

    def __call__(self, subtype, shape, typecode):
        if subtype is not _NDARRAY or shape != (0,):
            raise self.fail("called with arguments NumPy never pickles")
        return _NUMPY_RECONSTRUCT(np.ndarray, shape, typecode)


class _Dtype(_Checked):
    __slots__ = ()

    def __call__(self, spec, align=False, copy=False):
        if not isinstance(spec, str):
            raise self.fail(f"called with a {type(spec).__name__}")
        return np.dtype(spec, bool(align), bool(copy))


class _Scalar(_Checked):
    """A NumPy scalar from its dtype and bytes; never of an object dtype, whose
    "bytes" would be any object."""
    __slots__ = ()

    def __call__(self, dtype, data):
        if not isinstance(dtype, np.dtype) or dtype.hasobject or not isinstance(data, bytes):
            raise self.fail("not a NumPy scalar of a plain dtype")
        return _NUMPY_SCALAR(dtype, data)


class _Encode(_Checked):
    """``_codecs.encode`` as pickle protocol 2 writes bytes: latin-1 text to bytes."""
    __slots__ = ()

    def __call__(self, text, encoding):
        if not isinstance(text, str) or encoding != "latin1":
            raise self.fail("called other than as pickle does for bytes")
        return codecs.encode(text, "latin1")


class _EmptyBytes(_Checked):
    """``bytes()`` as pickle protocol 2 writes ``b""`` (``bytes(n)`` would allocate
    what the file chooses)."""
    __slots__ = ()

    def __call__(self):
        return b""


_PADDLE_GLOBALS = {
    **{(module, name): value for module in ("numpy.core.multiarray", "numpy._core.multiarray")
       for name, value in (("_reconstruct", _Reconstruct()), ("scalar", _Scalar()))},
    ("numpy", "ndarray"): _NDARRAY,
    ("numpy", "dtype"): _Dtype(),
    ("_codecs", "encode"): _Encode(),
    ("collections", "OrderedDict"): OrderedDict,
    **{(module, name): value for module in ("builtins", "__builtin__") for name, value in (
        ("tuple", tuple), ("set", set), ("frozenset", frozenset), ("complex", complex),
        ("bytes", _EmptyBytes()))},
}


class _PaddleUnpickler(pickle.Unpickler):
    """An unpickler that knows only `_PADDLE_GLOBALS`: what ``paddle.save`` writes."""

    def __init__(self, file, fail):
        super().__init__(file, encoding="latin1")
        self.fail = fail

    def find_class(self, module, name):
        found = _PADDLE_GLOBALS.get((module, name))
        if found is None:
            raise self.fail(f"the file is a pickle naming {module}.{name}, which paddle.save "
                            "never writes; irflow never unpickles anything but arrays, numbers "
                            "and containers, since other names run code from the file")
        return found

    def persistent_load(self, pid):
        raise self.fail("the file is a pickle with persistent ids, which paddle.save never "
                        "writes")


def _load_paddle(data: bytes, source: str, return_numpy: bool):
    """The object in `data`, a file ``paddle.save`` wrote (a pickle), as
    ``paddle.load`` gives it (`_PaddleLoad`). The pickle is first read through
    opcode by opcode (`pickletools.genops`, which calls nothing), which fails on a
    bytes object announcing more bytes than the file holds: Python's unpickler
    allocates a bytes object before reading it, so a small file could otherwise make
    it allocate what it chooses."""
    def fail(message: str) -> LoadError:
        return LoadError(f"{source}: {message}")

    try:
        for _ in pickletools.genops(io.BytesIO(data)):
            pass  # NumPy's arrays are bytes objects, allocated before being read
        obj = _PaddleUnpickler(io.BytesIO(data), fail).load()
    except LoadError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError, IndexError,
            AttributeError, OverflowError, MemoryError) as e:
        raise fail(f"the file is not a pickle paddle.save writes, or is damaged ({e})") \
            from None
    try:
        return _PaddleLoad(fail, return_numpy).result(obj)
    except RecursionError:
        raise fail("the object is nested too deeply") from None


class _PaddleLoad:
    """Paddle 3.3.1's ``paddle.load`` of an unpickled object. A state dict (the dict
    ``paddle.save`` writes for ``layer.state_dict()`` or ``opt.state_dict()``: arrays
    with a table of their tensor names) gives its arrays back as Tensors of those
    names; any other object has its Tensors saved as ``(name, array)`` tuples, which
    come back as Tensors, and when it has none, each of its arrays becomes a Tensor.
    ``return_numpy`` keeps arrays. Every array is checked to be of a plain dtype."""

    def __init__(self, fail, return_numpy: bool):
        self.fail = fail
        self.return_numpy = return_numpy
        self.done: dict[int, object] = {}

    def result(self, obj):
        self.check_arrays(obj)
        if isinstance(obj, dict) and _PADDLE_BIG in obj:
            self.join_big_arrays(obj)
        if isinstance(obj, dict) and isinstance(obj.get(_PADDLE_NAMES), dict):
            names = obj.pop(_PADDLE_NAMES)
            return type(obj)((k, self.tensor(v, names[k]) if k in names and
                              isinstance(v, np.ndarray) else v) for k, v in obj.items())
        tensors_as_tuples = self.holds(obj, _is_saved_tensor)
        return self.convert(obj, tensors_as_tuples)

    def check_arrays(self, obj) -> None:
        """Refuse arrays of Python objects, which no tensor is."""
        def plain(x) -> bool:
            if isinstance(x, np.ndarray) and x.dtype.hasobject:
                raise self.fail("the file holds an array of Python objects")
            return False
        self.holds(obj, plain)

    def holds(self, obj, test) -> bool:
        """Whether `test` holds for `obj` or anything in it (each container looked at
        once: a container shared many times, or holding itself, costs nothing more)."""
        pending, seen = [obj], set()
        while pending:
            x = pending.pop()
            if test(x):
                return True
            if isinstance(x, (dict, list, tuple, set, frozenset)):
                if id(x) in seen:
                    continue
                seen.add(id(x))
                pending.extend(x.values() if isinstance(x, dict) else x)
        return False

    def convert(self, obj, tensors_as_tuples: bool):
        """`obj` with each saved Tensor (a ``(name, array)`` tuple if
        `tensors_as_tuples`, else an array, unless of a dtype no Tensor has) made a
        Tensor; a container met again is the one made the first time, as pickle
        shares it."""
        if tensors_as_tuples and _is_saved_tensor(obj):
            return self.tensor(obj[1], obj[0])
        if not tensors_as_tuples and isinstance(obj, np.ndarray):
            return self.tensor(obj, None) if obj.dtype.newbyteorder("=") in _TENSOR_DTYPES \
                else obj
        if not isinstance(obj, (dict, list, tuple, set, frozenset)):
            return obj
        if id(obj) in self.done:
            if self.done[id(obj)] is None:
                raise self.fail("the object contains itself")
            return self.done[id(obj)]
        self.done[id(obj)] = None
        if isinstance(obj, dict):
            made = type(obj)((k, self.convert(v, tensors_as_tuples)) for k, v in obj.items())
        else:
            made = type(obj)(self.convert(v, tensors_as_tuples) for v in obj)
        self.done[id(obj)] = made
        return made

    def tensor(self, array: np.ndarray, name):
        """A saved tensor's array as `load` gives it: a Tensor named `name` (Paddle's
        ``bfloat16`` saved as its ``uint16`` bits comes back ``bfloat16``)."""
        if self.return_numpy:
            return array
        native = array if array.dtype.isnative else array.astype(array.dtype.newbyteorder("="))
        if native.dtype not in _TENSOR_DTYPES:
            raise self.fail(f"a tensor{f' ({name})' if name else ''} has dtype "
                            f"{array.dtype}, which irflow does not support")
        t = Tensor._from_array(native)
        if isinstance(name, str):
            t.name = name
        return t

    def join_big_arrays(self, obj: dict) -> None:
        """Put back the arrays Paddle splits into slices to pickle them with protocol 2
        or 3 (each slice under ``<key>@@.<i>``, their list and the shape in
        ``UnpackBigParamInfor@@``)."""
        try:
            for key, info in obj.pop(_PADDLE_BIG).items():
                parts = [obj.pop(part) for part in info["slices"]]
                obj[key] = np.concatenate(parts).reshape(info["OriginShape"])
        except (AttributeError, KeyError, TypeError, ValueError) as e:
            raise self.fail(f"the slices of a large array do not fit together ({e})") from None


def _is_saved_tensor(obj) -> bool:
    """Whether `obj` is a Tensor as Paddle pickles one: ``(name, array)``."""
    return isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[0], str) and \
        isinstance(obj[1], np.ndarray)
