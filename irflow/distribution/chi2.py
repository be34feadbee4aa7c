"""Paddle's ``paddle.distribution.Chi2``: the chi-squared distribution of `df`
degrees of freedom, a Gamma(df / 2, 1 / 2)."""
from __future__ import annotations

from .. import tensor as T
from .gamma import Gamma


class Chi2(Gamma):
    """The chi-squared distribution of `df` (a float, list or array, converted as
    Gamma converts its parameters, or a Tensor used as given); every df must be
    positive."""

    def __init__(self, df):
        if self._validate_args(df):
            self.df = df
        else:
            (self.df,) = self._to_tensor(df)
        self.rate = T.full_like(self.df, 0.5)
        if not bool((self.df > 0).all()):
            raise ValueError("The arg of `df` must be positive.")
        super().__init__(self.df * 0.5, self.rate)
