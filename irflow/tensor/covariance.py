"""Covariance and correlation matrices: Paddle's ``paddle.linalg.cov`` and
``corrcoef`` (and the Tensor methods), composed of reductions and a product."""
from __future__ import annotations

from ..errors import DTypeError, InputError, ShapeError
from .convert import as_tensor, cast
from .linalg import diagonal
from .manipulation import exact_shape, reshape, squeeze, transpose, unsqueeze
from .math import clip, divide, matmul, multiply, sqrt, subtract, sum
from .tensor import Tensor


def cov(x, rowvar=True, ddof=True, fweights=None, aweights=None, name=None) -> Tensor:
    """The covariance matrix of the variables in the rows of the 1-D or 2-D float x
    (its columns when `rowvar` is False), as Paddle's and NumPy's: observations
    weighted by the integer frequencies `fweights` times the float `aweights`, the
    normaliser the weight total less `ddof` (less sum(w * aweights) / total with
    aweights), clipped at 0, and the result squeezed (one variable gives a 0-D
    tensor). Paddle keeps a [1, N] x with rowvar=False as one variable, against its
    docs; here each column is a variable, as the docs and NumPy say."""
    x = _cov_input(x, "cov")
    rows = reshape(x, (1, -1)) if x.ndim == 1 else x if rowvar else transpose(x, (1, 0))
    count = exact_shape(rows)[1]
    weights = _observation_weights(fweights, aweights, rows.dtype, count)
    if weights is None:
        total = cast(as_tensor(count), rows.dtype)
        mean = divide(sum(rows, axis=1), total)
        weighted = centred = subtract(rows, unsqueeze(mean, 1))
    else:
        total = sum(weights)
        if total._value is not None and float(total._value) == 0:
            raise InputError("cov: the weights sum to zero, so the covariance cannot be "
                             "normalised (as Paddle refuses)")
        mean = divide(sum(multiply(rows, weights), axis=1), total)
        centred = subtract(rows, unsqueeze(mean, 1))
        weighted = multiply(centred, weights)
    if aweights is not None and weights is not None and ddof:
        spread = divide(sum(multiply(weights, cast(as_tensor(aweights), rows.dtype))), total)
        normaliser = subtract(total, spread)
    else:
        normaliser = subtract(total, float(ddof))
    products = matmul(centred, transpose(weighted, (1, 0)))
    return squeeze(divide(products, clip(normaliser, min=0)))


def corrcoef(x, rowvar=True, name=None) -> Tensor:
    """Pearson correlation coefficients of the variables in x's rows (columns when
    `rowvar` is False), as Paddle's and NumPy's: `cov` divided by the outer product of
    its diagonal's square roots, clipped to [-1, 1]; a single variable gives c / c
    (1, or NaN when its variance is 0 or not finite)."""
    c = cov(_cov_input(x, "corrcoef"), rowvar)
    if c.ndim == 0:
        return divide(c, c)
    spread = sqrt(diagonal(c))
    c = divide(divide(c, unsqueeze(spread, 1)), unsqueeze(spread, 0))
    return clip(c, -1, 1)


def _cov_input(x, what: str) -> Tensor:
    x = as_tensor(x)
    if x.ndim not in (1, 2):
        raise ShapeError(f"{what}: x must be 1-D or 2-D, as in Paddle, got shape "
                         f"{list(x.shape)}")
    if x.dtype.name not in ("float32", "float64"):
        raise DTypeError(f"{what}: x must be float32 or float64, as in Paddle, got "
                         f"{x.dtype.name}")
    return x


def _observation_weights(fweights, aweights, dtype, count: int):
    """The product of the frequency and analytic weights (None when neither is
    given), each checked as Paddle checks it: 1-D, one per observation, non-negative,
    and fweights whole numbers."""
    weights = None
    for given, what in ((fweights, "fweights"), (aweights, "aweights")):
        if given is None:
            continue
        given = as_tensor(given)
        if given.ndim != 1 or exact_shape(given)[0] != count:
            raise ShapeError(f"cov: {what} must be 1-D with one weight per observation "
                             f"({count}), got shape {list(given.shape)}")
        _check_weight_values(given, what)
        given = cast(given, dtype)
        weights = given if weights is None else multiply(weights, given)
    return weights


def _check_weight_values(weights: Tensor, what: str) -> None:
    values = weights._value
    if values is None or not values.size:
        return
    if values.min() < 0:
        raise InputError(f"cov: {what} must be non-negative, as in Paddle, got a minimum of "
                         f"{values.min()}")
    if what == "fweights" and (values != values.round()).any():
        raise InputError("cov: fweights must be whole numbers, as in Paddle")
