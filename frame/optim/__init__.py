"""frame.optim: SGD (momentum, dampening, Nesterov), Adam (AMSGrad) and AdamW,
with PyTorch's parameter groups and hyperparameters (``maximize`` too).

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
from ..functions.elementwise import astype, maximum
from ..errors import FrameTypeError, FrameValueError
from ..tensor import Tensor

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]


class Optimizer:
    """The base of frame's optimizers, shaped like PyTorch's.

    ``params`` is an iterable of Tensors or of *parameter groups*: dicts with
    a ``"params"`` entry and optional per-group hyperparameters, the others
    taken from the optimizer's defaults.  ``param_groups`` is that list of
    dicts; a learning-rate schedule writes ``group["lr"]`` (or ``opt.lr``,
    which sets every group's).  Per-parameter state (momentum buffers, Adam's
    moments) lives in lists aligned with ``params``, the parameters of all
    groups in order.
    """

    def __init__(self, params: Iterable, defaults: dict):
        self.defaults = dict(defaults)
        self.param_groups: list[dict] = []
        groups = list(params) if not isinstance(params, Tensor) else [params]
        if not groups:
            raise FrameValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group: dict) -> None:
        """Add a group of parameters with its own hyperparameters (the
        optimizer's defaults fill the ones it leaves out), as PyTorch's."""
        if not isinstance(group, dict) or "params" not in group:
            raise FrameTypeError("a parameter group must be a dict with a 'params' entry, "
                                 f"got {type(group).__name__}")
        unknown = set(group) - set(self.defaults) - {"params"}
        if unknown:
            raise FrameValueError(f"{type(self).__name__} has no hyperparameter "
                                  f"{', '.join(sorted(map(repr, unknown)))}")
        params = group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        if not params:
            raise FrameValueError("optimizer got an empty parameter list")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        for p in params:
            if not isinstance(p, Tensor):
                raise FrameTypeError(f"optimizer parameters must be Tensors, got {type(p).__name__}")
            if id(p) in seen:
                raise FrameValueError("a parameter appears in more than one parameter group")
            seen.add(id(p))
        group = {**self.defaults, **group, "params": params}
        for key, value in group.items():
            if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
                group[key] = float(value)
        self._check(group)
        self.param_groups.append(group)
        self._extend_state(len(params))

    def _check(self, group: dict) -> None:
        if not group["lr"] > 0:
            raise FrameValueError(f"learning rate must be positive, got {group['lr']}")
        if group.get("weight_decay", 0.0) < 0:
            raise FrameValueError(f"weight_decay must be >= 0, got {group['weight_decay']}")

    def _extend_state(self, n: int) -> None:
        """Make room for the state of ``n`` more parameters."""

    @property
    def params(self) -> list[Tensor]:
        """The parameters of all groups, in order."""
        return [p for group in self.param_groups for p in group["params"]]

    @property
    def lr(self) -> float:
        """The first group's learning rate; setting it sets every group's."""
        return self.param_groups[0]["lr"]

    @lr.setter
    def lr(self, value: float) -> None:
        if not value > 0:
            raise FrameValueError(f"learning rate must be positive, got {value}")
        for group in self.param_groups:
            group["lr"] = float(value)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop every parameter's gradient (``set_to_none=True``, PyTorch's
        default) or fill it with zeros in place (an inf or NaN gradient too)."""
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:
                    p.grad = None
                elif p.grad is not None:
                    p.grad.zero_()

    def step(self) -> None:  # pragma: no cover - abstract
        raise FrameTypeError(f"{type(self).__name__} does not implement step()")


class SGD(Optimizer):
    """Stochastic gradient descent, with optional momentum, dampening,
    Nesterov momentum and L2 weight decay, in PyTorch's form::

        g = -grad if maximize else grad
        g += weight_decay * p
        buf = g (first step), else momentum * buf + (1 - dampening) * g
        g = g + momentum * buf if nesterov else buf
        p -= lr * g

    >>> opt = frame.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)  # doctest: +SKIP
    """

    def __init__(self, params, lr: float, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, *, maximize: bool = False):
        self.buffers: list = []
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay, "nesterov": bool(nesterov),
                                  "maximize": bool(maximize)})

    def _check(self, group: dict) -> None:
        super()._check(group)
        if group["momentum"] < 0:
            raise FrameValueError(f"momentum must be >= 0, got {group['momentum']}")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise FrameValueError("Nesterov momentum requires a momentum and zero dampening")

    def _extend_state(self, n: int) -> None:
        self.buffers += [None] * n

    def step(self) -> None:
        with no_grad():
            i = 0
            for group in self.param_groups:
                lr, momentum, decay = group["lr"], group["momentum"], group["weight_decay"]
                dampening, nesterov = group["dampening"], group["nesterov"]
                for p in group["params"]:
                    g = p.grad
                    if g is not None:
                        if group["maximize"]:
                            g = -g
                        if decay:
                            g = g + p * decay
                        if momentum:
                            buf = self.buffers[i]
                            if buf is None:
                                buf = g
                            elif dampening:
                                buf = buf * momentum + g * (1.0 - dampening)
                            else:
                                buf = buf * momentum + g
                            self.buffers[i] = buf
                            g = g + buf * momentum if nesterov else buf
                        p -= g * lr
                    i += 1


class Adam(Optimizer):
    """Adam (Kingma & Ba), bias-corrected, as PyTorch's default Adam
    (``weight_decay`` adds ``weight_decay * p`` to the gradient, PyTorch's
    L2 form; ``AdamW`` decays the weights instead).  ``amsgrad=True`` divides
    by the running maximum of the second moment; ``maximize=True`` ascends.

    The step count is a float64 0-d tensor updated in place (``steps`` reads it
    as an int), so that a jitted training step does not specialise on it: the
    bias corrections ``1 - beta ** t`` are computed with frame ops from it and
    cast to each parameter's dtype, as a Python float would be.
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False, *,
                 maximize: bool = False):
        self.m: list = []
        self.v: list = []
        self.v_max: list = []
        self.step_count = Tensor(np.zeros((), dtype=np.float64))
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps,
                                  "weight_decay": weight_decay, "amsgrad": bool(amsgrad),
                                  "maximize": bool(maximize)})

    def _check(self, group: dict) -> None:
        super()._check(group)
        b1, b2 = group["betas"]
        if not (0 <= b1 < 1 and 0 <= b2 < 1):
            raise FrameValueError(f"betas must be in [0, 1), got {group['betas']}")
        if not group["eps"] >= 0:
            raise FrameValueError(f"eps must be >= 0, got {group['eps']}")

    def _extend_state(self, n: int) -> None:
        self.m += [None] * n
        self.v += [None] * n
        self.v_max += [None] * n

    @property
    def steps(self) -> int:
        """How many times ``step()`` ran."""
        return int(self.step_count.item())

    def _decay(self, p: Tensor, g: Tensor, lr: float, decay: float) -> Tensor:
        """Adam's L2 form: the decay joins the gradient."""
        return g + p * decay

    def step(self) -> None:
        with no_grad():
            self.step_count += 1.0
            i = 0
            for group in self.param_groups:
                lr, (b1, b2), eps, decay = group["lr"], group["betas"], group["eps"], group["weight_decay"]
                c1 = 1.0 - b1 ** self.step_count   # float64 0-d tensors
                c2 = 1.0 - b2 ** self.step_count
                for p in group["params"]:
                    g = p.grad
                    if g is not None:
                        if group["maximize"]:
                            g = -g
                        if decay:
                            g = self._decay(p, g, lr, decay)
                        m = g * (1.0 - b1) if self.m[i] is None else self.m[i] * b1 + g * (1.0 - b1)
                        v = (g * g) * (1.0 - b2) if self.v[i] is None else self.v[i] * b2 + (g * g) * (1.0 - b2)
                        self.m[i], self.v[i] = m, v
                        if group["amsgrad"]:
                            v = v if self.v_max[i] is None else maximum(self.v_max[i], v)
                            self.v_max[i] = v
                        pc1, pc2 = astype(c1, p.dtype), astype(c2, p.dtype)
                        p -= (m / pc1) / ((v / pc2).sqrt() + eps) * lr
                    i += 1


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter), as PyTorch's
    AdamW: each step first scales the parameter by ``1 - lr * weight_decay``
    (default 0.01), then takes Adam's step without the decay in the gradient."""

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)

    def _decay(self, p: Tensor, g: Tensor, lr: float, decay: float) -> Tensor:
        p *= 1.0 - lr * decay
        return g
