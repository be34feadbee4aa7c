"""The on-disk cache of kernels' object code, so that a second process starts fast.

An entry is keyed by a SHA-256 of everything the object code depends on: the
kernel's spec (plain data derived from the kernel's irflow IR: its body, dtypes,
layout; `repr` is exact), the source of the package that generates LLVM IR from it
(`source_fingerprint`: any edit of the backend's code makes new keys), the host CPU with
its features, the LLVM and llvmlite versions and irflow's version. So a lookup
generates no LLVM IR: for the generated GEMM, whose module is 1.3 MB of text, that
alone took 0.14 s. Entries are written to a temporary file
and renamed into place, so concurrent processes never read a partial file; each
starts with the SHA-256 of its object code, and a file that cannot be read or whose
checksum is wrong (a disk error, a truncated copy) is treated as missing: LLVM is
never handed bytes that are not object code it wrote.

The directory is ``$IRFLOW_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/irflow/llvm``
(``~/.cache/irflow/llvm``). ``IRFLOW_CACHE_DIR=""`` (or ``cache_dir=None`` where a
`Compiler` is made) disables the disk cache.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from functools import cache
from pathlib import Path

from ...version import __version__

BACKEND = Path(__file__).resolve().parent  # irflow/codegen/llvm: what turns specs into IR




@cache
def source_fingerprint() -> str:
    """A SHA-256 of the backend's Python sources (paths and bytes), read once per
    process. A spec is everything the generator reads of the program, so the
    generator's own code is all the rest of the IR depends on (hashing every
    source of irflow, 200 files, took 4-8 ms of a warm compile)."""
    digest = hashlib.sha256()
    for path in sorted(BACKEND.glob("*.py")):
        digest.update(path.name.encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def default_cache_dir() -> Path | None:
    configured = os.environ.get("IRFLOW_CACHE_DIR")
    if configured is not None:
        return Path(configured) if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "irflow" / "llvm"


class ObjectCache:
    """Object code by key in `directory` (created on first write)."""

    def __init__(self, directory: Path, target_identity: str):
        self.directory = Path(directory)
        self._salt = f"{target_identity}\nirflow {__version__}\n"

    def key(self, spec) -> str:
        """The key of `spec`'s object code (see the module docstring)."""
        text = f"{self._salt}{source_fingerprint()}\n{type(spec).__qualname__}\n{spec!r}"
        return hashlib.sha256(text.encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key[2:]}.o"

    def get(self, key: str) -> bytes | None:
        try:
            data = self._path(key).read_bytes()
        except OSError:
            return None
        digest, object_code = data[:32], data[32:]
        return object_code if hashlib.sha256(object_code).digest() == digest else None

    def put(self, key: str, object_code: bytes) -> None:
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(hashlib.sha256(object_code).digest() + object_code)
            os.replace(tmp, path)
        except OSError:  # a read-only or full disk: the cache is an optimization
            pass
