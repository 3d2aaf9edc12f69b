"""Calls under capture: argument binding (positional, keyword, defaults,
keyword-only, *args, **kwargs), user functions inlined recursively with their
own globals and closures, lambdas and MAKE_FUNCTION, methods, static and class
methods, properties, callable objects, frame API functions and Tensor methods."""
from __future__ import annotations

import functools

import numpy as np
import pytest

import frame
import frame.nn.functional as F

from . import _other_module
from .helpers import last_entry, assert_same_as_eager, tensor

FACTOR = 2.0


def _affine(x, w=2.0, b=0.5):
    return x * w + b


def _kwonly(x, *, scale, shift=1.0):
    return x * scale + shift


def _varargs(x, *rest):
    out = x
    for r in rest:
        out = out + r
    return out, len(rest)


def _varkw(x, **options):
    return x * options.get("scale", 1.0), sorted(options)


def _posonly(x, y, /, z=1):
    return x - y + z


# -- binding ------------------------------------------------------------------------------------

def test_positional_arguments():
    assert_same_as_eager(lambda x, y: _affine(x, y, 1.0), tensor(), tensor(seed=1))


def test_keyword_arguments():
    assert_same_as_eager(lambda x: _affine(b=1.0, x=x, w=3.0), tensor())


def test_default_arguments():
    assert_same_as_eager(lambda x: (_affine(x), _affine(x, 4.0)), tensor())


def test_keyword_only_arguments():
    assert_same_as_eager(lambda x: (_kwonly(x, scale=2.0), _kwonly(x, shift=0.0, scale=3.0)), tensor())


def test_missing_keyword_only_argument_raises():
    assert_same_as_eager(lambda x: _kwonly(x), tensor())


def test_varargs():
    assert_same_as_eager(lambda x, y: (_varargs(x), _varargs(x, y, 1.0)), tensor(), tensor(seed=1))


def test_varkw():
    assert_same_as_eager(lambda x: (_varkw(x), _varkw(x, scale=2.0, other="o")), tensor())


def test_positional_only_parameters():
    assert_same_as_eager(lambda x, y: (_posonly(x, y), _posonly(x, y, z=3)), tensor(), tensor(seed=1))


def test_call_with_star_args_and_star_star_kwargs():
    def f(x, args, kwargs):
        return _affine(x, *args), _affine(x, **kwargs), _kwonly(*[x], **{"scale": 2.0})
    assert_same_as_eager(f, tensor(), (2.0,), {"w": 1.5, "b": -1.0})


def test_duplicate_keyword_raises():
    assert_same_as_eager(lambda x: _affine(x, x=x), tensor())


def test_too_many_positional_raises():
    assert_same_as_eager(lambda x: _affine(x, 1, 2, 3), tensor())


def test_jitted_function_with_defaults_kwonly_and_varargs():
    def f(x, scale=2.0, *extra, shift=0.5, **named):
        return x * scale + shift + sum(extra) + len(named)
    assert_same_as_eager(f, tensor())
    assert_same_as_eager(f, tensor(), 3.0, 1.0, 2.0, shift=1.0, a=1)


def test_jitted_function_keeps_signature_and_wrapped():
    def f(x, y=1):
        return x + y
    g = frame.jit(f, backend="cpu")
    assert g.__wrapped__ is f
    assert g.__name__ == "f"
    import inspect
    assert str(inspect.signature(g)) == str(inspect.signature(f))


def test_wrong_call_arguments_raise_typeerror():
    def f(x):
        return x
    assert_same_as_eager(f, tensor(), tensor())


# -- user functions, globals, closures -------------------------------------------------------------------

def test_nested_user_functions_inline_recursively():
    def inner(x):
        return x * FACTOR

    def middle(x):
        return inner(x) + inner(x + 1)

    def outer(x):
        return middle(middle(x))
    assert_same_as_eager(outer, tensor())


def test_recursive_function_on_python_value():
    def power(x, n):
        return x if n == 1 else x * power(x, n - 1)
    assert_same_as_eager(power, tensor(), 4)


def test_inlined_function_uses_its_own_module_globals():
    assert_same_as_eager(lambda x: (_other_module.scaled(x), _other_module.uses_helper(x)), tensor())


def test_closure_reads_python_value():
    k = 3

    def f(x):
        return x * k
    assert_same_as_eager(f, tensor())


def test_closure_over_tensor():
    w = tensor((3, 3), seed=4)

    def f(x):
        return x @ w
    fn = assert_same_as_eager(f, tensor())
    assert len(fn._frame_cache.entries[0].graph.inputs) == 2


def test_inner_function_with_closure_inlined():
    def f(x, n):
        def scale(y):
            return y * n
        return scale(x) + scale(1.0)
    assert_same_as_eager(f, tensor(), 2)


def test_nonlocal_write_in_inner_function():
    def f(x):
        count = 0

        def bump(y):
            nonlocal count
            count += 1
            return y + count
        return bump(x), bump(x), count
    assert_same_as_eager(f, tensor())


def test_closure_cell_of_the_jitted_function_is_guarded():
    scale = 2.0

    def f(x):
        return x * scale
    g = frame.jit(f, backend="cpu")
    x = tensor()
    first = g(x)
    scale = 5.0  # noqa: F841 - rebinds the cell f reads
    second = g(x)
    np.testing.assert_allclose(second.numpy(), first.numpy() * 2.5, rtol=1e-6)


def test_lambda_with_default():
    def f(x):
        g = lambda y, s=2.0: y * s  # noqa: E731
        return g(x), g(x, 3.0)
    assert_same_as_eager(f, tensor())


def test_make_function_with_defaults_and_kwdefaults():
    def f(x, a):
        def g(y, b=a, *, c=a * 2):
            return y * b + c
        return g(x), g(x, 1.0), g(x, c=0.0)
    assert_same_as_eager(f, tensor(), 3.0)


def test_returning_a_closure():
    # the function made in the call is rebuilt as a real function whose cell
    # holds the argument itself (capture/rebuild.py)
    def f(x):
        def g(y):
            return y + x
        return g
    fn = frame.jit(f, backend="cpu")
    x = tensor()
    g = fn(x)
    assert g.__code__ is f(x).__code__ and g.__qualname__ == f(x).__qualname__
    assert g.__closure__[0].cell_contents is x
    assert np.array_equal(g(2.0).numpy(), f(x)(2.0).numpy())
    assert not fn._frame_cache.entries[0].native


def test_returning_an_annotated_closure_runs_natively():
    # annotations are not traced: the function cannot be rebuilt faithfully
    def f(x):
        def g(y: float) -> float:
            return y + x
        return g
    fn = frame.jit(f, backend="cpu")
    x = tensor()
    g = fn(x)
    assert g.__annotations__ == f(x).__annotations__ and g.__annotations__
    assert fn._frame_cache.entries[0].native


def test_function_passed_as_argument():
    assert_same_as_eager(lambda fn, x: fn(x) + fn(x * 2), frame.relu, tensor())


def test_user_function_passed_as_argument():
    assert_same_as_eager(lambda fn, x: fn(x, 3.0), _affine, tensor())


def test_generator_function_consumed_by_loop():
    def gen(x, n):
        for i in range(n):
            yield x * i

    def f(x):
        total = x * 0
        for part in gen(x, 3):
            total = total + part
        return total, list(gen(x, 2))
    assert_same_as_eager(f, tensor())


# -- methods and objects ---------------------------------------------------------------------------------------

class Scaler:
    offset = 0.5

    def __init__(self, scale):
        self.scale = scale
        self.weight = tensor((3,), seed=7)

    def apply(self, x):
        return x * self.scale + self.weight + self.offset

    def twice(self, x):
        return self.apply(self.apply(x))

    @staticmethod
    def square(x):
        return x * x

    @classmethod
    def make_offset(cls, x):
        return x + cls.offset

    @property
    def doubled(self):
        return self.scale * 2

    def __call__(self, x):
        return self.apply(x) - 1


def test_method_call():
    assert_same_as_eager(lambda m, x: m.apply(x), Scaler(2.0), tensor())


def test_method_calling_method():
    assert_same_as_eager(lambda m, x: m.twice(x), Scaler(3.0), tensor())


def test_staticmethod_and_classmethod():
    assert_same_as_eager(lambda m, x: (m.square(x), m.make_offset(x), Scaler.square(x),
                                       Scaler.make_offset(x)), Scaler(1.0), tensor())


def test_property():
    assert_same_as_eager(lambda m, x: x * m.doubled, Scaler(1.5), tensor())


def test_class_attribute_read():
    assert_same_as_eager(lambda m, x: x + m.offset + Scaler.offset, Scaler(1.0), tensor())


def test_callable_object_call():
    assert_same_as_eager(lambda m, x: m(x), Scaler(2.0), tensor())


def test_bound_method_as_argument():
    m = Scaler(2.0)
    assert_same_as_eager(lambda fn, x: fn(x), m.apply, tensor())


def test_missing_attribute_raises():
    assert_same_as_eager(lambda m, x: m.nope, Scaler(1.0), tensor())


def test_getattr_hasattr_isinstance():
    def f(m, x):
        return (getattr(m, "scale"), getattr(m, "nope", 7), hasattr(m, "apply"), hasattr(m, "zz"),
                isinstance(m, Scaler), isinstance(x, frame.Tensor), isinstance(x, (int, np.ndarray)))
    assert_same_as_eager(f, Scaler(1.0), tensor())


def test_method_redefined_on_class_is_seen():
    class Model:
        def f(self, x):
            return x + 1

    m = Model()
    g = frame.jit(lambda m, x: m.f(x), backend="cpu")
    x = tensor()
    np.testing.assert_allclose(g(m, x).numpy(), x.numpy() + 1, rtol=1e-6)
    Model.f = lambda self, x: x - 1
    np.testing.assert_allclose(g(m, x).numpy(), x.numpy() - 1, rtol=1e-6)


def test_instance_attribute_shadowing_a_method_is_seen():
    m = Scaler(1.0)
    g = frame.jit(lambda m, x: m.square(x), backend="cpu")
    x = tensor()
    np.testing.assert_allclose(g(m, x).numpy(), (x * x).numpy(), rtol=1e-6)
    m.square = lambda x: x + 100
    np.testing.assert_allclose(g(m, x).numpy(), x.numpy() + 100, rtol=1e-6)


# -- frame API ----------------------------------------------------------------------------------------------

def test_frame_functions_with_keywords():
    def f(x):
        return (frame.sum(x, axis=0, keepdims=True), frame.softmax(x, axis=-1),
                frame.max(x, axis=1), frame.reshape(x, (3, 2)), frame.transpose(x))
    assert_same_as_eager(f, tensor())


def test_tensor_methods():
    def f(x):
        return (x.sum(axis=1), x.mean(), x.exp().log(), x.reshape(3, 2).T, x.astype(frame.float64),
                x.clip(-1.0, 1.0), x.softmax(axis=0), x.expand_dims(0).squeeze(0))
    assert_same_as_eager(f, tensor())


def test_nn_functional():
    def f(x, w, b):
        h = F.linear(x, w, b)
        return F.relu(h), F.gelu(h), F.log_softmax(h, axis=-1)
    assert_same_as_eager(f, tensor((4, 3)), tensor((2, 3), seed=1), tensor((2,), seed=2))


def test_tensor_metadata_folds_to_constants():
    def f(x):
        return x.shape, x.ndim, x.size, x.dtype, len(x), x.dtype == frame.float32
    assert_same_as_eager(f, tensor((4, 3)))


def test_frame_creation_functions():
    def f(x):
        return x + frame.ones(x.shape), frame.zeros((2,)), frame.full((2, 2), 3.0), frame.arange(4)
    assert_same_as_eager(f, tensor())


def test_frame_tensor_of_constants_and_of_a_tensor():
    def f(x):
        c = frame.tensor([1.0, 2.0, 3.0])
        copy = frame.tensor(x)
        cast = frame.tensor(x, dtype=frame.float64)
        return x + c, copy, cast
    assert_same_as_eager(f, tensor())


def test_item_reads_data_and_runs_natively():
    # a graph break: .item() runs natively between two graphs
    j = assert_same_as_eager(lambda x: x * x.sum().item(), tensor(), captured=None)
    assert last_entry(j).breaks


def test_random_functions_run_natively():
    def f(x):
        frame.manual_seed(0)
        return x + frame.randn(2, 3)
    j = assert_same_as_eager(f, tensor(), captured=None)  # breaks at the random calls
    assert last_entry(j).breaks


def test_functools_partial_argument_is_traced():
    j = assert_same_as_eager(lambda fn, x: fn(x), functools.partial(_affine, w=4.0), tensor())
    assert not last_entry(j).breaks   # the partial's func and keywords are guarded and inlined


@pytest.mark.parametrize("name", ["relu", "sigmoid", "tanh", "exp", "abs", "sqrt"])
def test_frame_unary_function(name):
    fn = getattr(frame, name)
    assert_same_as_eager(lambda x: fn(x) + getattr(x, name)(), tensor(positive=True))


def test_import_inside_function():
    def f(x):
        import math as m
        import frame.nn.functional as nnf
        from numpy import float32
        return nnf.relu(x) * m.sqrt(4.0) + float32(1)
    assert_same_as_eager(f, tensor())


class Base:
    def __init__(self):
        self.k = 2.0

    def forward(self, x):
        return x * self.k

    @classmethod
    def name(cls):
        return cls.__name__


class Child(Base):
    def forward(self, x):
        return super().forward(x) + 1

    def explicit(self, x):
        return super(Child, self).forward(x) - 1

    def label(self):
        return super().name()


def test_zero_argument_super():
    assert_same_as_eager(lambda m, x: m.forward(x), Child(), tensor())


def test_two_argument_super():
    assert_same_as_eager(lambda m, x: m.explicit(x), Child(), tensor())


def test_super_classmethod():
    assert_same_as_eager(lambda m, x: (x, m.label()), Child(), tensor())


def test_hasattr_on_tensor_and_ndarray():
    def f(x, a):
        return (x, hasattr(x, "sum"), hasattr(x, "nope"), hasattr(a, "requires_grad"),
                hasattr(a, "reshape"), getattr(x, "missing", 3))
    assert_same_as_eager(f, tensor(), np.ones(2))


def test_in_place_tensor_method_runs_natively():
    def f(x):
        x.requires_grad_(True)
        return x * 2
    j = assert_same_as_eager(f, tensor(), captured=None)  # breaks at the in-place method
    assert last_entry(j).breaks


def test_detach_shares_memory():
    def f(x):
        d = x.detach()
        return d, d * 2
    assert_same_as_eager(f, tensor())


def test_in_place_through_detached_tensor_runs_natively():
    def f(x):
        d = x.detach()
        d += 1
        return x
    assert_same_as_eager(f, tensor(), captured=False)


def test_dataclass_config_object():
    import dataclasses

    @dataclasses.dataclass
    class Config:
        scale: float = 2.0
        use_bias: bool = True

    def f(cfg, x):
        y = x * cfg.scale
        return y + 1 if cfg.use_bias else y
    assert_same_as_eager(f, Config(), tensor())
    assert_same_as_eager(f, Config(0.5, False), tensor())


def test_mutable_default_argument_is_the_same_object():
    def f(x, seen=[]):  # noqa: B006 - the point of the test
        seen.append(1)
        return x * len(seen)
    g = frame.jit(f, backend="cpu")
    x = tensor()
    g(x)
    out = g(x)
    assert f.__defaults__[0] == [1, 1]
    np.testing.assert_allclose(out.numpy(), x.numpy() * 2, rtol=1e-6)


def test_namedtuple_argument():
    import collections
    Pair = collections.namedtuple("Pair", "a b")
    assert_same_as_eager(lambda p, x: (x * p.a + p.b, p[0], len(p), p._fields), Pair(2.0, tensor(seed=1)),
                         tensor())


def test_namedtuple_made_and_returned():
    import typing

    class Output(typing.NamedTuple):
        logits: object
        loss: object = None

    def f(x):
        out = Output(x * 2)
        return out, Output(loss=x.sum(), logits=x), out.logits + 1
    assert_same_as_eager(f, tensor())
