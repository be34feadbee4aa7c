"""Programs compiled for ``None`` dims give, for every size, what eager code gives, or
raise an error naming the user's line: split sections that must add up to a
symbolic dim, a -1 section left empty, slices reaching outside an axis while
gradients are recorded, reshapes of empty batches, and Python code over x.shape
(unbind, unstack, max, floor division)."""
import numpy as np
import pytest

import irflow as paddle
from irflow.errors import InputError, ShapeError, SymbolicShapeError
from irflow.static import InputSpec

ROWS = [InputSpec([None, 4])]


def rows(n, seed=0):
    return paddle.to_tensor(np.random.default_rng(seed).standard_normal((n, 4))
                            .astype(np.float32))


def shapes(parts):
    return [list(t.shape) for t in parts]


# ---------------------------------------------------------------- split

def split_one_and_two(x):
    return paddle.split(x, [1, 2], 0)


def test_split_sections_fix_a_symbolic_dim_to_their_sum():
    """Sections [1, 2] of a dim of 5 rows are refused eagerly; the program must not
    return the first 3 rows and drop the others."""
    compiled = paddle.jit.to_static(split_one_and_two, input_spec=ROWS)
    x = rows(3)
    for got, want in zip(compiled(x), split_one_and_two(x)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    with pytest.raises(ShapeError, match="add up to 3"):
        split_one_and_two(rows(5))
    with pytest.raises(InputError, match="needs 3 there"):
        compiled(rows(5))


def split_first_row(x):
    return paddle.split(x, [1, -1], 0)


def test_split_rest_section_left_empty_raises_when_the_program_runs():
    compiled = paddle.jit.to_static(split_first_row, input_spec=ROWS)
    for n in (2, 4):
        x = rows(n)
        assert shapes(compiled(x)) == shapes(split_first_row(x)) == [[1, 4], [n - 1, 4]]
    with pytest.raises(ShapeError, match="leaves nothing"):
        split_first_row(rows(1))
    with pytest.raises(ShapeError, match="leaves nothing for the -1"):
        compiled(rows(1))


# ---------------------------------------------------------------- slices

def inner_rows(x):
    return x[1:-1]


def test_slice_outside_a_symbolic_axis_names_the_slice_when_gradients_are_recorded():
    compiled = paddle.jit.to_static(inner_rows, input_spec=ROWS)
    x = rows(1)
    x.stop_gradient = False
    with pytest.raises(ShapeError, match="slice 1:-1 of axis 0 reaches outside") as e:
        compiled(x)
    assert e.value.loc is not None and e.value.loc.file == __file__
    x = rows(4)
    x.stop_gradient = False
    paddle.sum(compiled(x)).backward()
    np.testing.assert_array_equal(x.grad.numpy()[:, 0], [0, 1, 1, 0])


# ---------------------------------------------------------------- empty batches

def per_sample(x):
    return paddle.reshape(x, [x.shape[0], -1]), paddle.flatten(x, 1)


def test_reshape_of_an_empty_batch_keeps_the_sample_size():
    """[0, 2, 3] to [0, -1]: the -1 is 0 / 0 by element counts; it is the product of
    the non-empty dims, 6, as a program made for every batch size gives with N = 0."""
    x = paddle.zeros([0, 2, 3])
    assert shapes(per_sample(x)) == [[0, 6], [0, 6]]
    compiled = paddle.jit.to_static(per_sample, input_spec=[InputSpec([None, 2, 3])])
    assert shapes(compiled(x)) == [[0, 6], [0, 6]]
    assert list(paddle.reshape(paddle.zeros([2, 0, 3]), [-1, 0]).shape) == [6, 0]


# ---------------------------------------------------------------- Python over x.shape

def test_unbind_of_a_symbolic_axis_says_what_to_write_instead():
    compiled = paddle.jit.to_static(lambda x: paddle.unbind(x, 0), input_spec=ROWS)
    with pytest.raises(SymbolicShapeError, match=r"unbind: axis 0 has the size N.*range"):
        compiled(rows(2))


def three_rows(x):
    return paddle.unstack(x, 0, num=3)


def test_unstack_with_num_fixes_a_symbolic_axis_to_it():
    compiled = paddle.jit.to_static(three_rows, input_spec=ROWS)
    x = rows(3)
    for got, want in zip(compiled(x), three_rows(x)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    with pytest.raises(InputError, match="needs 3 there"):
        compiled(rows(2))


def halves(x):
    return paddle.reshape(x, [x.shape[0] // 2, -1])


def test_reshape_by_floor_division_of_a_symbolic_size_says_why_it_is_refused():
    compiled = paddle.jit.to_static(halves, input_spec=ROWS)
    with pytest.raises(SymbolicShapeError, match=r"x.shape\[0\] // 2.*as -1"):
        compiled(rows(4))


def scaled_by_extremes(x):
    return x * max(x.shape) - min([x.shape[0], 3, x.shape[1]])


@pytest.mark.parametrize("shape", [[1, 4], [5, 2], [3, 3], [0, 7]])
def test_max_and_min_of_a_list_of_symbolic_sizes(shape):
    compiled = paddle.jit.to_static(scaled_by_extremes, input_spec=[InputSpec([None, None])])
    x = paddle.to_tensor(np.arange(np.prod(shape), dtype=np.float32).reshape(shape))
    want = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) * max(shape) \
        - min(shape[0], 3, shape[1])
    np.testing.assert_array_equal(compiled(x).numpy(), want)


def _guarded_middle(x):
    if x.shape[0] > 2:
        y = x[1:-1] * 2
    else:
        y = x
    return y


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_gradient_through_a_branch_sized_for_other_calls(backend):
    """The branch under ``if x.shape[0] > 2`` is sized N-2, negative for one row; the
    backward plan checked every buffer's size before running, that branch's too,
    and raised at N=1 ("which has the negative size"), though the branch never runs."""
    compiled = paddle.jit.to_static(_guarded_middle, input_spec=[InputSpec([None, 4])],
                                    backend=backend)
    for rows in (1, 3, 2, 5, 1):
        data = np.arange(rows * 4, dtype=np.float32).reshape(rows, 4)
        x, eager_x = (paddle.to_tensor(data, stop_gradient=False) for _ in range(2))
        (compiled(x) ** 2).sum().backward()
        (_guarded_middle(eager_x) ** 2).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), eager_x.grad.numpy())


def test_transposed_conv_of_symbolic_spatial_sizes_is_refused_by_name():
    """conv2d refuses spatial sizes known only at run time; its transpose failed with
    TypeError ("unsupported operand type(s) for -: 'str' and 'int')."""
    layer = paddle.nn.Conv2DTranspose(2, 3, 3)
    compiled = paddle.jit.to_static(layer, input_spec=[InputSpec([None, 2, None, None])])
    with pytest.raises(SymbolicShapeError, match="conv2d_transpose: x must have static"):
        compiled(paddle.ones([1, 2, 5, 5]))


def _numpy_product_of_shape(x):
    return x.reshape([int(np.prod(x.shape))])


def test_an_error_raised_inside_numpy_names_the_users_line():
    """np.prod of a symbolic shape fails inside NumPy's code, which called the size's
    conversion: the error named a line of NumPy's fromnumeric.py, not the user's."""
    from irflow.errors import ConversionError
    compiled = paddle.jit.to_static(_numpy_product_of_shape, input_spec=[InputSpec([None, 3])])
    with pytest.raises(ConversionError) as raised:
        compiled(paddle.ones([2, 3]))
    assert raised.value.loc.file == __file__


def _doubled_if_three_rows(x):
    if x.shape == [3, 4]:
        return x * 2
    return x - 1


def _doubled_unless_three_rows(x):
    if x.shape != (3, 4):
        return x * 2
    return x - 1


@pytest.mark.parametrize("fn", [_doubled_if_three_rows, _doubled_unless_three_rows])
def test_comparing_a_symbolic_shape_with_a_list_branches_on_it(fn):
    """``x.shape == [3, 4]`` with a batch of None compared a traced size with 3 and
    raised the truth-value error; now it is a condition the program branches on."""
    compiled = paddle.jit.to_static(fn, input_spec=[InputSpec([None, 4])])
    for rows in (3, 2):
        x = paddle.ones([rows, 4])
        np.testing.assert_array_equal(compiled(x).numpy(), fn(x).numpy())
