"""frame.Tensor: a host NumPy array plus autograd state.

Every op on a Tensor goes through the user-facing functions in
``frame.functions`` (and from there through the eager launch path, or the
capture frontend inside a jitted function).
"""
from __future__ import annotations

import numpy as np

from . import dtypes as _dt
from .errors import FrameTypeError, FrameValueError

__all__ = ["Tensor", "tensor", "from_numpy"]


class Tensor:
    """An n-dimensional array on the host.

    >>> t = frame.tensor([[1.0, 2.0]])
    >>> (t * 2).sum().item()
    6.0
    """

    # Autograd state (frame/autograd/tape.py): ``_rg`` -- requires grad (leaves that
    # asked for it, and every recorded result); ``_grad_fn`` -- None for a leaf, else
    # ``(record, output index)`` of the op that made it; ``_version`` -- the in-place
    # write counter of a tracked tensor (shared with its detached views), else None.
    __slots__ = ("_data", "_rg", "_grad", "_grad_fn", "_version", "__weakref__")
    __array_priority__ = 100

    def __init__(self, data, dtype=None, requires_grad: bool = False):
        # function-level: frame.functions imports this module for the Tensor class, and
        # the conversion rules (weak scalars, nested lists of tensors) are functions'.
        from .functions._core import as_array
        arr = as_array(data)
        if dtype is not None:
            arr = arr.astype(_dt.as_dtype(dtype).np)
        elif isinstance(data, (np.ndarray, np.generic)) or type(data) is Tensor:
            arr = arr.copy()
        self._data = np.ascontiguousarray(arr) if not arr.flags.c_contiguous else arr
        self._rg = False
        self._grad = None
        self._grad_fn = None
        self._version = None
        if requires_grad:
            self.requires_grad_(True)

    @classmethod
    def _wrap(cls, arr: np.ndarray) -> "Tensor":
        """Wrap an ndarray without copying or validation (internal)."""
        t = object.__new__(cls)
        t._data = arr
        t._rg = False
        t._grad = None
        t._grad_fn = None
        t._version = None
        return t

    # -- attributes ---------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape

    @property
    def dtype(self) -> _dt.DType:
        return _dt.from_numpy(self._data.dtype)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> int:
        return self._data.size

    # -- autograd members -------------------------------------------------------
    # (``requires_grad_``, ``backward`` and ``T`` are bound in _tensor_methods.py: they
    # call into frame.autograd / frame.functions, which import this module.)
    @property
    def requires_grad(self) -> bool:
        """Whether ops on this tensor are recorded for autograd: True for leaves that
        asked for it (``requires_grad_()``, Parameters) and for every result of a
        recorded op."""
        return self._rg

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    @property
    def _requires_grad(self) -> bool:
        # Kept as a property over the ``_rg`` slot so that code which rebuilds tensors
        # attribute by attribute (pickling, frame.nn.Parameter) registers them with
        # autograd when it assigns the flag.
        return self._rg

    @_requires_grad.setter
    def _requires_grad(self, flag: bool) -> None:
        if not hasattr(self, "_grad_fn"):  # built by __new__ + attribute assignment
            self._rg = False
            self._grad_fn = None
            self._version = None
        self.requires_grad_(flag)

    @property
    def is_leaf(self) -> bool:
        """True unless this tensor is the result of a recorded op."""
        return self._grad_fn is None

    @property
    def grad_fn(self):
        """The record of the op that made this tensor (``.op``, ``.attrs``), or None
        for a leaf."""
        return None if self._grad_fn is None else self._grad_fn[0]

    @property
    def grad(self):
        """The gradient accumulated by ``backward()`` (a Tensor of this tensor's shape
        and dtype), or None."""
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None and not isinstance(value, Tensor):
            raise FrameTypeError(f"grad must be a Tensor or None, got {type(value).__name__}")
        if value is not None and value.shape != self.shape:
            raise FrameValueError(f"grad shape {list(value.shape)} does not match tensor shape {list(self.shape)}")
        self._grad = value

    def detach(self) -> "Tensor":
        """A tensor sharing this one's memory, outside any autograd record.

        The result holds a view (a different ndarray object over the same memory), so
        autograd never mistakes it for this tensor; in-place writes to either are seen
        by both, and count as writes to this tensor for autograd's checks.
        """
        t = Tensor._wrap(self._data.view())
        t._version = self._version
        return t

    # -- conversion -----------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """The data as an ndarray (shares memory)."""
        return self._data

    def item(self):
        if self._data.size != 1:
            raise FrameValueError(f"item(): only one-element tensors can be converted to a Python "
                                  f"scalar, this one has shape {list(self.shape)}")
        return self._data.item()

    def tolist(self):
        return self._data.tolist()

    def __array__(self, dtype=None, copy=None):
        if copy:
            return np.array(self._data, dtype=dtype, copy=True)
        if dtype is not None and np.dtype(dtype) != self._data.dtype:
            if copy is False:
                raise ValueError("a copy is needed to convert the dtype")
            return self._data.astype(dtype)
        return self._data

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise FrameValueError(f"the truth value of a tensor with {self._data.size} elements is "
                                  f"ambiguous; use .any() / .all() style reductions")
        return bool(self._data)

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind != "i" or self._data.ndim:
            raise FrameTypeError("only 0-d integer tensors can be used as an index")
        return int(self._data)

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise FrameTypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise FrameTypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        body = np.array2string(self._data, separator=", ", prefix="tensor(")
        extra = f", dtype={self.dtype.name}"
        if self._grad_fn is not None:
            extra += f", grad_fn=<{self._grad_fn[0].op}>"
        elif self._rg:
            extra += ", requires_grad=True"
        return f"tensor({body}{extra})"

    def __str__(self) -> str:
        return str(self._data)

    # Copies are leaves: a leaf keeps its requires_grad flag, the result of a recorded
    # op copies as a plain tensor (its record is not copied).
    def __reduce__(self):
        return (_rebuild, (self._data, self._rg and self._grad_fn is None))

    def __copy__(self):
        return Tensor._wrap(self._data.view())  # a view: see detach()

    def __deepcopy__(self, memo):
        t = Tensor._wrap(self._data.copy())
        if self._rg and self._grad_fn is None:
            t.requires_grad_(True)
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        return t


def _rebuild(data, requires_grad):
    t = Tensor._wrap(data)
    if requires_grad:
        t.requires_grad_(True)
    return t


def tensor(data, dtype=None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data``.

    Python float data becomes float32, Python int data int64, bool data bool;
    NumPy arrays keep their dtype unless ``dtype`` is given.

    >>> frame.tensor([[1.0, 2.0]]).dtype
    frame.float32
    """
    return Tensor(data, dtype=dtype, requires_grad=requires_grad)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor that shares memory with ``array`` (which must be C-contiguous)."""
    if not isinstance(array, np.ndarray):
        raise FrameTypeError(f"from_numpy expects an ndarray, got {type(array).__name__}")
    _dt.from_numpy(array.dtype)
    if not array.flags.c_contiguous:
        raise FrameValueError("from_numpy: the array must be C-contiguous to share memory "
                              "(use frame.tensor(array) to copy it)")
    return Tensor._wrap(array)
