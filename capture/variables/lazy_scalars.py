"""Python numbers read from a graph value, made after the graph: ``t.item()``,
``float(t)``, ``int(t)`` of a one-element tensor, ndarray or NumPy scalar.

Reading a tensor's data into a Python number cannot happen while tracing (the
data is not there), so these calls were graph breaks.  Yet very often the
number is only handed on: returned (``return loss.item()``), appended to a
history (``losses.append(loss.item())``), stored in a dict, an attribute or
a global.  So such a call makes a ``LazyScalarVariable``: the graph value (as
it is at the call: a later in-place write does not show) and the conversion.
The entry makes the number after the graph ran, by the same call on the real
value (``float(__o[3][()])``), once per variable (every place that stores it
holds the same object), so its type and value are exactly what the plain
function gets.

Every use that needs the number itself -- arithmetic, a comparison, its truth
value, its type, formatting, an index, a call of a frame, NumPy or builtin
function, an attribute -- raises the ``Unsupported`` the call itself raised
before, placed at the call (``InstructionTranslator.break_site``): the graph
breaks at the ``.item()`` exactly as it did (a break is placed before a call;
a ``+`` or a comparison cannot run natively in an entry).  A translation that
made lazy numbers and still ends running the function natively is done again
without them (``capture/jit.py``), so nothing runs natively that used to break.

Only conversions that cannot raise for any value are deferred: ``.item()``
of a one-element array, ``float()`` of a 0-d one, ``int()`` of a 0-d integer or
bool one.  ``int()`` of a float (``ValueError``/``OverflowError`` for NaN and
inf), ``float()`` of an array of rank >= 1 (NumPy's DeprecationWarning) and
``.item(i)`` stay breaks at the call.
"""
from __future__ import annotations

import operator

import numpy as np

from ..errors import HINTS, Unsupported, UserCodeRaises
from .base import NDARRAY, TENSOR, TensorVariable, Variable

__all__ = ["LazyScalarVariable", "lazy_item", "lazy_conversion"]


class LazyScalarVariable(Variable):
    __slots__ = ("tensor", "convert", "shown", "error")

    def __init__(self, tensor: TensorVariable, convert, shown: str, error: Unsupported):
        super().__init__(None)
        self.tensor = tensor      # a snapshot of the value at the call
        self.convert = convert    # float, int or operator.methodcaller("item")
        self.shown = shown        # how messages show the call: ".item()", "float()"
        self.error = error        # the call's own break, placed at the call

    def broken(self):
        """The graph break at the call that made the number, as before."""
        raise self.error.again()

    def value_needed(self) -> None:
        self.broken()

    def truth(self, tx) -> bool:
        self.broken()

    def python_type(self) -> type:
        self.broken()

    def as_constant(self):
        self.broken()

    def getattr(self, tx, name: str) -> Variable:
        self.broken()

    def setattr(self, tx, name: str, value: Variable) -> None:
        self.broken()

    def call(self, tx, args, kwargs) -> Variable:
        self.broken()

    def getitem(self, tx, index: Variable) -> Variable:
        self.broken()

    def contains(self, tx, item: Variable) -> bool:
        self.broken()

    def iterate(self, tx) -> list[Variable]:
        self.broken()

    def get_iter(self, tx) -> Variable:
        self.broken()

    def inplace_op(self, tx, fn, other: Variable) -> Variable:
        self.broken()

    def to_python(self, passed: dict | None = None):
        self.broken()

    def describe(self) -> str:
        return f"{self.shown} of a tensor"

    def rebuilt_from(self) -> list[Variable]:
        return [self.tensor]

    def reconstruct(self, rb) -> str:
        # one object, wherever it is stored
        return rb.once(self, lambda: f"{rb.const(self.convert)}({rb.expr(self.tensor)})")

    def __repr__(self) -> str:
        return f"LazyScalar({self.shown} of {self.tensor!r})"


def _snapshot(t: TensorVariable) -> TensorVariable:
    """The value ``t`` has now (an in-place write later gives ``t`` a new meta)."""
    t.check_fresh()
    return TensorVariable(t.meta, NDARRAY if t.kind == TENSOR else t.kind)


def _lazy(tx, t: TensorVariable, convert, shown: str, error: Unsupported) -> LazyScalarVariable | None:
    if not tx.tr.lazy_values:   # a translation redone without lazy values
        return None
    tx.tr.lazy_scalars += 1
    return LazyScalarVariable(_snapshot(t), convert, shown, tx.break_site(error))


def lazy_item(tx, t: TensorVariable, args, kwargs) -> LazyScalarVariable | None:
    """``t.item()``: None when it is not deferred (arguments given)."""
    if args or kwargs:
        return None
    if int(np.prod(t.shape, dtype=np.int64)) != 1:
        raise UserCodeRaises("ValueError: can only convert an array of size 1 to a Python scalar")
    if t.meta.dtype.kind not in "biufc":
        return None
    return _lazy(tx, t, operator.methodcaller("item"), ".item()",
                 Unsupported("data_dependent", ".item() reads the tensor's values", HINTS["item"]))


def lazy_conversion(tx, fn, t: TensorVariable, args, kwargs) -> LazyScalarVariable | None:
    """``float(t)`` / ``int(t)`` of a 0-d value (None: not deferred)."""
    if args or kwargs or t.shape:
        return None
    kind = t.meta.dtype.kind
    if not ((fn is float and kind in "biuf") or (fn is int and kind in "biu")):
        return None
    return _lazy(tx, t, fn, f"{fn.__name__}()",
                 Unsupported("data_dependent", f"{fn.__name__}() of a tensor reads its value",
                             HINTS["convert"]))
