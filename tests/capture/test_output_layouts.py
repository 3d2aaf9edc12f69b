"""Arrays a jitted function hands out have NumPy's memory layout: a result
NumPy lays out densely in another order (``a.T * 2`` is Fortran-ordered)
gets a ``relayout`` into NumPy's strides as a graph output on the cpu
pipeline (``passes/layout.py``, ``_relayout_outputs``), and a view of an
array computed in the function (``dx_pad[:, :, 1:-1, 1:-1]``, ``np.diag``)
is remade from its base, which the graph hands out (``capture/codegen.py``,
``_collect_needed``): strides, contiguity flags and ``.base`` as NumPy's,
returned or read at a graph break."""
from __future__ import annotations

import numpy as np
import pytest

from .corpus import _setting
from .helpers import assert_same_as_eager

import frame

CPU_PIPELINE = _setting() in ("cpu", "default")   # the first call runs the cpu executable


def _layout(a):
    return (a.shape, a.strides, a.flags.c_contiguous, a.flags.f_contiguous, a.flags.owndata,
            a.flags.writeable, a.base is None)


def _same_layouts(fn, *args):
    assert_same_as_eager(fn, *args, captured=None)
    native = fn(*[a.copy() for a in args])
    jitted = frame.jit(fn)(*[a.copy() for a in args])
    native = native if isinstance(native, tuple) else (native,)
    jitted = jitted if isinstance(jitted, tuple) else (jitted,)
    for i, (n, j) in enumerate(zip(native, jitted)):
        if isinstance(n, np.ndarray):
            assert _layout(j) == _layout(n), f"result {i}: {_layout(j)} (jitted) != {_layout(n)} (native)"


def ufuncs_of_transposes(a):
    return a.T * 2, np.exp(a.T), a.T + a.T, (a * 3).transpose(1, 0)[None]


def layernorm_by_transposes(x):
    t = x.T
    return ((t - t.mean(axis=0)) / t.std(axis=0)).T * 1.5


def slice_of_a_padded_array(x):
    p = np.pad(x, 1) * 2.0
    return p[1:-1, 1:-1]


def diag_and_strided_views(x):
    d = x @ x.T
    return np.diag(d), d[::2, 1:], (x + 1)[:, ::-1]


def view_and_its_base(x):
    y = x * 2
    return y, y[1:]


def flags_at_a_break(x):
    y = x.T * 2
    z = (x + 1)[:, 1:]
    flags = y.flags["F_CONTIGUOUS"], z.flags["C_CONTIGUOUS"], z.strides   # (a graph break)
    return flags, y.sum(axis=0), z


@pytest.mark.skipif(not CPU_PIPELINE, reason="OpenVINO lays out its results as it computes them")
@pytest.mark.parametrize("fn", [ufuncs_of_transposes, layernorm_by_transposes, flags_at_a_break])
def test_dense_results_in_numpys_order(fn):
    _same_layouts(fn, np.arange(12.0).reshape(3, 4) / 7)


@pytest.mark.parametrize("fn", [slice_of_a_padded_array, diag_and_strided_views, view_and_its_base])
def test_views_of_computed_arrays_are_views(fn):
    _same_layouts(fn, np.arange(12.0).reshape(3, 4) / 7)


def test_returned_view_shares_the_base_like_numpy():
    def fn(x):
        y = x * 2
        v = y[1:]
        return v

    for f in (fn, frame.jit(fn)):
        v = f(np.arange(4.0))
        assert v.base is not None and v.base.shape == (4,)
        v.base[1] = -1.0
        assert v[0] == -1.0
