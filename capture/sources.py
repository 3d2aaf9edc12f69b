"""Sources (trackers): where a value came from in the frame.

A source produces both the Python expression that loads the value inside a
generated entry function and the text shown in guards and logs, so the two
can never disagree (``L['self'].fc1.weight``).  Generated entry functions
take the jitted function object as ``__fn`` and the original parameters under
their own names; globals dicts are bound in the guard constant pool and
closure cells are read from ``__C`` (the function's ``__closure__``).
"""
from __future__ import annotations

import keyword

__all__ = ["Source", "DerivedSource", "LocalSource", "GlobalSource", "ClosureSource", "AttrSource", "ItemSource",
           "DefaultSource", "ConstSource", "FunctionSource", "FrameGlobalsSource", "DataSource",
           "ExprSource", "CLOSURE", "FRAME_GLOBALS", "is_safe_key", "user_text"]

# Names an entry function binds from the called function when a source reads
# them (``codegen._frame_lines``): its closure cells and its globals dict.
CLOSURE = "__C"
FRAME_GLOBALS = "__G"


class Source:
    __slots__ = ()

    def expr(self) -> str:
        raise TypeError(f"{type(self).__name__} has no load expression")

    def text(self) -> str:
        return self.expr()

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.text()}>"

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._key()))

    def _key(self):
        return ()

    def frame_reads(self) -> frozenset:
        """The names bound from the called function (``CLOSURE``,
        ``FRAME_GLOBALS``) that ``expr()`` reads."""
        return frozenset()

    @property
    def root(self) -> "Source":
        return self


class DerivedSource(Source):
    """A value read from the value at ``base`` (an attribute, an item, a
    view...): it reads what ``base`` reads, and its root is ``base``'s."""
    __slots__ = ("base",)

    def frame_reads(self) -> frozenset:
        return self.base.frame_reads()

    @property
    def root(self) -> Source:
        return self.base.root


class LocalSource(Source):
    """A parameter of the jitted function (its value at entry).  ``shown``:
    how people know it when its name is capture's (a resume function's stack
    value, ``_resume_stack0_``: what the user's code had there)."""
    __slots__ = ("name", "shown")

    def __init__(self, name: str, shown: str | None = None):
        self.name = name
        self.shown = shown

    def expr(self) -> str:
        return self.name

    def text(self) -> str:
        if self.shown is not None:
            return self.shown
        return f"L[{self.name!r}]"

    def _key(self):
        return (self.name,)


class GlobalSource(Source):
    """``name`` in a globals (or builtins) dict bound in the constant pool as ``dict_ref``."""
    __slots__ = ("name", "dict_ref", "label")

    def __init__(self, name: str, dict_ref: str, label: str = "G"):
        self.name = name
        self.dict_ref = dict_ref
        self.label = label

    def expr(self) -> str:
        return f"{self.dict_ref}[{self.name!r}]"

    def text(self) -> str:
        return f"{self.label}[{self.name!r}]"

    def _key(self):
        return (self.name, self.dict_ref)

    def frame_reads(self) -> frozenset:
        return frozenset({FRAME_GLOBALS}) if self.dict_ref == FRAME_GLOBALS else frozenset()


class ClosureSource(Source):
    """The content of closure cell ``index`` (free variable ``name``)."""
    __slots__ = ("index", "name")

    def __init__(self, index: int, name: str):
        self.index = index
        self.name = name

    def expr(self) -> str:
        return f"{CLOSURE}[{self.index}].cell_contents"

    def text(self) -> str:
        return f"closure[{self.name!r}]"

    def _key(self):
        return (self.index,)

    def frame_reads(self) -> frozenset:
        return frozenset({CLOSURE})


class AttrSource(DerivedSource):
    __slots__ = ("name",)

    def __init__(self, base: Source, name: str):
        self.base = base
        self.name = name

    def expr(self) -> str:
        if self.name.isidentifier() and not keyword.iskeyword(self.name) \
                and not self.name.startswith("__"):
            return f"{self.base.expr()}.{self.name}"
        return f"__getattr({self.base.expr()}, {self.name!r})"

    def text(self) -> str:
        return f"{self.base.text()}.{self.name}"

    def _key(self):
        return (self.base, self.name)


def is_safe_key(key) -> bool:
    """Keys whose ``repr`` evaluates back to an equal value."""
    if type(key) in (int, str, bool, type(None)):
        return True
    if type(key) is tuple:
        return all(is_safe_key(k) for k in key)
    return False


class ItemSource(DerivedSource):
    __slots__ = ("key",)

    def __init__(self, base: Source, key):
        if not is_safe_key(key):
            raise TypeError(f"unsupported item key {key!r}")
        self.base = base
        self.key = key

    def expr(self) -> str:
        return f"{self.base.expr()}[{self.key!r}]"

    def text(self) -> str:
        return f"{self.base.text()}[{self.key!r}]"

    def _key(self):
        return (self.base, self.key)


class DefaultSource(Source):
    """A parameter default of the jitted function (``__fn.__defaults__[i]``)."""
    __slots__ = ("index", "kw")

    def __init__(self, index, kw: bool = False):
        self.index = index
        self.kw = kw

    def expr(self) -> str:
        if self.kw:
            return f"__fn.__kwdefaults__[{self.index!r}]"
        return f"__fn.__defaults__[{self.index}]"

    def _key(self):
        return (self.index, self.kw)


class ConstSource(Source):
    """An object the trace reached through something already guarded (a method
    of a guarded class), bound in the guard constant pool as ``name``.  Its
    identity needs no guard; what is read from it (a function's defaults and
    closure cells) is guarded through it."""
    __slots__ = ("name", "shown")

    def __init__(self, name: str, shown: str):
        self.name = name
        self.shown = shown

    def expr(self) -> str:
        return self.name

    def text(self) -> str:
        return self.shown

    def _key(self):
        return (self.name,)


class FunctionSource(Source):
    """The function being called (the entry's ``__fn``): one entry serves every
    function of its code object."""
    __slots__ = ()

    def expr(self) -> str:
        return "__fn"

    def text(self) -> str:
        return "fn"


class FrameGlobalsSource(Source):
    """The called function's globals dict (``FRAME_GLOBALS``)."""
    __slots__ = ()

    def expr(self) -> str:
        return FRAME_GLOBALS

    def text(self) -> str:
        return "G"

    def frame_reads(self) -> frozenset:
        return frozenset({FRAME_GLOBALS})


class DataSource(DerivedSource):
    """The NumPy array holding the data of the ``frame.Tensor`` at ``base``
    (the one place capture names the slot)."""
    __slots__ = ()

    def __init__(self, base: Source):
        self.base = base

    def expr(self) -> str:
        return f"{self.base.expr()}._data"

    def text(self) -> str:
        return self.base.text()

    def _key(self):
        return (self.base,)


class ExprSource(Source):
    """A Python expression over other sources (``L['lr'] * 0.5``,
    ``math.cos(L['step'])``): a Python scalar the trace computed from scalars
    of the frame (``variables/scalars.py``).  ``template`` has one ``{}`` per
    operand; ``pooled`` names (functions) are constant-pool names."""
    __slots__ = ("template", "operands", "shown", "depth", "size")

    def __init__(self, template: str, operands: tuple, shown: str | None = None):
        self.template = template
        self.operands = tuple(operands)
        self.shown = shown if shown is not None else template
        self.depth = 1 + max((o.depth for o in self.operands if isinstance(o, ExprSource)), default=0)
        # the number of operations ``expr()`` writes out: an operand used twice is
        # written twice (``x * x``), so a loop's scalar can grow exponentially
        self.size = 1 + sum(o.size for o in self.operands if isinstance(o, ExprSource))

    def expr(self) -> str:
        return self.template.format(*(o.expr() for o in self.operands))

    def text(self) -> str:
        return self.shown.format(*(o.text() for o in self.operands))

    def _key(self):
        return (self.template, self.operands)

    def frame_reads(self) -> frozenset:
        return frozenset().union(*(o.frame_reads() for o in self.operands))

    def roots(self) -> tuple:
        """The sources of the frame the expression reads."""
        out = []
        for o in self.operands:
            out += o.roots() if isinstance(o, ExprSource) else [o]
        return tuple(out)


def user_text(source: Source) -> str:
    """How the user's code names the value at ``source``: ``lr``,
    ``self.scale``, ``opt.param_groups[0]['lr']`` (``text()`` is the
    guard notation, ``L['opt'].param_groups[0]['lr']``)."""
    if isinstance(source, LocalSource):
        return source.shown if source.shown is not None else source.name
    if isinstance(source, (GlobalSource, ClosureSource)):
        return source.name
    if isinstance(source, AttrSource):
        return f"{user_text(source.base)}.{source.name}"
    if isinstance(source, ItemSource):
        return f"{user_text(source.base)}[{source.key!r}]"
    if isinstance(source, ExprSource):
        return source.shown.format(*(user_text(o) for o in source.operands))
    return source.text()
