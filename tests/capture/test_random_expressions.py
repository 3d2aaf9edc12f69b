"""Random NumPy expressions, jitted against plain: a seeded differential corpus.

Each case is a small function generated from a fixed seed: one to three
arguments of random dtypes (bool, small and large ints, unsigned, float16/32/64)
and shapes (0-d included), a few statements (in-place operators on the
arguments, item assignments, Python scalars made from arrays) and a returned
expression of operators, ufuncs, reductions, casts and views, mixed with
Python and NumPy scalars.  Arrays hold the values where NumPy's rules bite:
0, -0.0, inf, NaN, tiny and huge floats, the ints at the ends of their range.
Every case is called twice, on two argument sets of the same types (the second
call runs the cached entry) and compared with ``assert_same_as_eager``: types,
dtypes, values (NaN and signed zeros too; bit for bit where the backend is),
the arguments after the call, and the exceptions, messages included.

The generator found the bugs these tests keep fixed: 0-d arrays returned as
NumPy scalars (``a.astype``, ``a.T``, ``np.where``), an out-of-range NumPy
integer stored into an int8 array without NumPy's OverflowError, ``mean``
with an axis of a 0-d value, Python complex scalars taken as complex64, a
dead ``1.0 / s`` losing its ZeroDivisionError, and views of NumPy scalars."""
from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

from .helpers import assert_same_as_eager

DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "uint32", "float16", "float32",
          "float64"]
SHAPES = [(), (3,), (2, 3), (1, 3), (4, 1)]
INT_POOL = [0, 1, 2, 3, -1, -7, 100, "max", "min", "max-1"]
FLOAT_POOL = [0.0, -0.0, 1.5, -2.25, 3.0, np.inf, -np.inf, np.nan, 1e-30, 65504.0, 0.1, 7.0]

SCALARS = ["2", "3", "-1", "0", "1.5", "-0.0", "True", "300", "2**40", "0.1", "2j",
           "np.float32(2.5)", "np.int64(3)", "np.float64(-1.5)", "np.uint8(200)", "np.int8(-3)"]
BINARY = ["+", "-", "*", "/", "//", "%", "**", "<", "==", ">=", "&", "|", "^", "<<", ">>"]
UNARY = ["-{}", "abs({})", "~{}", "np.exp({})", "np.log({})", "np.sqrt({})", "np.tanh({})",
         "np.floor({})", "np.sign({})", "({}).astype(np.{dtype})", "np.square({})",
         "np.isnan({})", "np.round({}, 1)", "np.rint({})", "np.reciprocal({})", "({}).sum()",
         "({}).sum(axis=-1)", "({}).mean()", "({}).max(axis=0)", "({}).min()", "({}).prod()",
         "np.cumsum({})", "({}).T", "({}).ravel()", "({})[..., ::-1]", "np.clip({}, -1, 2)",
         "({}).argmax()", "({}).std()", "np.maximum({}, 0)", "np.fmod({}, 3)", "({}).any()",
         "np.heaviside({}, 0.5)", "np.logaddexp({}, 1)", "np.copysign({}, -1)", "np.trunc({})",
         "np.expm1({})", "np.log1p({})", "np.cbrt({})", "np.where({} > 0, 1, -1)"]
BINARY_CALLS = ["np.maximum({}, {})", "np.minimum({}, {})", "np.where({} > 0, {}, 1)",
                "np.arctan2({}, {})", "np.hypot({}, {})", "np.fmax({}, {})",
                "np.floor_divide({}, {})", "np.remainder({}, {})", "np.power({}, {})",
                "np.logical_and({}, {})", "np.bitwise_and({}, {})", "np.subtract({}, {})"]
AUGMENTED = ["+=", "-=", "*=", "/=", "//=", "%=", "|=", "&=", "<<="]
ITEM_INDEX = ["0", "...", "-1", ":", "1:", "::2", "{name} > 0", "..., 0"]


def _expression(r: random.Random, depth: int, names: list[str]) -> str:
    if depth == 0 or r.random() < 0.2:
        return r.choice(names) if r.random() < 0.75 else r.choice(SCALARS)
    k = r.random()
    if k < 0.45:
        return f"({_expression(r, depth - 1, names)} {r.choice(BINARY)} " \
               f"{_expression(r, depth - 1, names)})"
    if k < 0.8:
        return r.choice(UNARY).replace("{dtype}", r.choice(DTYPES)).format(
            _expression(r, depth - 1, names))
    call = r.choice(BINARY_CALLS)
    return call.format(*[_expression(r, depth - 1, names) for _ in range(call.count("{}"))])


def _source(r: random.Random) -> tuple[str, int]:
    n_args = r.randint(1, 3)
    names = ["a", "b", "c"][:n_args]
    lines = []
    for _ in range(r.randint(0, 3)):
        target = r.choice(names)
        k = r.random()
        if k < 0.3:
            lines.append(f"{target} {r.choice(AUGMENTED)} {_expression(r, 1, names)}")
        elif k < 0.5:
            index = r.choice(ITEM_INDEX).format(name=target)
            lines.append(f"{target}[{index}] = {_expression(r, 1, names)}")
        elif k < 0.7:
            lines.append(f"t = {_expression(r, 2, names)}")
            lines.append(f"{target} = t")
        else:
            lines.append(f"{target} = {r.choice(['float', 'int', 'bool', 'complex'])}"
                         f"(np.sum({_expression(r, 1, names)}))")
    body = _expression(r, r.randint(1, 3), names)
    result = body if r.random() < 0.6 else f"({body}, {', '.join(names)})"
    source = f"def f({', '.join(names)}):\n" + "".join(f"    {line}\n" for line in lines) + \
        f"    return {result}\n"
    return source, n_args


def _array(rng: np.random.Generator, dtype: str, shape: tuple) -> np.ndarray:
    n = int(np.prod(shape))
    if dtype == "bool":
        values = rng.integers(0, 2, n).astype(bool)
    elif dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        named = {"max": info.max, "min": info.min, "max-1": info.max - 1}
        pool = [named.get(v, v) for v in INT_POOL]
        pool = [v if info.min <= v <= info.max else 5 for v in pool]
        values = np.array([pool[i] for i in rng.integers(0, len(pool), n)], dtype=dtype)
    else:
        values = np.array([FLOAT_POOL[i] for i in rng.integers(0, len(FLOAT_POOL), n)]).astype(dtype)
    return values.reshape(shape)


def _cases(seed: int, count: int) -> list[tuple[str, list, list]]:
    r = random.Random(seed)
    rng = np.random.default_rng(seed)
    cases = []
    while len(cases) < count:
        source, n_args = _source(r)
        try:
            compile(source, "<case>", "exec")
        except SyntaxError:   # (a literal the generator glued to a method call)
            continue
        types = [(r.choice(DTYPES), r.choice(SHAPES)) for _ in range(n_args)]
        calls = [[_array(rng, dtype, shape) for dtype, shape in types] for _ in range(2)]
        cases.append((source, *calls))
    return cases


CASES = _cases(seed=20261207, count=400)


@pytest.mark.parametrize("index", range(len(CASES)))
def test_random_expression(index):
    source, first, second = CASES[index]
    namespace = {"np": np}
    exec(compile(source, f"<random expression {index}>", "exec"), namespace)  # noqa: S102
    fn = namespace["f"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # NumPy's RuntimeWarnings: not compared here
        for args in (first, second):
            assert_same_as_eager(fn, *args, captured=None)
