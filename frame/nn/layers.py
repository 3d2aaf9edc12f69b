"""Layers: Linear, Conv2d, Embedding, activations (ReLU, LeakyReLU, GELU, SiLU,
Sigmoid, Tanh, Softmax), pooling (MaxPool2d, AvgPool2d), Flatten, Identity,
Dropout, LayerNorm, the containers (Sequential, ModuleList, ModuleDict) and the
losses as modules (CrossEntropyLoss, NLLLoss, MSELoss, L1Loss,
BCEWithLogitsLoss), as PyTorch names them.

Initialisation follows PyTorch's defaults (uniform in +-1/sqrt(fan_in) for
weights and biases), drawn from frame's generator (``frame.manual_seed``).
"""
from __future__ import annotations

import math

from ..functions.nn import DEFAULT_AXIS, axis_or_dim
from ..functions.random import generator, _lock
from ..errors import FrameTypeError, FrameValueError
from . import functional as F
from .module import Module, Parameter

__all__ = ["Linear", "Conv2d", "Embedding", "ReLU", "LeakyReLU", "GELU", "SiLU", "Sigmoid", "Tanh",
           "Softmax", "LogSoftmax", "MaxPool2d", "AvgPool2d", "Flatten", "Identity", "Dropout",
           "Sequential", "ModuleList", "ModuleDict", "LayerNorm", "CrossEntropyLoss", "NLLLoss",
           "MSELoss", "L1Loss", "BCEWithLogitsLoss"]


def _uniform(shape, bound: float) -> Parameter:
    import numpy as np
    with _lock:
        data = generator().uniform(-bound, bound, size=shape).astype(np.float32)
    return Parameter(data)


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` of shape [out, in]."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        super().__init__()
        if in_features <= 0 or out_features <= 0:
            raise FrameValueError(f"Linear: sizes must be positive, got {in_features}, {out_features}")
        self.in_features = in_features
        self.out_features = out_features
        bound = 1.0 / math.sqrt(in_features)
        self.weight = _uniform((out_features, in_features), bound)
        self.bias = _uniform((out_features,), bound) if bias else None

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Conv2d(Module):
    """2-D convolution over NCHW input with OIHW weights."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True):
        super().__init__()
        kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
        if in_channels % groups or out_channels % groups:
            raise FrameValueError(f"Conv2d: channels ({in_channels}, {out_channels}) must be "
                                  f"divisible by groups={groups}")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = (kh, kw)
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        fan_in = in_channels // groups * kh * kw
        bound = 1.0 / math.sqrt(fan_in)
        self.weight = _uniform((out_channels, in_channels // groups, kh, kw), bound)
        self.bias = _uniform((out_channels,), bound) if bias else None

    def forward(self, x):
        return F.conv2d(x, self.weight, self.bias, stride=self.stride, padding=self.padding,
                        dilation=self.dilation, groups=self.groups)

    def extra_repr(self) -> str:
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding}")


class ReLU(Module):
    def forward(self, x):
        return F.relu(x)


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = float(negative_slope)

    def forward(self, x):
        return F.leaky_relu(x, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class GELU(Module):
    """``gelu``; ``approximate="tanh"`` is the tanh form, as PyTorch's."""

    def __init__(self, approximate: str = "none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise FrameValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x):
        return F.gelu(x, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    def forward(self, x):
        return F.silu(x)


class Sigmoid(Module):
    def forward(self, x):
        return F.sigmoid(x)


class Tanh(Module):
    def forward(self, x):
        return F.tanh(x)


class Identity(Module):
    """Returns its input (a placeholder layer)."""

    def forward(self, x):
        return x


class Flatten(Module):
    """Merge dims ``start_dim..end_dim`` into one (PyTorch's defaults: all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        shape = tuple(x.shape)
        n = len(shape)
        start = self.start_dim + n if self.start_dim < 0 else self.start_dim
        end = self.end_dim + n if self.end_dim < 0 else self.end_dim
        if not 0 <= start <= end < n:
            raise FrameValueError(f"Flatten: dims {self.start_dim}..{self.end_dim} do not fit a "
                                  f"{n}-D input of shape {list(shape)}")
        return x.reshape(shape[:start] + (math.prod(shape[start:end + 1]),) + shape[end + 1:])

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def forward(self, x):
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(MaxPool2d):
    def forward(self, x):
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding)


class Softmax(Module):
    """``softmax`` over ``axis`` (``dim`` is accepted as PyTorch's name for it; not both)."""

    def __init__(self, axis: int = DEFAULT_AXIS, *, dim: int | None = None):
        super().__init__()
        self.axis = axis_or_dim(type(self).__name__, axis, dim)

    def forward(self, x):
        return F.softmax(x, axis=self.axis)

    def extra_repr(self) -> str:
        return f"axis={self.axis}"


class LogSoftmax(Softmax):
    """``log_softmax`` over ``axis``."""

    def forward(self, x):
        return F.log_softmax(x, axis=self.axis)


class Dropout(Module):
    """In training mode, zero each element with probability ``p`` and scale the
    rest by ``1 / (1 - p)`` (masks from frame's generator, see ``manual_seed``);
    in eval mode (``module.eval()``) the input is returned unchanged.

    Under ``frame.jit`` the eval-mode module is captured (it does nothing); a
    training-mode call draws random numbers, which capture never bakes into a
    graph: the call is a graph break and runs natively."""

    def __init__(self, p: float = 0.5):
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p < 1.0:
            raise FrameValueError(f"Dropout: p must be a probability in [0, 1), got {p!r}")
        self.p = float(p)

    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        return F.dropout(x, self.p, True)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class Embedding(Module):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim``, looked up
    by integer tensors (``F.embedding``); initialised from N(0, 1), as PyTorch's."""

    def __init__(self, num_embeddings: int, embedding_dim: int):
        super().__init__()
        if num_embeddings <= 0 or embedding_dim <= 0:
            raise FrameValueError(f"Embedding: sizes must be positive, got {num_embeddings}, "
                                  f"{embedding_dim}")
        import numpy as np
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        with _lock:
            data = generator().standard_normal((num_embeddings, embedding_dim)).astype(np.float32)
        self.weight = Parameter(data)

    def forward(self, indices):
        return F.embedding(indices, self.weight)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"


class Sequential(Module):
    """Modules applied in order.  Its parameters are named by position, as
    PyTorch names them (``0.weight``, ``2.bias``), so a PyTorch
    ``Sequential``'s ``state_dict()`` loads into the same frame model.

    >>> model = frame.nn.Sequential(frame.nn.Linear(2, 3), frame.nn.ReLU(), frame.nn.Linear(3, 1))
    >>> [name for name, _ in model.named_parameters()]
    ['0.weight', '0.bias', '2.weight', '2.bias']
    """

    def __init__(self, *layers: Module):
        super().__init__()
        for layer in layers:
            self._check(layer)
        self.layers = list(layers)

    @staticmethod
    def _check(layer) -> Module:
        if not isinstance(layer, Module):
            raise FrameValueError(f"Sequential takes modules, got {type(layer).__name__}")
        return layer

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def __getitem__(self, i):
        if isinstance(i, slice):
            return Sequential(*self.layers[i])
        return self.layers[i]

    def __len__(self) -> int:
        return len(self.layers)

    def __iter__(self):
        return iter(self.layers)

    def append(self, module: Module) -> "Sequential":
        self.layers.append(self._check(module))
        return self

    def named_children(self):
        for i, m in enumerate(self.layers):
            yield str(i), m

    def _named_tensors(self, prefix: str, seen: set[int], kind: str):
        for i, m in enumerate(self.layers):
            yield from m._named_tensors(f"{prefix}{i}.", seen, kind)


class ModuleList(Module):
    """A list of modules whose parameters belong to the owner
    (``named_parameters`` names them ``<attr>.<i>.<name>``, as PyTorch does).

    >>> layers = frame.nn.ModuleList([frame.nn.Linear(2, 2) for _ in range(3)])
    >>> len(layers), len(list(layers.parameters()))
    (3, 6)
    """

    def __init__(self, modules=()):
        super().__init__()
        self.items: list[Module] = []
        self.extend(modules)

    @staticmethod
    def _check(module) -> "Module":
        if not isinstance(module, Module):
            raise FrameValueError(f"ModuleList holds modules, got {type(module).__name__}")
        return module

    def append(self, module: Module) -> "ModuleList":
        self.items.append(self._check(module))
        return self

    def extend(self, modules) -> "ModuleList":
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        self.items.insert(index, self._check(module))

    def __getitem__(self, i):
        if isinstance(i, slice):
            return ModuleList(self.items[i])
        return self.items[i]

    def __setitem__(self, i: int, module: Module) -> None:
        self.items[i] = self._check(module)

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self):
        return iter(self.items)

    def forward(self, *args, **kwargs):
        raise FrameTypeError("ModuleList is a container: call its modules, not the list")

    def named_children(self):
        for i, m in enumerate(self.items):
            yield str(i), m

    def _named_tensors(self, prefix: str, seen: set[int], kind: str):
        for i, m in enumerate(self.items):
            yield from m._named_tensors(f"{prefix}{i}.", seen, kind)


class ModuleDict(Module):
    """A dict of modules (insertion order) whose parameters belong to the owner
    (named ``<attr>.<key>.<name>``)."""

    def __init__(self, modules=None):
        super().__init__()
        self.items_: dict[str, Module] = {}
        if modules is not None:
            self.update(modules)

    def __setitem__(self, key: str, module: Module) -> None:
        if not isinstance(module, Module):
            raise FrameValueError(f"ModuleDict holds modules, got {type(module).__name__}")
        self.items_[str(key)] = module

    def __getitem__(self, key: str) -> Module:
        return self.items_[key]

    def __delitem__(self, key: str) -> None:
        del self.items_[key]

    def __contains__(self, key) -> bool:
        return key in self.items_

    def __len__(self) -> int:
        return len(self.items_)

    def __iter__(self):
        return iter(self.items_)

    def keys(self):
        return self.items_.keys()

    def values(self):
        return self.items_.values()

    def items(self):
        return self.items_.items()

    def update(self, modules) -> None:
        pairs = modules.items() if hasattr(modules, "items") else modules
        for key, module in pairs:
            self[key] = module

    def pop(self, key: str) -> Module:
        return self.items_.pop(key)

    def forward(self, *args, **kwargs):
        raise FrameTypeError("ModuleDict is a container: call its modules, not the dict")

    def named_children(self):
        yield from self.items_.items()

    def _named_tensors(self, prefix: str, seen: set[int], kind: str):
        for key, m in self.items_.items():
            yield from m._named_tensors(f"{prefix}{key}.", seen, kind)


class LayerNorm(Module):
    """Normalise over the trailing ``normalized_shape`` dims, with an affine map."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True):
        super().__init__()
        import numpy as np
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape = shape
        self.eps = eps
        if elementwise_affine:
            self.weight = Parameter(np.ones(shape, np.float32))
            self.bias = Parameter(np.zeros(shape, np.float32))
        else:
            self.weight = None
            self.bias = None

    def forward(self, x):
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}"


class _Loss(Module):
    _fn = None

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        if reduction not in ("mean", "sum", "none"):
            raise FrameValueError(f"{type(self).__name__}: reduction must be 'mean', 'sum' or "
                                  f"'none', got {reduction!r}")
        self.reduction = reduction

    def forward(self, input, target):
        return self._fn(input, target, reduction=self.reduction)

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"


class CrossEntropyLoss(_Loss):
    """``F.cross_entropy(logits, labels)`` as a module, with its ``weight``,
    ``ignore_index`` and ``label_smoothing``."""
    _fn = staticmethod(F.cross_entropy)

    def __init__(self, weight=None, *, ignore_index: int | None = None, reduction: str = "mean",
                 label_smoothing: float = 0.0):
        if isinstance(weight, str):
            raise FrameTypeError(f"CrossEntropyLoss: the first argument is the class weights (as "
                                 f"in PyTorch); pass reduction={weight!r} by name")
        super().__init__(reduction)
        self.weight, self.ignore_index, self.label_smoothing = weight, ignore_index, label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, self.reduction, weight=self.weight,
                               ignore_index=self.ignore_index, label_smoothing=self.label_smoothing)


class NLLLoss(_Loss):
    _fn = staticmethod(F.nll_loss)


class MSELoss(_Loss):
    _fn = staticmethod(F.mse_loss)


class L1Loss(_Loss):
    _fn = staticmethod(F.l1_loss)


class BCEWithLogitsLoss(_Loss):
    """``F.binary_cross_entropy_with_logits`` as a module (``pos_weight`` optional)."""

    def __init__(self, reduction: str = "mean", pos_weight=None):
        super().__init__(reduction)
        self.pos_weight = pos_weight

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, reduction=self.reduction,
                                                  pos_weight=self.pos_weight)
