"""Python ``int``/``float`` values of the frame, guarded where their value is used.

A Python scalar read from an argument, a global, a closure cell, an attribute
or an item is a ``ScalarVariable``.  Wrapping it guards its type only; its
*value* is guarded (a ``GuardKind.SCALAR_VALUE`` guard naming the user's
variable and the line that used it) the first time the trace needs it: control
flow, a shape, an index, a call of a frame or NumPy function, a Python-level
result capture does not compute itself.  ``ScalarVariable`` is a
``ConstantVariable`` whose ``value`` is that guarded read, so every path that
asks a constant for its value specialises, as before; only what this module
computes does not:

* Python arithmetic and comparisons of scalars (``lr * 0.5``, ``step + 1``,
  ``step < warmup``, ``min(1.0, step / warmup)``, ``math.cos(...)``) make a
  ``ScalarVariable`` whose source is that expression (``sources.ExprSource``):
  the entry recomputes it in Python from the call's values, so it is exact,
  and a test of it guards the outcome (``(L['step'] < 100) is True``), not
  the operands' values;
* returned, stored or live at a graph break, a scalar is rebuilt by its
  expression (no value guard);
* a **dynamic** scalar (its source is in the code cache's dynamic set: a
  value guard on it failed, ``capture/jit.py``) meeting a tensor in ``+ - * /
  // %`` or a float comparison becomes a 0-d graph input of the dtype NEP 50
  gives it next to that tensor (``float32 * lr`` stays float32): the entry
  passes ``numpy.asarray(<expression>, <dtype>)``.  A static scalar there is
  a constant of the graph (value guard), as before.

NumPy's scalars of frame's numeric dtypes (``np.float64``, ``np.float32``,
``np.float16``, ``np.int64``, ``np.int32``, the small and unsigned integers
``np.int16`` ... ``np.uint64``: a loss summed by NumPy, an
accumulator ``total += x.sum()`` live at a graph break) are scalars of this
kind too, in part: wrapping guards their type; returned, stored or live at a
break they pass through without a value guard; a dynamic one meeting a tensor
is a 0-d graph input of its own dtype (NumPy scalars are strongly typed:
``float32 array * np.float64(s)`` is float64), and so is a dynamic float one
in arithmetic with other scalars (``total / n``) or as a ufunc's operand
(``np.sign(fm)``): the graph computes it, the result a NumPy scalar.  Everything else reads the value (a guard), as
before: arithmetic between them is not recomputed by the entry, because
NumPy's scalar arithmetic warns (``overflow encountered in scalar multiply``)
and the entry would evaluate it twice (its guard, then the rebuild).  An accumulator passed from one resume function to the next used to
recompile at every iteration (its value guard), up to the limit.

Bools never become scalars of this kind (they are constants), nor do NumPy's
bools and its other dtypes.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from frame.dtypes import from_numpy, weak_scalar_dtype

from ..sources import ExprSource, Source, user_text
from .base import NDARRAY, NPSCALAR, TENSOR, ConstantVariable, TensorVariable, Variable
from .registry import wrap_rule

__all__ = ["ScalarVariable", "scalar_binary_op", "scalar_unary_op", "scalar_builtin_call",
           "numpy_scalar_operand",
           "SCALAR_TYPES"]

SCALAR_TYPES = (int, float)
# NumPy's scalars wrapped as ScalarVariables (exact types: frame's numeric dtypes)
NUMPY_SCALAR_TYPES = (np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8,
                      np.uint64, np.uint32, np.uint16, np.uint8)

_BINARY = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
           operator.floordiv: "//", operator.mod: "%", operator.pow: "**"}
_COMPARE = {operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">=",
            operator.eq: "==", operator.ne: "!="}
_UNARY = {operator.neg: "-", operator.pos: "+"}
# operations that raise for some operand values (ZeroDivisionError, OverflowError of
# a float power)
_RAISING = (operator.truediv, operator.floordiv, operator.mod, operator.pow)
# tensor (op) dynamic scalar: the scalar is a weak 0-d graph operand
_TENSOR_OPS = (operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
               operator.mod)
# one-argument math functions of a float computed by the entry
_MATH = {getattr(math, n) for n in ("cos", "sin", "tan", "exp", "log", "log2", "log10", "sqrt",
                                    "tanh", "atan", "fabs", "floor", "ceil", "log1p", "expm1")}


class ScalarVariable(ConstantVariable):
    """A Python int or float of the frame (``source``: where it is read, or
    the ``ExprSource`` computing it from such values); ``concrete`` is its
    value at trace time, read without a guard only by this module."""
    __slots__ = ("concrete", "tr", "dynamic")

    def __init__(self, concrete, source: Source, tr, dynamic: bool):
        Variable.__init__(self, source)
        self.concrete = concrete
        self.tr = tr
        self.dynamic = dynamic

    @property
    def value(self):
        """The value, guarded: the trace depends on it from here on."""
        self.tr.guards.scalar_value(self.source, self.concrete, _roots(self.source),
                                    self.tr.where())
        return self.concrete

    def python_type(self) -> type:
        return type(self.concrete)   # guarded when wrapped

    def is_none(self) -> bool:
        return False

    def truth(self, tx) -> bool:
        if type(self.concrete) is bool or _is_numpy(self) or _too_deep(self):
            return bool(self.value)   # (a NumPy scalar's value is not a bool: bool(v) must be)
        return _derived(self, "__bool({})", "bool({})", [self], bool(self.concrete)).value

    def reconstruct(self, rb) -> str:
        if isinstance(self.source, ExprSource):
            # recomputed by the entry: a value for which it raises is a miss
            self.tr.guards.scalar_type(self.source, self.concrete)
        return rb.source(self)

    def describe(self) -> str:
        return repr(self)

    def __repr__(self) -> str:
        return f"Scalar({user_text(self.source)}: {type(self.concrete).__name__})"


@wrap_rule(15)
def _wrap_scalar(tr, value, source):
    """An ``int`` or ``float`` (exactly: not a bool), or a NumPy scalar of
    ``NUMPY_SCALAR_TYPES``: its type is guarded now, its value where the trace
    uses it; a dynamic one (``tr.dynamic``, capture/jit.py) is a graph input
    where it meets a tensor."""
    t = type(value)
    if t is not int and t is not float and t not in NUMPY_SCALAR_TYPES:
        return None
    tr.guards.scalar_type(source, value)
    return ScalarVariable(value, source, tr, source in tr.dynamic)


def _is_numpy(*args: Variable) -> bool:
    """Is one of ``args`` a NumPy scalar of the frame (only passed through,
    or made a graph input: module doc)?"""
    return any(isinstance(a, ScalarVariable) and isinstance(a.concrete, np.generic) for a in args)


def _roots(source: Source) -> tuple:
    return source.roots() if isinstance(source, ExprSource) else (source,)


def _literal(value) -> Source:
    if type(value) is float and not math.isfinite(value):
        return ExprSource(f"__float({str(value)!r})", (), f"float({str(value)!r})")
    return ExprSource(repr(value), ())


def _operand(v: Variable):
    """(source, concrete value, dynamic) of a scalar operand, or None."""
    if isinstance(v, ScalarVariable):
        return v.source, v.concrete, v.dynamic
    if type(v) is ConstantVariable and type(v.value) in SCALAR_TYPES:
        return _literal(v.value), v.value, False
    return None


def _derived(like: ScalarVariable, template: str, shown: str, args: list, concrete,
             dynamic: bool | None = None, may_raise: bool = False) -> ScalarVariable:
    """The scalar ``template`` computes from ``args``.  ``may_raise``: the
    operation raises for some values (``1 / s`` for s == 0, ``math.log``,
    ``int(nan)``): its value is not guarded, so the entry evaluates it before
    anything else even when nothing uses the result (``Translation.scalar_checks``),
    and runs the plain function, which raises, when it does."""
    ops = [_operand(a) for a in args]
    var = ScalarVariable(concrete, ExprSource(template, tuple(o[0] for o in ops), shown),
                         like.tr, any(o[2] for o in ops) if dynamic is None else dynamic)
    if may_raise:
        like.tr.scalar_checks.append(var)
    return var


def _scalar_result(value) -> bool:
    return type(value) in SCALAR_TYPES or type(value) is bool


# an expression nested deeper (a loop accumulating into a scalar) reads the
# values instead: the entry's source must stay within the compiler's nesting limit;
# or larger (written out, an operand used twice is written twice: Newton's
# ``x - (x * x + 1) / (2 * x)`` iterated triples each time)
MAX_DEPTH = 32
MAX_SIZE = 256


def _too_deep(*args: Variable) -> bool:
    return any(isinstance(a, ScalarVariable) and isinstance(a.source, ExprSource)
               and (a.source.depth >= MAX_DEPTH or a.source.size >= MAX_SIZE) for a in args)


def scalar_binary_op(tx, fn, a: Variable, b: Variable) -> Variable | None:
    """``a op b`` where one side is a ``ScalarVariable``: a scalar computed
    by the entry, a dynamic scalar as a graph operand of a tensor, or None
    (the caller's path, which reads the value: a guard)."""
    if not isinstance(a, ScalarVariable) and not isinstance(b, ScalarVariable):
        return None
    if isinstance(a, TensorVariable) or isinstance(b, TensorVariable):
        return _tensor_op(tx, fn, a, b)
    sym = fn in _BINARY or fn in _COMPARE
    oa, ob = _operand(a), _operand(b)
    if _is_numpy(a, b):
        return _numpy_scalar_op(tx, fn, a, b)
    if not sym or oa is None or ob is None or _too_deep(a, b):
        return None
    try:
        concrete = fn(oa[1], ob[1])
    except Exception:  # noqa: BLE001 - the value decides: guarded, then raised as Python does
        return None
    if not _scalar_result(concrete):   # (-8.0) ** 0.5 is complex
        return None
    op = _BINARY.get(fn) or _COMPARE[fn]
    like = a if isinstance(a, ScalarVariable) else b
    return _derived(like, f"({{}} {op} {{}})", f"({{}} {op} {{}})", [a, b], concrete,
                    may_raise=fn in _RAISING)


def numpy_scalar_operand(tx, v: Variable) -> Variable:
    """``v``, or for a dynamic NumPy float scalar a 0-d graph input of its dtype
    (a NumPy scalar): the operand of a ufunc (``np.sign(fm)`` in a bisection
    loop read the value, a recompile per value up to the limit)."""
    if _dynamic_float(v):
        return TensorVariable(scalar_input(tx, v, v.concrete.dtype).meta, NPSCALAR)
    return v


def _dynamic_float(v: Variable) -> bool:
    return isinstance(v, ScalarVariable) and v.dynamic and isinstance(v.concrete, np.floating)


def _numpy_scalar_op(tx, fn, a: Variable, b: Variable) -> Variable | None:
    """Arithmetic on a dynamic NumPy float scalar (module doc): computed by the
    graph, the scalar a 0-d input of its own dtype, the result a NumPy scalar
    as NumPy's is (``total / n``).  None (the value is read: a guard) for a
    static one, comparisons (an ``if`` would read the graph's result: a
    break), and integers (NumPy warns of an overflow in a scalar operation,
    not in an array's)."""
    if fn not in _BINARY:
        return None
    if any(_is_numpy(v) and not _dynamic_float(v) for v in (a, b)):
        return None
    return tx.binary_op(fn, *(numpy_scalar_operand(tx, v) for v in (a, b)))


def scalar_unary_op(tx, fn, x: Variable) -> Variable | None:
    if fn not in _UNARY or not isinstance(x, ScalarVariable) or type(x.concrete) is bool \
            or _too_deep(x) or _is_numpy(x):
        return None
    op = _UNARY[fn]
    return _derived(x, f"({op}{{}})", f"({op}{{}})", [x], fn(x.concrete))


def scalar_builtin_call(tx, fn, args: list, kwargs: dict) -> Variable | None:
    """``float(s)``, ``int(s)``, ``abs(s)``, ``round(s)``, ``min``/``max`` of
    scalars and constants, one-argument ``math`` functions of a scalar."""
    if kwargs or not args or not any(isinstance(a, ScalarVariable) for a in args) \
            or _is_numpy(*args):
        return None
    ops = [_operand(a) for a in args]
    if any(o is None or type(o[1]) is bool for o in ops) or _too_deep(*args):
        return None
    like = next(a for a in args if isinstance(a, ScalarVariable))
    if fn in (min, max) and len(args) >= 2:
        name = fn.__name__
    elif fn in (float, int, abs, round) and len(args) == 1:
        name = fn.__name__
    elif fn in _MATH and len(args) == 1:
        pooled = tx.tr.guards.const(fn)
        try:
            concrete = fn(ops[0][1])
        except Exception:  # noqa: BLE001 - a domain error: the value decides
            return None
        if type(concrete) not in SCALAR_TYPES:
            return None
        return _derived(like, f"{pooled}({{}})", f"math.{fn.__name__}({{}})", args, concrete,
                        may_raise=True)
    else:
        return None
    try:
        concrete = fn(*(o[1] for o in ops))
    except Exception:  # noqa: BLE001
        return None
    if type(concrete) not in SCALAR_TYPES:
        return None
    slots = ", ".join("{}" for _ in args)
    return _derived(like, f"__{name}({slots})", f"{name}({slots})", args, concrete,
                    may_raise=fn in (float, int, round))   # (huge ints, NaN, inf)


def _tensor_op(tx, fn, a: Variable, b: Variable) -> Variable | None:
    """A tensor (op) a dynamic scalar: the scalar becomes a 0-d graph input
    of the dtype NEP 50 gives a Python scalar next to the tensor (a NumPy
    scalar: its own dtype)."""
    scalar, tensor = (a, b) if isinstance(a, ScalarVariable) else (b, a)
    if not isinstance(scalar, ScalarVariable) or not isinstance(tensor, TensorVariable):
        return None
    concrete = scalar.concrete
    if not scalar.dynamic or type(concrete) is bool:
        return None
    comparison = fn in _COMPARE
    if not (fn in _TENSOR_OPS or comparison):
        return None
    tensor_dtype = tensor.meta.dtype
    if comparison and (not isinstance(concrete, (float, np.floating))
                       or tensor_dtype.kind not in "fc"):
        return None   # NumPy compares out-of-range Python ints specially
    if isinstance(concrete, np.generic) and tensor.kind == TENSOR:
        return None   # a frame Tensor and a NumPy scalar: the value, as before
    try:
        if isinstance(concrete, np.generic):
            dtype = concrete.dtype   # strongly typed (NEP 50)
        else:
            dtype = weak_scalar_dtype(from_numpy(tensor_dtype), concrete).np
        np.asarray(concrete, dtype=dtype)
    except Exception:  # noqa: BLE001 - it does not fit: the native run raises NumPy's error
        return None
    operand = scalar_input(tx, scalar, dtype)
    return tx.binary_op(fn, operand, b) if scalar is a else tx.binary_op(fn, a, operand)


def scalar_input(tx, scalar: ScalarVariable, dtype: np.dtype) -> TensorVariable:
    """The graph input holding ``scalar`` as a 0-d array of ``dtype`` (one per
    expression and dtype)."""
    tr = tx.tr
    key = (scalar.source, dtype.str)
    known = tr.scalar_inputs.get(key)
    if known is not None:
        return known
    array = np.asarray(scalar.concrete, dtype=dtype)
    meta = tr.tracer.input_for(array, user_text(scalar.source))
    var = TensorVariable(meta, NDARRAY)
    tr.scalar_inputs[key] = var
    tr.scalar_input_by_value[id(tr.tracer.values[id(meta)])] = (scalar.source, dtype)
    if type(scalar.concrete) is int or isinstance(scalar.source, ExprSource):
        tr.guards.scalar_input(scalar.source, dtype)   # the conversion may raise: a miss
    return var

