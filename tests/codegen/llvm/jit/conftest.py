"""One compiler for the JIT tests of a session, its disk cache in a temporary
directory: kernels compiled by one test are reused by the next; and what the tests
of kernels split across threads share."""
import pytest

from irflow.codegen import threads
from irflow.codegen.llvm import Compiler
from irflow.codegen.llvm import kernel as kernel_module


@pytest.fixture(scope="session")
def compiler(tmp_path_factory):
    return Compiler(cache_dir=tmp_path_factory.mktemp("llvm-cache"))


@pytest.fixture
def parts(monkeypatch):
    """Split at every size; the list of part counts of the kernel calls made."""
    monkeypatch.setattr(threads, "MIN_PART_ELEMENTS", 1)
    counts = []

    def recording(rows, elements):
        ranges = threads.row_ranges(rows, elements)
        counts.append(len(ranges))
        return ranges
    monkeypatch.setattr(kernel_module, "row_ranges", recording)
    return counts

