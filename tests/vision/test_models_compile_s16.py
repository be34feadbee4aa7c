"""DenseNet, GoogLeNet, InceptionV3 and ShuffleNetV2 compiled with the NumPy backend
equal eager in eval mode, on the smallest inputs they take (the LLVM backend: in
test_models_compile_llvm_s16.py, to keep each file short)."""
import numpy as np
import pytest

import irflow as paddle
from irflow.vision import models

CASES = {
    "densenet": (lambda: models.densenet121(num_classes=4), 32),
    "googlenet": (lambda: models.googlenet(num_classes=0), 96),
    "inception_v3": (lambda: models.inception_v3(num_classes=4), 75),
    "shufflenet_v2_swish": (lambda: models.shufflenet_v2_swish(num_classes=4), 32),
}


def check_compiled_matches_eager(name, backend):
    make, size = CASES[name]
    model = make()
    model.eval()
    x = paddle.randn([1, 3, size, size])
    eager = model(x)
    compiled = paddle.compile(model, backend=backend)(x)
    eager = eager if isinstance(eager, tuple) else (eager,)
    compiled = compiled if isinstance(compiled, tuple) else (compiled,)
    for got, want in zip(compiled, eager):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_model_matches_eager(name):
    check_compiled_matches_eager(name, "numpy")
