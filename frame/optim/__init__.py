"""frame.optim: SGD (with momentum) and Adam.

Updates are written with frame ops and in-place tensor updates
(``p -= lr * g``), so inside a jitted training step capture traces them like
any other tensor code: parameter updates become side effects on the
parameter tensors.  ``step()`` runs under ``no_grad``: the updates are not
recorded, and in-place updates of parameters (leaves that require grad) are
allowed there.  Optimizer state lives in lists aligned with the parameter
list (not in dicts keyed by tensors) for the same reason.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from ..autograd.tape import no_grad
from ..functions.elementwise import astype
from ..errors import FrameTypeError, FrameValueError
from ..tensor import Tensor

__all__ = ["Optimizer", "SGD", "Adam"]


class Optimizer:
    def __init__(self, params: Iterable[Tensor], lr: float):
        self.params = list(params)
        if not self.params:
            raise FrameValueError("optimizer got an empty parameter list")
        for p in self.params:
            if not isinstance(p, Tensor):
                raise FrameTypeError(f"optimizer parameters must be Tensors, got {type(p).__name__}")
        if lr <= 0:
            raise FrameValueError(f"learning rate must be positive, got {lr}")
        self.lr = float(lr)

    def zero_grad(self) -> None:
        """Set every parameter's gradient to None (as PyTorch's default)."""
        for p in self.params:
            p.grad = None

    def step(self) -> None:  # pragma: no cover - abstract
        raise FrameTypeError(f"{type(self).__name__} does not implement step()")


class SGD(Optimizer):
    """Stochastic gradient descent, with optional momentum (PyTorch's form:
    ``buf = momentum * buf + g; p -= lr * buf``).

    >>> opt = frame.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)  # doctest: +SKIP
    """

    def __init__(self, params, lr: float, momentum: float = 0.0):
        super().__init__(params, lr)
        if momentum < 0:
            raise FrameValueError(f"momentum must be >= 0, got {momentum}")
        self.momentum = float(momentum)
        self.buffers: list = [None] * len(self.params)

    def step(self) -> None:
        with no_grad():
            for i, p in enumerate(self.params):
                g = p.grad
                if g is None:
                    continue
                if self.momentum:
                    buf = self.buffers[i]
                    buf = g if buf is None else buf * self.momentum + g
                    self.buffers[i] = buf
                    g = buf
                p -= g * self.lr


class Adam(Optimizer):
    """Adam (Kingma & Ba), bias-corrected, as PyTorch's default Adam.

    The step count is a float64 0-d tensor updated in place (``steps`` reads it
    as an int), so that a jitted training step does not specialise on it: the
    bias corrections ``1 - beta ** t`` are computed with frame ops from it and
    cast to each parameter's dtype, as a Python float would be.
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8):
        super().__init__(params, lr)
        b1, b2 = betas
        if not (0 <= b1 < 1 and 0 <= b2 < 1):
            raise FrameValueError(f"betas must be in [0, 1), got {betas}")
        self.beta1, self.beta2, self.eps = float(b1), float(b2), float(eps)
        self.step_count = Tensor(np.zeros((), dtype=np.float64))
        self.m: list = [None] * len(self.params)
        self.v: list = [None] * len(self.params)

    @property
    def steps(self) -> int:
        """How many times ``step()`` ran."""
        return int(self.step_count.item())

    def step(self) -> None:
        with no_grad():
            self.step_count += 1.0
            c1 = 1.0 - self.beta1 ** self.step_count   # float64 0-d tensors
            c2 = 1.0 - self.beta2 ** self.step_count
            for i, p in enumerate(self.params):
                g = p.grad
                if g is None:
                    continue
                m = g * (1.0 - self.beta1) if self.m[i] is None else self.m[i] * self.beta1 + g * (1.0 - self.beta1)
                v = (g * g) * (1.0 - self.beta2) if self.v[i] is None else self.v[i] * self.beta2 + (g * g) * (1.0 - self.beta2)
                self.m[i], self.v[i] = m, v
                pc1, pc2 = astype(c1, p.dtype), astype(c2, p.dtype)
                p -= (m / pc1) / ((v / pc2).sqrt() + self.eps) * self.lr
