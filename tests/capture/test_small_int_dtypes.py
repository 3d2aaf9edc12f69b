"""The small and unsigned integer dtypes (int8, int16, uint8, uint16, uint32,
uint64) under capture, jitted against plain NumPy: image-style programs
(normalise, clip and cast back, thresholding, histograms, a box blur),
NumPy 2's fixed-width arithmetic (wraparound, division by zero, negative of
unsigned), NEP 50 promotion between every pair of dtypes and with Python
scalars, guards on dtype, and the eager Tensor API."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import frame
from frame.dtypes import as_dtype, result_type, weak_scalar_dtype

from .helpers import CompileCounter, assert_captured, assert_same_as_eager

SMALL = ("int8", "int16", "uint8", "uint16", "uint32", "uint64")
DTYPES = ["bool", "float16", "float32", "float64", "int32", "int64", *SMALL]  # complex: fft only


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():  # NumPy's own divide-by-zero warnings, both sides
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def image(shape=(6, 8), seed=0, dtype=np.uint8):
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    return rng.integers(info.min, int(info.max) + 1, size=shape, dtype=dtype)


def ints(dtype, seed=0, shape=(3, 5)):
    """Values over a dtype's whole range, its extremes included."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    x = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    x.flat[0], x.flat[1], x.flat[2] = info.max, info.min, 0
    return x


# -- image programs ----------------------------------------------------------------------------

def normalize(img):
    return (img.astype(np.float32) / 255.0).mean()


def standardize(img):
    x = img.astype(np.float32) / 255
    return (x - x.mean(axis=(0, 1))) / (x.std(axis=(0, 1)) + 1e-6)


def to_uint8(x):
    return np.clip(x * 255, 0, 255).astype(np.uint8)


def threshold(img, level):
    return (img > level).astype(np.uint8) * 255


def histogram(img):
    counts, _ = np.histogram(img, bins=16, range=(0, 256))
    return counts


def bincount_histogram(img):
    counts = np.bincount(img.ravel(), minlength=256)
    cdf = np.cumsum(counts) / img.size
    return counts, cdf, (cdf[img] * 255).astype(np.uint8)  # histogram equalisation


def weighted_bincount(img, weights):
    return np.bincount(img.ravel(), weights=weights, minlength=256)


def box_blur(img):
    acc = img.astype(np.uint16)
    rows = acc[:-2] + acc[1:-1] + acc[2:]
    total = rows[:, :-2] + rows[:, 1:-1] + rows[:, 2:]
    return (total // 9).astype(np.uint8)


def invert_image(img):
    return 255 - img


def brighten(img, amount):
    return np.clip(img.astype(np.int16) + amount, 0, 255).astype(np.uint8)


def grayscale(rgb):
    weights = np.array([0.299, 0.587, 0.114], dtype=np.float32)
    return (rgb.astype(np.float32) @ weights).round().astype(np.uint8)


def rgb_to_bgr_crop(rgb):
    return rgb[1:-1, 2:, ::-1].copy()


@pytest.mark.parametrize("fn, args", [
    (normalize, (image(),)),
    (standardize, (image((4, 5, 3)),)),
    (to_uint8, (np.linspace(-0.2, 1.2, 24, dtype=np.float32).reshape(4, 6),)),
    (threshold, (image(), np.uint8(100))),
    (histogram, (image((16, 16)),)),
    (box_blur, (image((7, 9)),)),
    (bincount_histogram, (image((8, 8)),)),
    (weighted_bincount, (image((4, 4)), np.random.default_rng(3).random(16))),
    (invert_image, (image(),)),
    (brighten, (image(), 60)),
    (grayscale, (image((4, 5, 3)),)),
    (rgb_to_bgr_crop, (image((5, 6, 3)),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_image_programs(fn, args):
    assert_same_as_eager(fn, *args)


def test_image_pipeline_is_one_graph():
    assert_captured(normalize, image(), graphs=1)
    assert_captured(box_blur, image((7, 9)), graphs=1)
    assert_captured(to_uint8, np.linspace(-0.2, 1.2, 24, dtype=np.float32), graphs=1)
    assert_captured(histogram, image((16, 16)), graphs=1)
    assert_captured(bincount_histogram, image((8, 8)), graphs=1)


def test_bincount_of_data_dependent_length_breaks():
    fn = lambda a: np.bincount(a.ravel())  # noqa: E731  (its length is max(a) + 1)
    assert_same_as_eager(fn, image(), captured=None)
    reasons = [r.reason for r in frame.explain(fn)(image()).break_reasons]
    assert any("bincount whose length depends on the values" in r for r in reasons), reasons


# -- NumPy 2 integer semantics ---------------------------------------------------------------------

def arithmetic(a, b):
    return a + b, a - b, a * b, a // b, a % b, -a, abs(a), ~a


def bitwise(a, b):
    return a & b, a | b, a ^ b, a << 3, a >> 2


def reductions(a):
    return (np.sum(a), a.sum(axis=0), a.prod(axis=1), a.mean(), a.max(), a.min(axis=1),
            a.argmax(), a.argmin(axis=0), np.cumsum(a), np.add.reduce(a, axis=1, dtype=np.int16))


@pytest.mark.parametrize("dtype", SMALL)
def test_wraparound_arithmetic(dtype):
    a, b = ints(dtype, 1), ints(dtype, 2)
    b.flat[3] = 0  # division and modulo by zero: 0, as NumPy gives (with a warning)
    assert_same_as_eager(arithmetic, a, b)


def test_uint8_wraps_as_numpy():
    a = np.array([200, 0, 255, 3], np.uint8)
    b = np.array([100, 1, 1, 0], np.uint8)
    assert_same_as_eager(arithmetic, a, b)
    got = frame.jit(lambda x, y: x + y)(a, b)
    assert got.dtype == np.uint8 and got.tolist() == [44, 1, 0, 3]


@pytest.mark.parametrize("dtype", SMALL)
def test_bitwise_and_shifts(dtype):
    assert_same_as_eager(bitwise, ints(dtype, 3), ints(dtype, 4))


@pytest.mark.parametrize("dtype", SMALL)
def test_reductions(dtype):
    # np.sum of uint8 is uint64, of int8 int64; mean is float64
    assert_same_as_eager(reductions, ints(dtype, 5))


@pytest.mark.parametrize("src", SMALL)
@pytest.mark.parametrize("dst", ["float16", "float32", "float64", "int8", "uint8", "int16",
                                 "uint16", "int32", "int64", "uint32", "uint64", "bool"])
def test_astype_between_ints(src, dst):
    assert_same_as_eager(lambda a: a.astype(dst), ints(src, 6))


@pytest.mark.parametrize("dst", ["uint8", "int8", "uint16", "int16"])
def test_astype_from_float(dst):
    # in-range values (truncation toward zero) and, for the unsigned ones, small
    # negatives: NumPy's result on this machine, which frame's casts reproduce
    x = np.array([[0.0, 1.7, 2.5, 100.9], [-0.5, -1.0, -2.9, 127.0]], np.float32)
    assert_same_as_eager(lambda a: a.astype(dst), x)
    assert_captured(lambda a: a.astype(dst), x, graphs=1)


def test_clip_where_and_scalars():
    def fn(a):
        lo, hi = np.uint8(10), np.uint8(200)
        c = np.clip(a, lo, hi)
        return c, np.where(a > 128, a, np.uint8(0)), a + np.uint8(3), a * 2, a + 1.5, \
            np.maximum(a, 50), np.minimum(a, c)
    assert_same_as_eager(fn, image())


@pytest.mark.parametrize("dtype", ["uint8", "int8", "uint16"])
def test_clip_with_python_int_bounds_beyond_the_dtype(dtype):
    # NumPy 2: a bound beyond the dtype on its own side is no bound (captured); one on
    # the other side raises OverflowError (the jit runs it natively: the same error)
    x = ints(dtype, 9)
    assert_captured(lambda a: np.clip(a, -10, 300), x, graphs=1)
    for lo, hi in [(-10, 300), (10, 70000), (-(2 ** 40), 5), (300, 400), (-5, -1)]:
        assert_same_as_eager(lambda a: np.clip(a, lo, hi), x, captured=None)


def test_dtype_arguments_and_strings():
    def fn(a):
        z = np.zeros(a.shape, dtype=np.uint8)
        o = np.ones((2, 3), dtype="uint16")
        f = np.full((2, 2), 7, dtype=np.int8)
        return z + a, o, f, a.astype("int16"), a.astype(np.dtype("uint8")), np.arange(5, dtype=np.uint8)
    assert_same_as_eager(fn, image())


def test_uint8_index_arrays():
    def gather(x, i):
        return x[i], x[:, i], np.take(x, i, axis=0), x[i.astype(np.int64)]

    def scatter(x, i):
        y = x.copy()
        y[i] = 0
        return y

    x = np.arange(40.0, dtype=np.float32).reshape(8, 5)
    i = np.array([4, 0, 3, 3], np.uint8)
    assert_same_as_eager(gather, x, i)
    assert_same_as_eager(scatter, x, i)


def test_lookup_table():
    lut = (np.arange(256, dtype=np.float32) ** 0.5).astype(np.float32)
    assert_same_as_eager(lambda img, table: table[img], image(), lut)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16"])
def test_matmul_wraps(dtype):
    a, b = ints(dtype, 7, (3, 4)), ints(dtype, 8, (4, 2))
    assert_same_as_eager(lambda x, y: x @ y, a, b)


def test_python_int_out_of_range():
    # arithmetic raises OverflowError in NumPy 2 (the jit runs it natively: same error)
    assert_same_as_eager(lambda a: a + 300, image(), captured=None)
    assert_same_as_eager(lambda a: a - (-1), image(), captured=None)

    # comparisons with such an int compare by value, captured
    def compare(a):
        return a < -1, a == 256, a != -1, a >= -5, a <= 300, a > 2 ** 40

    assert_same_as_eager(compare, image())
    assert_same_as_eager(compare, ints("int8"))
    assert_same_as_eager(compare, ints("uint32"))
    assert_same_as_eager(compare, ints("int32"))


# -- promotion --------------------------------------------------------------------------------

def _sample(name, seed):
    if name == "bool":
        return np.array([True, False, True])
    if np.dtype(name).kind == "f":
        return np.array([0.5, -2.25, 3.0], dtype=name)
    info = np.iinfo(name)
    return np.array([info.max, 0, min(int(info.max), 5) if seed else info.min], dtype=name)


def test_result_type_matches_numpy():
    for a, b in itertools.product([as_dtype(n) for n in DTYPES + ["complex64"]], repeat=2):
        assert result_type(a, b).np == np.result_type(a.np, b.np), (a, b)
        for scalar in (1, 1.5, True):
            assert weak_scalar_dtype(a, scalar).np == np.result_type(a.np, scalar), (a, scalar)


def test_promotion_between_every_pair():
    # uint8 + int8 is int16, uint64 + int64 float64, uint32 + float16 float64, ...
    names = DTYPES

    def table(*arrays):
        return [x + y for x in arrays for y in arrays] + [x * y for x in arrays for y in arrays]

    jitted = assert_same_as_eager(table, *[_sample(n, i % 2) for i, n in enumerate(names)])
    results = jitted(*[_sample(n, i % 2) for i, n in enumerate(names)])
    k = 0
    for x in names:
        for y in names:
            assert results[k].dtype == np.result_type(np.dtype(x), np.dtype(y)), (x, y)
            k += 1


@pytest.mark.parametrize("name", [n for n in DTYPES if n != "bool"])
def test_weak_python_scalars(name):
    def fn(a):
        return a + 1, a * 2, a - True, a + 1.5, a / 2, a // 2, 3 - a, a ** 2
    assert_same_as_eager(fn, _sample(name, 1))


# -- guards ---------------------------------------------------------------------------------------

def test_guard_on_dtype_recompiles():
    counter = CompileCounter()
    counter.reset()
    jitted = frame.jit(lambda a: a + a)
    u8 = np.array([200, 100], np.uint8)
    assert jitted(u8).tolist() == [144, 200]
    assert jitted(u8.astype(np.int8)).tolist() == [-112, -56]
    assert jitted(u8.astype(np.uint16)).tolist() == [400, 200]
    assert jitted(u8).dtype == np.uint8
    assert counter.translations == 3


# -- eager Tensor API -----------------------------------------------------------------------------

def test_eager_tensor_wraps_and_promotes():
    t = frame.tensor(np.array([200, 3, 255], np.uint8))
    assert t.dtype is frame.uint8
    assert (t + t).numpy().tolist() == [144, 6, 254]
    assert (t * 2).dtype is frame.uint8
    assert (t + 1.5).dtype is frame.float64
    assert frame.sum(t).dtype is frame.uint64 and int(frame.sum(t).item()) == 458
    assert frame.mean(t).dtype is frame.float64
    assert (t + frame.tensor(np.array([1], np.int8))).dtype is frame.int16
    assert (t < -1).numpy().tolist() == [False, False, False]
    assert frame.tensor([1, 2], dtype=frame.uint8).numpy().dtype == np.uint8
    assert frame.zeros(3, dtype="int8").dtype is frame.int8
    with pytest.raises(OverflowError, match="out of bounds for uint8"):  # as NumPy 2
        t + 300
    with pytest.raises(frame.FrameValueError, match="out of bounds for uint8"):
        300 - t


@pytest.mark.parametrize("name", SMALL)
def test_integer_tensors_never_require_grad(name):
    t = frame.tensor(np.arange(3).astype(name))
    assert not t.requires_grad
    with pytest.raises(frame.FrameTypeError, match="floating-point"):
        t.requires_grad_(True)
    x = frame.tensor(np.ones(3, np.float32), requires_grad=True)
    (x * frame.astype(t, frame.float32)).sum().backward()
    assert x.grad.numpy().tolist() == [0.0, 1.0, 2.0]


# -- NumPy results in int8 that frame used to lack ----------------------------------------------

def test_bool_ops_numpy_computes_in_int8():
    def fn(a):
        m, n = a > 0, a < 1
        return np.square(m), np.conj(m), m // n, m % n, np.sum(a * 100, dtype=np.int8), \
            np.add.reduce(a, axis=0, dtype=np.uint8)

    x = np.array([[1.0, -2.0, 0.0], [3.0, 0.5, -1.0]], np.float32)
    assert_same_as_eager(fn, x)
    assert_captured(fn, x, graphs=1)


# -- autograd --------------------------------------------------------------------------------------

def test_training_step_on_uint8_images_and_labels():
    def step(w, img, labels):
        x = img.reshape(img.shape[0], -1).astype(np.float32) / 255.0
        loss = frame.nn.functional.cross_entropy(frame.tensor(x) @ w, labels)
        loss.backward()
        return loss.detach(), w.grad

    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (4, 2, 3), dtype=np.uint8)
    labels = np.array([0, 2, 1, 2], np.uint8)
    w = frame.tensor(rng.standard_normal((6, 3)).astype(np.float32), requires_grad=True)
    assert_same_as_eager(step, w, img, labels)


# -- NumPy scalars of the small integer dtypes -------------------------------------------------------

def accumulate_pixels(images):
    total = np.uint64(0)
    bright = 0
    for img in images:
        total += img.sum()               # uint64, as NumPy sums uint8
        if int(img.max()) > 128:         # a break at every iteration
            bright += 1
    return total, bright


def test_pixel_accumulator_across_breaks_does_not_recompile():
    frame.reset_stats()
    jitted = frame.jit(accumulate_pixels)
    for seed in range(4):
        images = [image((3, 4), seed * 10 + k) for k in range(5)]
        assert_same_as_eager(jitted, images, captured=None)
    # once per resume function, its value guard fails and it becomes a graph input
    reasons = [str(r) for r in frame.stats().recompile_reasons if "total" in str(r)]
    assert len(reasons) <= 2, reasons


@pytest.mark.parametrize("array_dtype", ["uint8", "int16", "float32"])
def test_small_int_numpy_scalars_keep_their_types(array_dtype):
    def scale(x, s):
        return x * s, s + 1, -s, s // 2, s > 1, abs(s), float(s)

    jitted = frame.jit(scale)
    for s in (np.uint8(3), np.uint8(5), np.int8(-2), np.uint16(7), np.int16(300), np.uint32(9)):
        assert_same_as_eager(jitted, np.arange(1, 4).astype(array_dtype), s, captured=None)
