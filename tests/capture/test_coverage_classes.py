"""Coverage corpus, user classes and ``functools.partial`` (issue 15, items 2 and 3):
instances made inside the jitted function (``__init__`` inlined, methods,
properties, static and class methods, ``__slots__``, inheritance with
``super().__init__()``, operators), dataclasses (frozen too,
``field(default_factory=...)``, ``__eq__``), namedtuple and ``typing.NamedTuple``
instances (``_replace``, ``_asdict``, unpacking, indexing), and partials made
inside or passed in.  Written in the style of TorchDynamo's test_misc /
test_functions class and partial tests and Paddle SOT's test_*_class tests.
Each case is run natively and jitted, and ``graphs=`` states how it is captured
(``corpus.Case.check_captured``)."""
from __future__ import annotations

import abc
import collections
import dataclasses
import enum
import functools
from typing import Generic, NamedTuple, TypeVar

import numpy as np
import pytest

import frame

from .corpus import Corpus
from .helpers import array, tensor

case = Corpus()


# -- plain classes -------------------------------------------------------------------------------

class Linear:
    def __init__(self, weight, bias=0.0):
        self.weight = weight
        self.bias = bias

    def __call__(self, x):
        return x * self.weight + self.bias

    def forward(self, x):
        return self(x)


class Scaler:
    factor = 2.0

    def __init__(self, offset):
        self.offset = offset

    def apply(self, x):
        return x * self.factor + self.offset

    @property
    def double_offset(self):
        return self.offset * 2

    @staticmethod
    def clip(x):
        return np.clip(x, -1.0, 1.0)

    @classmethod
    def unit(cls):
        return cls(1.0)


class Counter:
    def __init__(self):
        self.count = 0

    def step(self, x):
        self.count += 1
        return x + self.count


class Accumulator:
    def __init__(self):
        self.items = []

    def add(self, v):
        self.items.append(v)
        return self

    def total(self):
        out = self.items[0]
        for v in self.items[1:]:
            out = out + v
        return out


@case(lambda: (array(),), graphs=1)
def make_instance_and_call(x):
    lin = Linear(2.0, 1.0)
    return lin(x)


@case(lambda: (array(),), graphs=1)
def instance_default_argument(x):
    return Linear(3.0).forward(x)


@case(lambda: (array(),), graphs=1)
def instance_with_tensor_attribute(x):
    lin = Linear(np.float32(0.5), x.mean(axis=0))
    return lin(x)


@case(lambda: (tensor(),), graphs=1)
def frame_tensor_attribute(t):
    w = frame.ones((3,)) * 0.5
    lin = Linear(w, frame.zeros((3,)))
    return frame.relu(lin(t))


@case(lambda: (array(),), graphs=1)
def class_attribute_and_method(x):
    s = Scaler(0.5)
    return s.apply(x)


@case(lambda: (array(),), graphs=1)
def property_on_new_instance(x):
    s = Scaler(0.25)
    return x + s.double_offset


@case(lambda: (array(),), graphs=1)
def staticmethod_on_instance_and_class(x):
    s = Scaler(0.0)
    return s.clip(x), Scaler.clip(x * 2)


@case(lambda: (array(),), graphs=1)
def classmethod_constructor(x):
    s = Scaler.unit()
    return s.apply(x), s.offset


@case(lambda: (array(),), graphs=1)
def attribute_mutated_by_method(x):
    c = Counter()
    y = c.step(x)
    y = c.step(y)
    return y, c.count


@case(lambda: (array(),), graphs=1)
def instance_returned(x):
    c = Counter()
    y = c.step(x)
    return c, y


@case(lambda: (array(),), graphs=1)
def instance_returned_twice_is_one_object(x):
    lin = Linear(x * 2, 1.0)
    return lin, [lin]


@case(lambda: (array(),), graphs=1)
def method_returns_self_chain(x):
    acc = Accumulator().add(x).add(x * 2).add(x * 3)
    return acc.total(), len(acc.items)


@case(lambda: (array(),), graphs=1)
def attribute_set_outside_init(x):
    lin = Linear(1.0)
    lin.weight = 4.0
    lin.extra = x.sum()
    return lin(x), lin.extra


@case(lambda: (array(),), graphs=1)
def instance_in_list_of_layers(x):
    layers = [Linear(float(i + 1), 0.1 * i) for i in range(3)]
    for layer in layers:
        x = layer(x)
    return x


@case(lambda: (array(),), graphs=1)
def isinstance_and_type_of_new_instance(x):
    s = Scaler(1.0)
    if isinstance(s, Scaler) and type(s) is Scaler:
        return x + 1
    return x - 1


@case(lambda: (array(),), graphs=1)
def hasattr_getattr_on_instance(x):
    lin = Linear(2.0)
    scale = getattr(lin, "scale", 1.0)
    return x * scale + getattr(lin, "weight"), hasattr(lin, "bias"), hasattr(lin, "nope")


@case(lambda: (array(),), graphs=1)
def local_class_defined_outside_loop(x):
    out = []
    for i in range(2):
        out.append(Linear(i, 0.0)(x))
    return out


@case(lambda: (array(),), graphs=0, breaks='takes 3 positional arguments but 4 were given')
def wrong_init_arity_raises(x):
    lin = Linear(1.0, 2.0, 3.0)
    return lin(x)


@case(lambda: (array(),), graphs=0, breaks="'Linear' object has no attribute 'scale'")
def missing_attribute_raises(x):
    lin = Linear(1.0)
    return x * lin.scale


@case(lambda: (array(),), graphs=0, breaks="'Scaler' object is not callable")
def calling_non_callable_instance_raises(x):
    s = Scaler(1.0)
    return s(x)


class Namespace:
    pass


class Options:
    def __init__(self, **kwargs):
        for key, value in kwargs.items():
            setattr(self, key, value)


class Pipeline:
    def __init__(self, x):
        self.x = x
        self.build()

    def build(self):
        self.stages = [self.x * 2, self.x + 1]

    def __len__(self):
        return len(self.stages)


@case(lambda: (array(),), graphs=1)
def empty_class_used_as_namespace(x):
    ns = Namespace()
    ns.value = x + 1
    ns.name = type(ns).__name__
    return ns.value, ns.name, ns.__class__ is Namespace


@case(lambda: (array(),), graphs=1)
def setattr_from_kwargs_in_init(x):
    opts = Options(scale=2.0, shift=x.mean())
    return x * opts.scale + opts.shift, getattr(opts, "missing", None)


@case(lambda: (array(),), graphs=1)
def init_calls_another_method_and_len(x):
    p = Pipeline(x)
    return p.stages[0] - p.stages[1], len(p)


# -- inheritance ---------------------------------------------------------------------------------

class Base:
    def __init__(self, scale):
        self.scale = scale

    def forward(self, x):
        return x * self.scale

    def describe(self):
        return "base"


class Child(Base):
    def __init__(self, scale, shift):
        super().__init__(scale)
        self.shift = shift

    def forward(self, x):
        return super().forward(x) + self.shift


class GrandChild(Child):
    def describe(self):
        return "grandchild:" + super().describe()


class PlainBase:
    pass


class WithPlainBase(PlainBase):
    def __init__(self, v):
        super().__init__()
        self.v = v


class Shape(abc.ABC):
    @abc.abstractmethod
    def area(self):
        ...

    def scaled(self, x):
        return x * self.area()


class Square(Shape):
    def __init__(self, side):
        self.side = side

    def area(self):
        return self.side * self.side


@case(lambda: (array(),), graphs=1)
def super_init_and_override(x):
    c = Child(2.0, 0.5)
    return c.forward(x)


@case(lambda: (array(),), graphs=1)
def three_level_inheritance(x):
    g = GrandChild(3.0, -1.0)
    return g.forward(x), g.describe(), isinstance(g, Base)


@case(lambda: (array(),), graphs=1)
def super_init_of_object(x):
    w = WithPlainBase(x * 2)
    return w.v


@case(lambda: (array(),), graphs=1)
def abc_subclass(x):
    sq = Square(1.5)
    return sq.scaled(x)


@case(lambda: (array(),), graphs=0, breaks="Can't instantiate abstract class Shape")
def abstract_class_raises(x):
    s = Shape()
    return s.scaled(x)


T = TypeVar("T")


class Box(Generic[T]):
    def __init__(self, item: T):
        self.item = item

    def get(self) -> T:
        return self.item


class Mode(enum.Enum):
    TRAIN = "train"
    EVAL = "eval"


class Runner:
    def __init__(self, mode):
        self.mode = mode

    def run(self, x):
        if self.mode == Mode.TRAIN:
            return x * 2
        return x


@case(lambda: (array(),), graphs=1)
def generic_class_instance(x):
    box = Box(x + 1)
    return Box(box.get() * 2).get()


@case(lambda: (array(), Mode.EVAL), graphs=1)
def enum_member_compared_in_method(x, mode):
    return Runner(mode).run(x + 1), Runner(Mode.TRAIN).run(x)


# -- __slots__ -----------------------------------------------------------------------------------

class Point2:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def norm2(self):
        return self.x * self.x + self.y * self.y


@case(lambda: (array(),), graphs=1)
def slots_instance(x):
    p = Point2(x, x + 1)
    return p.norm2()


@case(lambda: (array(),), graphs=1)
def slots_instance_returned(x):
    p = Point2(x * 2, 2.0)
    p.y = 3.0
    return p


@case(lambda: (array(),), graphs=0, breaks="'Point2' object has no attribute 'z'")
def slots_unknown_attribute_raises(x):
    p = Point2(x, 1.0)
    p.z = 2.0
    return p.x


# -- operators -----------------------------------------------------------------------------------

class Vec2:
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def __add__(self, other):
        return Vec2(self.a + other.a, self.b + other.b)

    def __mul__(self, k):
        return Vec2(self.a * k, self.b * k)

    def __rmul__(self, k):
        return self * k

    def __eq__(self, other):
        if not isinstance(other, Vec2):
            return NotImplemented
        return self.a is other.a and self.b is other.b

    def __len__(self):
        return 2


@case(lambda: (array(), array(seed=1)), graphs=1)
def operator_add_of_instances(x, y):
    v = Vec2(x, y) + Vec2(y, x)
    return v.a, v.b


@case(lambda: (array(), array(seed=1)), graphs=1)
def reflected_operator_with_number(x, y):
    v = 2.0 * Vec2(x, y)
    w = Vec2(x, y) * 3
    return v.a, w.b


@case(lambda: (array(),), graphs=1)
def equality_falls_back_to_identity(x):
    p, q = Counter(), Counter()
    return x + (p == p) + (p == q) + (p != q)


@case(lambda: (array(),), graphs=1)
def custom_eq_and_not_implemented(x):
    v = Vec2(x, x)
    return x + 1, v == v, v == Vec2(x, 1.0), v == 3, v != v


class RunningSum:
    def __init__(self, value):
        self.value = value
        self.steps = 0

    def __iadd__(self, other):
        self.value = self.value + other
        self.steps += 1
        return self

    def __add__(self, other):
        return RunningSum(self.value + other)


@case(lambda: (array(),), graphs=1)
def inplace_operator_mutates_instance(x):
    acc = RunningSum(x)
    alias = acc
    acc += x
    acc += 1.0
    return acc is alias, acc.value, acc.steps


@case(lambda: (array(), RunningSum(array(seed=2))), graphs=1)
def inplace_operator_on_argument(x, acc):
    acc += x * 2
    total = acc + 1.0
    return total.value, total.steps


@case(lambda: (array(), array(seed=1)), graphs=1)
def inplace_add_without_iadd_rebinds(x, y):
    v = Vec2(x, y)
    w = v
    v += Vec2(y, x)
    return v is w, v.a, w.a


@case(lambda: (array(),), graphs=1)
def truth_from_len(x):
    v = Vec2(1.0, 2.0)
    return x * 2 if v else x


@case(lambda: (array(),), graphs=0, breaks="unsupported operand type(s) for +: 'Counter' and 'float'")
def unsupported_operand_raises(x):
    return Counter() + 1.5


@case(lambda: (array(),), graphs=1)
def identity_of_distinct_instances(x):
    p, q = Counter(), Counter()
    a, b = Point(x, 1), Point(x, 1)
    return x + 1, p is q, p is p, a is b, p is not q


# -- dataclasses ---------------------------------------------------------------------------------

@dataclasses.dataclass
class Config:
    lr: float
    momentum: float = 0.9
    tags: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class FrozenConfig:
    scale: float
    shift: float = 0.0


@dataclasses.dataclass
class Sample:
    data: np.ndarray
    label: int

    def __post_init__(self):
        self.label = int(self.label)

    def scaled(self, k):
        return Sample(self.data * k, self.label)


@dataclasses.dataclass
class Params(Config):
    decay: float = 0.0


@case(lambda: (array(),), graphs=1)
def dataclass_fields_and_defaults(x):
    cfg = Config(0.1)
    return x * cfg.lr + cfg.momentum, cfg.tags


@case(lambda: (array(),), graphs=1)
def dataclass_default_factory_is_fresh(x):
    a, b = Config(0.1), Config(0.2)
    a.tags.append("a")
    return x * b.lr, a.tags, b.tags, a.tags is b.tags


@case(lambda: (array(),), graphs=1)
def dataclass_keyword_arguments(x):
    cfg = Config(momentum=0.5, lr=0.01)
    return x - cfg.lr * x * cfg.momentum


@case(lambda: (array(),), graphs=1)
def dataclass_returned(x):
    cfg = Config(0.1, tags=["x"])
    cfg.lr = cfg.lr * 2
    return x * cfg.lr, cfg


@case(lambda: (array(),), graphs=1)
def dataclass_eq(x):
    a, b, c = Config(0.1), Config(0.1), Config(0.2)
    return x + (a == b), a == c, a != c


@case(lambda: (array(),), graphs=1)
def frozen_dataclass(x):
    f = FrozenConfig(2.0, shift=1.0)
    return x * f.scale + f.shift, f


@case(lambda: (array(),), graphs=0, breaks='FrozenInstanceError')
def frozen_dataclass_write_raises(x):
    f = FrozenConfig(2.0)
    f.scale = 3.0
    return x * f.scale


@case(lambda: (array(),), graphs=1)
def dataclass_post_init_and_method(x):
    s = Sample(x, 3.0)
    t = s.scaled(2.0)
    return t.data, t.label, s.label


@case(lambda: (array(),), graphs=1)
def dataclass_inheritance(x):
    p = Params(0.1, decay=0.01)
    return x * (1 - p.decay) - p.lr * x, p.momentum


@case(lambda: (array(),), graphs=1)
def dataclass_replace(x):
    cfg = Config(0.1)
    fast = dataclasses.replace(cfg, lr=1.0)
    return x * fast.lr + cfg.lr, fast.momentum


@case(lambda: (array(),), graphs=0, breaks="missing required argument 'lr'")
def dataclass_missing_argument_raises(x):
    cfg = Config()
    return x * cfg.lr


@case(lambda: (array(),), graphs=1)
def dataclass_astuple_fields(x):
    cfg = Config(0.5, 0.1)
    names = [f.name for f in dataclasses.fields(cfg)]
    return x * cfg.lr, names


# -- namedtuples ---------------------------------------------------------------------------------

Point = collections.namedtuple("Point", ["x", "y"])
Triple = collections.namedtuple("Triple", "a b c", defaults=(0.0,))


class Stats(NamedTuple):
    mean: np.ndarray
    std: np.ndarray
    count: int = 1

    def normalize(self, x):
        return (x - self.mean) / self.std

    @property
    def var(self):
        return self.std * self.std


@case(lambda: (array(),), graphs=1)
def namedtuple_made_and_indexed(x):
    p = Point(x, x * 2)
    return p[0] + p.y, p


@case(lambda: (array(),), graphs=1)
def namedtuple_unpacking(x):
    a, b = Point(x.sum(axis=0), x.max(axis=0))
    return a - b


@case(lambda: (array(),), graphs=1)
def namedtuple_replace(x):
    p = Point(x + 1, 1.0)
    q = p._replace(y=2.0)
    return q, p.y, q.x is p.x


@case(lambda: (array(),), graphs=1)
def namedtuple_asdict(x):
    p = Point(x, 3)
    d = p._asdict()
    return d["x"] * d["y"], list(d)


@case(lambda: (array(),), graphs=1)
def namedtuple_defaults(x):
    t = Triple(1.0, 2.0)
    return x * t.c + t.a + t.b, t


@case(lambda: (array(),), graphs=0, breaks='Got unexpected field names')
def namedtuple_replace_bad_field_raises(x):
    return Point(x, 1)._replace(z=3)


@case(lambda: (array(),), graphs=1)
def typing_namedtuple_method(x):
    s = Stats(x.mean(axis=0), x.max(axis=0) - x.min(axis=0) + 1)
    return s.normalize(x), s.count


@case(lambda: (array(),), graphs=1)
def typing_namedtuple_property(x):
    s = Stats(x.mean(), np.float32(2.0), count=3)
    return x / s.var, s._replace(count=4)


@case(lambda: (array(),), graphs=1)
def namedtuple_make_and_fields(x):
    p = Point(*[x, x + 1])
    q = Point._make([x * 2, 1.0])
    return p._fields, p.x * p.y, len(p), q, q._make((1, 2))


@case(lambda: (Point(array(), array(seed=1)),), graphs=1)
def namedtuple_argument_replace(p):
    return p._replace(x=p.x * 2), p._asdict()["y"]


@case(lambda: (Stats(array(), array(positive=True)),), graphs=1)
def namedtuple_argument_method(s):
    return s.normalize(s.mean + 1)


# -- functools.partial ---------------------------------------------------------------------------

def _affine(x, w, b=0.0, *, act=None):
    y = x * w + b
    return act(y) if act is not None else y


def _leaky(x, slope):
    return np.where(x > 0, x, x * slope)


@case(lambda: (array(),), graphs=1)
def partial_positional(x):
    f = functools.partial(_affine, x)
    return f(2.0), f(3.0, 1.0)


@case(lambda: (array(),), graphs=1)
def partial_keyword(x):
    f = functools.partial(_affine, w=0.5, b=1.0)
    return f(x), f(x, b=2.0)


@case(lambda: (array(),), graphs=1)
def partial_of_partial(x):
    f = functools.partial(_affine, b=1.0)
    g = functools.partial(f, w=3.0)
    return g(x), g.func is _affine, g.keywords, g.args


@case(lambda: (array(),), graphs=1)
def partial_of_numpy_functions(x):
    clip = functools.partial(np.clip, a_min=0)
    total = functools.partial(np.sum, axis=0)
    return clip(x, a_max=1.0), total(x)


@case(lambda: (tensor(),), graphs=1)
def partial_of_frame_ops(t):
    col_sum = functools.partial(frame.sum, axis=0)
    act = functools.partial(_affine, w=2.0, act=frame.relu)
    return col_sum(t), act(t)


@case(lambda: (array(),), graphs=1)
def partial_of_lambda_and_method(x):
    lin = Linear(2.0)
    f = functools.partial(lambda a, k: a * k, k=0.5)
    g = functools.partial(lin.forward)
    return f(x), g(x)


@case(lambda: (array(),), graphs=1)
def partial_of_class(x):
    make = functools.partial(Linear, bias=1.0)
    return make(3.0)(x)


@case(lambda: (array(),), graphs=1)
def partial_in_map(x):
    fns = [functools.partial(_leaky, slope=s) for s in (0.1, 0.2)]
    return [f(x) for f in fns]


@case(lambda: (array(),), graphs=1)
def partial_returned(x):
    f = functools.partial(_affine, w=2.0)
    return f(x), f


@case(lambda: (array(),), graphs=0, breaks="got multiple values for argument 'w'")
def partial_wrong_call_raises(x):
    f = functools.partial(_affine, w=2.0)
    return f(x, 1.0, 2.0)


@case(lambda: (array(),), graphs=0, breaks='the first argument must be callable')
def partial_of_non_callable_raises(x):
    return functools.partial(3)(x)


_half = functools.partial(_affine, w=0.5)
_nested = functools.partial(functools.partial(_affine, b=2.0), w=4.0)


@case(lambda: (array(),), graphs=1)
def partial_global(x):
    return _half(x) + _nested(x)


@case(lambda: (array(), functools.partial(_leaky, slope=0.3)), graphs=1)
def partial_argument(x, act):
    return act(x) + act(-x)


@case(lambda: (tensor(), functools.partial(frame.mean, axis=1)), graphs=1)
def partial_argument_of_frame_op(t, reduce):
    return reduce(t * 2)


class Tracked:
    created = 0

    def __init__(self, x):
        Tracked.created += 1
        self.x = x


@case(lambda: (array(),), graphs=1)
def class_attribute_counter_in_init(x):
    before = Tracked.created
    t = Tracked(x * 2)
    return t.x + (Tracked.created - before)


# -- what breaks, with a reason naming the class -------------------------------------------------

class WithNew:
    def __new__(cls, v):
        obj = super().__new__(cls)
        obj.v = v
        return obj


class Dynamic:
    def __init__(self):
        self.data = {}

    def __getattr__(self, name):
        return 1.0


class TinyNet(frame.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = frame.nn.Linear(3, 2)

    def forward(self, x):
        return self.lin(x)


@case(lambda: (array(),), graphs=2, breaks="creating a WithNew object: WithNew defines __new__")
def class_with_new_breaks(x):
    y = x * 2
    return y + WithNew(1.0).v


@case(lambda: (array(),), graphs=1)   # its Python __getattr__ inlined on the missing attribute
def class_with_getattr_on_missing_attribute(x):
    d = Dynamic()
    return x * d.anything


@case(lambda: (tensor(),), graphs=1, breaks="creating a TinyNet object: it is a frame nn.Module")
def creating_module_breaks(t):
    t = t * 2
    return TinyNet()(t).shape


@pytest.mark.parametrize("c", case.params())
def test_coverage_classes(c):
    c.check()
