"""Exceptions and context managers made and used inside the traced code.

An exception the trace raises is modelled when its value is known exactly:
``raise E(...)`` of a builtin exception class or of a user subclass that adds
no Python code to construction or display (``modelled_exception_class``), and
the exceptions Python itself raises while the trace runs Python operations on
constants (``d["missing"]``, ``int("abc")``, ``next()`` of an exhausted
iterator: ``UserCodeRaises(..., exc=<the real exception>)``).  The translator
then unwinds to the frame's handler from the exception table
(``InstructionTranslator.unwind``), and ``PUSH_EXC_INFO``, ``CHECK_EXC_MATCH``,
``POP_EXCEPT``, ``RERAISE`` and ``WITH_EXCEPT_START`` are simulated.  An
exception that leaves the traced function still runs the call natively, which
raises the real one (type, message, ``__cause__``, traceback at the user's line).

Context managers: ``with`` on a user object whose class defines ``__enter__``
and ``__exit__`` in Python inlines both (``ObjectVariable.enter_context``);
``contextlib.contextmanager`` functions run their generator lazily
(``GeneratorContextManagerVariable``); ``contextlib.suppress`` and
``contextlib.nullcontext`` are modelled here, ``np.errstate`` in errstate.py.
"""
from __future__ import annotations

import contextlib
import sys
import types

import numpy as np

from ..errors import Unsupported, UserCodeRaises
from .base import CONSTANT_TYPES, ConstantVariable, Variable
from .callables import MethodVariable
from .containers import GeneratorVariable, TupleVariable, is_constant_value, constant_value
from .errstate import make_errstate

__all__ = ["ExceptionVariable", "make_exception", "initialised_exception_class",
           "make_initialised_exception", "TracebackVariable", "modelled_exception_class", "exception_variable",
           "exception_classes", "set_context", "chained_raise", "stop_iteration_error", "CallerHandled", "UNKNOWN_CHAIN",
           "GeneratorContextManagerVariable", "SuppressVariable",
           "NullContextVariable", "ContextExitVariable", "make_context_manager", "raise_exception"]

# construction or display of these runs more than ``BaseException.__init__`` on the args
# (OSError(errno, ...) picks a subclass; Unicode errors need five arguments; groups nest)
_QUIRKY = (OSError, UnicodeError, BaseExceptionGroup)
# Python code on a user exception class that would run when it is made, shown or read
_CODE_HOOKS = ("__init__", "__new__", "__str__", "__repr__", "__getattr__", "__getattribute__",
               "__setattr__", "__init_subclass__", "__reduce__")


def modelled_exception_class(cls) -> bool:
    """Whether an instance of ``cls`` is fully described by its class and
    ``args``: a builtin exception class (not an ``OSError`` or Unicode error),
    or a user subclass of one that adds none of ``_CODE_HOOKS`` and has a
    plain metaclass."""
    if not isinstance(cls, type) or not issubclass(cls, BaseException) or issubclass(cls, _QUIRKY):
        return False
    if type(cls) is not type:
        return False
    for klass in cls.__mro__:
        if klass.__module__ == "builtins":
            return True
        if any(name in vars(klass) for name in _CODE_HOOKS) or "__slots__" in vars(klass):
            return False
    return True


# builtin exception classes whose ``__init__`` does more than set ``args``
_OWN_INIT = (StopIteration, StopAsyncIteration, SystemExit, ImportError, AttributeError, NameError,
             SyntaxError)


def initialised_exception_class(cls) -> bool:
    """Whether ``cls`` is a user exception class whose only Python code run
    when an instance is made or shown is its ``__init__`` (Python functions in
    the user classes of its MRO, the builtin base's being ``BaseException``'s:
    it sets ``args``), with a plain metaclass and no ``__slots__``."""
    if not isinstance(cls, type) or not issubclass(cls, BaseException) or type(cls) is not type \
            or cls.__module__ == "builtins" or issubclass(cls, _QUIRKY + _OWN_INIT):
        return False
    for klass in cls.__mro__:
        if klass.__module__ == "builtins":
            return True
        own = vars(klass)
        if "__slots__" in own or any(name in own for name in _CODE_HOOKS if name != "__init__"):
            return False
        if "__init__" in own and not isinstance(own["__init__"], types.FunctionType):
            return False
    return True


class ExceptionVariable(Variable):
    """An exception instance made or raised during the trace.  ``real`` is the
    trace-time instance when every argument is a constant (then ``str(e)``,
    ``e.args`` and the class's constant attributes are read from it).  It never
    leaves the trace: an exception object returned or stored ends the capture
    (its ``__traceback__`` and ``__context__`` are the native run's).

    A user class with a Python ``__init__`` (``initialised_exception_class``)
    is made by ``make_initialised_exception``: ``args`` starts as the call's
    positional arguments (``BaseException.__new__``), the ``__init__`` is
    inlined on the Variable, ``super().__init__(...)`` sets ``args`` again and
    the attributes it stores are held in ``attrs``."""
    __slots__ = ("exc_type", "args", "kwargs", "real", "cause", "context", "suppress", "attrs",
                 "initialised")

    def __init__(self, cls: type, args, kwargs=None, real: BaseException | None = None):
        super().__init__(None)
        self.exc_type = cls
        self.args = list(args)
        self.kwargs = dict(kwargs or {})
        # ``__cause__``, ``__context__`` (None, an ExceptionVariable, ``UNKNOWN_CHAIN`` or a
        # ``CallerHandled``) and ``__suppress_context__`` (a bool or ``UNKNOWN_CHAIN``):
        # ``set_context`` and ``raise_exception`` set them as CPython does
        self.cause = None
        self.context = None
        self.suppress = False
        self.attrs: dict[str, Variable] = {}
        self.initialised = False
        if real is None and not self.kwargs and modelled_exception_class(cls) and \
                all(is_constant_value(a) for a in self.args):
            real = cls(*[constant_value(a) for a in self.args])
        self.real = real

    def python_type(self) -> type:
        return self.exc_type

    def truth(self, tx) -> bool:
        return True

    def describe(self) -> str:
        shown = ", ".join(repr(a.as_constant()) if a.is_constant() else "..." for a in self.args)
        return f"{self.exc_type.__name__}({shown})"

    def text(self, fn) -> str:
        """``str(e)`` / ``repr(e)`` (``fn``), read from the real instance."""
        if self.real is None:
            raise Unsupported("unsupported_object", f"{fn.__name__}() of {self.describe()} "
                                                    f"(its arguments are not constants)")
        return fn(self.real)

    def set_args(self, tx, args, kwargs) -> None:
        """``BaseException.__init__(self, *args)`` (``super().__init__(...)``)."""
        if kwargs:
            message = f"{self.exc_type.__name__}() takes no keyword arguments"
            raise UserCodeRaises(f"TypeError: {message}", exc=TypeError(message))
        self.args = list(args)
        self.real = _real_exception(self.exc_type, self.args)

    def setattr(self, tx, name: str, value: Variable) -> None:
        """``self.code = code`` in the ``__init__`` of an exception made in the trace."""
        if not self.initialised or name.startswith("__") or name == "args" or any(
                name in vars(k) and hasattr(type(vars(k)[name]), "__set__")   # a property's setter
                for k in self.exc_type.__mro__):
            super().setattr(tx, name, value)
        self.attrs[name] = value

    def getattr(self, tx, name: str) -> Variable:
        if name in self.attrs:
            return self.attrs[name]
        if name == "args":
            return TupleVariable(self.args)
        if name == "value" and self.exc_type is StopIteration and not self.kwargs:
            # StopIteration's own __init__: value is args[0] (a generator's return value)
            return self.args[0] if self.args else ConstantVariable(None)
        if name == "__class__":
            return tx.wrap_static(self.exc_type)
        if name in ("__cause__", "__context__"):
            return _chain_value(tx, self, self.cause if name == "__cause__" else self.context,
                                name)
        if name == "__suppress_context__":
            if self.suppress is UNKNOWN_CHAIN:
                raise Unsupported("unsupported_object", f"{self.exc_type.__name__}.{name} of an "
                                                        f"exception raised inside library code")
            return ConstantVariable(self.suppress)
        if name in ("__traceback__", "__notes__", "with_traceback", "add_note"):
            raise Unsupported("unsupported_object", f"{self.exc_type.__name__}.{name} of an exception "
                                                    f"raised in the traced code")
        for klass in self.exc_type.__mro__:
            if klass.__module__ == "builtins":
                break
            if name in vars(klass):  # a user class's attribute: read (and guarded) on the class
                if isinstance(vars(klass)[name], types.FunctionType):   # a method: inlined
                    tx.tr.guards.class_attr(self.exc_type, name, vars(klass)[name])
                    return MethodVariable(tx.wrap_static(vars(klass)[name]), self)
                if not isinstance(vars(klass)[name], CONSTANT_TYPES):
                    raise Unsupported("unsupported_object", f"attribute {name!r} of {self.describe()}")
                return tx.wrap_static(self.exc_type).getattr(tx, name)
        if self.real is None:
            raise Unsupported("unsupported_object", f"attribute {name!r} of {self.describe()}")
        try:
            value = getattr(self.real, name)
        except AttributeError as e:
            raise UserCodeRaises(f"{self.exc_type.__name__!r} object has no attribute {name!r}",
                                 exc=e) from e
        if isinstance(value, CONSTANT_TYPES):
            return ConstantVariable(value)
        raise Unsupported("unsupported_object", f"attribute {name!r} of {self.describe()}")

    def __repr__(self) -> str:
        return f"Exception({self.describe()})"


def make_exception(tx, cls: type, args) -> ExceptionVariable:
    """``cls(*args)`` of a modelled exception class; a user class is guarded to
    still add no code (its ``__init__``, ``__new__``, ``__str__``, ``__repr__``
    are still the builtin base's: a class patched later is traced again)."""
    if cls.__module__ != "builtins":
        for name in ("__init__", "__new__", "__str__", "__repr__"):
            tx.tr.guards.class_attr(cls, name, getattr(cls, name))
    return ExceptionVariable(cls, args)


def _real_exception(cls: type, args: list[Variable]) -> BaseException | None:
    """The trace-time instance of an initialised exception class with these
    ``args`` (made by ``BaseException.__new__``: no Python code runs), for
    ``str(e)``; None when an argument is not a constant."""
    if not all(is_constant_value(a) for a in args):
        return None
    values = [constant_value(a) for a in args]
    real = BaseException.__new__(cls, *values)
    real.args = tuple(values)
    return real


def make_initialised_exception(tx, cls: type, args, kwargs) -> ExceptionVariable:
    """``cls(*args, **kwargs)`` of an ``initialised_exception_class``: its
    ``__init__`` inlined on a new ExceptionVariable (guarded unchanged)."""
    exc = ExceptionVariable(cls, args)
    exc.initialised = True
    exc.real = _real_exception(cls, exc.args)
    init = next(vars(k)["__init__"] for k in cls.__mro__ if "__init__" in vars(k))
    tx.tr.guards.class_attr(cls, "__init__", init)
    for name in ("__new__", "__str__", "__repr__"):
        tx.tr.guards.class_attr(cls, name, getattr(cls, name))
    if not isinstance(init, types.FunctionType):   # BaseException's own: sets args
        exc.set_args(tx, args, kwargs)
        return exc
    result = tx.wrap_static(init).call(tx, [exc, *args], kwargs)
    if not result.is_none():
        message = f"__init__() should return None, not '{result.python_type().__name__}'"
        raise UserCodeRaises(f"TypeError: {message}", exc=TypeError(message))
    return exc


def exception_variable(exc) -> ExceptionVariable | None:
    """The Variable of an exception a ``UserCodeRaises`` carries (an
    ``ExceptionVariable``, or a real exception Python raised on the trace's
    constants), or None when the exception is not modelled exactly."""
    if isinstance(exc, ExceptionVariable):
        modelled = exc.initialised or modelled_exception_class(exc.exc_type)
        return exc if modelled and not exc.kwargs else None
    if isinstance(exc, BaseException) and modelled_exception_class(type(exc)) and \
            not getattr(exc, "__dict__", None) and \
            all(isinstance(a, CONSTANT_TYPES) for a in exc.args):
        var = ExceptionVariable(type(exc), [ConstantVariable(a) for a in exc.args], real=exc)
        # (capture's own Unsupported is handled while a re-translation up to a graph break
        # runs: an exception Python raises then has it as context, unlike in the plain run)
        context = exc.__context__
        if exc.__cause__ is not None or exc.__suppress_context__ or \
                (context is not None and not isinstance(context, Unsupported)):
            # raised inside library code run at trace time while it handled another
            # exception (``raise ... from None`` in ``json``): in the plain run its chain
            # goes on into the user's handled exception, which the trace does not rebuild
            var.cause = var.context = var.suppress = UNKNOWN_CHAIN
        return var
    return None


# -- exception chains (PEP 3134) ---------------------------------------------------------------

# a chain attribute the trace does not know (an exception raised inside library code that
# handled another one); reading it is refused
UNKNOWN_CHAIN = object()


class CallerHandled:
    """The ``__context__`` of an exception raised where no frame of the trace
    handles one: CPython sets it to the exception the jitted function's caller
    is handling (``sys.exception()`` at the call), and leaves it as it was
    (``before``) when there is none.  Read as ``before`` under a guard that
    the caller handles nothing (``GuardSet.handled_exception``)."""
    __slots__ = ("before",)

    def __init__(self, before):
        self.before = before


def _chain_value(tx, exc: ExceptionVariable, value, name: str) -> Variable:
    """``exc.__cause__`` / ``exc.__context__`` holding ``value``."""
    while isinstance(value, CallerHandled):
        tx.tr.guards.handled_exception(sys.exc_info, tx.tr.caller_handles)
        if tx.tr.caller_handles:
            # the call being traced is made while its caller handles an exception, which
            # the plain run chains here: not modelled (the entry runs natively while so)
            raise Unsupported("unsupported_object", f"{exc.exc_type.__name__}.{name} of an "
                                                    f"exception raised while the caller of the "
                                                    f"jitted function handles an exception")
        value = value.before
    if value is UNKNOWN_CHAIN:
        raise Unsupported("unsupported_object", f"{exc.exc_type.__name__}.{name} of an exception "
                                                f"raised inside library code")
    return ConstantVariable(None) if value is None else value


def set_context(tx, exc: ExceptionVariable) -> None:
    """Implicit chaining when ``exc`` is raised (``raise``, an operation that
    fails) in ``tx``, as CPython's ``_PyErr_SetObject`` does: its
    ``__context__`` becomes the exception being handled there, unless that is
    ``exc`` itself; a chain from the handled exception that leads back to
    ``exc`` is cut there (no cycle).  Where the trace handles no exception, the
    jitted function's caller may (``CallerHandled``).  A bare ``raise``,
    ``RERAISE`` and ``generator.throw()`` restore an exception without
    chaining it: they do not call this."""
    handled = tx.current_exception()
    if handled is None:
        exc.context = CallerHandled(exc.context)
        return
    if handled is exc:
        return
    if not isinstance(handled, ExceptionVariable):
        exc.context = UNKNOWN_CHAIN
        return
    o, seen = handled, set()
    while isinstance(o.context, ExceptionVariable) and id(o) not in seen:
        seen.add(id(o))
        if o.context is exc:
            o.context = None
            break
        o = o.context
    exc.context = handled


def stop_iteration_error(stop) -> ExceptionVariable:
    """PEP 479: the ``RuntimeError`` a ``StopIteration`` (``stop``, a Variable
    or the real one) leaving a generator becomes; its ``__cause__`` and
    ``__context__`` are that ``StopIteration``, its context suppressed (3.11's
    ``_PyErr_FormatFromCause``, 3.12's ``INTRINSIC_STOPITERATION_ERROR``)."""
    exc = ExceptionVariable(RuntimeError, [ConstantVariable("generator raised StopIteration")])
    stop = exception_variable(stop)
    exc.cause = exc.context = stop if stop is not None else UNKNOWN_CHAIN
    exc.suppress = True
    return exc


def chained_raise(e: UserCodeRaises) -> UserCodeRaises:
    """``e``, marked as an exception already chained (``set_context``) or
    restored without chaining: the frames it leaves do not chain it again."""
    e.chained = True
    return e


def exception_classes(tx, v: Variable):
    """The class or tuple of classes of an ``except`` clause."""
    if isinstance(v, TupleVariable):
        return tuple(exception_classes(tx, i) for i in v.items)
    value = v.as_constant() if v.is_constant() else tx.real_value(v)
    if isinstance(value, tuple):
        return tuple(value)
    if not (isinstance(value, type) and issubclass(value, BaseException)):
        raise Unsupported("unsupported_object", f"except clause with {v!r}")
    return value


def raise_exception(tx, value: Variable, cause: Variable | None = None):
    """``raise value [from cause]``: a ``UserCodeRaises`` carrying the exception
    when it is modelled (an instance, or a class called with no arguments),
    its ``__cause__`` and ``__suppress_context__`` set by ``from cause``; its
    ``__context__`` is set where the translator catches it first
    (``InstructionTranslator._run``: ``set_context``)."""
    exc = value
    if not isinstance(exc, ExceptionVariable):
        cls = value.as_constant() if value.is_constant() else None
        if isinstance(cls, type) and issubclass(cls, BaseException) and modelled_exception_class(cls):
            exc = make_exception(tx, cls, [])
        else:
            raise UserCodeRaises(f"the function raises {value.describe()}")
    if cause is not None:
        exc.cause = _cause(tx, cause)
        exc.suppress = True
    raise UserCodeRaises(f"the function raises {exc.describe()}", exc=exc)


def _cause(tx, cause: Variable):
    """What ``raise ... from cause`` stores in ``__cause__`` (CPython's
    ``do_raise``): an exception, a class called with no arguments, None; a
    cause that is no exception raises ``TypeError``."""
    if isinstance(cause, ExceptionVariable):
        return cause
    if cause.is_none():
        return None
    value = cause.as_constant() if cause.is_constant() else None
    if isinstance(value, type) and issubclass(value, BaseException):
        if modelled_exception_class(value):
            return make_exception(tx, value, [])
        return UNKNOWN_CHAIN   # a class whose call runs code: not read in the trace
    if cause.is_constant():
        message = "exception causes must derive from BaseException"
        raise UserCodeRaises(f"TypeError: {message}", exc=TypeError(message))
    try:
        is_exception = issubclass(cause.python_type(), BaseException)
    except Unsupported:
        is_exception = False
    if not is_exception:
        raise Unsupported("unsupported_object", f"raise ... from {cause!r}")
    return UNKNOWN_CHAIN   # an exception object of the frame: not read in the trace


class TracebackVariable(Variable):
    """The traceback ``__exit__`` receives for an exception raised in its
    block: it may be passed around and tested against None, nothing more."""
    __slots__ = ()

    def python_type(self) -> type:
        return types.TracebackType

    def truth(self, tx) -> bool:
        return True

    def __repr__(self) -> str:
        return "Traceback"


# -- context managers ----------------------------------------------------------------------------

class ContextExitVariable(Variable):
    """The bound ``__exit__`` of a modelled context manager: ``on_exit(tx, exc)``
    with the ``ExceptionVariable`` in flight (None on a normal exit) returns
    whether the exception is suppressed."""
    __slots__ = ("on_exit", "done")

    def __init__(self, on_exit):
        super().__init__(None)
        self.on_exit = on_exit
        self.done = False

    def call(self, tx, args, kwargs):
        if kwargs or len(args) != 3 or self.done:
            raise Unsupported("unsupported_call", "calling a context manager's __exit__ "
                                                  "other than at the end of its with block")
        self.done = True
        exc = None if args[1].is_none() else args[1]
        if exc is not None and not isinstance(exc, ExceptionVariable):
            raise Unsupported("unsupported_call", f"__exit__ with {exc!r}")
        return ConstantVariable(self.on_exit(tx, exc))

    def __repr__(self) -> str:
        return "ContextExit"


class SuppressVariable(Variable):
    """``contextlib.suppress(*classes)``."""
    __slots__ = ("classes",)

    def __init__(self, classes: tuple):
        super().__init__(None)
        self.classes = classes

    def python_type(self) -> type:
        return contextlib.suppress

    def enter_context(self, tx):
        def on_exit(tx, exc):
            return exc is not None and issubclass(exc.exc_type, self.classes)
        return ContextExitVariable(on_exit), ConstantVariable(None)

    def __repr__(self) -> str:
        return f"suppress{self.classes}"


class NullContextVariable(Variable):
    """``contextlib.nullcontext(value)``."""
    __slots__ = ("value",)

    def __init__(self, value: Variable):
        super().__init__(None)
        self.value = value

    def python_type(self) -> type:
        return contextlib.nullcontext

    def enter_context(self, tx):
        return ContextExitVariable(lambda tx, exc: False), self.value

    def __repr__(self) -> str:
        return f"nullcontext({self.value!r})"


class GeneratorContextManagerVariable(Variable):
    """What a ``contextlib.contextmanager`` function returns: its generator,
    run up to the ``yield`` on enter and to its end on exit (an exception of
    the block is thrown into it at the ``yield``), as
    ``contextlib._GeneratorContextManager`` does."""
    __slots__ = ("gen",)

    def __init__(self, gen: GeneratorVariable):
        super().__init__(None)
        self.gen = gen

    def python_type(self) -> type:
        return contextlib._GeneratorContextManager

    def enter_context(self, tx):
        value = self.gen.next(tx)
        if value is None:
            raise UserCodeRaises("RuntimeError: generator didn't yield",
                                 exc=RuntimeError("generator didn't yield"))
        return ContextExitVariable(self._exit), value

    def _exit(self, tx, exc) -> bool:
        if exc is None:
            if self.gen.next(tx) is not None:
                raise UserCodeRaises("RuntimeError: generator didn't stop",
                                     exc=RuntimeError("generator didn't stop"))
            return False
        # the block raised: contextlib throws it into the generator
        try:
            value = self.gen.throw(tx, exc)
        except UserCodeRaises as e:
            if e.exc is exc:
                return False   # re-raised as it is: not suppressed
            if isinstance(e.exc, ExceptionVariable) and issubclass(e.exc.exc_type, RuntimeError) \
                    and issubclass(exc.exc_type, StopIteration) and e.exc.cause is exc:
                return False   # PEP 479 made it a RuntimeError: contextlib re-raises the original
            raise
        if value is not None:
            raise UserCodeRaises("RuntimeError: generator didn't stop after throw()",
                                 exc=RuntimeError("generator didn't stop after throw()"))
        return True

    def __repr__(self) -> str:
        return f"contextmanager({self.gen!r})"


def make_context_manager(tx, cls: type, args, kwargs) -> Variable | None:
    """A modelled ``contextlib`` object made by calling ``cls`` (None: not one)."""
    if cls is contextlib._GeneratorContextManager:
        func, f_args, f_kwargs = args
        gen = func.call(tx, f_args.iterate(tx), dict(f_kwargs.items))
        if not isinstance(gen, GeneratorVariable):
            raise Unsupported("unsupported_call", "contextmanager of a function that is not "
                                                  "a generator function")
        return GeneratorContextManagerVariable(gen)
    if cls is contextlib.suppress and not kwargs:
        return SuppressVariable(tuple(exception_classes(tx, a) for a in args))
    if cls is np.errstate:
        return make_errstate(args, kwargs)
    if cls is contextlib.nullcontext and len(args) + len(kwargs) <= 1:
        value = args[0] if args else kwargs.get("enter_result", ConstantVariable(None))
        return NullContextVariable(value)
    return None
