"""Translations on disk: a second run of a program skips capture's translation
as the persistent compile cache lets it skip the compile.

A cache entry (``codegen.CacheEntry``) is generated Python source plus a
namespace: guard and rebuild constants (``GuardSet.consts``), the captured
graph's executable and a few helpers.  When every constant can be named in a
new process, the entry is stored in the persistent cache
(``frame/runtime/persistent.py``, a *record* of kind ``capture``) beside the
executables; the next process that misses on the same function loads the
stored entries before translating, checks each one's guards against the call
and uses the first that holds.  Its graph is compiled (in practice: loaded
from the persistent cache) only when an entry is first used.

What a stored entry may depend on, and how a new process knows it still holds:

* the function's code, the code of every function the trace inlined (frame's
  own included) and capture's and frame's sources: the record key holds a
  digest of the top code object (``marshal``), of capture's and frame's
  sources (sizes and mtimes), Python's bytecode tag and NumPy's version, and
  the entry lists every file whose code the trace ran with the sha256 of its
  content, checked at load (the code digest is of ``marshal`` format 2, which
  has no back-references: later formats depend on reference counts);
* the globals of the function being called: entries read them through
  ``__fn.__globals__`` (a module imported under two names shares the stored
  entries, each call reading its own module);
* everything else the trace read is guarded, and the guards are in the source;
* the constants are named, not pickled: ``None``/bool/int/float/str/bytes and
  tuples of them by value, NumPy dtypes by their string, modules by name,
  a module's ``__dict__`` by the module's name, functions, classes and other
  named objects by ``module`` + ``__qualname__`` (stored only when that name
  leads back to the very object, resolved at load only among modules already
  imported: loading never imports anything; a Python function's code digest
  is stored too and checked, so a name monkeypatched to another function does
  not pass for the traced one; a code object guarded as some pooled function's
  ``__code__`` is stored as that function's code), the function's own defaults by value (checked
  equal to the current ones at load).  An entry with any other
  constant (an object instance, an array, a closure's contents...) is not
  stored.

An entry whose results carry a compiled autograd record stores its
``CompiledBackward`` beside it (``_encode_backward``: the backward and joint
graphs, parsed at their first use after loading).

Not stored: native entries and graph-break entries (their resume functions
are built in-process), entries made under ``frame.explain``.  Up to
``jit.CACHE_LIMIT`` entries per (code, backend, full_graph), newest first;
loaded entries are ``CacheEntry.stored`` and do not count toward the
recompile limit (``CodeCache.translated``).  A scalar's value guard is stored
with its kind and sources (``_encode_guard``), so that its failing in a new
process makes the scalars dynamic as in the process that translated it.
A record that cannot be used (a file changed, a name that no longer resolves,
a damaged file) is skipped; the function is translated as if it were absent.

Counters (``frame.stats().extra``): ``capture_persistent_loads`` (stored
entries loaded), ``capture_persistent_hits`` (calls served by one on its first
use), ``capture_persistent_writes``.
"""
from __future__ import annotations

import functools
import hashlib
import io
import logging
import marshal
import os
import sys
import threading
import types

import numpy as np

import frame
from frame.autograd.compiled import CompiledBackward
from frame.hal.backend import pack_graph, unpack_graph
from frame.hal.options import CompileOptions
from frame.runtime.persistent import active_store, stamp_sources
from frame.runtime.stats import record

from .codegen import (CacheEntry, _EagerExecutable, _executable, entry_function, entry_helpers,
                      maker_code, origin_of, runs_eagerly, set_entry_helper)
from . import sources as _sources
from .guards import Guard, GuardKind

__all__ = ["load_entries", "save_entry"]

log = logging.getLogger("frame.cache")

KIND = "capture"
FORMAT = 6


class NotPersistable(Exception):
    """A constant or dependency a new process could not find again."""


# --------------------------------------------------------------------------- keys

@functools.lru_cache(maxsize=None)
def _sources_fingerprint() -> str:
    """capture's and frame's sources (names, sizes, mtimes), Python's bytecode
    tag and NumPy's version: what decides how a function is translated."""
    h = hashlib.sha256(f"{FORMAT}|{sys.implementation.cache_tag}|numpy {np.__version__}".encode())
    for package in (os.path.dirname(os.path.realpath(__file__)),
                    os.path.dirname(os.path.realpath(frame.__file__))):
        stamp_sources(h, package)
    return h.hexdigest()


def _record_key(fn, backend: str, full_graph: bool) -> str:
    code_digest = _code_digest(fn.__code__)
    return "\x1f".join([_sources_fingerprint(), code_digest, fn.__code__.co_filename,
                        fn.__code__.co_qualname, backend, str(bool(full_graph))])


_file_digests: dict[str, tuple[int, int, str]] = {}
_file_lock = threading.Lock()


def _file_digest(path: str) -> str:
    """sha256 of a source file's content (cached per process by size and mtime)."""
    st = os.stat(path)
    with _file_lock:
        known = _file_digests.get(path)
        if known is not None and known[:2] == (st.st_size, st.st_mtime_ns):
            return known[2]
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    with _file_lock:
        _file_digests[path] = (st.st_size, st.st_mtime_ns, digest)
    return digest


def _dependencies(files) -> list[list[str]]:
    deps = []
    for path in sorted(files):
        if not os.path.isfile(path):
            raise NotPersistable(f"code from {path!r}, which is not a file")
        deps.append([path, _file_digest(path)])
    return deps


def _dependencies_hold(deps) -> bool:
    try:
        return all(_file_digest(path) == digest for path, digest in deps)
    except OSError:
        return False


# --------------------------------------------------------------------------- constants

def _encode(obj, fn) -> list:
    t = type(obj)
    if fn.__defaults__ is not None and obj is fn.__defaults__:  # guarded by identity
        return ["fn_defaults", [_encode(x, fn) for x in obj]]
    if fn.__kwdefaults__ is not None and obj is fn.__kwdefaults__:
        return ["fn_kwdefaults", [[k, _encode(v, fn)] for k, v in obj.items()]]
    if obj is None or t is bool or t is str:
        return ["v", obj]
    if t is int:
        return ["int", str(obj)]
    if t is float:
        return ["float", obj.hex()]
    if t is bytes:
        return ["bytes", obj.hex()]
    if t is tuple:
        return ["tuple", [_encode(x, fn) for x in obj]]
    if obj is fn.__globals__:
        return ["fn_globals"]
    if isinstance(obj, np.dtype):
        if obj.fields is not None or np.dtype(obj.str) != obj:
            raise NotPersistable(f"dtype {obj!r}")
        return ["dtype", obj.str]
    if isinstance(obj, np.generic) and t in (np.float16, np.float32, np.float64, np.int8, np.int16,
                                             np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                             np.uint64, np.bool_):
        return ["npscalar", np.dtype(t).str, _encode(obj.item(), fn)]
    if isinstance(obj, types.ModuleType):
        if sys.modules.get(obj.__name__) is not obj:
            raise NotPersistable(f"module {obj.__name__!r} is not sys.modules[{obj.__name__!r}]")
        return ["module", obj.__name__]
    if t is dict:
        name = obj.get("__name__")
        module = sys.modules.get(name) if isinstance(name, str) else None
        if module is None or vars(module) is not obj:
            raise NotPersistable("a dict that is not a module's namespace")
        return ["module_dict", name]
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if module is None and qualname is not None:  # method descriptors: their class's module
        module = getattr(getattr(obj, "__objclass__", None), "__module__", None)
    if isinstance(module, str) and isinstance(qualname, str) and "<" not in qualname:
        try:
            found = _resolve(module, qualname)
        except NotPersistable:
            found = None
        if found is obj:
            code = getattr(obj, "__code__", None)
            if isinstance(code, types.CodeType):  # a Python function: its code too
                return ["name", module, qualname, _code_digest(code)]
            return ["name", module, qualname]
    raise NotPersistable(f"a {t.__name__} constant")


def _encode_const(name: str, obj, fn, namespace: dict) -> list:
    """A pooled constant; a code object is the code of a function in the pool
    (a guard ``<function>.__code__ is <code>``, whose function is guarded by
    identity): stored as that constant's ``__code__``, which loading the
    function by name checks by digest."""
    if isinstance(obj, types.CodeType):
        for k, v in namespace.items():
            if k != name and k.startswith("__k") and isinstance(v, types.FunctionType) \
                    and v.__code__ is obj:
                return ["code_of", k]
        raise NotPersistable("a code constant")
    return _encode(obj, fn)


def _code_digest(code: types.CodeType) -> str:
    # marshal format 2: no back-references, which later formats write for
    # objects referenced more than once (refcounts: one code object, imported
    # twice, would get two digests)
    return hashlib.sha256(marshal.dumps(code, 2)).hexdigest()[:32]


def _resolve(module: str, qualname: str):
    obj = sys.modules.get(module)  # never imports: a module not loaded yet is a miss
    if obj is None:
        raise NotPersistable(f"module {module!r} is not imported")
    for part in qualname.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise NotPersistable(f"{module}.{qualname} does not resolve") from None
    return obj


def _same_value(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if type(a) is tuple:
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    if type(a) is float and a != a:
        return b != b
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 -- incomparable: not the same
        return False


def _decode(ref: list, fn):
    tag = ref[0]
    if tag == "v":
        return ref[1]
    if tag == "int":
        return int(ref[1])
    if tag == "float":
        return float.fromhex(ref[1])
    if tag == "bytes":
        return bytes.fromhex(ref[1])
    if tag == "tuple":
        return tuple(_decode(x, fn) for x in ref[1])
    if tag == "fn_globals":
        return fn.__globals__
    if tag == "fn_defaults":
        stored = tuple(_decode(x, fn) for x in ref[1])
        if fn.__defaults__ is None or not _same_value(stored, fn.__defaults__):
            raise NotPersistable("the function's defaults changed")
        return fn.__defaults__
    if tag == "fn_kwdefaults":
        stored = {k: _decode(v, fn) for k, v in ref[1]}
        current = fn.__kwdefaults__
        if current is None or stored.keys() != current.keys() or not all(
                _same_value(v, current[k]) for k, v in stored.items()):
            raise NotPersistable("the function's keyword defaults changed")
        return current
    if tag == "dtype":
        return np.dtype(ref[1])
    if tag == "npscalar":
        return np.dtype(ref[1]).type(_decode(ref[2], fn))
    if tag == "module":
        module = sys.modules.get(ref[1])
        if module is None:
            raise NotPersistable(f"module {ref[1]!r} is not imported")
        return module
    if tag == "module_dict":
        module = sys.modules.get(ref[1])
        if module is None:
            raise NotPersistable(f"module {ref[1]!r} is not imported")
        return vars(module)
    if tag == "name":
        obj = _resolve(ref[1], ref[2])
        if len(ref) > 3:  # the name may now denote another function (monkeypatched)
            code = getattr(obj, "__code__", None)
            if not isinstance(code, types.CodeType) or _code_digest(code) != ref[3]:
                raise NotPersistable(f"{ref[1]}.{ref[2]} is another function now")
        return obj
    raise NotPersistable(f"unknown constant tag {tag!r}")


# --------------------------------------------------------------------------- save

def _store():
    return active_store()


def save_entry(fn, entry, options, limit: int) -> bool:
    """Store ``entry`` (just translated for ``fn``) when it can be named in a new
    process, keeping at most ``limit`` entries (``jit.CACHE_LIMIT``) per record;
    True when written."""
    store = _store()
    if store is None or entry.native or entry.breaks or entry.backend is None:
        return False
    namespace = entry.namespace
    try:
        if set(k for k in namespace if k.startswith("__") and not k.startswith("__k")) - \
                set(entry_helpers(None)) - {"__builtins__", "__entry", "__backward"}:
            raise NotPersistable("entry helpers this version does not know")
        consts = {k: _encode_const(k, v, fn, namespace) for k, v in namespace.items()
                  if k.startswith("__k")}
        deps = _dependencies(entry.files | {fn.__code__.co_filename})
        backward = _encode_backward(entry.backward) if entry.backward is not None else None
    except NotPersistable as why:
        log.debug("capture: translation of %s not persisted: %s", fn.__qualname__, why)
        return False
    blobs: dict[str, bytes] = {"code": marshal.dumps(maker_code(entry.source, namespace))}
    graph_text = None
    if entry.executable is not None:
        graph_text, blobs["graph"] = pack_graph(entry.graph)
    item = {"source": entry.source, "guards": [_encode_guard(g) for g in entry.guards],
            "consts": consts, "deps": deps, "graph": graph_text, "backend": entry.backend,
            "blobs": {}}
    if entry.donate:
        item["donate"] = [list(pair) for pair in entry.donate]
    if backward is not None:
        item["backward"], backward_blobs = backward
        blobs.update(backward_blobs)
    if entry.graph is not None:
        item["nodes"] = len(entry.graph.nodes)
        item["bodies"] = any(n.body is not None for n in entry.graph.nodes)
    key = _record_key(fn, options.backend or entry.backend, options.full_graph)
    items, old_blobs = _read(store, key)
    kept = [it for it in items if it["source"] != item["source"]][:limit - 1]
    # blobs are named "<entry index>.<part>"; the kept entries' are renamed to their new index
    all_items, all_blobs = [], {}
    for index, (it, parts) in enumerate([(item, blobs)] +
                                        [(it, {part: old_blobs.get(name)
                                               for part, name in it["blobs"].items()})
                                         for it in kept]):
        if any(data is None for data in parts.values()):
            continue  # (a record written by someone else, missing a part: dropped)
        names = {}
        for part, data in parts.items():
            names[part] = f"{index}.{part}"
            all_blobs[names[part]] = data
        all_items.append(dict(it, blobs=names))
    if store.save_record(KIND, key, {"format": FORMAT, "entries": all_items}, all_blobs):
        record.count("capture_persistent_writes")
        return True
    return False


def _read(store, key: str) -> tuple[list[dict], dict[str, bytes]]:
    found = store.load_record(KIND, key)
    if found is None:
        return [], {}
    meta, blobs = found
    if meta.get("format") != FORMAT or not isinstance(meta.get("entries"), list):
        return [], {}
    return meta["entries"], blobs


# --------------------------------------------------------------------------- load

def load_entries(fn, options, backend: str, pgo: bool) -> list:
    """The stored entries for ``fn`` under ``options`` that this process can use
    (their guards still decide whether a call matches), newest first.  ``backend``
    is the one the call runs on (``options.backend`` or frame's default) and ``pgo``
    whether the runtime may choose the tier (``jit._backend_unpinned``)."""
    store = _store()
    if store is None:
        return []
    try:
        key = _record_key(fn, backend, options.full_graph)
    except (OSError, ValueError):
        return []
    items, blobs = _read(store, key)
    entries = []
    for item in items:
        try:
            entries.append(_rebuild(fn, item, blobs, pgo))
        except NotPersistable as why:
            log.debug("capture: stored translation of %s not used: %s", fn.__qualname__, why)
        except Exception as err:  # noqa: BLE001 -- a bad record is skipped, never fatal
            log.debug("capture: stored translation of %s not used: %s: %s", fn.__qualname__,
                      type(err).__name__, err)
    if entries:
        record.count("capture_persistent_loads", len(entries))
    return entries


def _rebuild(fn, item: dict, blobs: dict[str, bytes], pgo: bool = False):
    if not _dependencies_hold(item["deps"]):
        raise NotPersistable("a source file it was translated from changed")
    consts = item["consts"]
    namespace = {k: _decode(ref, fn) for k, ref in consts.items() if ref[0] != "code_of"}
    for k, ref in consts.items():
        if ref[0] == "code_of":  # the code of a pooled function (decoded above)
            owner = namespace.get(ref[1])
            if not isinstance(owner, types.FunctionType):
                raise NotPersistable(f"code of {ref[1]!r}, which is not a function")
            namespace[k] = owner.__code__
    namespace.update(entry_helpers(None))
    guards = [_decode_guard(g) for g in item["guards"]]
    parts = {part: blobs[name] for part, name in item["blobs"].items()}
    lazy = None
    if item["graph"] is not None:
        lazy = namespace["__run"] = _LazyRun(item, parts["graph"], pgo, origin_of(fn))
    try:  # the compiled maker (a code object of this Python: the key holds its bytecode tag)
        code = marshal.loads(parts["code"])
    except (KeyError, EOFError, ValueError, TypeError):
        code = maker_code(item["source"], namespace)
    if not isinstance(code, types.CodeType):
        raise NotPersistable("the stored entry code is not a code object")
    # the entry capture generated (checksummed record)
    backward = None
    if "backward" in item:
        backward = namespace["__backward"] = _decode_backward(item, parts, pgo)
    entry_fn = entry_function(code, namespace, fn)
    if lazy is not None:
        lazy.entry_fn = entry_fn
    return CacheEntry(entry_fn, guards, item["source"], executable=lazy, backend=item["backend"],
                      namespace=namespace, backward=backward, stored=True)


# --------------------------------------------------------------------------- guards

def _encode_guard(g: Guard) -> list:
    """``[expr, text]``, and for a scalar's value guard its kind and sources:
    when it fails in a new process, the scalars it read become graph inputs
    (``jit._dynamic_scalars``) as they do when it fails in the process that
    translated it; else every run with another value would translate anew."""
    if g.kind is GuardKind.SCALAR_VALUE:
        try:
            return [g.expr, g.text, g.kind.value, [_encode_source(s) for s in g.sources]]
        except NotPersistable:
            pass
    return [g.expr, g.text]


def _decode_guard(stored: list) -> Guard:
    if len(stored) == 4:
        expr, text, kind, sources = stored
        return Guard(expr, text, GuardKind(kind), tuple(_decode_source(s) for s in sources))
    expr, text = stored
    return Guard(expr, text)


def _slots(cls) -> list[str]:
    return [name for klass in reversed(cls.__mro__) for name in klass.__dict__.get("__slots__", ())]


def _encode_source(value):
    """A source (``sources.py``: slots holding sources, str, int, bool, None
    and tuples of them) as JSON: ``{"source": class name, "slots": [...]}``."""
    if isinstance(value, _sources.Source):
        cls = type(value)
        if getattr(_sources, cls.__name__, None) is not cls:
            raise NotPersistable(f"a source of class {cls.__name__}")
        return {"source": cls.__name__,
                "slots": [_encode_source(getattr(value, name)) for name in _slots(cls)]}
    if type(value) is tuple:
        return {"tuple": [_encode_source(v) for v in value]}
    if value is None or type(value) in (str, int, bool):
        return value
    raise NotPersistable(f"a source holding a {type(value).__name__}")


def _decode_source(value):
    if isinstance(value, dict) and "tuple" in value:
        return tuple(_decode_source(v) for v in value["tuple"])
    if isinstance(value, dict):
        cls = getattr(_sources, value["source"])
        if not (isinstance(cls, type) and issubclass(cls, _sources.Source)):
            raise NotPersistable(f"no source class {value['source']!r}")
        source = cls.__new__(cls)
        for name, slot in zip(_slots(cls), value["slots"], strict=True):
            setattr(source, name, _decode_source(slot))
        return source
    return value


# --------------------------------------------------------------------------- the backward

def _encode_backward(bw) -> tuple[dict, dict[str, bytes]]:
    """The ``CompiledBackward`` of an entry whose results carry a compiled
    autograd record (``frame.autograd.compiled``) as an item part and blobs:
    its graph and the joint graph (``pack_graph``), where their inputs come
    from, the results' types; the few non-graph constants the joint graph
    reads go into an ``.npz`` blob."""
    if bw.joint is None:
        raise NotPersistable("a compiled backward without its joint graph")
    text, payload = pack_graph(bw.graph)
    joint_text, joint_payload = pack_graph(bw.joint)
    consts: list[np.ndarray] = []
    joint_layout = []
    for kind, i in bw.joint_layout:
        if kind == "const":
            if not isinstance(i, np.ndarray) or i.dtype.hasobject:
                raise NotPersistable("a compiled backward reading a non-array constant")
            joint_layout.append(["const", len(consts)])
            consts.append(i)
        else:
            joint_layout.append([kind, int(i)])
    buf = io.BytesIO()
    np.savez(buf, **{f"c{k}": a for k, a in enumerate(consts)})
    part = {"graph": text, "joint": joint_text, "origin": bw.origin,
            "layout": [[kind, int(i)] for kind, i in bw.layout],
            "joint_layout": joint_layout,
            "joint_backward": [n for n, node in enumerate(bw.joint.nodes) if node.backward],
            "result_types": [[dtype.str, list(shape)] for dtype, shape in bw.result_types]}
    return part, {"bgraph": payload, "jgraph": joint_payload, "bconsts": buf.getvalue()}


def _decode_backward(item: dict, parts: dict[str, bytes], pgo: bool):
    """The ``CompiledBackward`` ``_encode_backward`` stored; its graphs are
    parsed on first use, compiled like the forward on the first backward."""
    part = item["backward"]
    with np.load(io.BytesIO(parts["bconsts"]), allow_pickle=False) as z:
        consts = [z[f"c{k}"] for k in range(len(z.files))]
    joint_layout = [("const", consts[i]) if kind == "const" else (kind, i)
                    for kind, i in part["joint_layout"]]
    layout = [(kind, i) for kind, i in part["layout"]]
    result_types = [(np.dtype(dtype), tuple(shape)) for dtype, shape in part["result_types"]]
    backend = item["backend"]

    def graph():
        return unpack_graph(part["graph"], parts["bgraph"])

    def joint():
        g = unpack_graph(part["joint"], parts["jgraph"])
        for n in part["joint_backward"]:
            g.nodes[n].backward = True
        return g

    def compile_backward(g):
        return _executable(g, backend, None, pgo, part["origin"] + " backward")
    return CompiledBackward(graph, layout, result_types, compile_backward, joint=joint,
                            joint_layout=joint_layout, origin=part["origin"])


class _LazyRun:
    """``__run`` of a loaded entry until its first call, and the entry's
    executable: loads the graph, gets its executable (``runtime.compile``: in
    practice a persistent-cache hit), then rebinds ``__run`` of the entry
    function (``entry_fn``) to the executable's ``run``."""

    def __init__(self, item: dict, payloads: bytes, pgo: bool = False,
                 origin: str | None = None):
        self.item, self.payloads = item, payloads
        self.pgo = pgo  # the user named no backend (runtime.compile's PGO)
        self.origin = origin  # the user's function, for compile-time messages
        self.lock = threading.Lock()
        self.entry_fn = None     # the entry function whose ``__run`` this is
        self.executable = None   # once loaded

    def run(self, inputs):
        return self(inputs)

    def __call__(self, inputs):
        with self.lock:
            exe = self.executable
            if exe is None:
                text, backend = self.item["graph"], self.item["backend"]
                if runs_eagerly(int(self.item["nodes"]), bool(self.item["bodies"])):
                    exe = _EagerExecutable(unpack_graph(text, self.payloads))
                else:  # no parsing when the persistent cache has the executable
                    donate = tuple((int(o), int(i)) for o, i in self.item.get("donate", ()))
                    # lazy: the compiler (frame.passes, frame.runtime.compile) loads on the first compile
                    from frame.runtime.compile import compile_packed
                    exe = compile_packed(text, self.payloads, backend,
                                         CompileOptions(donate=donate), pgo=self.pgo,
                                         origin=self.origin)
                self.executable = exe
                set_entry_helper(self.entry_fn, "__run", exe.run)
                record.count("capture_persistent_hits")
        return exe.run(inputs)
