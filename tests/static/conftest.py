import pytest

import irflow as paddle
from irflow.context import state


@pytest.fixture
def static():
    """Static-graph mode for one test, with fresh default programs and scope; left
    after it."""
    state.default_programs = state.scope = None
    paddle.enable_static()
    try:
        yield
    finally:
        paddle.disable_static()
        state.default_programs = state.scope = None
