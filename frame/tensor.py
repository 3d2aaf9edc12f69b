"""frame.Tensor: a host NumPy array plus autograd state.

Every op on a Tensor goes through the user-facing functions in
``frame.functions`` (and from there through the eager launch path, or the
capture frontend inside a jitted function).
"""
from __future__ import annotations

import numpy as np

from . import dtypes as _dt
from .hal.errors import FrameError, ErrorCode, FrameTypeError, FrameValueError

__all__ = ["Tensor", "tensor", "from_numpy"]


def _autograd_unavailable(what: str) -> FrameError:
    return FrameError(ErrorCode.UNIMPLEMENTED,
                      f"{what}: autograd is not available yet in this version of frame")


class Tensor:
    """An n-dimensional array on the host.

    >>> t = frame.tensor([[1.0, 2.0]])
    >>> (t * 2).sum().item()
    6.0
    """

    __slots__ = ("_data", "_requires_grad", "_grad", "__weakref__")
    __array_priority__ = 100

    def __init__(self, data, dtype=None, requires_grad: bool = False):
        from .functions._core import as_array
        arr = as_array(data)
        if dtype is not None:
            arr = arr.astype(_dt.as_dtype(dtype).np)
        elif isinstance(data, (np.ndarray, np.generic)) or type(data) is Tensor:
            arr = arr.copy()
        self._data = np.ascontiguousarray(arr) if not arr.flags.c_contiguous else arr
        self._requires_grad = False
        self._grad = None
        if requires_grad:
            self.requires_grad_(True)

    @classmethod
    def _wrap(cls, arr: np.ndarray) -> "Tensor":
        """Wrap an ndarray without copying or validation (internal)."""
        t = object.__new__(cls)
        t._data = arr
        t._requires_grad = False
        t._grad = None
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

    @property
    def T(self) -> "Tensor":
        from .functions import transpose
        return transpose(self)

    # -- autograd members (the autograd engine comes later) -------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, flag: bool = True) -> "Tensor":
        if flag and not (self._data.dtype.kind in "fc"):
            raise FrameTypeError(f"only floating-point tensors can require gradients, got {self.dtype}")
        self._requires_grad = bool(flag)
        return self

    @property
    def grad(self):
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None and not isinstance(value, Tensor):
            raise FrameTypeError(f"grad must be a Tensor or None, got {type(value).__name__}")
        if value is not None and value.shape != self.shape:
            raise FrameValueError(f"grad shape {list(value.shape)} does not match tensor shape {list(self.shape)}")
        self._grad = value

    def backward(self, gradient=None) -> None:
        raise _autograd_unavailable("Tensor.backward")

    def detach(self) -> "Tensor":
        """A tensor sharing this one's data, outside any autograd record."""
        return Tensor._wrap(self._data)

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
        if self._requires_grad:
            extra += ", requires_grad=True"
        return f"tensor({body}{extra})"

    def __str__(self) -> str:
        return str(self._data)

    def __reduce__(self):
        return (_rebuild, (self._data, self._requires_grad))

    def __copy__(self):
        return Tensor._wrap(self._data)

    def __deepcopy__(self, memo):
        t = Tensor._wrap(self._data.copy())
        t._requires_grad = self._requires_grad
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        return t


def _rebuild(data, requires_grad):
    t = Tensor._wrap(data)
    t._requires_grad = requires_grad
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
