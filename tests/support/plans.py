"""Plans of the LLVM backend built from IR the tests write with the builder, and
lowerings that record or leave out native runs (`irflow.codegen.llvm.sequence`)."""
from irflow.codegen import compile_plan
from irflow.codegen.llvm.lowering import LLVMLowering
from irflow.ir import Module, TensorType, function
from irflow.passes import DEFAULT_PIPELINE, PassManager


class Recording(LLVMLowering):
    """The lowering, counting the native runs it made and recording how many steps
    each call of them completed."""

    def __init__(self, compiler, min_elements=0):
        super().__init__(compiler, min_elements=min_elements)
        self.done: list[int] = []
        self.runs = 0

    def sequence(self, steps, types, owned, temporaries):
        native = super().sequence(steps, types, owned, temporaries)
        if native is None:
            return None
        self.runs += 1

        def recorded(arrays):
            self.done.append(native(arrays))
            return self.done[-1]
        return recorded


class NoRuns(LLVMLowering):
    """The lowering without native runs: the plan's steps make the same calls."""

    def sequence(self, steps, types, owned, temporaries):
        return None


def fused_module(types, body) -> Module:
    """The function ``f`` of arguments of `types` built by `body`, through the default
    pipeline and ``fuse``."""
    module = Module([function("f", types, body)])
    PassManager([*DEFAULT_PIPELINE, "fuse"], verify_each=True).run(module)
    return module


def recorded_plan(compiler, types, body, min_elements=0):
    """(the module, its plan on a `Recording` lowering, that lowering)."""
    module = fused_module(types, body)
    lowering = Recording(compiler, min_elements)
    return module, compile_plan(module.main, lowering), lowering


def f32(*shape):
    return TensorType("f32", list(shape))


def i64(*shape):
    return TensorType("i64", list(shape))
