"""Coverage corpus, NumPy math (issue 15): plain NumPy code of the kind signal
processing notebooks, finance tutorials and geometry helpers are made of --
angle conversions, sinc windows, running maxima for drawdowns, masked
statistics, outer-product tables, dtype-aware epsilons, image rotations and
in-place diagonal fills -- using ``np.deg2rad``/``np.rad2deg``, ``np.sinc``,
``np.copysign``, ``np.heaviside``, ``np.fmod``, ``np.float_power``,
``np.frexp``/``np.ldexp``, ``np.modf``, ``np.divmod``, ``ufunc.accumulate``/
``reduce``/``outer``, reductions with ``where=``/``initial=``, ``np.finfo``/
``np.result_type``, ``np.tri``/``np.logspace``/``np.geomspace``,
``np.rot90``/``np.fliplr``/``np.flipud``, ``ndarray.fill`` and
``np.fill_diagonal``.  Each function is run natively and jitted
(``corpus.Case.check``) and must be one graph with no break, except where a
break is inherent; a break frame should not have is a strict xfail.
"""
from __future__ import annotations

import numpy as np
import pytest

from .corpus import Corpus
from .helpers import array

case = Corpus()


# -- angles, waves, windows ----------------------------------------------------------------------

@case(lambda: (array((6, 2), "float64") * 50,), graphs=1)
def haversine_distance(latlon):
    lat, lon = np.deg2rad(latlon[:, 0]), np.deg2rad(latlon[:, 1])
    dlat = lat[1:] - lat[:-1]
    dlon = lon[1:] - lon[:-1]
    a = np.sin(dlat / 2) ** 2 + np.cos(lat[:-1]) * np.cos(lat[1:]) * np.sin(dlon / 2) ** 2
    return 2 * 6371.0 * np.arcsin(np.sqrt(a))


@case(lambda: (array((8,), "float64"), array((8,), "float64", seed=1)), graphs=1)
def heading_in_degrees(dx, dy):
    return np.fmod(np.rad2deg(np.arctan2(dy, dx)) + 360.0, 360.0)


@case(lambda: (array((16,), "float32"),), graphs=1)
def lowpass_sinc_filter(t):
    cutoff = 0.25
    h = 2 * cutoff * np.sinc(2 * cutoff * (t - t.mean()))
    return h / h.sum()


@case(lambda: (array((10,), "float64"),), graphs=1)
def step_response(t):
    return np.heaviside(t, 0.5) * (1 - np.exp(-np.abs(t)))


@case(lambda: (array((5, 3), "float64"),), graphs=1)
def signed_magnitudes(x):
    return np.copysign(np.sqrt(np.abs(x)), x), np.signbit(x).sum(axis=0)


@case(lambda: (array((6,), "float64", positive=True),), graphs=1)
def compound_growth(rates):
    return np.float_power(1.0 + rates / 100.0, 12) - 1.0


@case(lambda: (array((7,), "float64") * 100,), graphs=1)
def split_whole_and_fraction(x):
    frac, whole = np.modf(x)
    minutes, seconds = np.divmod(np.abs(x) * 60, 60)
    return whole, frac, minutes, seconds


@case(lambda: (array((9,), "float64") * 1000,), graphs=1)
def normalise_by_binary_exponent(x):
    mantissa, exponent = np.frexp(x)
    return np.ldexp(mantissa, exponent - exponent.max()), exponent


# -- running statistics, masked reductions -------------------------------------------------------

@case(lambda: (array((12,), "float64", positive=True) + 10,), graphs=1)
def max_drawdown(prices):
    peaks = np.maximum.accumulate(prices)
    drawdowns = (peaks - prices) / peaks
    return drawdowns.max(), np.minimum.accumulate(prices)


@case(lambda: (array((4, 6), "int64"),), graphs=1)
def running_totals(counts):
    return np.add.accumulate(counts, axis=1), np.multiply.accumulate(counts[:, :3], axis=0)


@case(lambda: (array((5, 4), "float64"),), graphs=1)
def masked_column_stats(x):
    valid = x > -1.0
    total = np.sum(x, axis=0, where=valid)
    highest = np.max(x, axis=0, where=valid, initial=-np.inf)
    return total, highest, np.logical_and.reduce(valid, axis=1)


@case(lambda: (array((5, 4), "float64"),), graphs=1)
def clipped_peak(x):
    return x.max(initial=0.0), np.min(x, axis=1, initial=1.0)


@case(lambda: (array((5, 4), "float64"),), graphs=1)
def masked_mean(x):
    return np.mean(x, where=x > 0) + x.sum()


# -- tables, dtypes, constants -------------------------------------------------------------------

@case(lambda: (array((4,), "float32"), array((3,), "float32", seed=1)), graphs=1)
def pairwise_tables(a, b):
    return np.subtract.outer(a, b), np.multiply.outer(a, b), np.less.outer(a, b)


@case(lambda: (array((6,), "float32"),), graphs=1)
def safe_log_with_machine_epsilon(x):
    eps = np.finfo(x.dtype).eps
    return np.log(np.abs(x) + eps)


@case(lambda: (array((6,), "int64"),), graphs=1)
def promote_before_dividing(x):
    dt = np.result_type(x, np.float32)
    if np.issubdtype(dt, np.floating):
        return x.astype(dt) / np.iinfo(np.int16).max
    return x


@case(lambda: (array((4, 4), "float64"),), graphs=1)
def causal_mask_and_scales(scores):
    mask = np.tri(4, dtype=bool)
    scales = np.logspace(-1, 2, 4) * np.geomspace(1, 8, 4)
    return np.where(mask, scores, -np.inf) * scales


# -- images, matrices ----------------------------------------------------------------------------

@case(lambda: (array((4, 5), "float32"),), graphs=1)
def augment_by_rotation(img):
    return np.rot90(img).sum() + np.fliplr(img)[0] + np.flipud(img)[:, 0].sum()


@case(lambda: (array((2, 4, 5), "float32"),), graphs=1)
def rotate_batch(images):
    return np.rot90(images, k=1, axes=(1, 2)) * 2.0


@case(lambda: (array((4, 4), "float64"),), graphs=1)
def ridge_regularised_gram(X):
    G = X.T @ X
    np.fill_diagonal(G, G.diagonal() + 0.1)
    return G


@case(lambda: (array((3, 5), "float64"),), graphs=1)
def reset_buffers(buf):
    buf.fill(0.0)
    buf[:, 0] = 1.0
    return buf


@case(lambda: (array((4, 4), "float64"),), graphs=1)
def prepare_contiguous_input(x):
    x = np.ascontiguousarray(x, dtype=np.float64)
    return x @ x.T


@case(lambda: (array((4, 4), "float64"),), graphs=1,
      xfail="np.ascontiguousarray of a computed array: whether NumPy copies depends on the "
            "layout NumPy gives it, which capture does not model")
def contiguous_copy(x):
    y = np.ascontiguousarray(x.T)
    return y + 1


@pytest.mark.parametrize("c", case.params())
def test_coverage_numpy_math(c):
    c.check()
