"""Guards: the conditions under which a cache entry's graph is valid.

Every guard is built here, by a ``GuardSet`` method named after its kind
(``GuardKind``), from the sources (``sources.py``) of the values it checks:
the method writes the Python boolean expression evaluated in the entry
function's namespace and the text shown in logs.  Nothing else writes or reads
guard expressions; what an entry must bind for its guards (the closure cells,
the globals dict) is read from the guards' sources (``GuardSet.frame_reads``).
Objects a guard compares against by identity live in a constant pool (``__k0``,
``__k1`` ...) bound into the generated function.  Generated code names a
builtin with two leading underscores (``__type(x)``, see ``codegen._BUILTINS``).
"""
from __future__ import annotations

import dataclasses
import enum
import math
import sys

import numpy as np

from frame.tensor import Tensor

from .sources import ConstSource, DataSource, FrameGlobalsSource, FunctionSource, Source, user_text

__all__ = ["Guard", "GuardKind", "GuardSet"]


class GuardKind(enum.Enum):
    TENSOR = "tensor"                  # a frame.Tensor's type, shape, dtype, requires_grad
    NDARRAY = "ndarray"                # a NumPy array's type, shape and dtype
    CONSTANT = "constant"              # a Python or NumPy constant's type and value
    IDENTITY = "identity"              # the very object (pooled)
    TYPE_AND_LEN = "type_and_len"      # a tuple's or list's type and length
    DICT_KEYS = "dict_keys"            # a dict's type and keys (in order)
    TYPE_IS = "type_is"                # an object's exact type
    ALIAS = "alias"                    # two sources are one object
    NOT_ALIAS = "not_alias"            # two sources are different objects
    SAME_OUTCOME = "same_outcome"      # ``a is b`` has the outcome the trace saw
    CODE = "code"                      # a function's __code__
    DEFAULTS = "defaults"              # a function's __defaults__ (identity)
    KWDEFAULTS = "kwdefaults"          # a function's __kwdefaults__ (identity)
    GLOBALS = "globals"                # a called function's globals are the top frame's
    NOT_IN_GLOBALS = "not_in_globals"  # a builtin is not shadowed by a global
    GRAD_MODE = "grad_mode"            # frame's grad mode at entry
    WRITEABLE = "writeable"            # an array written in place is writeable
    READ_ONLY = "read_only"            # an array is read-only (writing it raises)
    C_CONTIGUOUS = "c_contiguous"      # an array is C-contiguous
    DISJOINT = "disjoint"              # arrays written in place share no memory with the others
    NOT_DISJOINT = "not_disjoint"      # ... they do (such calls run natively)
    NO_INSTANCE_ATTR = "no_instance_attr"  # an object's __dict__ has no such name
    CLASS_ATTR = "class_attr"          # a class attribute (method) is unchanged
    MODULE_LOADED = "module_loaded"    # sys.modules holds the module the trace imported
    SCALAR_TYPE = "scalar_type"        # a Python int/float (or an expression of them): its type
    SCALAR_VALUE = "scalar_value"      # ... its value, where the trace used it (variables/scalars.py)
    SCALAR_INPUT = "scalar_input"      # ... converts to its graph input's dtype
    HAS_KEY = "has_key"                # a dict holds (or does not hold) a key
    HANDLED_EXCEPTION = "handled_exception"  # the caller handles an exception (or none)
    LOGGING = "logging"                # a logger's isEnabledFor answer, the root's handlers


def _plain_constant(value) -> bool:
    """None, a bool, int, str, bytes, finite float, or a tuple of these (two
    such values are the same value exactly when their reprs are equal)."""
    t = type(value)
    if value is None or t in (bool, int, str, bytes):
        return True
    if t is float:
        return math.isfinite(value)
    return t is tuple and all(_plain_constant(v) for v in value)


@dataclasses.dataclass(frozen=True)
class Guard:
    expr: str          # Python expression evaluated in the entry namespace
    text: str          # for people: "L['x']: Tensor float32[2,3]"
    # (not stored with a persisted translation: ``persist.py`` keeps expr and text)
    kind: GuardKind | None = dataclasses.field(default=None, compare=False)
    sources: tuple = dataclasses.field(default=(), compare=False)


class GuardSet:
    def __init__(self):
        self.guards: list[Guard] = []
        self._seen: set[str] = set()
        self.consts: dict[str, object] = {}
        self._const_names: dict[int, str] = {}

    def const(self, obj) -> str:
        """A name bound to ``obj`` in the generated code (kept alive by the pool)."""
        name = self._const_names.get(id(obj))
        if name is None:
            name = f"__k{len(self.consts)}"
            self.consts[name] = obj
            self._const_names[id(obj)] = name
        return name

    def _add(self, kind: GuardKind, sources: tuple, expr: str, text: str) -> None:
        if expr not in self._seen:
            self._seen.add(expr)
            self.guards.append(Guard(expr, text, kind, sources))

    def add(self, expr: str, text: str) -> None:
        """A guard given as an expression over sources no other method names
        (kind None; it may read no closure cell or globals).  Capture itself
        never calls it: tests use it to plant a guard."""
        self._add(None, (), expr, text)

    def frame_reads(self) -> frozenset:
        """The names bound from the called function that the guards read
        (``sources.CLOSURE``, ``sources.FRAME_GLOBALS``)."""
        return frozenset().union(*(s.frame_reads() for g in self.guards for s in g.sources))

    # -- values ----------------------------------------------------------------------
    def tensor(self, source: Source, value) -> None:
        """A frame.Tensor or NumPy array: type, shape, dtype (and for a tensor
        whether it requires grad, and then whether it is a leaf)."""
        e = source.expr()
        if isinstance(value, Tensor):
            data, t = value._data, type(value)
            d = DataSource(source).expr()
            self._add(GuardKind.TENSOR, (source,),
                      f"__type({e}) is {self.const(t)} and {d}.shape == {data.shape!r} "
                      f"and {d}.dtype == {self.const(data.dtype)} "
                      f"and {e}._requires_grad is {value._requires_grad!r}"
                      + (f" and ({e}._grad_fn is None) is {value._grad_fn is None!r}"
                         if value._requires_grad else ""),
                      f"{source.text()}: {t.__name__} {data.dtype}{list(data.shape)}"
                      f"{' requires_grad' if value._requires_grad else ''}")
        else:
            self._add(GuardKind.NDARRAY, (source,),
                      f"__type({e}) is {self.const(np.ndarray)} and {e}.shape == {value.shape!r} "
                      f"and {e}.dtype == {self.const(value.dtype)}",
                      f"{source.text()}: ndarray {value.dtype}{list(value.shape)}")

    def constant(self, source: Source, value) -> None:
        e = source.expr()
        t = type(value)
        k = GuardKind.CONSTANT
        if value is None or t is bool:
            self._add(k, (source,), f"{e} is {value!r}", f"{source.text()} is {value!r}")
        elif isinstance(value, (float, np.floating, complex, np.complexfloating)) and value != value:
            self._add(k, (source,), f"__type({e}) is {self.const(t)} and {e} != {e}",
                      f"{source.text()} is nan ({t.__name__})")
        elif t in (int, str, bytes) or (t in (float, complex) and np.isfinite(value)):
            self._add(k, (source,), f"__type({e}) is __{t.__name__} and {e} == {value!r}",
                      f"{source.text()} == {value!r}")
        else:
            self.pooled_equal(source, value, f"{source.text()} == {value!r} ({t.__name__})")

    def scalar_type(self, source: Source, value) -> None:
        """A Python int or float whose value is guarded only where it is used
        (``variables/scalars.py``): its exact type (an expression's: it
        computes without raising)."""
        t = type(value)
        shown_type = f"__{t.__name__}" if t in (int, float) else self.const(t)   # or a NumPy scalar's
        self._add(GuardKind.SCALAR_TYPE, (source,), f"__type({source.expr()}) is {shown_type}",
                  f"{source.text()}: {t.__name__}")

    def scalar_value(self, source: Source, value, roots: tuple, where: str) -> None:
        """The value of a Python scalar (or of an expression of scalars) the
        trace used at ``where``; ``roots``: the sources it reads (a value guard
        that fails makes them dynamic, capture/jit.py).  The text names the
        user's variable and line."""
        e = source.expr()
        t = type(value)
        shown = f"{user_text(source)} {'is' if t is bool else '=='} {value!r} (used at {where})"
        if t not in (bool, int, float):   # a NumPy scalar (or NumPy's bool): pooled, exact type
            if value != value:
                expr = f"__type({e}) is {self.const(t)} and {e} != {e}"
                shown = f"{user_text(source)} is nan ({t.__name__}, used at {where})"
            else:
                expr = f"__type({e}) is {self.const(t)} and {e} == {self.const(value)}"
        elif t is bool:
            expr = f"{e} is {value!r}"
        elif value != value:
            expr = f"__type({e}) is __float and {e} != {e}"
            shown = f"{user_text(source)} is nan (used at {where})"
        elif t is int or math.isfinite(value):
            expr = f"__type({e}) is __{t.__name__} and {e} == {value!r}"
        else:
            expr = f"__type({e}) is __float and {e} == __float({str(value)!r})"
        self._add(GuardKind.SCALAR_VALUE, (source, *roots), expr, shown)

    def scalar_input(self, source: Source, dtype: np.dtype) -> None:
        """A Python scalar passed to the graph as a 0-d array of ``dtype``
        converts (an int in range, an expression that does not raise)."""
        self._add(GuardKind.SCALAR_INPUT, (source,),
                  f"{self.const(np.asarray)}({source.expr()}, {self.const(dtype)}) is not None",
                  f"{user_text(source)} fits {dtype} (a graph input)")

    def pooled_equal(self, source: Source, value, text: str | None = None) -> None:
        """Same type as ``value`` and equal to it (pooled: a range, a slice)."""
        e = source.expr()
        t = type(value)
        self._add(GuardKind.CONSTANT, (source,),
                  f"__type({e}) is {self.const(t)} and {e} == {self.const(value)}",
                  text or f"{source.text()} == {value!r}")

    def identity(self, source: Source, value) -> None:
        if isinstance(source, ConstSource):
            return  # the pooled object itself
        name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None) or type(value).__name__
        self._add(GuardKind.IDENTITY, (source,), f"{source.expr()} is {self.const(value)}",
                  f"{source.text()} is {name}")

    def type_and_len(self, source: Source, value) -> None:
        e = source.expr()
        self._add(GuardKind.TYPE_AND_LEN, (source,),
                  f"__type({e}) is {self.const(type(value))} and __len({e}) == {len(value)}",
                  f"{source.text()}: {type(value).__name__} of length {len(value)}")

    def dict_keys(self, source: Source, value: dict) -> None:
        e = source.expr()
        keys = tuple(value)
        self._add(GuardKind.DICT_KEYS, (source,),
                  f"__type({e}) is {self.const(type(value))} and __tuple({e}) == {keys!r}",
                  f"{source.text()}: dict with keys {list(keys)!r}")

    def has_key(self, source: Source, key, present: bool) -> None:
        """The dict at ``source`` holds ``key`` (``present``) or does not (a
        ``functools.cache``'s dict: whether a call hits, variables/lru_cache.py)."""
        self._add(GuardKind.HAS_KEY, (source,),
                  f"({key!r} in {source.expr()}) is {present!r}",
                  f"{source.text()} {'has' if present else 'has no'} key {key!r}")

    def type_is(self, source: Source, value) -> None:
        self._add(GuardKind.TYPE_IS, (source,), f"__type({source.expr()}) is {self.const(type(value))}",
                  f"{source.text()}: {type(value).__qualname__} object")

    # -- relations between sources ---------------------------------------------------
    def alias(self, source: Source, other: Source) -> None:
        if isinstance(source, ConstSource) or isinstance(other, ConstSource):
            return
        self._add(GuardKind.ALIAS, (source, other), f"{source.expr()} is {other.expr()}",
                  f"{source.text()} is {other.text()}")

    def not_alias(self, source: Source, other: Source) -> None:
        self._add(GuardKind.NOT_ALIAS, (source, other), f"{source.expr()} is not {other.expr()}",
                  f"{source.text()} is not {other.text()}")

    def same_outcome(self, a: Source, b: Source, same: bool) -> None:
        """``a is b`` is ``same`` (the outcome of an ``is`` the trace evaluated)."""
        self._add(GuardKind.SAME_OUTCOME, (a, b), f"({a.expr()} is {b.expr()}) is {same}",
                  f"{a.text()} is{'' if same else ' not'} {b.text()}")

    # -- functions, globals, modules, classes ----------------------------------------
    def code(self, fn_source: Source, code) -> None:
        """The function at ``fn_source`` still runs ``code`` (a code reloader may
        assign ``fn.__code__``)."""
        self._add(GuardKind.CODE, (fn_source,), f"{fn_source.expr()}.__code__ is {self.const(code)}",
                  f"{fn_source.text()}.__code__ unchanged")

    def made_function(self, fn_source: Source, fn) -> None:
        """The object at ``fn_source`` is a function of ``fn``'s code and
        globals: a function the frame made (``def`` or ``lambda`` in its body)
        handed to its resume function is a new object at each call."""
        e = fn_source.expr()
        self._add(GuardKind.CODE, (fn_source,),
                  f"__type({e}) is {self.const(type(fn))} and {e}.__code__ is "
                  f"{self.const(fn.__code__)} and {e}.__globals__ is {self.const(fn.__globals__)}",
                  f"{fn_source.text()}: a function of code {fn.__code__.co_qualname}")

    def defaults(self, fn_source: Source, fn) -> None:
        """The function's ``__defaults__`` and ``__kwdefaults__`` are the very
        objects the trace read (when it has them)."""
        e = fn_source.expr()
        top = isinstance(fn_source, FunctionSource)
        if fn.__defaults__:
            self._add(GuardKind.DEFAULTS, (fn_source,),
                      f"{e}.__defaults__ is {self.const(fn.__defaults__)}",
                      "defaults unchanged" if top else f"{fn_source.text()}.__defaults__ unchanged")
        if fn.__kwdefaults__:
            # a dict: the very one, holding the very values (``f.__kwdefaults__["k"] = v``
            # changes a default in place)
            kw = fn.__kwdefaults__
            d = f"{e}.__kwdefaults__"
            held = "".join(f" and {self._kwdefault_expr(f'{d}[{k!r}]', v)}" for k, v in kw.items())
            self._add(GuardKind.KWDEFAULTS, (fn_source,),
                      f"{d} is {self.const(kw)} and __len({d}) == {len(kw)}{held}",
                      "keyword defaults unchanged" if top
                      else f"{fn_source.text()}.__kwdefaults__ unchanged")

    def _kwdefault_expr(self, e: str, value) -> str:
        """``e`` (a keyword default) still holds ``value``: equal for a Python
        scalar of the same type (a stored translation's constants are copies),
        else the very object."""
        t = type(value)
        if value is None or t is bool:
            return f"{e} is {value!r}"
        if t in (int, str, bytes) or (t is float and math.isfinite(value)):
            return f"__type({e}) is __{t.__name__} and {e} == {value!r}"
        if t is tuple and _plain_constant(value):
            # repr tells 1 from 1.0 and True, 0.0 from -0.0, as == does not
            return f"__type({e}) is __tuple and __repr({e}) == {repr(value)!r}"
        return f"{e} is {self.const(value)}"

    def globals_are(self, f_globals: dict) -> None:
        """The called function's globals are ``f_globals`` (a function the trace
        called shares the top frame's dict)."""
        g = FrameGlobalsSource()
        self._add(GuardKind.GLOBALS, (g,), f"{g.expr()} is {self.const(f_globals)}",
                  "G of a called function is the function's G")

    def not_in_globals(self, globals_source: Source, name: str) -> None:
        """``name`` is not a global (the builtin of that name is used)."""
        self._add(GuardKind.NOT_IN_GLOBALS, (globals_source,),
                  f"{name!r} not in {globals_source.expr()}",
                  f"G has no {name!r} (the builtin is used)")

    def no_instance_attr(self, source: Source, name: str) -> None:
        self._add(GuardKind.NO_INSTANCE_ATTR, (source,), f"{name!r} not in {source.expr()}.__dict__",
                  f"{source.text()} has no instance attribute {name!r}")

    def class_attr(self, cls: type, name: str, static) -> None:
        """``cls.name`` still resolves to ``static`` (a function, classmethod,
        staticmethod or property found on the class)."""
        src = ConstSource(self.const(cls), cls.__qualname__)
        k = src.expr()
        if isinstance(static, classmethod):
            expr = f"{k}.{name}.__func__ is {self.const(static.__func__)}"
        else:
            value = static.__func__ if isinstance(static, staticmethod) else static
            expr = f"{k}.{name} is {self.const(value)}"
        self._add(GuardKind.CLASS_ATTR, (src,), expr, f"{cls.__qualname__}.{name} unchanged")

    def module_loaded(self, name: str, module) -> None:
        """``sys.modules`` holds ``module`` under ``name``."""
        mods = ConstSource(self.const(sys.modules), "sys.modules")
        self._add(GuardKind.MODULE_LOADED, (mods,),
                  f"{mods.expr()}.get({name!r}) is {self.const(module)}", f"module {name!r} is loaded")

    def handled_exception(self, exc_info, handled: bool) -> None:
        """The jitted function is called while an exception is being handled
        (``handled``), or while none is (``sys.exc_info()``, passed in as
        ``exc_info``): an exception the trace raised outside its own handlers
        has the ``__context__`` it read (variables/flow.py, ``CallerHandled``)."""
        if handled:
            self._add(GuardKind.HANDLED_EXCEPTION, (), f"{self.const(exc_info)}()[1] is not None",
                      "an exception is being handled by the caller")
        else:
            self._add(GuardKind.HANDLED_EXCEPTION, (), f"{self.const(exc_info)}()[1] is None",
                      "no exception is being handled by the caller")

    def logging_enabled(self, logger: Source, level: int, enabled: bool) -> None:
        """``logger.isEnabledFor(level)`` answers ``enabled`` (asked as the
        plain call asks it: levels of the logger and its parents,
        ``logging.disable``, the logger's cache)."""
        self._add(GuardKind.LOGGING, (logger,), f"{logger.expr()}.isEnabledFor({level!r}) is {enabled!r}",
                  f"{logger.text()} is {'' if enabled else 'not '}enabled for level {level}")

    def root_logger_has_handlers(self, root: Source) -> None:
        """The root logger has a handler: ``logging.info(...)`` and its siblings
        do not call ``basicConfig()``."""
        self._add(GuardKind.LOGGING, (root,), f"len({root.expr()}.handlers) != 0",
                  f"{root.text()} has handlers")

    def grad_mode(self, is_grad_enabled, mode: bool) -> None:
        """frame's grad mode (``is_grad_enabled()``) is ``mode``."""
        self._add(GuardKind.GRAD_MODE, (), f"{self.const(is_grad_enabled)}() is {mode!r}",
                  f"grad mode is {'on' if mode else 'off'}")

    # -- array memory ----------------------------------------------------------------
    def writeable(self, array: Source, shown: Source) -> None:
        """The array at ``array`` (of the value at ``shown``) is writeable."""
        self._add(GuardKind.WRITEABLE, (array,), f"{array.expr()}.flags.writeable",
                  f"{shown.text()} is writeable")

    def read_only(self, array: Source, shown: Source) -> None:
        self._add(GuardKind.READ_ONLY, (array,), f"not {array.expr()}.flags.writeable",
                  f"{shown.text()} is read-only")

    def c_contiguous(self, array: Source) -> None:
        self._add(GuardKind.C_CONTIGUOUS, (array,), f"{array.expr()}.flags.c_contiguous",
                  f"{array.text()} is C-contiguous")

    def disjoint(self, written: list[Source], arrays: list[Source], shown: str,
                 holds: bool = True) -> None:
        """The arrays ``written`` share no memory with the other ``arrays``
        (``holds=False``: they do, and such calls run natively)."""
        expr = (f"__disjoint(({''.join(w.expr() + ', ' for w in written)}), "
                f"({''.join(a.expr() + ', ' for a in arrays)}))")
        if holds:
            self._add(GuardKind.DISJOINT, (*written, *arrays), expr,
                      f"{shown} share no memory with the other tensor inputs")
        else:
            self._add(GuardKind.NOT_DISJOINT, (*written, *arrays), f"not {expr}",
                      f"{shown} share memory with another tensor input")
