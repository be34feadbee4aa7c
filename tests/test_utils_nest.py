"""paddle.utils' nest functions: dict values by sorted key, namedtuples rebuilt,
and the errors Paddle raises for structures that do not match."""
from collections import namedtuple

import pytest

import irflow as paddle

Point = namedtuple("Point", "a b")


def test_flatten_visits_dict_values_by_sorted_key():
    assert paddle.utils.flatten({"b": 1, "a": [2, 3]}) == [2, 3, 1]
    assert paddle.utils.flatten(Point(1, (2, 3))) == [1, 2, 3]
    assert paddle.utils.flatten(5) == [5] and paddle.utils.flatten(None) == [None]


def test_pack_sequence_as_inverts_flatten():
    nested = {"b": 0, "a": [0, Point(0, 0)], "c": ("x",)}
    flat = list(range(5))
    packed = paddle.utils.pack_sequence_as(nested, flat)
    assert paddle.utils.flatten(packed) == flat
    assert packed == {"b": 3, "a": [0, Point(1, 2)], "c": (4,)}
    assert paddle.utils.pack_sequence_as(0, [5]) == 5
    with pytest.raises(ValueError, match="Structure had 2 elements, but flat_sequence had 1"):
        paddle.utils.pack_sequence_as([0, 0], [1])


def test_map_structure_applies_the_function_at_each_leaf():
    got = paddle.utils.map_structure(lambda x, y: x + y, {"b": 1, "a": [2, 3]},
                                     {"b": 10, "a": [20, 30]})
    assert got == {"b": 11, "a": [22, 33]}
    with pytest.raises(ValueError):
        paddle.utils.map_structure(lambda x, y: x, [1, 2], [1, [2]])


def test_assert_same_structure_and_is_sequence():
    paddle.utils.assert_same_structure([1, (2, 3)], [4, (5, 6)])
    paddle.utils.assert_same_structure([1, 2], (1, 2), check_types=False)
    with pytest.raises(TypeError, match="same sequence type"):
        paddle.utils.assert_same_structure([1, 2], (1, 2))
    with pytest.raises(ValueError, match="same nested structure"):
        paddle.utils.assert_same_structure([1, [2]], [1, 2])
    with pytest.raises(ValueError, match="same nested structure"):
        paddle.utils.assert_same_structure({"a": 1}, {"b": 1})
    assert paddle.utils.is_sequence({}) and paddle.utils.is_sequence((1,))
    assert not paddle.utils.is_sequence("ab")
