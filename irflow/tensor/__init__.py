"""The Tensor and Paddle's tensor API (math, logic, manipulation, creation, random)."""
from . import methods  # noqa: F401  (attaches operators and methods to Tensor)
from .convert import cast
from .creation import (arange, assign, empty, empty_like, eye, full, full_like, linspace, ones,
                       ones_like, to_tensor, zeros, zeros_like)
from .logic import (allclose, equal, equal_all, greater_equal, greater_than, is_tensor, isfinite,
                    isinf, isnan, less_equal, less_than, logical_and, logical_not, logical_or,
                    logical_xor, not_equal, where)
from .manipulation import (broadcast_to, chunk, clone, concat, expand, expand_as, flatten, flip,
                           gather, index_select, moveaxis, put_along_axis, reshape, slice, split,
                           squeeze, stack, strided_slice, take_along_axis, tile, transpose, unbind,
                           unsqueeze)
from .math import (abs, add, all, amax, amin, any, bmm, ceil, clip, cos, divide, dot, erf, exp,
                   floor, floor_divide, log, log1p, log2, log10, logsumexp, matmul, max, maximum,
                   mean, min, minimum, mm, mod, multiply, neg, norm, outer, pow, prod, reciprocal,
                   remainder, rsqrt, scale, sigmoid, sign, sin, sqrt, square, std, subtract, sum,
                   tanh, var)
from .random import normal, rand, randint, randn, seed, standard_normal, uniform
from .search import argmax, argmin
from .tensor import Parameter, Tensor
