"""NumPy's random generators: their sampling methods drawn by the entry.

A call of a sampling method (``SAMPLERS``) of a ``np.random.Generator`` or
``np.random.RandomState`` the trace can name at run time (an argument, a
global, a closure cell, an attribute: ``NumpyGeneratorVariable``), or of a
legacy module function bound to NumPy's global RandomState
(``np.random.rand``...), with arguments that are all constants of the trace
and an ndarray as result, is a random draw as frame's own
(``Tracer.host_draw``): a graph input that the entry makes just before the
graph, in program order, by calling the same method of the same object with
the same arguments.  So NumPy's stream is kept bit for bit and the generator is
left where the plain function leaves it.  The shape and dtype come from the
same call on a scratch generator of the same class (the user's generator is
never touched while tracing).  When the graph raises or a run check sends the
call to the plain function, the entry first gives the draws back
(``generator_state``/``restore_generator``).

``np.random.default_rng(seed)`` called in the function with a constant seed
(or none) is made by the entry itself before its draws (``made``): the same
object is drawn from, returned, stored or handed to a resume function.

Anything else stays a graph break (scalar draws, arguments computed in the
graph, ``shuffle``, ``seed``, ``bit_generator``, ``spawn``...).
"""
from __future__ import annotations

import warnings

import numpy as np

from frame.dtypes import from_numpy

from ..errors import Unsupported
from ..sources import AttrSource, ConstSource
from .base import NDARRAY, TensorVariable, Variable
from .callables import numpy_name
from .containers import constant_value, is_constant_value
from .objects import ObjectVariable
from .registry import HOOKS, wrap_rule

__all__ = ["SAMPLERS", "NumpyGeneratorVariable", "NumpyMethodVariable", "numpy_random_call",
           "generator_state", "restore_generator"]

# the methods that return fresh samples and change nothing but the generator's state
_COMMON = frozenset({
    "random", "standard_normal", "normal", "uniform", "choice", "permutation", "exponential",
    "standard_exponential", "poisson", "binomial", "beta", "gamma", "standard_gamma", "laplace",
    "logistic", "lognormal", "gumbel", "geometric", "hypergeometric", "negative_binomial",
    "chisquare", "noncentral_chisquare", "f", "noncentral_f", "pareto", "power", "rayleigh",
    "standard_cauchy", "standard_t", "triangular", "vonmises", "wald", "weibull", "zipf",
    "logseries", "multinomial", "multivariate_normal", "dirichlet"})
SAMPLERS: dict[type, frozenset[str]] = {
    np.random.Generator: _COMMON | {"integers", "multivariate_hypergeometric"},
    np.random.RandomState: _COMMON | {"rand", "randn", "random_sample", "randint"},
}

# what an argument of a draw may be: constants the entry passes as they are
_LEAVES = (type(None), bool, int, float, str, np.generic, np.dtype)


def _plain_constant(value) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_plain_constant(v) for v in value)
    if isinstance(value, type):   # dtype=np.float32, dtype=float
        return issubclass(value, np.generic) or value in (bool, int, float)
    return isinstance(value, _LEAVES)


def _scratch(cls: type):
    """A generator of class ``cls`` the trace may draw from (never the user's)."""
    return np.random.Generator(np.random.PCG64(0)) if cls is np.random.Generator \
        else np.random.RandomState(0)


class NumpyGeneratorVariable(ObjectVariable):
    """A ``np.random.Generator`` or ``RandomState``: read through its source
    (guarded by type), or ``made`` by the entry (``np.random.default_rng``
    in the function: ``obj`` is then a stand-in of the same class, ``made``
    the constructor and its arguments)."""
    __slots__ = ("made",)

    def __init__(self, obj, source=None, made: tuple | None = None):
        super().__init__(obj, source)
        self.made = made

    def getattr(self, tx, name: str) -> Variable:
        if name in SAMPLERS[type(self.obj)] or _is_method(type(self.obj), name):
            return NumpyMethodVariable(self, name)   # (only a sampler's call draws)
        if self.made is not None:
            raise Unsupported("unsupported_call", f"numpy.random.{type(self.obj).__name__}.{name} "
                                                  f"of a generator made in the function")
        return super().getattr(tx, name)

    def reconstruct(self, rb) -> str:
        if self.made is None:
            return super().reconstruct(rb)
        name = rb.named(self)   # made by the entry before its draws (codegen._draw_lines)
        if name is None:
            raise Unsupported("unsupported_object", "a NumPy generator made in the function, "
                                                    "outside a graph entry")
        return name

    def __repr__(self) -> str:
        return f"NumpyGenerator({type(self.obj).__name__}{' made' if self.made else ''})"


def _is_method(cls: type, name: str) -> bool:
    """Is ``name`` a method of the generator class ``cls`` (``shuffle``, ``seed``)?"""
    return not name.startswith("_") and callable(getattr(cls, name, None)) and \
        not isinstance(getattr(cls, name), type)


class NumpyMethodVariable(Variable):
    """A method of a NumPy generator (``rng.normal``): calling a sampler
    (``SAMPLERS``) draws; any other method's call (``rng.shuffle(x)``) is a
    break at the call, the method rebuilt from its generator."""
    __slots__ = ("owner", "name")

    def __init__(self, owner: NumpyGeneratorVariable, name: str):
        super().__init__(None)
        self.owner = owner
        self.name = name

    def python_type(self) -> type:
        return type(getattr(self.owner.obj, self.name))

    def call(self, tx, args, kwargs):
        if self.name not in SAMPLERS[type(self.owner.obj)]:
            raise Unsupported("unsupported_call", f"numpy.random.{type(self.owner.obj).__name__}."
                                                  f"{self.name}() changes or reads the generator "
                                                  f"(NumPy's generators run natively)")
        return _draw(tx, self.owner, self.name, args, kwargs)

    def reconstruct(self, rb) -> str:
        return f"{self.owner.reconstruct(rb)}.{self.name}"

    def __repr__(self) -> str:
        return f"NumpyMethod({self.name})"


class NumpyDraw:
    """What the entry calls for one draw: ``owner.<method>(*args, **kwargs)``
    (a ``Tracer.draws`` spec; ``codegen`` writes the call)."""
    __slots__ = ("owner", "method", "args", "kwargs")

    def __init__(self, owner: NumpyGeneratorVariable, method: str, args: tuple, kwargs: dict):
        self.owner = owner
        self.method = method
        self.args = args
        self.kwargs = kwargs

    def call_source(self, rb) -> str:
        """The call, as a line of the entry (``rb``: ``codegen._Rebuilder``)."""
        items = [rb.constant(a) for a in self.args]
        items += [f"{k}={rb.constant(v)}" for k, v in self.kwargs.items()]
        return f"{self.owner.reconstruct(rb)}.{self.method}({', '.join(items)})"


def _draw(tx, owner: NumpyGeneratorVariable, method: str, args, kwargs, what: str = "") -> Variable:
    """``owner.<method>(*args, **kwargs)`` as a draw of the entry, or a break
    (``what``: the call as the user wrote it, for the break's reason)."""
    what = what or f"numpy.random.{type(owner.obj).__name__}.{method}()"
    if owner.source is None and owner.made is None:
        raise Unsupported("unsupported_call", f"{what} of a generator the entry cannot name")
    if not all(is_constant_value(a) for a in [*args, *kwargs.values()]):
        raise Unsupported("unsupported_call", f"{what} with arguments computed in the function "
                                              f"makes random numbers (NumPy's generators run natively)")
    py_args = tuple(constant_value(a) for a in args)
    py_kwargs = {k: constant_value(v) for k, v in kwargs.items()}
    if not _plain_constant(py_args) or not _plain_constant(tuple(py_kwargs.values())):
        raise Unsupported("unsupported_call", f"{what} with arguments other than numbers, "
                                              f"strings, dtypes and tuples of them")
    try:   # NumPy's shape and dtype (and whether it raises or warns) from a scratch generator
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sample = getattr(_scratch(type(owner.obj)), method)(*py_args, **py_kwargs)
    except Exception as e:   # noqa: BLE001 - the plain call raises it
        raise Unsupported("unsupported_call", f"{what} raises {type(e).__name__}: {e}") from e
    if caught:
        raise Unsupported("unsupported_call", f"{what} warns ({caught[0].category.__name__})")
    if type(sample) is not np.ndarray:
        raise Unsupported("unsupported_call", f"{what} makes a random {type(sample).__name__}, "
                                              f"not an array (NumPy's generators run natively)")
    try:
        dtype = from_numpy(sample.dtype)
    except TypeError as e:
        raise Unsupported("unsupported_object", str(e)) from e
    meta = tx.tr.tracer.host_draw(NumpyDraw(owner, method, py_args, py_kwargs), dtype, sample.shape)
    return TensorVariable(meta, NDARRAY)


@HOOKS.provide
def numpy_random_call(tx, fn_var, args, kwargs) -> Variable:
    """A call of a ``numpy.random`` callable (``fn_var``, a
    ``NumpyFunctionVariable``): a draw of a legacy
    module function (a method of NumPy's global RandomState) or of a
    generator's method read as a bound method (a resume function's
    parameter, rule 77), a generator made by ``default_rng``; else a break."""
    fn = fn_var.fn
    owner = getattr(fn, "__self__", None)
    name = getattr(fn, "__name__", "")
    if type(owner) in SAMPLERS and name in SAMPLERS[type(owner)]:
        if owner is np.random.mtrand._rand:
            var = NumpyGeneratorVariable(owner, ConstSource(tx.tr.guards.const(owner),
                                                            "numpy.random.mtrand._rand"))
        elif fn_var.source is not None:   # (rule 77 guarded its owner's type)
            var = tx.tr.wrap(owner, AttrSource(fn_var.source, "__self__"))
        else:
            var = NumpyGeneratorVariable(owner)   # (refused by _draw: no source)
        return _draw(tx, var, name, args, kwargs, f"{numpy_name(fn)}()")
    if fn is np.random.default_rng:
        return _made_generator(tx, args, kwargs)
    raise Unsupported("unsupported_call", f"{numpy_name(fn)}() makes random numbers "
                                          f"(NumPy's generators run natively)")


def _made_generator(tx, args, kwargs) -> Variable:
    """``np.random.default_rng(seed)`` with a constant int seed or none."""
    if not all(is_constant_value(a) for a in [*args, *kwargs.values()]):
        raise Unsupported("unsupported_call", "numpy.random.default_rng() of a seed computed "
                                              "in the function")
    py_args = [constant_value(a) for a in args]
    py_kwargs = {k: constant_value(v) for k, v in kwargs.items()}
    seeds = [*py_args, *py_kwargs.values()]
    if len(seeds) > 1 or set(py_kwargs) - {"seed"} or not all(
            s is None or (type(s) is int and s >= 0) for s in seeds):
        raise Unsupported("unsupported_call", "numpy.random.default_rng() of a seed other than "
                                              "None or a non-negative int")
    var = NumpyGeneratorVariable(np.random.default_rng(0), None,
                                 (np.random.default_rng, tuple(py_args), py_kwargs))
    tx.tr.made_generators.append(var)
    return var


@wrap_rule(96)
def _wrap_generator(tr, value, source) -> Variable | None:
    """A NumPy Generator or RandomState (exact types; guarded by type, not
    identity: an argument may be a new generator at every call)."""
    if type(value) not in SAMPLERS:
        return None
    if not isinstance(source, ConstSource):
        tr.guards.type_is(source, value)
    return NumpyGeneratorVariable(value, source)


def generator_state(gen, may_raise: bool):
    """The state of ``gen`` before an entry's draws, given back by
    ``restore_generator`` when the call runs natively instead.  Reading an
    MT19937's state (NumPy's legacy RandomState, ``np.random.rand``) costs
    ~50 us, ~2 us for PCG64: the former is read only when the graph
    ``may_raise`` (codegen._draw_lines), else None."""
    if type(gen) is np.random.Generator:
        if may_raise or type(gen.bit_generator) is not np.random.MT19937:
            return gen.bit_generator.state
        return None
    return gen.get_state(legacy=False) if may_raise else None


def restore_generator(gen, state) -> None:
    """Give ``gen`` its state before the draws back (``generator_state``)."""
    if state is None:   # the graph raised where it was not expected to (logged)
        raise RuntimeError(f"a jitted function's graph raised unexpectedly after drawing from "
                           f"{gen!r}, whose state was not saved (an MT19937's is saved only "
                           f"for graphs that check their data); the call cannot run natively "
                           f"with the same random numbers")
    if type(gen) is np.random.Generator:
        gen.bit_generator.state = state
    else:
        gen.set_state(state)
