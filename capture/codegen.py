"""Code generation for a cache entry.

One Python function per entry, generated as source and compiled once:

    def __entry(__fn, x, y):                  # the original signature
        try:
            if not (<guard> and <guard> ...):  # from sources; see guards.py
                return __MISS
        except Exception:
            return __MISS
        __o = __run((x._data, y._data))       # graph inputs, extracted by source
        __t0 = __wrap(__o[0])
        <side-effect replay: tensor data, containers, attributes, globals>
        return (__t0, x)                      # the return value, rebuilt

Guards and extraction come from the same source expressions, so they cannot
disagree.  Resume functions at graph breaks (a later issue) are built with the
``bytecode`` package instead; an entry needs no bytecode of its own because it
is called with the original arguments and returns the original's result.
"""
from __future__ import annotations

import dataclasses
import inspect
import math
import types

import numpy as np

from frame.tensor import Tensor

from .errors import Unsupported
from .guards import Guard, GuardSet
from .translator import Translation
from .variables.base import (NDARRAY, NPSCALAR, TENSOR, ConstantVariable, TensorVariable,
                             Variable)
from .variables.callables import (BuiltinVariable, FrameApiVariable, NumpyFunctionVariable,
                                  UserFunctionVariable)
from .variables.containers import DictVariable, ListVariable, SliceVariable, TupleVariable
from .variables.objects import ClassVariable, ObjectVariable, PythonModuleVariable

__all__ = ["MISS", "CacheEntry", "build_entry", "build_native_entry", "signature_source"]


class _Miss:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISS"


MISS = _Miss()


@dataclasses.dataclass
class CacheEntry:
    fn: object                  # __entry(__fn, *args, **kwargs) -> result or MISS
    guards: list[Guard]
    source: str
    graph: object = None        # the captured frame.ir.Graph (None when no tensor work)
    executable: object = None
    native: bool = False        # runs the original function (capture could not)
    reason: object = None       # BreakReason for native entries

    def failing_guard(self, fn, args, kwargs) -> Guard | None:
        """The first guard that does not hold for these arguments (for logs)."""
        ns = dict(self.fn.__globals__)
        try:
            bound = inspect.signature(fn).bind(*args, **kwargs)
            bound.apply_defaults()
        except TypeError:
            return None
        ns.update(bound.arguments)
        ns["__fn"] = fn
        ns["__C"] = fn.__closure__
        for g in self.guards:
            try:
                if not eval(g.expr, ns):  # noqa: S307 - our own generated expression
                    return g
            except Exception:  # noqa: BLE001 - a guard that raises fails
                return g
        return None


_SAFE_REPR = (int, str, bool, bytes, type(None))


def signature_source(code: types.CodeType, fn, pool: GuardSet) -> tuple[str, str]:
    """(parameter list, call argument list) reproducing ``fn``'s signature."""
    names = code.co_varnames
    nargs, nposonly, nkwonly = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    defaults = fn.__defaults__ or ()
    kwdefaults = fn.__kwdefaults__ or {}
    params, call = [], []
    first_default = nargs - len(defaults)
    for i in range(nargs):
        p = names[i]
        if i >= first_default:
            p += f"={pool.const(defaults[i - first_default])}"
        params.append(p)
        call.append(names[i])
        if nposonly and i == nposonly - 1:
            params.append("/")
    index = nargs + nkwonly
    if code.co_flags & inspect.CO_VARARGS:
        params.append("*" + names[index])
        call.append("*" + names[index])
        index += 1
    elif nkwonly:
        params.append("*")
    for name in names[nargs:nargs + nkwonly]:
        params.append(f"{name}={pool.const(kwdefaults[name])}" if name in kwdefaults else name)
        call.append(f"{name}={name}")
    if code.co_flags & inspect.CO_VARKEYWORDS:
        params.append("**" + names[index])
        call.append("**" + names[index])
    for p in names[:index + 1]:
        if p.startswith("__"):
            raise Unsupported("unsupported_object", f"parameter name {p!r} is reserved by capture")
    return ", ".join(params), ", ".join(call)


def _defaults_guard(fn, pool: GuardSet) -> None:
    if fn.__defaults__:
        pool.add(f"__fn.__defaults__ is {pool.const(fn.__defaults__)}", "defaults unchanged")
    if fn.__kwdefaults__:
        pool.add(f"__fn.__kwdefaults__ is {pool.const(fn.__kwdefaults__)}", "keyword defaults unchanged")


def _guard_block(pool: GuardSet) -> list[str]:
    if not pool.guards:
        return []
    cond = " and\n                ".join(f"({g.expr})" for g in pool.guards)
    return ["    try:",
            f"        if not ({cond}):",
            "            return __MISS",
            "    except Exception:",
            "        return __MISS"]


def _compile(src: str, namespace: dict):
    code = compile(src, "<frame capture entry>", "exec")
    exec(code, namespace)  # noqa: S102 - our own generated source
    return namespace["__entry"]


class _Rebuilder:
    """Expressions rebuilding Variables after the graph ran."""

    def __init__(self, tr: Translation, pool: GuardSet, out_index: dict[int, int]):
        self.tr = tr
        self.pool = pool
        self.out_index = out_index       # id(graph Value) -> output position
        self.prelude: list[str] = []
        self.temps: dict[int, str] = {}
        self.sources: dict[str, str] = {}

    def source(self, var: Variable) -> str:
        expr = var.source.expr()
        name = self.sources.get(expr)
        if name is None:
            name = self.sources[expr] = f"__s{len(self.sources)}"
        return name

    def source_lines(self) -> list[str]:
        return [f"    {name} = {expr}" for expr, name in self.sources.items()]

    def tensor(self, var: TensorVariable) -> str:
        if var.source is not None:
            return self.source(var)
        name = self.temps.get(id(var))
        if name is None:
            value = self.tr.tracer.values[id(var.meta)]
            i = self.out_index[id(value)]
            name = self.temps[id(var)] = f"__t{len(self.temps)}"
            if var.kind == TENSOR:
                self.prelude.append(f"    {name} = __wrap(__o[{i}])")
            elif var.kind == NDARRAY:
                self.prelude.append(f"    {name} = __o[{i}]")
            else:
                self.prelude.append(f"    {name} = __o[{i}][()]")
        return name

    def expr(self, var: Variable) -> str:
        if isinstance(var, TensorVariable):
            return self.tensor(var)
        if isinstance(var, ConstantVariable):
            v = var.value
            if isinstance(v, _SAFE_REPR) or (type(v) is float and math.isfinite(v)):
                return repr(v)
            return self.pool.const(v)
        if isinstance(var, TupleVariable):
            inner = "".join(self.expr(i) + ", " for i in var.items)
            return f"({inner})"
        if isinstance(var, (ListVariable, DictVariable)) and var.source is not None:
            return self.source(var)
        if isinstance(var, ListVariable):
            return "[" + ", ".join(self.expr(i) for i in var.items) + "]"
        if isinstance(var, DictVariable):
            items = ", ".join(f"{self.expr(ConstantVariable(k))}: {self.expr(v)}" for k, v in var.items.items())
            return "{" + items + "}"
        if isinstance(var, SliceVariable) and var.is_constant():
            return self.pool.const(var.as_constant())
        if var.source is not None:
            return self.source(var)
        if isinstance(var, (ClassVariable, PythonModuleVariable)):
            return self.pool.const(var.cls if isinstance(var, ClassVariable) else var.module)
        if isinstance(var, (FrameApiVariable, NumpyFunctionVariable, BuiltinVariable)):
            return self.pool.const(var.fn)
        if isinstance(var, UserFunctionVariable) and var.closure is None and var.made_defaults is None:
            return self.pool.const(var.fn)
        raise Unsupported("unsupported_object", f"returning or storing {var!r}")


def _collect_tensors(var: Variable, out: list[TensorVariable], seen: set[int]) -> None:
    if id(var) in seen:
        return
    seen.add(id(var))
    if isinstance(var, TensorVariable):
        out.append(var)
    elif isinstance(var, (TupleVariable, ListVariable)):
        for i in var.items:
            _collect_tensors(i, out, seen)
    elif isinstance(var, DictVariable):
        for i in var.items.values():
            _collect_tensors(i, out, seen)


def build_entry(tr: Translation, fn, result: Variable, backend: str, options=None) -> CacheEntry:
    """Compile the captured graph and generate the entry function."""
    from frame.runtime.compile import compile as runtime_compile

    pool = tr.guards
    se = tr.side_effects
    _defaults_guard(fn, pool)

    # every tensor the return value and the side effects need
    needed: list[TensorVariable] = []
    seen: set[int] = set()
    _collect_tensors(result, needed, seen)
    for c in se.containers.values():
        _collect_tensors(c, needed, seen)
    for _, _, v in se.attrs.values():
        _collect_tensors(v, needed, seen)
    for _, _, v in se.globals.values():
        _collect_tensors(v, needed, seen)

    graph = tr.tracer.graph
    outputs, out_index = [], {}

    def want(tv: TensorVariable) -> None:
        value = tr.tracer.values[id(tv.meta)]
        if id(value) not in out_index:
            out_index[id(value)] = len(outputs)
            outputs.append(value)

    for tv in needed:
        if tv.source is None:
            want(tv)
    for tv in se.tensors.values():
        want(tv)
    graph.set_outputs(outputs)
    _prune_unused_inputs(tr)

    exe = None
    if outputs:
        exe = runtime_compile(graph, backend, options)

    rb = _Rebuilder(tr, pool, out_index)
    body: list[str] = []
    replay: list[str] = []
    for tv in se.tensors.values():
        i = out_index[id(tr.tracer.values[id(tv.meta)])]
        target = rb.source(tv) + ("._data" if tv.kind == TENSOR else "")
        replay.append(f"    __copyto({target}, __o[{i}], casting='same_kind')")
    for c in se.containers.values():
        if isinstance(c, ListVariable):
            replay.append(f"    {rb.source(c)}[:] = [{', '.join(rb.expr(i) for i in c.items)}]")
        else:
            items = ", ".join(f"{rb.expr(ConstantVariable(k))}: {rb.expr(v)}" for k, v in c.items.items())
            replay.append(f"    {rb.source(c)}.clear()")
            replay.append(f"    {rb.source(c)}.update({{{items}}})")
    for obj, name, value in se.attrs.values():
        replay.append(f"    setattr({rb.source(obj)}, {name!r}, {rb.expr(value)})")
    for f_globals, name, value in se.globals.values():
        replay.append(f"    {pool.const(f_globals)}[{name!r}] = {rb.expr(value)}")
    ret = rb.expr(result)

    extract = []
    if exe is not None:
        for v in graph.inputs:
            tv = tr.input_by_value[id(v)]
            extract.append(rb.source(tv) + ("._data" if tv.kind == TENSOR else ""))

    params, _ = signature_source(fn.__code__, fn, pool)
    lines = [f"def __entry(__fn, {params}):" if params else "def __entry(__fn):",
             "    __C = __fn.__closure__"]
    lines += _guard_block(pool)
    lines += rb.source_lines()          # every source is read before anything is replayed
    if exe is not None:
        lines.append(f"    __o = __run(({''.join(e + ', ' for e in extract)}))")
    lines += rb.prelude
    lines += replay
    lines.append(f"    return {ret}")
    src = "\n".join(lines) + "\n"
    namespace = {"__MISS": MISS, "__wrap": Tensor._wrap, "__copyto": np.copyto,
                 "__run": exe.run if exe is not None else None, **pool.consts}
    entry_fn = _compile(src, namespace)
    return CacheEntry(entry_fn, list(pool.guards), src, graph if exe is not None else None, exe)


def _prune_unused_inputs(tr: Translation) -> None:
    graph = tr.tracer.graph
    used = {id(v) for n in graph.nodes for v in n.inputs} | {id(v) for v in graph.outputs}
    graph.inputs = [v for v in graph.inputs if id(v) in used]
    for i, v in enumerate(graph.inputs):
        v.index = i


def build_native_entry(tr: Translation, fn, reason) -> CacheEntry:
    """An entry that runs the original function when its guards hold (the
    trace could not continue past ``reason`` under these guards)."""
    pool = tr.guards
    _defaults_guard(fn, pool)
    params, call = signature_source(fn.__code__, fn, pool)
    lines = [f"def __entry(__fn, {params}):" if params else "def __entry(__fn):",
             "    __C = __fn.__closure__"]
    lines += _guard_block(pool)
    lines.append(f"    return __native({call})")
    src = "\n".join(lines) + "\n"
    namespace = {"__MISS": MISS, "__native": fn, **pool.consts}
    return CacheEntry(_compile(src, namespace), list(pool.guards), src, native=True, reason=reason)
