"""Sampling from distributions (multinomial, bernoulli, poisson, binomial, gamma,
log-normal, the in-place fills), the ``*_like`` random tensors, and a few creation
functions and dtype facts (logspace, tril/triu_indices, vander, ``Tensor.new_*``,
finfo, iinfo), as Paddle's.

Every draw comes from the seeded `uniform` and `normal` ops (`random.next_seed`), so
``paddle.seed`` makes them reproducible and they compile like the other random ops.
Draws are float64 and transformed in float64, then cast: a float32 draw rounded up to
1.0 would make ``log(1 - u)`` infinite. The samplers that have no closed form
(poisson, binomial, standard_gamma) are rejection samplers run as `_ROUNDS` rounds
of candidates side by side, each element keeping its first accepted candidate: with
acceptance above 0.9 a round, all rounds rejecting has probability below 1e-16."""
from __future__ import annotations

import math as _math
import numbers

import numpy as np

from ..dispatch import apply
from ..errors import OutOfRangeError, ShapeError
from ..ir import dtypes
from ..ir.types import broadcast_shapes
from .convert import as_tensor, cast, default_float_dtype, dims
from .creation import full, full_like, linspace
from .logic import less_equal, less_than, logical_and, logical_or, select
from .manipulation import (broadcast_to, exact_shape, in_place, squeeze, stack,
                           take_along_axis, unsqueeze)
from .math import abs as abs_
from .math import cumsum, exp, floor, lgamma, log, log1p, minimum, pow, sqrt, sum, tan
from .random import next_seed
from .search import argmax, argsort
from .tensor import Tensor

_ROUNDS = 16
"""Rounds of candidates in the rejection samplers (see the module docstring)."""
_INVERSION_TERMS = 48
"""Terms of the inverse-CDF samplers, used for means below `_SMALL_MEAN`: the mass
past 48 of a Poisson of mean 10 (and of a binomial of that mean) is below 1e-17."""
_SMALL_MEAN = 10.0


# ---- draws ---------------------------------------------------------------------------

def _uniform01(shape) -> Tensor:
    """float64 draws uniform in [0, 1)."""
    return apply("uniform", (next_seed(),), {"shape": tuple(shape), "dtype": dtypes.float64,
                                              "min": 0.0, "max": 1.0})


def _open_uniform(shape) -> Tensor:
    """float64 draws uniform in (0, 1], whose log is finite."""
    return 1.0 - _uniform01(shape)


def _standard_normal(shape) -> Tensor:
    return apply("normal", (next_seed(),), {"shape": tuple(shape), "dtype": dtypes.float64,
                                             "mean": 0.0, "std": 1.0})


def _float_input(what: str, x) -> Tensor:
    x = as_tensor(x)
    if not x.dtype.is_float:
        raise TypeError(f"{what}: x must be a float tensor, as in Paddle, got "
                        f"{x.dtype.name}")
    return x


def _known(x: Tensor) -> np.ndarray | None:
    """x's values where they are known now (eagerly), for argument checks."""
    return x._value if isinstance(x, Tensor) else np.asarray(x)


def _require(what: str, x, ok, expected: str) -> None:
    """Raise OutOfRangeError unless every known value of x passes `ok`."""
    values = _known(x)
    if values is None:
        return
    values = np.asarray(values, dtype=np.float64)
    bad = values[~ok(values)]
    if bad.size:
        raise OutOfRangeError(f"{what}: expected {expected}, got {bad.flat[0]}")


def _first_accepted(accepted: Tensor, candidates: Tensor) -> Tensor:
    """For each element, the candidate of the first round (axis 0) that accepted it
    (the first round's where none did)."""
    first = argmax(cast(accepted, dtypes.int32), axis=0, keepdim=True)
    return squeeze(take_along_axis(candidates, first, 0), 0)


def _with_zero_gradient(sample: Tensor, x: Tensor) -> Tensor:
    """`sample`, which a gradient reaches x through as zero: Paddle's poisson is
    differentiable, with a zero gradient, so its result requires one where x does."""
    return select(full_like(sample, True, dtypes.bool_), sample, x)


# ---- multinomial, bernoulli ----------------------------------------------------------

def multinomial(x, num_samples=1, replacement=False, name=None) -> Tensor:
    """`num_samples` category indices (int64) drawn from each row of x (1-D, or 2-D
    of rows), whose non-negative weights need not sum to 1. Without `replacement`
    each row's indices are distinct: the categories with the smallest E / w (E an
    exponential draw, w the weight), which picks them in the order of successive
    draws without replacement; with it, the inverse of the weights' running sum."""
    x = _float_input("multinomial", x)
    if x.ndim not in (1, 2):
        raise ShapeError(f"multinomial: x must be 1-D or 2-D, as in Paddle, got {x.ndim}-D")
    num_samples = int(num_samples)
    if num_samples <= 0:
        raise ValueError(f"multinomial: num_samples must be > 0, got {num_samples}")
    _check_weights(x, num_samples, replacement)
    rows = unsqueeze(x, 0) if x.ndim == 1 else x
    weights = cast(rows.detach(), dtypes.float64)
    if replacement:
        out = _categorical(weights, num_samples)
    else:
        (count, categories) = exact_shape(weights)
        race = -log(_open_uniform((count, categories))) / weights
        out = argsort(race, axis=-1)[:, :num_samples]
    return squeeze(out, 0) if x.ndim == 1 else out


def _check_weights(x: Tensor, num_samples: int, replacement: bool) -> None:
    _require("multinomial", x, lambda v: v >= 0, "weights >= 0")
    values = _known(x)
    if values is None:
        return
    rows = values.reshape(-1, values.shape[-1])
    if (rows.sum(-1) <= 0).any():
        raise ValueError("multinomial: every row of weights must have a positive sum")
    if not replacement and num_samples > (rows > 0).sum(-1).min():
        raise ValueError(f"multinomial: without replacement num_samples ({num_samples}) "
                         f"must be at most the number of non-zero weights of every row "
                         f"(at least {(rows > 0).sum(-1).min()})")


def _categorical(weights: Tensor, num_samples: int) -> Tensor:
    """Draws with replacement: index j for a point u * total in [c[j-1], c[j]), c the
    running sum, found as the count of c <= point. A point that rounds up to the
    total is capped at the last category of positive weight (the count of c < total)."""
    running = cumsum(weights, axis=-1)
    total = running[:, -1:]
    points = _uniform01((exact_shape(weights)[0], num_samples)) * total
    below = sum(cast(less_equal(unsqueeze(running, 1), unsqueeze(points, 2)), dtypes.int64),
                axis=-1)
    last = sum(cast(less_than(running, total), dtypes.int64), axis=-1, keepdim=True)
    return minimum(below, last)


def bernoulli(x, p=None, name=None) -> Tensor:
    """1 with probability x (or `p` for every element), else 0, in x's dtype and
    shape. Not differentiable."""
    x = _float_input("bernoulli", x)
    probs = x.detach() if p is None else full_like(x, p)
    _require("bernoulli", probs, lambda v: (v >= 0) & (v <= 1), "probabilities in [0, 1]")
    return _bernoulli_draw(cast(probs, dtypes.float64), exact_shape(x), x.dtype)


def _bernoulli_draw(probs: Tensor, shape, dtype) -> Tensor:
    """u < p for u uniform in [0, 1): probability p exactly, 1 for p = 1."""
    return cast(less_than(_uniform01(shape), probs), dtype)


# ---- poisson -------------------------------------------------------------------------

def poisson(x, name=None) -> Tensor:
    """A Poisson draw of rate x for each element, in x's dtype. Rates below 10 use the
    inverse CDF, larger ones Hormann's PTRS rejection sampler (as NumPy). Paddle
    differentiates it with a zero gradient; so does this."""
    x = _float_input("poisson", x)
    _require("poisson", x, lambda v: v >= 0, "rates >= 0")
    rate = cast(x.detach(), dtypes.float64)
    small = less_than(rate, _SMALL_MEAN)
    inverted = _poisson_inversion(select(small, rate, 0.0))
    rejected = _poisson_ptrs(select(small, _SMALL_MEAN, rate))
    return _with_zero_gradient(cast(select(small, inverted, rejected), x.dtype), x)


def _inverse_cdf(log_pmf: Tensor, shape) -> Tensor:
    """The count of the running sum of exp(log_pmf) (last axis: the values 0, 1, ...)
    at most a uniform draw: the inverse CDF at that draw."""
    cdf = cumsum(exp(log_pmf), axis=-1)
    draw = unsqueeze(_uniform01(shape), -1)
    return cast(sum(cast(less_equal(cdf, draw), dtypes.int64), axis=-1), dtypes.float64)


def _values() -> Tensor:
    return Tensor._from_array(np.arange(_INVERSION_TERMS, dtype=np.float64))


def _poisson_inversion(rate: Tensor) -> Tensor:
    k, lam = _values(), unsqueeze(rate, -1)
    safe = select(lam > 0, lam, 1.0)
    log_pmf = select(lam > 0, k * log(safe) - lam - lgamma(k + 1.0),
                    select(k == 0.0, 0.0, -_math.inf))
    return _inverse_cdf(log_pmf, exact_shape(rate))


def _poisson_ptrs(rate: Tensor) -> Tensor:
    """PTRS (Hormann 1993, "The transformed rejection method for generating Poisson
    random variables"), for rates of at least 10."""
    shape = (_ROUNDS,) + tuple(exact_shape(rate))
    lam = unsqueeze(rate, 0)
    slam, loglam = sqrt(lam), log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2.0)
    u, v = _uniform01(shape) - 0.5, _uniform01(shape)
    us = 0.5 - abs_(u)
    k = floor((2.0 * a / us + b) * u + lam + 0.43)
    quick = logical_and(us >= 0.07, v <= vr)
    plausible = logical_and(k >= 0, logical_or(us >= 0.013, v <= us))
    bound = log(v) + log(inv_alpha) - log(a / (us * us) + b)
    log_pmf = -lam + k * loglam - lgamma(select(k >= 0, k, 0.0) + 1.0)
    exact = logical_and(plausible, bound <= log_pmf)
    return _first_accepted(logical_or(quick, exact), k)


# ---- binomial ------------------------------------------------------------------------

def binomial(count, prob, name=None) -> Tensor:
    """The number of successes (int64) in `count` trials of success probability
    `prob`, the two broadcast together. Means below 10 (of the rarer outcome) use the
    inverse CDF, larger ones Hormann's BTRS rejection sampler."""
    count, prob = as_tensor(count), as_tensor(prob)
    if not prob.dtype.is_float:
        raise TypeError(f"binomial: prob must be a float tensor, as in Paddle, got "
                        f"{prob.dtype.name}")
    _require("binomial", count, lambda v: v >= 0, "count >= 0")
    _require("binomial", prob, lambda v: (v >= 0) & (v <= 1), "prob in [0, 1]")
    shape = broadcast_shapes(tuple(exact_shape(count)), tuple(exact_shape(prob)))
    n = broadcast_to(floor(cast(count.detach(), dtypes.float64)), shape)
    p = broadcast_to(cast(prob.detach(), dtypes.float64), shape)
    flipped = p > 0.5
    q = select(flipped, 1.0 - p, p)  # the rarer outcome's probability, at most 0.5
    small = less_than(n * q, _SMALL_MEAN)
    inverted = _binomial_inversion(select(small, n, 0.0), q)
    rejected = _binomial_btrs(select(small, 2.0 * _SMALL_MEAN, n), select(small, 0.5, q))
    rarer = select(small, inverted, rejected)
    return cast(select(flipped, n - rarer, rarer), dtypes.int64)


def _binomial_inversion(n: Tensor, q: Tensor) -> Tensor:
    k, trials, prob = _values(), unsqueeze(n, -1), unsqueeze(q, -1)
    possible = logical_and(k <= trials, prob > 0)
    kk = select(possible, k, 0.0)
    safe = select(prob > 0, prob, 0.5)
    log_pmf = (lgamma(trials + 1.0) - lgamma(kk + 1.0) - lgamma(trials - kk + 1.0)
               + kk * log(safe) + (trials - kk) * log1p(-safe))
    certain = select(k == 0.0, 0.0, -_math.inf)  # q = 0: always 0 successes
    log_pmf = select(possible, log_pmf, select(prob > 0, -_math.inf, certain))
    return minimum(_inverse_cdf(log_pmf, exact_shape(n)), n)


def _binomial_btrs(n: Tensor, q: Tensor) -> Tensor:
    """BTRS (Hormann 1993, "The generation of binomial random variates"), for q at
    most 0.5 and n * q of at least 10; the acceptance test compares log-pmfs exactly
    (by lgamma) rather than through Stirling's tails."""
    shape = (_ROUNDS,) + tuple(exact_shape(n))
    n, q = unsqueeze(n, 0), unsqueeze(q, 0)
    spq = sqrt(n * q * (1.0 - q))
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * q
    c = n * q + 0.5
    vr = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    m = floor((n + 1.0) * q)
    u, v = _uniform01(shape) - 0.5, _uniform01(shape)
    us = 0.5 - abs_(u)
    k = floor((2.0 * a / us + b) * u + c)
    quick = logical_and(us >= 0.07, v <= vr)
    inside = logical_and(k >= 0, k <= n)
    kk = select(inside, k, m)
    log_ratio = (lgamma(m + 1.0) + lgamma(n - m + 1.0) - lgamma(kk + 1.0)
                 - lgamma(n - kk + 1.0) + (kk - m) * log(q / (1.0 - q)))
    exact = logical_and(inside, log(v * alpha / (a / (us * us) + b)) <= log_ratio)
    return _first_accepted(logical_or(quick, exact), k)


# ---- gamma, log-normal ---------------------------------------------------------------

def standard_gamma(x, name=None) -> Tensor:
    """A Gamma(x, 1) draw for each element, in x's dtype: Marsaglia and Tsang's method
    for shapes of at least 1, and G(x + 1) * U ** (1 / x) below. As Paddle, the draws
    are at least the dtype's smallest normal number (x = 0 gives it), and are not
    differentiated."""
    x = _float_input("standard_gamma", x)
    _require("standard_gamma", x, lambda v: v >= 0, "shapes >= 0")
    alpha = cast(x.detach(), dtypes.float64)
    boosted = less_than(alpha, 1.0)
    log_gamma = log(_marsaglia_tsang(select(boosted, alpha + 1.0, alpha)))
    boost = log(_open_uniform(exact_shape(alpha))) / select(boosted, alpha, 1.0)
    drawn = exp(select(boosted, log_gamma + boost, log_gamma))
    tiny = float(finfo(x.dtype).tiny)
    return cast(select(drawn < tiny, tiny, drawn), x.dtype)


def _marsaglia_tsang(alpha: Tensor) -> Tensor:
    """Marsaglia and Tsang (2000), "A simple method for generating gamma variables",
    for alpha >= 1."""
    shape = (_ROUNDS,) + tuple(exact_shape(alpha))
    d = unsqueeze(alpha, 0) - 1.0 / 3.0
    c = 1.0 / sqrt(9.0 * d)
    z = _standard_normal(shape)
    cube = 1.0 + c * z
    v = cube * cube * cube
    positive = v > 0
    safe_v = select(positive, v, 1.0)
    accept = logical_and(positive, log(_open_uniform(shape)) < 0.5 * z * z + d - d * safe_v
                         + d * log(safe_v))
    return _first_accepted(accept, d * safe_v)


def log_normal(mean=1.0, std=2.0, shape=None, name=None) -> Tensor:
    """exp of a normal draw of `mean` and `std`. Tensor `mean` or `std` give per-element
    parameters, the result their broadcast shape and dtype (`shape` ignored), and a
    gradient (the draw is mean + std * z); otherwise `shape` (default [1], where
    Paddle fails on None) and the default float dtype."""
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        z = apply("normal", (next_seed(),), {"shape": dims(shape or [1]),
                                              "dtype": default_float_dtype(),
                                              "mean": float(mean), "std": float(std)})
        return exp(z)
    like = mean if isinstance(mean, Tensor) else std
    mean, std = as_tensor(mean, like=like), as_tensor(std, like=like)
    out_shape = broadcast_shapes(tuple(exact_shape(mean)), tuple(exact_shape(std)))
    z = cast(_standard_normal(out_shape), like.dtype)
    return exp(mean + std * z)


# ---- in-place fills ------------------------------------------------------------------

def _fill(x: Tensor, what: str, values: Tensor) -> Tensor:
    """x filled in place with float64 `values` (cast to x's float dtype)."""
    if not x.dtype.is_float:
        raise TypeError(f"{what}_: x must be a float tensor, as in Paddle, got {x.dtype.name}")
    return in_place(x, cast(values, x.dtype), what)


def _positive(what: str, name: str, value) -> float:
    if not value > 0:
        raise ValueError(f"{what}: {name} must be > 0, got {value}")
    return float(value)


def exponential_(x, lam=1.0, name=None, *, lambd=None) -> Tensor:
    """Fill x in place with exponential draws of rate `lam` (alias `lambd`, > 0):
    -log(U) / lam for U uniform in (0, 1]."""
    lam = _positive("exponential_", "lam", lam if lambd is None else lambd)
    return _fill(x, "exponential", -log(_open_uniform(exact_shape(x))) / lam)


def bernoulli_(x, p=0.5, name=None) -> Tensor:
    """Fill x in place with 1 (probability p, a number or a tensor broadcast to x)
    or 0."""
    probs = as_tensor(p).detach() if isinstance(p, Tensor) else float(p)
    _require("bernoulli_", probs, lambda v: (v >= 0) & (v <= 1), "probabilities in [0, 1]")
    if isinstance(probs, Tensor):
        probs = cast(probs, dtypes.float64)
    return _fill(x, "bernoulli", _bernoulli_draw(probs, exact_shape(x), dtypes.float64))


def cauchy_(x, loc=0, scale=1, name=None) -> Tensor:
    """Fill x in place with Cauchy draws: loc + scale * tan(pi * (U - 1/2))."""
    scale = _positive("cauchy_", "scale", scale)
    angle = (_uniform01(exact_shape(x)) - 0.5) * _math.pi
    return _fill(x, "cauchy", tan(angle) * scale + float(loc))


def geometric_(x, probs, name=None) -> Tensor:
    """Fill x in place with geometric draws: the number of failures before the first
    success, k = 0, 1, ... with probability (1 - p) ** k * p, as Paddle's
    distribution.Geometric samples (floor(log U / log(1 - p))). Paddle's geometric_
    leaves out the floor, so its values are not integers."""
    _require("geometric_", probs, lambda v: (v > 0) & (v <= 1), "probs in (0, 1]")
    p = cast(as_tensor(probs).detach(), dtypes.float64) if isinstance(probs, Tensor) \
        else Tensor._from_array(np.asarray(probs, np.float64))
    failures = floor(log(_open_uniform(exact_shape(x))) / log1p(-p))
    return _fill(x, "geometric", failures)


def log_normal_(x, mean=1.0, std=2.0, name=None) -> Tensor:
    """Fill x in place with exp of normal draws of `mean` and `std`."""
    return _fill(x, "log_normal", exp(_standard_normal(exact_shape(x)) * float(std)
                                      + float(mean)))


# ---- *_like --------------------------------------------------------------------------

def _like_float(what: str, x, dtype) -> dtypes.DType:
    """The float dtype (bfloat16 included, as Paddle's) of a ``*_like`` draw."""
    dtype = dtypes.dtype(dtype or as_tensor(x).dtype)
    if not (dtype.is_float or dtype is dtypes.bfloat16):
        raise TypeError(f"{what}: the dtype must be a float type, as in Paddle, got "
                        f"{dtype.name}")
    return dtype


def _requiring(t: Tensor, requires_grad: bool) -> Tensor:
    t.stop_gradient = not requires_grad
    return t


def rand_like(input, name=None, *, dtype=None, device=None,  # noqa: A002
              requires_grad=False) -> Tensor:
    """Draws uniform in [0, 1) of input's shape and (float) dtype, or `dtype`."""
    dtype = _like_float("rand_like", input, dtype)
    return _requiring(cast(_uniform01(exact_shape(as_tensor(input))), dtype), requires_grad)


def randn_like(x, dtype=None, name=None, *, device=None, requires_grad=False) -> Tensor:
    """Standard normal draws of x's shape and (float) dtype, or `dtype`."""
    dtype = _like_float("randn_like", x, dtype)
    return _requiring(cast(_standard_normal(exact_shape(as_tensor(x))), dtype), requires_grad)


def randint_like(x, low=0, high=None, dtype=None, name=None) -> Tensor:
    """Integers uniform in [low, high) (or [0, low) without `high`) of x's shape, in
    x's dtype or `dtype`."""
    x = as_tensor(x)
    if high is None:
        if low <= 0:
            raise ValueError(f"randint_like: without high, low must be > 0, got {low}")
        low, high = 0, low
    if low >= high:
        raise ValueError(f"randint_like: low must be less than high, got low={low}, "
                         f"high={high}")
    values = floor(_uniform01(exact_shape(x)) * float(high - low)) + float(low)
    return cast(values, dtype or x.dtype)


# ---- creation ------------------------------------------------------------------------

def logspace(start, stop, num, base=10.0, dtype=None, name=None) -> Tensor:
    """`num` powers of `base` whose exponents are evenly spaced from start to stop,
    computed in float64 and cast to `dtype` (default: the default float dtype; int
    dtypes truncate, as Paddle's)."""
    dtype = dtypes.dtype(dtype or default_float_dtype())
    num = int(num.item() if isinstance(num, Tensor) else num)
    if num <= 0:
        raise ValueError(f"logspace: num must be > 0, as in Paddle, got {num}")
    exponents = linspace(start, stop, num, dtype=dtypes.float64)
    base = cast(as_tensor(base), dtypes.float64) if isinstance(base, Tensor) \
        else float(base)
    return cast(pow(as_tensor(base, like=exponents), exponents), dtype)


_INDEX_DTYPES = (dtypes.int32, dtypes.int64)


def _index_dtype(what: str, dtype) -> dtypes.DType:
    dtype = dtypes.dtype(dtype)
    if dtype not in _INDEX_DTYPES:
        raise TypeError(f"{what}: dtype must be int32 or int64, as in Paddle, got "
                        f"{dtype.name}")
    return dtype


def _count(what: str, name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise TypeError(f"{what}: {name} must be a non-negative int, got {value!r}")
    return int(value)


def tril_indices(row, col, offset=0, dtype="int64") -> Tensor:
    """The [2, n] (row, column) coordinates of the lower triangle of a row x col
    matrix (on and below diagonal `offset`), in row-major order."""
    dtype = _index_dtype("tril_indices", dtype)
    rows, cols = _count("tril_indices", "row", row), _count("tril_indices", "col", col)
    return Tensor._from_array(np.stack(np.tril_indices(rows, int(offset), cols)).astype(dtype.np))


def triu_indices(row, col=None, offset=0, dtype="int64") -> Tensor:
    """The [2, n] (row, column) coordinates of the upper triangle of a row x col
    matrix (col defaults to row; on and above diagonal `offset`), in row-major order."""
    dtype = _index_dtype("triu_indices", dtype)
    rows = _count("triu_indices", "row", row)
    cols = rows if col is None else _count("triu_indices", "col", col)
    return Tensor._from_array(np.stack(np.triu_indices(rows, int(offset), cols)).astype(dtype.np))


def vander(x, n=None, increasing=False, name=None) -> Tensor:
    """The Vandermonde matrix of the 1-D x: columns x ** (n-1), ..., x ** 0 (or the
    reverse with `increasing`), n defaulting to len(x). Each power is the previous
    one times x, so the gradient is exact at x = 0 (pow's would be NaN)."""
    x = as_tensor(x)
    if x.ndim != 1:
        raise ShapeError(f"vander: x must be 1-D, as in Paddle, got {x.ndim}-D")
    n = exact_shape(x)[0] if n is None else int(n)
    if n < 0:
        raise ValueError(f"vander: n must be >= 0, got {n}")
    if n == 0:
        return full([exact_shape(x)[0], 0], 0, x.dtype)
    powers = [full_like(x, 1)]
    while len(powers) < n:
        powers.append(powers[-1] * x)
    return stack(powers if increasing else powers[::-1], axis=1)


def _new(self: Tensor, size, fill_value, dtype, requires_grad: bool) -> Tensor:
    """A tensor of `size` filled with `fill_value`, of self's dtype unless `dtype`."""
    if isinstance(size, numbers.Integral):
        size = [size]
    return _requiring(full(size, fill_value, dtype or self.dtype), requires_grad)


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False,
             pin_memory=False) -> Tensor:
    """``Tensor.new_full``: a tensor of `size` filled with `fill_value`, of this
    tensor's dtype unless `dtype` says otherwise."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _new(self, size, fill_value, dtype, requires_grad)


def _new_filled(value, what: str):
    def method(self, *size, dtype=None, device=None, requires_grad=False, pin_memory=False):
        shape = size[0] if len(size) == 1 else list(size)
        return _new(self, shape, value, dtype, requires_grad)
    method.__name__ = f"new_{what}"
    method.__doc__ = (f"``Tensor.new_{what}``: a tensor of the given size (a list, or "
                      f"the sizes as arguments) filled with {value}, of this tensor's "
                      f"dtype unless `dtype` says otherwise.")
    return method


new_zeros = _new_filled(0, "zeros")
new_ones = _new_filled(1, "ones")
new_empty = _new_filled(0, "empty")


# ---- finfo, iinfo --------------------------------------------------------------------

class finfo:  # noqa: N801  (Paddle's name)
    """Facts about a float dtype, as Paddle's ``paddle.finfo``: bits, eps, min, max,
    tiny (= smallest_normal), resolution (10 ** -decimal digits) and dtype (its
    name). bfloat16, which NumPy lacks, has 8 significand bits and float32's range."""

    def __init__(self, dtype):
        dtype = dtypes.dtype(dtype)
        if not (dtype.is_float or dtype is dtypes.bfloat16):
            raise TypeError(f"finfo: dtype must be a float type, as in Paddle, got "
                            f"{dtype.name}")
        self.dtype = dtype.name
        if dtype is dtypes.bfloat16:
            self.bits, self.eps, self.resolution = 16, 2.0 ** -7, 0.01
            self.max = float((2 - 2.0 ** -7) * 2.0 ** 127)
            self.tiny = 2.0 ** -126
        else:
            info = np.finfo(dtype.np)
            self.bits, self.eps, self.resolution = info.bits, float(info.eps), \
                10.0 ** -info.precision
            self.max, self.tiny = float(info.max), float(info.smallest_normal)
        self.min, self.smallest_normal = -self.max, self.tiny

    def __repr__(self) -> str:
        return (f"paddle.finfo(min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"resolution={self.resolution:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, bits={self.bits}, dtype={self.dtype})")


class iinfo:  # noqa: N801  (Paddle's name)
    """Facts about an integer dtype, as Paddle's ``paddle.iinfo``: bits, min, max and
    dtype (its name)."""

    def __init__(self, dtype):
        dtype = dtypes.dtype(dtype)
        if not dtype.is_int:
            raise TypeError(f"iinfo: dtype must be an integer type (int8, int16, int32, "
                            f"int64 or uint8), as in Paddle, got {dtype.name}")
        info = np.iinfo(dtype.np)
        self.bits, self.min, self.max, self.dtype = info.bits, int(info.min), \
            int(info.max), dtype.name

    def __repr__(self) -> str:
        return (f"paddle.iinfo(min={self.min}, max={self.max}, bits={self.bits}, "
                f"dtype={self.dtype})")
