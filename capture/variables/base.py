"""Variables: what the symbolic stack and locals hold.

Each Variable knows its source (``None`` when computed during the trace).
Behaviour lives on the classes: ``getattr(tx, name)``, ``call(tx, args,
kwargs)``, ``truth(tx)``; ``tx`` is the instruction translator (it owns the
tracer, the guards and the side-effect log).
"""
from __future__ import annotations

import enum
from typing import Any

import numpy as np

from ..errors import Unsupported, UserCodeRaises
from ..sources import DataSource, Source

__all__ = ["Variable", "ConstantVariable", "NullVariable", "NULL", "TensorVariable",
           "CONSTANT_TYPES", "TensorKind", "TENSOR", "NDARRAY", "NPSCALAR"]

CONSTANT_TYPES = (int, float, bool, str, bytes, complex, type(None), type(Ellipsis),
                  type(NotImplemented), range, slice)



class TensorKind(enum.Enum):
    """What a ``TensorVariable`` is at run time."""
    TENSOR = "tensor"        # a frame.Tensor
    NDARRAY = "ndarray"      # a numpy.ndarray
    NPSCALAR = "npscalar"    # a NumPy scalar (``np.float32(1.5)``): a 0-d value

    def __str__(self) -> str:
        return self.value


TENSOR, NDARRAY, NPSCALAR = TensorKind.TENSOR, TensorKind.NDARRAY, TensorKind.NPSCALAR


class Variable:
    __slots__ = ("source",)

    def __init__(self, source: Source | None = None):
        self.source = source

    def python_type(self) -> type:
        raise Unsupported("unsupported_object", f"type of {self!r}")

    def is_constant(self) -> bool:
        return False

    def as_constant(self) -> Any:
        raise Unsupported("unsupported_object", f"{self!r} is not a Python constant")

    def truth(self, tx) -> bool:
        raise Unsupported("unsupported_object", f"truth value of {self!r}")

    def getattr(self, tx, name: str) -> "Variable":
        raise Unsupported("unsupported_object", f"attribute {name!r} of {self!r}")

    def call(self, tx, args: list["Variable"], kwargs: dict[str, "Variable"]) -> "Variable":
        raise Unsupported("unsupported_call", f"calling {self!r}")

    def iterate(self, tx) -> list["Variable"]:
        raise Unsupported("unsupported_object", f"iterating over {self!r}")

    def get_iter(self, tx) -> "Variable":
        """``iter(self)``: an IteratorVariable."""
        from .containers import IteratorVariable
        return IteratorVariable(self.iterate(tx))

    def __repr__(self) -> str:
        src = f" from {self.source}" if self.source is not None else ""
        return f"<{type(self).__name__}{src}>"


class ConstantVariable(Variable):
    """An immutable Python value known at trace time (specialised and guarded)."""
    __slots__ = ("value",)

    def __init__(self, value, source: Source | None = None):
        super().__init__(source)
        self.value = value

    def python_type(self) -> type:
        return type(self.value)

    def is_constant(self) -> bool:
        return True

    def as_constant(self):
        return self.value

    def truth(self, tx) -> bool:
        return bool(self.value)

    def getattr(self, tx, name: str) -> Variable:
        from .callables import wrap_constant_attr
        return wrap_constant_attr(tx, self, name)

    def iterate(self, tx) -> list[Variable]:
        if isinstance(self.value, (str, bytes, range, tuple, frozenset)):
            return [ConstantVariable(v) for v in self.value]
        return super().iterate(tx)

    def __repr__(self) -> str:
        return f"Constant({self.value!r})"


class NullVariable(Variable):
    """The NULL marker CPython pushes below (or above) a callable."""
    __slots__ = ()

    def __repr__(self) -> str:
        return "NULL"


NULL = NullVariable()


class TensorVariable(Variable):
    """A graph value.  ``meta`` is the tracer's meta array for it; ``kind`` is
    the Python type plain code would have produced: a frame Tensor, an ndarray,
    or a NumPy scalar (0-d NumPy results).

    ``base`` is the variable whose memory this one may share (a NumPy view,
    ``frame.from_numpy``), else None; ``stale`` is set when that memory was
    written in place after the view was taken: the view's meta no longer holds
    its value, so any later use of it is unsupported."""
    __slots__ = ("meta", "kind", "requires_grad", "base", "stale", "recipe", "pytype")

    def __init__(self, meta: np.ndarray, kind: TensorKind, source: Source | None = None,
                 requires_grad: bool = False):
        super().__init__(source)
        self.meta = meta
        self.kind = kind
        self.requires_grad = requires_grad
        self.base: TensorVariable | None = None
        self.stale = False
        # for a view: (parent variable, fn, args, kwargs) with fn(parent, *args, **kwargs)
        # remaking it from its parent at run time (so it shares memory as NumPy's does)
        self.recipe: tuple | None = None
        self.pytype: type | None = None  # a Tensor subclass (frame.nn.Parameter) of an input

    def check_fresh(self) -> None:
        """Refuse to use a view whose memory was overwritten in place."""
        if self.stale:
            raise Unsupported("side_effect", "a NumPy view used after its base array was updated "
                                             "in place")

    @property
    def shape(self) -> tuple[int, ...]:
        return self.meta.shape

    @property
    def dtype(self):
        from frame.dtypes import from_numpy
        return from_numpy(self.meta.dtype)

    def python_type(self) -> type:
        if self.kind == TENSOR:
            from frame.tensor import Tensor
            return self.pytype or Tensor
        if self.kind == NDARRAY:
            return np.ndarray
        return self.meta.dtype.type

    def array_source(self) -> Source:
        """The source of the NumPy array holding this (sourced) value's data."""
        return DataSource(self.source) if self.kind == TENSOR else self.source

    def as_python(self):
        """The object frame's API functions should see for this value."""
        if self.kind == TENSOR:
            from frame.tensor import Tensor
            return Tensor._wrap(self.meta)
        return self.meta

    def truth(self, tx) -> bool:
        raise Unsupported("data_dependent", "the truth value of a tensor depends on its data")

    def getattr(self, tx, name: str) -> Variable:
        from .tensor_ops import tensor_getattr
        return tensor_getattr(tx, self, name)

    def iterate(self, tx) -> list[Variable]:
        return self.get_iter(tx).iterate(tx)

    def get_iter(self, tx) -> Variable:
        """Rows are read when the loop asks for them (``Tensor.__iter__`` and
        NumPy iterate lazily: an in-place update in the loop body shows)."""
        if not self.shape:
            raise UserCodeRaises("TypeError: iteration over a 0-d tensor")
        from .containers import LazyIteratorVariable
        from .tensor_ops import tensor_getitem
        position = [0]
        length = self.shape[0]

        def row(tx):
            if position[0] >= length:
                return None
            position[0] += 1
            return tensor_getitem(tx, self, ConstantVariable(position[0] - 1))
        return LazyIteratorVariable(row, type(iter(())))

    def __repr__(self) -> str:
        return f"Tensor({self.kind} {self.meta.dtype}{list(self.shape)})"


def broadcasts_to(shape: tuple, target: tuple) -> bool:
    """Does an array of ``shape`` broadcast to ``target`` unchanged (an in-place
    write, ``out=`` or ``where=`` of that shape into an array of ``target``)?"""
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False
