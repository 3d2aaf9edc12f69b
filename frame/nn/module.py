"""Module and Parameter.

A Module keeps its parameters, buffers and sub-modules as plain attributes (no
``__getattr__``/``__setattr__`` magic), so capture reads ``self.fc1.weight``
like any attribute and guards it by its source.  Traversal walks the instance
``__dict__`` in insertion order, including lists, tuples and dicts of modules.
A buffer is an attribute whose name ``register_buffer`` recorded (in the
instance's ``_buffer_names``), so assigning it replaces the buffer, as in
PyTorch; a value other than a Tensor or None is refused where the buffers are
walked (there is no ``__setattr__`` to refuse it at the assignment).
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Iterator

import numpy as np

from .. import dtypes
from ..autograd.tape import set_requires_grad
from ..errors import FrameTypeError, FrameValueError
from ..tensor import Tensor

__all__ = ["Parameter", "Module"]

# Auto-jit's module-call counter (capture/autojit.py installs it while
# ``frame.config.auto_jit`` is on, else None): ``Module.__call__`` hands the call
# to ``call_hook(module, args, kwargs)``, which runs ``forward`` or the compiled
# entry.  Off, it costs one global load and an identity test.
call_hook = None


class Parameter(Tensor):
    """A Tensor that is a module's learnable state (``requires_grad=True``).

    >>> p = frame.nn.Parameter(frame.zeros((2,)))
    >>> p.requires_grad
    True
    """

    __slots__ = ()

    def __init__(self, data, requires_grad: bool = True):
        super().__init__(data.numpy() if isinstance(data, Tensor) else data)
        if requires_grad:
            self.requires_grad_(True)

    def __repr__(self) -> str:
        return "Parameter(" + super().__repr__() + ")"

    def __reduce__(self):
        return (_rebuild_parameter, (self._data, self._requires_grad))

    def __deepcopy__(self, memo):
        p = _rebuild_parameter(self._data.copy(), self._requires_grad)
        if self._grad is not None:
            p._grad = self._grad.__deepcopy__(memo)
        return p


def _rebuild_parameter(data, requires_grad):
    p = Parameter.__new__(Parameter)
    p._data = data
    p._requires_grad = requires_grad
    p._grad = None
    return p


class Module:
    """Base class of layers and models: override ``forward``.

    >>> class Net(frame.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = frame.nn.Linear(4, 2)
    ...     def forward(self, x):
    ...         return frame.relu(self.fc(x))
    """

    training: bool = True

    def __init__(self):
        self.training = True

    def forward(self, *args, **kwargs):
        raise FrameTypeError(f"{type(self).__name__} does not define forward()")

    def __call__(self, *args, **kwargs):
        hook = call_hook
        if hook is None:
            return self.forward(*args, **kwargs)
        return hook(self, args, kwargs)  # auto-jit (capture/autojit.py)

    # -- traversal ----------------------------------------------------------------------
    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        for name, value in vars(self).items():
            if isinstance(value, Module):
                yield name, value
            elif isinstance(value, (list, tuple)):
                for i, item in enumerate(value):
                    if isinstance(item, Module):
                        yield f"{name}.{i}", item
            elif isinstance(value, dict):
                for key, item in value.items():
                    if isinstance(item, Module):
                        yield f"{name}.{key}", item

    def children(self) -> Iterator["Module"]:
        for _, m in self.named_children():
            yield m

    def modules(self) -> Iterator["Module"]:
        yield self
        for child in self.children():
            yield from child.modules()

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Parameter]]:
        """Parameters in attribute order, each once (shared ones under their first name)."""
        seen: set[int] = set()
        yield from self._named_tensors(prefix, seen, "parameters")

    def parameters(self) -> Iterator[Parameter]:
        for _, p in self.named_parameters():
            yield p

    def _named_tensors(self, prefix: str, seen: set[int], kind: str):
        """This module's and its sub-modules' tensors of one ``kind`` in attribute
        order, each once: ``"parameters"``, ``"buffers"`` (those that are not None),
        or ``"state"`` (parameters and persistent buffers: ``state_dict``'s)."""
        buffers = _buffer_names(self)
        for name, value in vars(self).items():
            full = f"{prefix}{name}"
            if name in buffers:
                if kind == "buffers" or (kind == "state" and buffers[name]):
                    if _buffer_value(self, name, value) is not None and id(value) not in seen:
                        seen.add(id(value))
                        yield full, value
            elif isinstance(value, Parameter):
                if kind != "buffers" and id(value) not in seen:
                    seen.add(id(value))
                    yield full, value
            elif isinstance(value, Module):
                yield from value._named_tensors(full + ".", seen, kind)
            elif isinstance(value, (list, tuple, dict)):
                items = value.items() if isinstance(value, dict) else enumerate(value)
                for key, item in items:
                    if isinstance(item, Parameter) and kind != "buffers" and id(item) not in seen:
                        seen.add(id(item))
                        yield f"{full}.{key}", item
                    elif isinstance(item, Module):
                        yield from item._named_tensors(f"{full}.{key}.", seen, kind)

    # -- buffers ---------------------------------------------------------------------------
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Make ``name`` a buffer: module state that is not a parameter (BatchNorm's
        running statistics).  A buffer is a plain attribute holding a Tensor (or None):
        assigning ``self.name = t`` later replaces it; optimizers never see it
        (``parameters()`` leaves it out); ``state_dict()`` holds it when
        ``persistent``, under its attribute path (``bn.running_mean``), as PyTorch.

        >>> m = frame.nn.Module()
        >>> m.register_buffer("steps", frame.zeros((), dtype=frame.int64))
        >>> [name for name, _ in m.named_buffers()]
        ['steps']
        """
        if not isinstance(name, str):
            raise FrameTypeError(f"buffer name should be a string, got {type(name).__name__}")
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        buffers = vars(self).setdefault("_buffer_names", {})
        if name not in buffers and hasattr(self, name):
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise FrameTypeError(f"cannot assign '{type(tensor).__name__}' object to buffer "
                                 f"'{name}' (a frame Tensor or None required)")
        buffers[name] = bool(persistent)
        setattr(self, name, tensor)

    def named_buffers(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Tensor]]:
        """Buffers (those that are not None) in attribute order, with their sub-modules'
        when ``recurse``, each once."""
        if recurse:
            seen: set[int] = set()
            yield from self._named_tensors(prefix, seen, "buffers")
            return
        buffers = _buffer_names(self)
        for name, value in vars(self).items():
            if name in buffers and _buffer_value(self, name, value) is not None:
                yield prefix + name, value

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # -- modes -----------------------------------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        for m in self.modules():
            m.training = bool(mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    # -- state ---------------------------------------------------------------------------------
    def state_dict(self) -> "OrderedDict[str, Tensor]":
        """Name -> a copy of each parameter's and persistent buffer's data as a Tensor
        (PyTorch's names: ``0.weight``, ``bn.running_mean``, ``bn.num_batches_tracked``)."""
        return OrderedDict((name, Tensor(t.numpy().copy()))
                           for name, t in self._named_tensors("", set(), "state"))

    def load_state_dict(self, state: dict, strict: bool = True) -> None:
        """Copy values into the parameters and persistent buffers in place (shapes
        must match)."""
        targets = dict(self._named_tensors("", set(), "state"))
        if strict:
            missing = sorted(set(targets) - set(state))
            unexpected = sorted(set(state) - set(targets))
            if missing or unexpected:
                raise FrameValueError(f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}")
        for name, value in state.items():
            if name not in targets:
                continue
            t = targets[name]
            data = np.asarray(value.numpy() if isinstance(value, Tensor) else value)
            if data.shape != t.shape:
                raise FrameValueError(f"load_state_dict: {name} has shape {list(t.shape)}, "
                                      f"the state has {list(data.shape)}")
            np.copyto(t._data, data, casting="same_kind")

    # -- dtype and device ----------------------------------------------------------------------
    def to(self, *args, dtype=None, device=None, non_blocking: bool = False) -> "Module":
        """``module.to(dtype)``, ``.to("cpu")``, ``.to(tensor)`` (its dtype), ``.to(device,
        dtype)``: converts the floating-point parameters and buffers (and the
        parameters' gradients) to ``dtype`` in place and returns the module, as
        PyTorch: the Parameter objects stay the same (an optimizer made before
        still holds them), integer buffers (``num_batches_tracked``) keep their
        dtype.  frame has one device, the host: other devices raise.

        >>> model = frame.nn.Linear(2, 3).to(frame.float64)
        >>> model.weight.dtype
        frame.float64
        """
        target = None if dtype is None else _floating_dtype(dtype)
        for a in args:
            if isinstance(a, Tensor):
                target = _floating_dtype(a.dtype)
            elif isinstance(a, str) and not _is_dtype_name(a):
                _check_device(a)
            else:
                target = _floating_dtype(a)
        if device is not None:
            _check_device(device)
        if target is not None:
            self._convert_floating(target)
        return self

    def float(self) -> "Module":
        """Floating-point parameters and buffers to float32 (``to(frame.float32)``)."""
        return self.to(dtypes.float32)

    def double(self) -> "Module":
        """Floating-point parameters and buffers to float64."""
        return self.to(dtypes.float64)

    def half(self) -> "Module":
        """Floating-point parameters and buffers to float16."""
        return self.to(dtypes.float16)

    def cpu(self) -> "Module":
        """The module itself: frame's tensors live on the host."""
        return self

    def _convert_floating(self, target: dtypes.DType) -> None:
        for _, t in self._named_tensors("", set(), "parameters"):
            _convert_in_place(t, target)
            if t._grad is not None:
                _convert_in_place(t._grad, target)
        for _, t in self._named_tensors("", set(), "buffers"):
            _convert_in_place(t, target)

    def zero_grad(self) -> None:
        for p in self.parameters():
            p.grad = None

    def __repr__(self) -> str:
        children = list(self.named_children())
        if not children:
            return f"{type(self).__name__}({self.extra_repr()})"
        inner = "\n".join(f"  ({n}): " + repr(m).replace("\n", "\n  ") for n, m in children)
        return f"{type(self).__name__}(\n{inner}\n)"

    def extra_repr(self) -> str:
        return ""


def _buffer_names(module: Module) -> dict[str, bool]:
    """The module's buffer names -> persistent (made by ``register_buffer``)."""
    return vars(module).get("_buffer_names", _NO_BUFFERS)


_NO_BUFFERS: dict[str, bool] = {}


def _buffer_value(module: Module, name: str, value):
    """A buffer's value, which assignment may have replaced: a Tensor or None."""
    if value is not None and not isinstance(value, Tensor):
        raise FrameTypeError(f"{type(module).__name__}.{name} is a buffer and holds a "
                             f"{type(value).__name__}; a buffer holds a frame Tensor or None")
    return value


def _floating_dtype(value) -> dtypes.DType:
    try:
        dt = dtypes.as_dtype(value)
    except (TypeError, ValueError):
        raise FrameTypeError(f"Module.to: expected a frame dtype, a tensor or the 'cpu' device, "
                             f"got {value!r}") from None
    if not dt.is_floating:
        raise FrameTypeError(f"Module.to only accepts floating point dtypes, but got desired "
                             f"dtype={dt.name}")
    return dt


def _is_dtype_name(text: str) -> bool:
    try:
        dtypes.as_dtype(text)
    except (TypeError, ValueError):
        return False
    return True


def _check_device(device) -> None:
    if str(device).split(":")[0] != "cpu":
        raise FrameValueError(f"Module.to: frame has only the 'cpu' device, got {device!r}")


def _convert_in_place(t: Tensor, target: dtypes.DType) -> None:
    """Give ``t`` its data converted to ``target`` when floating and of another
    dtype, keeping the Tensor object (autograd's registry of leaves is keyed by
    the data array, so a tracked leaf is registered again)."""
    if t._data.dtype.kind != "f" or t._data.dtype == target.np:
        return
    tracked = t._rg
    if tracked:
        set_requires_grad(t, False)
    t._data = t._data.astype(target.np)
    if tracked:
        set_requires_grad(t, True)
