"""Cases for elementwise ops, each with an independent formula."""
from __future__ import annotations

import math

import numpy as np

from .optable import (ALL, BINARY_SHAPES, FLOATS, INTS, NUMERIC, UNARY_SHAPES, Case, cases,
                      sample)

_verf = np.vectorize(math.erf, otypes=[np.float64])
_vlog1p = np.vectorize(math.log1p, otypes=[np.float64])
_vexpm1 = np.vectorize(math.expm1, otypes=[np.float64])
_vtan = np.vectorize(math.tan, otypes=[np.float64])
_vasin = np.vectorize(math.asin, otypes=[np.float64])
_vacos = np.vectorize(math.acos, otypes=[np.float64])
_vatan = np.vectorize(math.atan, otypes=[np.float64])
_vsinh = np.vectorize(math.sinh, otypes=[np.float64])
_vcosh = np.vectorize(math.cosh, otypes=[np.float64])
_vlog2 = np.vectorize(math.log2, otypes=[np.float64])
_vlog10 = np.vectorize(math.log10, otypes=[np.float64])
_vatan2 = np.vectorize(math.atan2, otypes=[np.float64])
_vcbrt = np.vectorize(lambda v: math.copysign(abs(v) ** (1.0 / 3.0), v), otypes=[np.float64])
_vrint = np.vectorize(lambda v: float(round(v)), otypes=[np.float64])   # half to even
_vtrunc = np.vectorize(lambda v: math.copysign(float(math.trunc(v)), v), otypes=[np.float64])


def _f64(x):
    return np.asarray(x, dtype=np.float64)


# op -> (independent formula on float64/ints, dtypes, domain)
UNARY = {
    "neg": (lambda x: 0 - x, NUMERIC, "any"),
    "exp": (lambda x: math.e ** _f64(x), NUMERIC, "any"),
    "log": (lambda x: np.log(_f64(x)), NUMERIC, "positive"),
    "log1p": (lambda x: _vlog1p(_f64(x)), NUMERIC, "positive"),
    "expm1": (lambda x: _vexpm1(_f64(x)), NUMERIC, "any"),
    "tan": (lambda x: _vtan(_f64(x)), NUMERIC, "any"),
    "arcsin": (lambda x: _vasin(_f64(x)), FLOATS, "unit"),
    "arccos": (lambda x: _vacos(_f64(x)), FLOATS, "unit"),
    "arctan": (lambda x: _vatan(_f64(x)), NUMERIC, "any"),
    "sinh": (lambda x: _vsinh(_f64(x)), NUMERIC, "any"),
    "cosh": (lambda x: _vcosh(_f64(x)), NUMERIC, "any"),
    "exp2": (lambda x: 2.0 ** _f64(x), NUMERIC, "any"),
    "log2": (lambda x: _vlog2(_f64(x)), NUMERIC, "positive"),
    "log10": (lambda x: _vlog10(_f64(x)), NUMERIC, "positive"),
    "cbrt": (lambda x: _vcbrt(_f64(x)), NUMERIC, "any"),
    "rint": (lambda x: _vrint(_f64(x)), FLOATS, "any"),
    "trunc": (lambda x: _vtrunc(_f64(x)), FLOATS, "any"),
    "sqrt": (lambda x: _f64(x) ** 0.5, NUMERIC, "positive"),
    "rsqrt": (lambda x: 1.0 / _f64(x) ** 0.5, NUMERIC, "positive"),
    "tanh": (lambda x: (np.exp(2 * _f64(x)) - 1) / (np.exp(2 * _f64(x)) + 1), NUMERIC, "any"),
    "sigmoid": (lambda x: 1.0 / (1.0 + np.exp(-_f64(x))), NUMERIC, "any"),
    "relu": (lambda x: np.where(x > 0, x, 0).astype(np.asarray(x).dtype), NUMERIC, "any"),
    "sin": (lambda x: np.sin(_f64(x)), NUMERIC, "any"),
    "cos": (lambda x: np.cos(_f64(x)), NUMERIC, "any"),
    "abs": (lambda x: x if np.asarray(x).dtype.kind == "b" else np.where(x < 0, -x, x), NUMERIC + ("bool",), "any"),
    "sign": (lambda x: (x > 0).astype(np.int8) - (x < 0).astype(np.int8), NUMERIC, "any"),
    "erf": (lambda x: _verf(_f64(x)), NUMERIC, "any"),
    "floor": (lambda x: _f64(x) - np.mod(_f64(x), 1.0), NUMERIC + ("bool",), "any"),
    "ceil": (lambda x: -(-_f64(x) - np.mod(-_f64(x), 1.0)), NUMERIC + ("bool",), "any"),
    "reciprocal": (lambda x: 1.0 / _f64(x) if np.asarray(x).dtype.kind == "f"
                   else np.trunc(1.0 / _f64(x)), FLOATS + INTS, "nonzero"),
    "logical_not": (lambda x: x == 0, ALL, "any"),
    "invert": (lambda x: x == 0 if np.asarray(x).dtype.kind == "b" else -np.asarray(x) - 1,
               INTS + ("bool",), "any"),
    "gelu": (lambda x: _f64(x) * 0.5 * (1.0 + _verf(_f64(x) / math.sqrt(2.0))), NUMERIC, "any"),
}


def _unary_input(shape, dtype, domain, seed):
    if domain == "unit":  # arcsin, arccos: inside [-1, 1]
        return (sample(shape, dtype, seed) / 3).astype(dtype)
    if domain == "positive":
        return sample(shape, dtype, seed, positive=True)
    if domain == "nonzero":
        x = sample(shape, dtype, seed, positive=True)
        return np.where(sample(shape, "bool", seed + 1), x, -x).astype(dtype)
    return sample(shape, dtype, seed)


@cases(*UNARY)
def unary_cases(op):
    formula, dtypes, domain = UNARY[op]
    for dtype in dtypes:
        for i, shape in enumerate(UNARY_SHAPES):
            x = _unary_input(shape, dtype, domain, seed=i)
            yield Case([x], {}, lambda ins, attrs, f=formula: [f(ins[0])], id=f"{dtype}-{shape}")
    if op == "gelu":
        for dtype in FLOATS:
            x = sample((3, 4), dtype, 7)
            c = np.sqrt(2 / np.pi)
            yield Case([x], {"approximate": "tanh"},
                       lambda ins, attrs: [0.5 * _f64(ins[0]) * (1 + np.tanh(
                           c * (_f64(ins[0]) + 0.044715 * _f64(ins[0]) ** 3)))],
                       id=f"tanh-{dtype}")


BINARY = {
    "add": (lambda a, b: a + b, NUMERIC + ("bool",), "any"),
    "sub": (lambda a, b: a - b, NUMERIC, "any"),
    "mul": (lambda a, b: a * b, NUMERIC + ("bool",), "any"),
    "div": (lambda a, b: _f64(a) / _f64(b), NUMERIC, "nonzero"),
    "floordiv": (lambda a, b: np.floor(_f64(a) / _f64(b)), NUMERIC, "nonzero"),
    "mod": (lambda a, b: _f64(a) - np.floor(_f64(a) / _f64(b)) * _f64(b), NUMERIC, "nonzero"),
    "pow": (lambda a, b: _f64(a) ** _f64(b), NUMERIC, "pow"),
    "maximum": (lambda a, b: np.where(a >= b, a, b), NUMERIC + ("bool",), "any"),
    "minimum": (lambda a, b: np.where(a <= b, a, b), NUMERIC + ("bool",), "any"),
    "equal": (lambda a, b: ~((a < b) | (a > b)), NUMERIC + ("bool",), "small"),
    "not_equal": (lambda a, b: (a < b) | (a > b), NUMERIC + ("bool",), "small"),
    "less": (lambda a, b: ~(a >= b), NUMERIC, "small"),
    "less_equal": (lambda a, b: ~(a > b), NUMERIC, "small"),
    "greater": (lambda a, b: ~(a <= b), NUMERIC, "small"),
    "greater_equal": (lambda a, b: ~(a < b), NUMERIC, "small"),
    "logical_and": (lambda a, b: (a != 0) & (b != 0), ALL, "small"),
    "logical_or": (lambda a, b: (a != 0) | (b != 0), ALL, "small"),
    "bitwise_and": (lambda a, b: _python_bits(a, b, lambda i, j: i & j), INTS + ("bool",), "any"),
    "bitwise_or": (lambda a, b: _python_bits(a, b, lambda i, j: i | j), INTS + ("bool",), "any"),
    "bitwise_xor": (lambda a, b: _python_bits(a, b, lambda i, j: i ^ j), INTS + ("bool",), "any"),
    "hypot": (lambda a, b: (_f64(a) ** 2 + _f64(b) ** 2) ** 0.5, NUMERIC, "any"),
    "logaddexp": (lambda a, b: np.log(np.exp(_f64(a)) + np.exp(_f64(b))), NUMERIC, "any"),
    "arctan2": (lambda a, b: _vatan2(_f64(a), _f64(b)), NUMERIC, "any"),
    "left_shift": (lambda a, b: _shifted(a, b, left=True), INTS, "shift"),
    "right_shift": (lambda a, b: _shifted(a, b, left=False), INTS, "shift"),
}


def _shifted(a, b, left: bool):
    """NumPy's shifts on Python ints: the value wrapped to the dtype's width; a
    count outside [0, width) gives 0 (-1 for a negative value shifted right)."""
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    dtype = np.result_type(a, b)
    bits = dtype.itemsize * 8
    out = []
    for i, j in zip(a.ravel().tolist(), b.ravel().tolist()):
        if not 0 <= j < bits:
            out.append(-1 if (not left and i < 0) else 0)
        elif left:
            v = (i << j) & ((1 << bits) - 1)
            out.append(v - (1 << bits) if v >= 1 << (bits - 1) else v)
        else:
            out.append(i >> j)
    return np.array(out, dtype=np.int64).astype(dtype).reshape(a.shape)


def _python_bits(a, b, fn):
    """``fn`` on Python ints (arbitrary precision, two's complement semantics)."""
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    dtype = np.result_type(a, b)
    flat = [fn(int(i), int(j)) for i, j in zip(a.ravel().tolist(), b.ravel().tolist())]
    return np.array(flat, dtype=np.int64).astype(dtype).reshape(a.shape)


def _binary_inputs(sa, sb, dtype, domain, seed):
    if domain == "nonzero":
        a = sample(sa, dtype, seed)
        b = _unary_input(sb, dtype, "nonzero", seed + 1)
    elif domain == "pow":
        a = sample(sa, dtype, seed, positive=True)
        b = sample(sb, dtype, seed + 1, low=0, high=3) if dtype in INTS else sample(sb, dtype, seed + 1)
    elif domain == "shift":  # counts past the width and negative ones too
        bits = np.dtype(dtype).itemsize * 8
        a = sample(sa, dtype, seed, low=-(2 ** 20), high=2 ** 20)
        b = sample(sb, dtype, seed + 1, low=-2, high=bits + 2)
    elif domain == "small":
        a = sample(sa, dtype, seed, low=-1, high=1)
        b = sample(sb, dtype, seed + 1, low=-1, high=1)
        if dtype in FLOATS:
            a, b = np.round(a), np.round(b)  # make equal values likely
    else:
        a = sample(sa, dtype, seed)
        b = sample(sb, dtype, seed + 1)
    return a, b


@cases(*BINARY)
def binary_cases(op):
    formula, dtypes, domain = BINARY[op]
    for dtype in dtypes:
        for i, (sa, sb) in enumerate(BINARY_SHAPES):
            a, b = _binary_inputs(sa, sb, dtype, domain, seed=i)
            yield Case([a, b], {}, lambda ins, attrs, f=formula: [f(ins[0], ins[1])],
                       id=f"{dtype}-{sa}-{sb}", **_exact(op))
    if op == "nextafter":   # towards and from zeros, infinities, NaN, the largest values
        for dtype in ("float32", "float64"):
            info = np.finfo(dtype)
            edges = [0.0, -0.0, np.inf, -np.inf, np.nan, float(info.max), float(info.smallest_subnormal), 1.0]
            a, b = (np.array(v, dtype) for v in zip(*[(x, y) for x in edges for y in edges]))
            yield Case([a, b], {}, lambda ins, attrs, f=formula: [f(ins[0], ins[1])],
                       id=f"edges-{dtype}", **_exact(op))
    # mixed dtypes promote as NumPy arrays do
    if "int32" in dtypes and "float32" in dtypes:
        a, b = _binary_inputs((2, 3), (3,), "int32", domain, 11)
        b = b.astype(np.float32) if domain != "pow" else np.abs(b).astype(np.float32)
        yield Case([a, b], {}, lambda ins, attrs, f=formula: [f(ins[0], ins[1])], id="int32-float32")


@cases("where")
def where_cases(op):
    for dtype in ALL:
        for i, (sa, sb) in enumerate(BINARY_SHAPES):
            c = sample(sa, "bool", i)
            a, b = sample(sb, dtype, i + 1), sample(sa, dtype, i + 2)
            yield Case([c, a, b], {},
                       lambda ins, attrs: [ins[0] * ins[1] + (1 - ins[0]) * ins[2]
                                           if ins[1].dtype.kind != "b"
                                           else (ins[0] & ins[1]) | (~ins[0] & ins[2])],
                       id=f"{dtype}-{sa}-{sb}")


@cases("cast")
def cast_cases(op):
    import frame
    for src in ALL:
        for dst in ("float16", "float32", "float64", "int32", "int64", "bool", "int8", "int16",
                    "uint8", "uint16", "uint32", "uint64"):
            x = sample((2, 3), src, 3)
            yield Case([x], {"dtype": frame.dtypes.as_dtype(dst)},
                       lambda ins, attrs, d=dst: [np.array(ins[0].tolist(), dtype=d)]
                       if not (np.dtype(d).kind in "iu" and ins[0].dtype.kind in "fiu")
                       else [_wrapped_ints(np.trunc(ins[0].astype(np.float64)), d)],
                       id=f"{src}->{dst}")


def _wrapped_ints(values, dtype):
    """Integral values as ``dtype`` the way NumPy's integer casts keep the low
    bits (-3 as uint8 is 253)."""
    bits = np.dtype(dtype).itemsize * 8
    signed = np.dtype(dtype).kind == "i"
    out = []
    for v in np.asarray(values).ravel().tolist():
        w = int(v) % (1 << bits)
        out.append(w - (1 << bits) if signed and w >= 1 << (bits - 1) else w)
    return np.array(out, dtype=dtype).reshape(np.shape(values))


@cases("clip")
def clip_cases(op):
    for dtype in NUMERIC:
        for i, shape in enumerate(UNARY_SHAPES):
            x = sample(shape, dtype, i)
            lo = np.asarray(0 if np.dtype(dtype).kind == "u" else -1, dtype=dtype)
            hi = np.asarray(2, dtype=dtype)
            yield Case([x, lo, hi], {},
                       lambda ins, attrs: [np.where(ins[0] < ins[1], ins[1],
                                                    np.where(ins[0] > ins[2], ins[2], ins[0]))],
                       id=f"{dtype}-{shape}")


# -- NumPy's math ufuncs of frame/_numpy_math.py, against the math module

_vcopysign = np.vectorize(math.copysign, otypes=[np.float64])
_vfmod = np.vectorize(math.fmod, otypes=[np.float64])
_vsignbit = np.vectorize(lambda v: math.copysign(1.0, v) < 0, otypes=[bool])


def _nextafter1(x: float, y: float, dtype) -> float:
    """The next ``dtype`` value after ``x`` towards ``y``, stepping the bits."""
    if math.isnan(x) or math.isnan(y):
        return math.nan
    if x == y:
        return y
    info = np.finfo(dtype)
    if x == 0:
        return math.copysign(float(info.smallest_subnormal), y)
    itype = {2: np.int16, 4: np.int32, 8: np.int64}[info.dtype.itemsize]
    bits = int(np.array(x, dtype).view(itype))
    bits += 1 if (y > x) == (x > 0) else -1
    return float(np.array(bits, itype).view(dtype))


def _nextafter(a, b):
    dtype = np.result_type(a.dtype, b.dtype)
    a, b = np.broadcast_arrays(_f64(a), _f64(b))
    out = [_nextafter1(x, y, dtype) for x, y in zip(a.ravel().tolist(), b.ravel().tolist())]
    return np.array(out, dtype=np.float64).reshape(a.shape)


def _spacing(x):
    x = np.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    flat = _f64(x).ravel().tolist()
    # away from zero, towards +inf for both zeros (NumPy's npy_spacing)
    out = [math.nan if math.isinf(v) else _nextafter1(v, -math.inf if v < 0 else math.inf, dtype) - v
           for v in flat]
    return np.array(out, dtype=np.float64).reshape(x.shape)


def _heaviside(a, b):
    a, b = _f64(a), _f64(b)
    return np.where(a < 0, 0.0, np.where(a > 0, 1.0, b))


UNARY_MATH = {
    "signbit": (lambda x: _vsignbit(_f64(x)), NUMERIC + ("bool",), "any"),
    "deg2rad": (lambda x: _f64(x) * (math.pi / 180.0), NUMERIC, "any"),
    "rad2deg": (lambda x: _f64(x) * (180.0 / math.pi), NUMERIC, "any"),
    # (NumPy's float16 spacing of a negative value is the positive gap towards zero)
    "spacing": (_spacing, ("float32", "float64"), "any"),
}


@cases(*UNARY_MATH)
def unary_math_cases(op):
    formula, dtypes, domain = UNARY_MATH[op]
    for dtype in dtypes:
        for i, shape in enumerate(UNARY_SHAPES):
            x = _unary_input(shape, dtype, domain, seed=i)
            yield Case([x], {}, lambda ins, attrs, f=formula: [f(ins[0])], id=f"{dtype}-{shape}",
                       **_exact(op))
    if op in ("signbit", "spacing"):  # signed zeros, infinities and NaNs of either sign
        for dtype in ("float32", "float64") if op == "spacing" else ("float64",):
            edges = np.array([-0.0, 0.0, -np.inf, np.inf, np.nan, -np.nan], dtype)
            if op == "spacing":
                info = np.finfo(dtype)
                edges = np.concatenate([edges, np.array([info.max, -info.max, info.smallest_subnormal,
                                                         info.tiny, 1.0, -1.0], dtype)])
            yield Case([edges], {}, lambda ins, attrs, f=formula: [f(ins[0])], id=f"edges-{dtype}",
                       **_exact(op))


# ops whose result is a neighbouring float: compared exactly, not within a tolerance
EXACT_MATH = {"spacing", "nextafter"}


def _exact(op: str) -> dict:
    return {"rtol": 0.0, "atol": 0.0} if op in EXACT_MATH else {}


BINARY_MATH = {
    "copysign": (lambda a, b: _vcopysign(_f64(a), _f64(b)), FLOATS, "any"),
    "heaviside": (_heaviside, FLOATS, "small"),
    "fmod": (lambda a, b: _vfmod(_f64(a), _f64(b)), NUMERIC, "nonzero"),
    "float_power": (lambda a, b: _f64(a) ** _f64(b), NUMERIC, "pow"),
    "nextafter": (_nextafter, ("float32", "float64"), "small"),
}


@cases(*BINARY_MATH)
def binary_math_cases(op):
    formula, dtypes, domain = BINARY_MATH[op]
    for dtype in dtypes:
        for i, (sa, sb) in enumerate(BINARY_SHAPES):
            a, b = _binary_inputs(sa, sb, dtype, domain, seed=i)
            yield Case([a, b], {}, lambda ins, attrs, f=formula: [f(ins[0], ins[1])],
                       id=f"{dtype}-{sa}-{sb}")


@cases("ldexp")
def ldexp_cases(op):
    for dtype in FLOATS:
        for exp_dtype in INTS:
            for i, (sa, sb) in enumerate(BINARY_SHAPES):
                a = sample(sa, dtype, i)
                b = sample(sb, exp_dtype, i + 1, low=-5, high=5)
                yield Case([a, b], {}, lambda ins, attrs: [_f64(ins[0]) * 2.0 ** _f64(ins[1])],
                           id=f"{dtype}-{exp_dtype}-{sa}-{sb}")


def _split_each(fn, dtypes):
    """The two outputs of ``fn`` (a math function returning a pair) over every element."""
    def expected(ins, attrs):
        x = _f64(ins[0])
        pairs = [fn(v) for v in x.ravel().tolist()]
        first = np.array([p[0] for p in pairs], dtype=np.float64).reshape(x.shape)
        second = np.array([p[1] for p in pairs], dtype=np.float64).reshape(x.shape)
        return [first, second]
    return expected


@cases("frexp", "modf")
def two_output_cases(op):
    fn = math.frexp if op == "frexp" else math.modf
    for dtype in FLOATS + (("int32", "int64") if op == "frexp" else ()):
        for i, shape in enumerate(UNARY_SHAPES):
            x = sample(shape, dtype, i, low=-40.0, high=40.0)
            yield Case([x], {}, _split_each(fn, dtype), id=f"{dtype}-{shape}")
