"""One compiler for the JIT tests of a session, its disk cache in a temporary
directory: kernels compiled by one test are reused by the next."""
import pytest

from irflow.codegen.llvm import Compiler


@pytest.fixture(scope="session")
def compiler(tmp_path_factory):
    return Compiler(cache_dir=tmp_path_factory.mktemp("llvm-cache"))
