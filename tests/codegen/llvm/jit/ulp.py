"""Distances in units in the last place, for accuracy assertions."""
import numpy as np


def ulp_distance(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in ulps of their dtype (as floats); NaN against NaN is 0, NaN
    against a number infinite. Signed zeros are 0 apart."""
    ints = np.int32 if got.dtype == np.float32 else np.int64
    top = np.iinfo(ints).max

    def ordinal(a):
        i = a.view(ints)
        return np.where(i < 0, -(i & top), i).astype(np.longdouble)

    with np.errstate(invalid="ignore"):
        d = np.abs(ordinal(got) - ordinal(want)).astype(np.float64)
    nan_got, nan_want = np.isnan(got), np.isnan(want)
    d[nan_got & nan_want] = 0
    d[nan_got != nan_want] = np.inf
    return d
