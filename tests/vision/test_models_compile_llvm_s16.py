"""DenseNet, GoogLeNet, InceptionV3 and ShuffleNetV2 compiled with the LLVM backend
equal eager in eval mode (the cases of test_models_compile_s16.py)."""
import pytest

from tests.vision.test_models_compile_s16 import CASES, check_compiled_matches_eager


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_model_matches_eager(name):
    check_compiled_matches_eager(name, "llvm")
