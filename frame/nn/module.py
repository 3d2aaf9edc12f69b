"""Module and Parameter.

A Module keeps its parameters and sub-modules as plain attributes (no
``__getattr__``/``__setattr__`` magic), so capture reads ``self.fc1.weight``
like any attribute and guards it by its source.  Traversal walks the instance
``__dict__`` in insertion order, including lists, tuples and dicts of modules.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Iterator

import numpy as np

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
        yield from self._named_parameters(prefix, seen)

    def _named_parameters(self, prefix: str, seen: set[int]):
        for name, value in vars(self).items():
            full = f"{prefix}{name}"
            if isinstance(value, Parameter):
                if id(value) not in seen:
                    seen.add(id(value))
                    yield full, value
            elif isinstance(value, Module):
                yield from value._named_parameters(full + ".", seen)
            elif isinstance(value, (list, tuple, dict)):
                items = value.items() if isinstance(value, dict) else enumerate(value)
                for key, item in items:
                    if isinstance(item, Parameter) and id(item) not in seen:
                        seen.add(id(item))
                        yield f"{full}.{key}", item
                    elif isinstance(item, Module):
                        yield from item._named_parameters(f"{full}.{key}.", seen)

    def parameters(self) -> Iterator[Parameter]:
        for _, p in self.named_parameters():
            yield p

    # -- modes -----------------------------------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        for m in self.modules():
            m.training = bool(mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    # -- state ---------------------------------------------------------------------------------
    def state_dict(self) -> "OrderedDict[str, Tensor]":
        """Name -> a copy of each parameter's data as a Tensor."""
        return OrderedDict((name, Tensor(p.numpy().copy())) for name, p in self.named_parameters())

    def load_state_dict(self, state: dict, strict: bool = True) -> None:
        """Copy values into the parameters in place (shapes must match)."""
        params = dict(self.named_parameters())
        if strict:
            missing = sorted(set(params) - set(state))
            unexpected = sorted(set(state) - set(params))
            if missing or unexpected:
                raise FrameValueError(f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}")
        for name, value in state.items():
            if name not in params:
                continue
            p = params[name]
            data = np.asarray(value.numpy() if isinstance(value, Tensor) else value)
            if data.shape != p.shape:
                raise FrameValueError(f"load_state_dict: {name} has shape {list(p.shape)}, "
                                      f"the state has {list(data.shape)}")
            np.copyto(p._data, data, casting="same_kind")

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
