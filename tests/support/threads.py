"""Running code with a number of kernel threads, for the tests of kernels that split
their work."""
import contextvars

import irflow


def with_threads(n, fn, *args):
    """``fn(*args)`` with `n` threads, in a context of its own (the test's stays at 1)."""
    def run():
        irflow.set_num_threads(n)
        return fn(*args)
    return contextvars.copy_context().run(run)
