"""Trampoline code objects: how auto-jit routes the calls of a plain Python
function through its compiled entries (``capture/autojit.py``).

CPython offers pure-Python code no PEP 523 frame hook, so a call of a function
object can be redirected only by the function itself: ``make_trampoline``
builds a code object with the function's exact signature (parameter names,
kinds, count; defaults stay on the function object) and the same free
variables, whose body hands the arguments to a dispatcher held as a constant
of that code (not a global: the user's namespace is left alone).  Assigned to
``fn.__code__`` it keeps every property of the function but its code: the
object (``fn is fn``), ``__name__``/``__qualname__``/``__module__``,
``__defaults__``/``__kwdefaults__``, ``__closure__``, ``__dict__``,
``__wrapped__``, ``inspect.signature`` and the file/line ``inspect`` reports.
``restore`` puts the function's own code back.

Capture traces the function's own code, never the trampoline
(``traced_code``, used by the translator when it inlines a call).
"""
from __future__ import annotations

import inspect
import keyword
import threading
import types
import warnings
import weakref

__all__ = ["make_trampoline", "traced_code", "is_trampoline", "install", "restore"]

# trampoline code -> the code it stands in for (weak: a dropped trampoline goes)
_ORIGINAL: "weakref.WeakKeyDictionary[types.CodeType, types.CodeType]" = weakref.WeakKeyDictionary()
_lock = threading.Lock()
_PLACEHOLDER = "__frame_autojit_dispatch__"


def traced_code(code: types.CodeType) -> types.CodeType:
    """The code capture traces for ``code``: a trampoline's original, else ``code``."""
    if not _ORIGINAL:
        return code
    return _ORIGINAL.get(code, code)


def is_trampoline(code: types.CodeType) -> bool:
    return code in _ORIGINAL


def make_trampoline(code: types.CodeType, dispatch) -> types.CodeType | None:
    """A code object standing in for ``code`` whose body is
    ``return dispatch(positional_args, keyword_args)`` (None when ``code``'s
    signature cannot be reproduced exactly: the caller then leaves the
    function alone)."""
    argc, posonly, kwonly = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    names = code.co_varnames
    varargs = bool(code.co_flags & inspect.CO_VARARGS)
    varkw = bool(code.co_flags & inspect.CO_VARKEYWORDS)
    n = argc + kwonly + varargs + varkw
    params = list(names[:n])
    if any(not p.isidentifier() or keyword.iskeyword(p) or p.startswith("__frame_")
           for p in params + list(code.co_freevars)):
        return None
    positional, keywords = params[:argc], params[argc:argc + kwonly]
    star = params[argc + kwonly] if varargs else None
    starstar = params[argc + kwonly + varargs] if varkw else None
    sig = list(positional[:posonly])
    if posonly:
        sig.append("/")
    sig += positional[posonly:]
    if star:
        sig.append("*" + star)
    elif keywords:
        sig.append("*")
    sig += keywords
    if starstar:
        sig.append("**" + starstar)
    args = "(" + "".join(f"{p}, " for p in positional) + (f"*{star}" if star else "") + ")"
    kwargs = "{" + "".join(f"{k!r}: {k}, " for k in keywords) + (f"**{starstar}" if starstar else "") + "}"
    free = code.co_freevars
    # the free variables are named (so the code takes the function's closure) but never read:
    # a cell the function fills later need not be filled for the call
    body = f"        if False: ({', '.join(free)},)\n" if free else ""
    src = (f"def __frame_outer({', '.join(free) or ''}):\n"
           f"    def {code.co_name if code.co_name.isidentifier() else 'f'}({', '.join(sig)}):\n"
           f"{body}"
           f"        return {_PLACEHOLDER!r}({args}, {kwargs})\n"
           f"    return {code.co_name if code.co_name.isidentifier() else 'f'}\n")
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # 'str' object is not callable
        exec(compile(src, code.co_filename, "exec"), namespace)
    outer = namespace["__frame_outer"].__code__
    inner = next(c for c in outer.co_consts if isinstance(c, types.CodeType))
    if inner.co_freevars != free or inner.co_varnames[:n] != tuple(params) \
            or inner.co_argcount != argc or inner.co_kwonlyargcount != kwonly \
            or inner.co_posonlyargcount != posonly:
        return None
    consts = tuple(dispatch if c == _PLACEHOLDER else c for c in inner.co_consts)
    changes = dict(co_consts=consts, co_name=code.co_name, co_firstlineno=code.co_firstlineno,
                   co_filename=code.co_filename)
    if hasattr(code, "co_qualname"):
        changes["co_qualname"] = code.co_qualname
    tramp = inner.replace(**changes)
    with _lock:
        _ORIGINAL[tramp] = code
    return tramp


def install(fn: types.FunctionType, tramp: types.CodeType) -> bool:
    """Route ``fn``'s calls through ``tramp`` (made by ``make_trampoline`` for
    ``fn.__code__``); False when ``fn`` no longer runs that code."""
    if _ORIGINAL.get(tramp) is not fn.__code__:
        return False
    fn.__code__ = tramp
    return True


def restore(fn: types.FunctionType, tramp: types.CodeType) -> None:
    """Give ``fn`` its own code back (if it still runs ``tramp``)."""
    if fn.__code__ is tramp:
        fn.__code__ = _ORIGINAL[tramp]
