"""paddle.utils.unique_name: the names of layers and parameters (``fc_0.w_0``), numbered
per key process-wide, and numbered from 0 again inside `guard` (how a second program
gets the first one's parameter names) or after `switch`."""
import pytest

import irflow as paddle
from irflow.static import Program, data, program_guard
from irflow.utils import unique_name


def test_generate_guard_and_switch_number_as_paddle():
    with unique_name.guard():  # names as in a fresh process
        first = [unique_name.generate("zz_key"), unique_name.generate("zz_key")]
        with unique_name.guard():
            inner = [unique_name.generate("zz_key"), paddle.nn.Linear(2, 2).weight.name]
        with unique_name.guard("A"):
            prefixed = unique_name.generate("zz_key")
        after = unique_name.generate("zz_key")
        old = unique_name.switch()
        switched = unique_name.generate("zz_key")
        unique_name.switch(*old)
        back = unique_name.generate("zz_key")
    # Paddle 3.3.1 (a fresh process): zz_key_0 zz_key_1 / zz_key_0 linear_0.w_0 / Azz_key_0 /
    # zz_key_2 / zz_key_0, switch() giving a tuple / zz_key_3
    assert first == ["zz_key_0", "zz_key_1"]
    assert inner == ["zz_key_0", "linear_0.w_0"]
    assert (prefixed, after, switched, back) == ("Azz_key_0", "zz_key_2", "zz_key_0", "zz_key_3")
    assert isinstance(old, tuple)
    with pytest.raises(TypeError, match="switch takes a UniqueNameGenerator, not str"):
        unique_name.switch("A")


@pytest.mark.usefixtures("static")
def test_programs_built_under_a_guard_each_name_their_parameters_from_0():
    names = []
    for _ in range(2):
        with unique_name.guard():
            main = Program()
            with program_guard(main, Program()):
                paddle.static.nn.fc(data("x", [-1, 2]), 3)
            names.append([p.name for p in main.all_parameters()])
    assert names == [["fc_0.w_0", "fc_0.b_0"]] * 2  # Paddle 3.3.1 (legacy IR)
