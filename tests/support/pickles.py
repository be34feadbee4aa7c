"""A pickle payload that records being unpickled, and the fixture that fails a test
when that happens: the tests of loaders that must never run code from a file
import both (the fixture is autouse in the importing module)."""
import pytest

UNPICKLED = []


def _record():
    UNPICKLED.append(True)
    return "unpickled"


class Payload:
    """Unpickling this calls `_record`: the test fails if that ever happens."""

    def __reduce__(self):
        return (_record, ())


@pytest.fixture(autouse=True)
def no_unpickling():
    UNPICKLED.clear()
    yield
    assert not UNPICKLED, "a file was unpickled"
