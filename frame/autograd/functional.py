"""``frame.grad`` and ``frame.value_and_grad``: JAX-style transforms built on
eager autograd (the same records and the same ``build_backward_graph``).

    >>> df = frame.grad(lambda x: x ** 3)          # d/dx x^3 = 3 x^2
    >>> df(2.0)
    12.0
    >>> frame.grad(frame.grad(lambda x: x ** 3))(2.0)   # 6 x
    12.0

How a call works.  Each differentiated argument becomes a fresh variable: an
untracked Tensor, ndarray or Python float becomes a new leaf that requires
grad (a view of the data, never the caller's own object); a Tensor that is
already tracked -- an enclosing ``frame.grad``'s variable, a parameter --
goes through a recorded identity op, so it is a distinct value (no
confusion with the same tensor captured by the function from outside) that
still depends on the original.  The function runs with grad mode on, even
inside ``no_grad`` (it is a transform); then the gradients are computed from
the record.  They are themselves recorded (``create_graph``) when the caller
records (grad mode on), some argument is a Tensor, and the result depends on
tracked tensors other than the fresh leaves -- so ``grad(grad(f))`` works,
and a loss built from ``grad(u)(x)`` trains the parameters ``u`` uses; when
the result depends only on the fresh leaves, nothing is recorded and the
value is returned detached.  The fresh leaves stop requiring grad
afterwards, so later backward calls treat them as constants.

What comes back follows the arguments' kinds, as NumPy and JAX users expect:
the gradient for a Tensor argument is a Tensor, for an ndarray an ndarray of
its dtype and shape, for a NumPy scalar a NumPy scalar, for a Python float a
Python float.  The value (``value_and_grad``) is the Tensor the function
returned when some differentiated argument is a Tensor, else a NumPy scalar.
Python floats become float32 (``frame.tensor``'s rule); integer arguments are
an error (their derivative is undefined), as in JAX.
"""
from __future__ import annotations

import functools
import numbers
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import FrameTypeError, FrameValueError
from ..tensor import Tensor
from .eager import RecordedGraph, gradients
from .tape import enable_grad, is_grad_enabled, set_requires_grad
from ..functions import reshape

__all__ = ["grad", "value_and_grad"]


def grad(fn: Callable, argnums: int | Sequence[int] = 0) -> Callable:
    """A function computing the gradient of ``fn`` (which must return a scalar)
    with respect to positional argument(s) ``argnums``: one gradient for an int,
    a tuple of them for a tuple.  See the module docstring for the rules.

        >>> frame.grad(lambda x, y: (x * y).sum(), argnums=(0, 1))(2.0, 5.0)
        (5.0, 2.0)
    """
    vg = value_and_grad(fn, argnums)

    @functools.wraps(fn)
    def grad_fn(*args, **kwargs):
        return vg(*args, **kwargs)[1]
    return grad_fn


def value_and_grad(fn: Callable, argnums: int | Sequence[int] = 0) -> Callable:
    """A function returning ``(fn(*args), gradient(s))`` -- ``grad`` plus the value.

        >>> value, g = frame.value_and_grad(lambda x: (x * x).sum())(np.array([1.0, 2.0]))
        >>> float(value), g
        (5.0, array([2., 4.]))
    """
    positions, single = _argnums(argnums)

    @functools.wraps(fn)
    def value_and_grad_fn(*args, **kwargs):
        where = _positions(positions, len(args), fn)
        caller_records = is_grad_enabled()
        call_args = list(args)
        variables: list[Tensor] = []
        fresh: set[int] = set()
        try:
            with enable_grad():
                for i in where:
                    v, is_fresh = _variable(args[i], i)
                    call_args[i] = v
                    variables.append(v)
                    if is_fresh:
                        fresh.add(id(v))
                out = _scalar_output(fn(*call_args, **kwargs))
            tensor_kind = any(isinstance(args[i], Tensor) for i in where)
            if out._rg:
                rg = RecordedGraph([out])
                create = caller_records and tensor_kind and rg.has_leaf_other_than(fresh)
                grads = gradients(out, variables, create_graph=create, graph=rg,
                                  what="frame.grad")
            else:
                create = False
                grads = [Tensor._wrap(np.zeros(v.shape, dtype=v._data.dtype)) for v in variables]
        finally:
            for v in variables:
                if id(v) in fresh:
                    set_requires_grad(v, False)
        if tensor_kind:
            value = out if create else out.detach()
        else:
            value = out._data[()]
        results = tuple(_like(args[i], g) for i, g in zip(where, grads))
        return value, (results[0] if single else results)
    return value_and_grad_fn


# --------------------------------------------------------------------------- helpers

def _argnums(argnums) -> tuple[tuple[int, ...], bool]:
    if isinstance(argnums, numbers.Integral) and not isinstance(argnums, bool):
        return (int(argnums),), True
    if isinstance(argnums, (tuple, list)) and argnums and all(
            isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in argnums):
        return tuple(int(a) for a in argnums), False
    raise FrameTypeError(f"frame.grad: argnums must be an int or a non-empty tuple of ints, "
                         f"got {argnums!r}")


def _positions(positions: tuple[int, ...], nargs: int, fn) -> list[int]:
    out = []
    for p in positions:
        if not -nargs <= p < nargs:
            raise FrameValueError(f"frame.grad: argnums {p} is out of range: "
                                  f"{getattr(fn, '__name__', 'the function')} was called with "
                                  f"{nargs} positional argument(s)")
        out.append(p % nargs)
    if len(set(out)) != len(out):
        raise FrameValueError(f"frame.grad: argnums {positions} names an argument twice")
    return out


def _variable(arg: Any, i: int) -> tuple[Tensor, bool]:
    """(the tensor ``fn`` gets for argument ``i``, whether it is a fresh leaf)."""
    if isinstance(arg, Tensor):
        if arg._rg:
            return reshape(arg, arg.shape), False  # a recorded identity: a distinct value
        data = arg._data
    elif isinstance(arg, (np.ndarray, np.generic)):
        data = np.asarray(arg)
        if not data.flags.c_contiguous:
            data = np.ascontiguousarray(data)
    elif isinstance(arg, float):
        data = np.asarray(arg, dtype=np.float32)
    elif isinstance(arg, (bool, numbers.Integral)):
        raise FrameTypeError(f"frame.grad: argument {i} is the integer {arg!r}; gradients are "
                             f"defined for floating-point inputs only (pass {float(arg)!r})")
    else:
        raise FrameTypeError(f"frame.grad: argument {i} must be a Tensor, an ndarray or a "
                             f"float, got {type(arg).__name__}")
    if data.dtype.kind != "f":
        raise FrameTypeError(f"frame.grad: argument {i} has dtype {data.dtype}; gradients are "
                             f"defined for floating-point inputs only")
    leaf = Tensor._wrap(data.view())  # never the caller's own array object
    set_requires_grad(leaf, True)
    return leaf, True


def _scalar_output(out: Any) -> Tensor:
    if not isinstance(out, Tensor):
        if isinstance(out, (np.ndarray, np.generic, float, int)) and not isinstance(out, bool):
            out = Tensor._wrap(np.asarray(out))  # a constant: every gradient is zero
        else:
            raise FrameTypeError(f"frame.grad: the function must return a scalar tensor, got "
                                 f"{type(out).__name__}")
    if out.ndim != 0:
        raise FrameValueError(f"frame.grad: the function must return a scalar (0-d) tensor, "
                              f"got shape {list(out.shape)}; reduce it (e.g. .sum()) first")
    if out._data.dtype.kind != "f":
        raise FrameTypeError(f"frame.grad: the function must return a floating-point scalar, "
                             f"got {out.dtype}")
    return out


def _like(arg: Any, g: Tensor):
    """The gradient for ``arg`` in ``arg``'s kind (Tensor, ndarray, NumPy scalar, float)."""
    if isinstance(arg, Tensor):
        return g
    if isinstance(arg, np.ndarray):
        return g._data
    if isinstance(arg, np.generic):
        return g._data[()]
    return float(g._data)
