"""The persistent compile cache: compiled executables on disk, below the
in-process CompilationCache, so that a second run of a program does not pay
its compiles again.

    FRAME_CACHE_DIR=~/.cache/frame   # where (frame.config.cache_dir)
    FRAME_CACHE=0                    # off (frame.config.cache)
    FRAME_CACHE_MAX_BYTES=1073741824 # size bound, least recently used entries go first
    python -m frame cache info | clear

``runtime.compile`` asks ``load`` after an in-process miss and, when it had to
compile, hands the result to ``save``.  What is stored is the backend's
``Artifact`` (``Backend.serialize``: OpenVINO's ``export_model`` bytes, the
cpu backend's graph and memory plan) plus what rebuilds the Executable
without the pass pipeline; ``Backend.deserialize`` loads it.  Executables a
backend does not serialize are not persisted: FallbackExecutables (graphs
the backend could not compile whole) are rebuilt by every process.

Entry key.  ``sha256`` over: the entry format, frame's version and a
fingerprint of the compiler's sources (``frame/{ir,ops,passes,hal,backends,
runtime}``: a changed lowering never serves an old artifact), the backend's
name and installed library version (read from package metadata, without
importing the library), the host's CPU features (OpenVINO compiles for the
ISA it finds), and the in-process cache key (backend, options fingerprint,
``dump_text`` of the graph, which carries constant digests).  The entry also
records ``Backend.artifact_version`` (e.g. ``openvino.get_version()``),
checked when it is loaded.

File layout: ``<cache_dir>/compiled/<hex digest>.fce``::

    b"FRAMEC\\0\\1" | u32 header length | header JSON | blobs ... | sha256 of all before

Robustness.  Writes go to a private temporary file renamed over the entry
(``os.replace`` is atomic), so readers see a whole old entry or a whole new
one, and processes writing the same entry concurrently are safe (the last
rename wins; both wrote the same thing).  A missing file is a miss.  A
truncated, corrupt (checksum), foreign (other key, other format or frame
version) or version-mismatched entry, or one the backend refuses to load, is
ignored and removed: the graph is compiled again and the entry rewritten.
The first such entry in a process logs one WARN; later ones log at DEBUG
(all are counted).  I/O errors never fail a compile.

Eviction.  Each process tracks the bytes it has seen (one directory scan on
its first write) plus what it wrote; past ``max_bytes`` it rescans and
removes entries, least recently used first (a load touches the entry's
mtime), down to 90% of the bound.  Temporary files older than an hour
(left by killed processes) are removed by the same scan.

Statistics (``frame.stats().extra``): ``persistent_hits``,
``persistent_misses``, ``persistent_invalid``, ``persistent_writes``,
``persistent_bytes_read``, ``persistent_bytes_written``,
``persistent_evictions``; ``extra_times['persistent_load']`` is the time spent
loading.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import itertools
import json
import logging
import os
import platform
import struct
import sys
import threading
import time
from typing import Any, TextIO

from ..hal.backend import Artifact, Backend, Executable, get_backend
from ..hal.options import CompileOptions
from ..settings import config
from . import threads
from .stats import record

__all__ = ["PersistentCache", "active_store", "entry_digest", "cache_command", "FORMAT",
           "BACKEND_DISTRIBUTIONS"]

log = logging.getLogger("frame.cache")

FORMAT = 1
MAGIC = b"FRAMEC\x00\x01"
SUFFIX = ".fce"
ENTRIES = "compiled"                # entries live in <cache_dir>/compiled/
OPENVINO_MODEL_CACHE = "openvino"   # OpenVINO's own CACHE_DIR (the openvino backend's)
_TMP = ".tmp-"
_STALE_TMP_S = 3600.0
_PREFIX = struct.Struct("<8sI")     # magic, header length
_DIGEST = 32                        # sha256 trailer

# backend -> Python distribution whose version goes into the entry key (read
# from its metadata, so computing a key never imports the backend's library)
BACKEND_DISTRIBUTIONS = {"openvino": "openvino", "cpu": "numpy"}

# the parts of frame whose source decides what a compile produces
_COMPILER_PACKAGES = ("ir", "ops", "passes", "hal", "backends", "runtime")


class _Invalid(Exception):
    """An entry that must not be used; the message says why."""


# --------------------------------------------------------------------------- the key

def stamp_sources(h, root: str, packages: tuple[str, ...] = ("",)) -> None:
    """Feed the names, sizes and mtimes of the ``.py`` files under
    ``root/<package>`` into hash ``h`` (a cheap stand-in for their content)."""
    prefix = len(root) + 1
    for package in packages:
        for dirpath, dirnames, names in os.walk(os.path.join(root, package) if package else root):
            dirnames.sort()
            for name in sorted(names):
                if not name.endswith(".py"):
                    continue
                path = os.path.join(dirpath, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                rel = path[prefix:].replace(os.sep, "/")
                h.update(f"|{rel}:{st.st_size}:{st.st_mtime_ns}".encode())


@functools.lru_cache(maxsize=None)
def _frame_fingerprint() -> str:
    # function-level: reads the package root (frame.__version__, its location), which
    # is above the runtime and fully imported by the time a cache key is made
    import frame
    h = hashlib.sha256(f"frame {frame.__version__}".encode())
    stamp_sources(h, os.path.dirname(os.path.realpath(frame.__file__)), _COMPILER_PACKAGES)
    return f"{frame.__version__}+{h.hexdigest()[:16]}"


@functools.lru_cache(maxsize=None)
def _distribution_version(backend_name: str) -> str:
    dist = BACKEND_DISTRIBUTIONS.get(backend_name)
    if dist is None:
        return ""
    # The installed *.dist-info names the version: the same whether or not the
    # library is imported yet (a module's __version__ may be spelled otherwise:
    # openvino's is get_version()).  importlib.metadata would read the same
    # directory, but importing it costs ~12 ms.
    spec = importlib.util.find_spec(dist)
    if spec is not None and spec.origin:
        site = os.path.dirname(os.path.dirname(spec.origin))
        try:
            names = sorted(os.listdir(site))
        except OSError:
            names = []
        for name in names:
            if name.startswith(dist + "-") and name.endswith(".dist-info"):
                return f"{dist} {name[len(dist) + 1:-len('.dist-info')]}"
    from importlib import metadata
    try:
        return f"{dist} {metadata.version(dist)}"
    except metadata.PackageNotFoundError:
        return f"{dist} ?"


@functools.lru_cache(maxsize=None)
def _cpu_features() -> str:
    flags = ""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith(("flags", "Features")):  # x86 / arm
                    flags = " ".join(sorted(line.split(":", 1)[1].split()))
                    break
    except OSError:
        pass
    text = f"{platform.machine()}|{flags}"  # (platform.processor() may run a subprocess)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def entry_digest(key: str, backend_name: str) -> str:
    """The hex digest naming the entry of runtime cache key ``key``."""
    parts = [f"frame-cache/{FORMAT}", _frame_fingerprint(), backend_name,
             _distribution_version(backend_name), _cpu_features(), key]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def _key_sha(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


# --------------------------------------------------------------------------- the file format

def _encode(header: dict[str, Any], blobs: dict[str, bytes]) -> bytes:
    header = dict(header, blobs=[[name, len(data)] for name, data in blobs.items()])
    head = json.dumps(header, separators=(",", ":"), allow_nan=False).encode()
    body = b"".join([_PREFIX.pack(MAGIC, len(head)), head, *blobs.values()])
    return body + hashlib.sha256(body).digest()


def _decode(data: bytes) -> tuple[dict[str, Any], dict[str, bytes]]:
    if len(data) < _PREFIX.size + _DIGEST:
        raise _Invalid(f"truncated ({len(data)} bytes)")
    body, digest = data[:-_DIGEST], data[-_DIGEST:]
    magic, head_len = _PREFIX.unpack_from(body)
    if magic != MAGIC:
        raise _Invalid("not a frame cache entry (bad magic)")
    if hashlib.sha256(body).digest() != digest:
        raise _Invalid("checksum mismatch (corrupt or truncated)")
    start = _PREFIX.size
    try:
        header = json.loads(body[start:start + head_len])
        layout = [(str(name), int(size)) for name, size in header["blobs"]]
    except (ValueError, KeyError, TypeError) as err:
        raise _Invalid(f"unreadable header ({err})") from None
    pos = start + head_len
    blobs: dict[str, bytes] = {}
    for name, size in layout:
        blobs[name] = body[pos:pos + size]
        pos += size
    if pos != len(body):
        raise _Invalid("blob sizes do not add up")
    return header, blobs


# --------------------------------------------------------------------------- the store

class _Once:
    """Log the first message at WARNING, later ones at DEBUG."""

    def __init__(self):
        self._lock = threading.Lock()
        self._done = False

    def __call__(self, msg: str, *args) -> None:
        with self._lock:
            first, self._done = not self._done, True
        log.log(logging.WARNING if first else logging.DEBUG, msg, *args)


_warn_invalid = _Once()
_warn_io = _Once()
_warn_serialize = _Once()


class PersistentCache:
    """The entries under ``root/compiled``, bounded to ``max_bytes`` (see module doc)."""

    def __init__(self, root: str, max_bytes: int):
        self.root = root
        self.dir = os.path.join(root, ENTRIES)
        self.max_bytes = int(max_bytes)
        self._lock = threading.Lock()
        self._estimate: int | None = None   # bytes believed to be in self.dir
        self._tmp_names = itertools.count()

    def path_for(self, key: str, backend_name: str) -> str:
        return os.path.join(self.dir, entry_digest(key, backend_name) + SUFFIX)

    # -- reading ---------------------------------------------------------------------
    def load(self, key: str, backend_name: str, options: CompileOptions) -> Executable | None:
        """The executable stored for ``key``, or None (a miss, or an invalid entry)."""
        path = self.path_for(key, backend_name)
        t0 = time.perf_counter()
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            record.count("persistent_misses")
            return None
        except OSError as err:
            _warn_io("persistent compile cache: cannot read %s (%s); compiling instead", path, err)
            record.count("persistent_misses")
            return None
        backend = get_backend(backend_name)  # NOT_FOUND propagates, as a compile would raise it
        threads.configure(backend)
        try:
            exe = self._rebuild(data, key, backend, options)
        except Exception as err:  # noqa: BLE001 -- whatever a damaged entry does, compile instead
            reason = str(err) if isinstance(err, _Invalid) else f"{type(err).__name__}: {err}"
            _warn_invalid("persistent compile cache: ignoring entry %s for backend '%s': %s; "
                          "compiling the graph again (further invalid entries in this process "
                          "are logged at DEBUG level and counted as persistent_invalid)",
                          os.path.basename(path), backend_name, reason)
            record.count("persistent_invalid")
            record.count("persistent_misses")
            _unlink(path)
            return None
        try:
            os.utime(path)  # least recently used = oldest mtime
        except OSError:
            pass
        record.count("persistent_hits")
        record.count("persistent_bytes_read", len(data))
        record.add_time("persistent_load", time.perf_counter() - t0)
        log.debug("persistent compile cache: loaded %s (%d bytes) for %s in %.1f ms",
                  os.path.basename(path), len(data), backend_name, (time.perf_counter() - t0) * 1e3)
        return exe

    @staticmethod
    def _rebuild(data: bytes, key: str, backend: Backend, options: CompileOptions) -> Executable:
        header, blobs = _decode(data)
        if header.get("format") != FORMAT:
            raise _Invalid(f"entry format {header.get('format')!r}, this frame writes {FORMAT}")
        if header.get("key_sha256") != _key_sha(key):
            raise _Invalid("the entry belongs to another graph")
        if header.get("frame") != _frame_fingerprint():
            raise _Invalid(f"written by frame {header.get('frame')}, this is {_frame_fingerprint()}")
        if header.get("backend") != backend.name:
            raise _Invalid(f"written for backend {header.get('backend')!r}")
        version = backend.artifact_version(options)
        if header.get("backend_version") != version:
            raise _Invalid(f"version mismatch: written by {header.get('backend_version')!r}, "
                           f"this is {version!r}")
        return backend.deserialize(Artifact(header["meta"], blobs), options)

    # -- records (other layers' artifacts: capture's translations) ------------------
    def record_path(self, kind: str, key: str) -> str:
        return os.path.join(self.dir, entry_digest(key, f"record:{kind}") + SUFFIX)

    def load_record(self, kind: str, key: str) -> tuple[dict[str, Any], dict[str, bytes]] | None:
        """``(meta, blobs)`` stored by ``save_record(kind, key, ...)``, or None (a
        miss, or an invalid entry: removed, WARN once, counted as for executables)."""
        path = self.record_path(kind, key)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return None
        try:
            header, blobs = _decode(data)
            if header.get("format") != FORMAT:
                raise _Invalid(f"entry format {header.get('format')!r}, this frame writes {FORMAT}")
            if header.get("key_sha256") != _key_sha(key) or header.get("backend") != f"record:{kind}":
                raise _Invalid(f"the entry belongs to another {kind}")
            if header.get("frame") != _frame_fingerprint():
                raise _Invalid(f"written by frame {header.get('frame')}, this is {_frame_fingerprint()}")
            meta = header["meta"]
        except Exception as err:  # noqa: BLE001 -- a damaged entry is ignored, never fatal
            reason = str(err) if isinstance(err, _Invalid) else f"{type(err).__name__}: {err}"
            _warn_invalid("persistent compile cache: ignoring %s entry %s: %s; making it again "
                          "(further invalid entries in this process are logged at DEBUG level "
                          "and counted as persistent_invalid)", kind, os.path.basename(path), reason)
            record.count("persistent_invalid")
            _unlink(path)
            return None
        try:
            os.utime(path)
        except OSError:
            pass
        record.count("persistent_bytes_read", len(data))
        return meta, blobs

    def save_record(self, kind: str, key: str, meta: dict[str, Any], blobs: dict[str, bytes]) -> bool:
        """Store ``(meta, blobs)`` (meta must be JSON) atomically; False when it
        could not be written (never raises for I/O trouble)."""
        try:
            header = {"format": FORMAT, "frame": _frame_fingerprint(), "backend": f"record:{kind}",
                      "backend_version": "", "key_sha256": _key_sha(key), "created": time.time(),
                      "meta": meta}
            data = _encode(header, blobs)
        except (TypeError, ValueError) as err:
            _warn_serialize("persistent compile cache: a %s record cannot be stored (%s)", kind, err)
            return False
        if len(data) > self.max_bytes:
            return False
        return self._write(self.record_path(kind, key), data)

    # -- writing ---------------------------------------------------------------------
    def save(self, key: str, backend: Backend, graph, exe: Executable,
             options: CompileOptions) -> bool:
        """Persist ``exe`` (compiled by ``backend`` from ``graph``, the post-pass
        graph) if the backend can serialize it.  Never raises for I/O or
        serialization trouble: the cache is an optimisation."""
        try:
            artifact = backend.serialize(graph, exe, options)
        except Exception as err:  # noqa: BLE001 -- a backend bug must not fail the compile
            _warn_serialize("persistent compile cache: backend '%s' could not serialize an "
                            "executable (%s: %s); it is not persisted", backend.name,
                            type(err).__name__, err)
            return False
        if artifact is None:
            return False
        try:
            header = {"format": FORMAT, "frame": _frame_fingerprint(), "backend": backend.name,
                      "backend_version": backend.artifact_version(options),
                      "key_sha256": _key_sha(key), "created": time.time(), "meta": artifact.meta}
            data = _encode(header, artifact.blobs)
        except (TypeError, ValueError) as err:  # meta that is not JSON
            _warn_serialize("persistent compile cache: backend '%s' produced an artifact that "
                            "cannot be stored (%s); it is not persisted", backend.name, err)
            return False
        if len(data) > self.max_bytes:
            return False
        return self._write(self.path_for(key, backend.name), data)

    def _write(self, path: str, data: bytes) -> bool:
        tmp = os.path.join(self.dir, f"{_TMP}{os.getpid()}-{threading.get_ident()}-"
                                     f"{next(self._tmp_names)}")
        try:
            os.makedirs(self.dir, exist_ok=True)
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, path)  # atomic: readers see the old entry or the new one
        except OSError as err:
            _unlink(tmp)
            _warn_io("persistent compile cache: cannot write %s (%s); not persisted", path, err)
            return False
        record.count("persistent_writes")
        record.count("persistent_bytes_written", len(data))
        self._account(len(data))
        return True

    # -- size bound ------------------------------------------------------------------
    def _account(self, written: int) -> None:
        with self._lock:
            if self._estimate is None:
                self._estimate = self._scan()[0]
            else:
                self._estimate += written
            if self._estimate > self.max_bytes:
                self._estimate = self.evict(int(self.max_bytes * 0.9))

    def _scan(self) -> tuple[int, list[tuple[float, int, str]]]:
        """(total bytes, [(mtime, size, path)]) of the entries; stale temporaries removed."""
        entries: list[tuple[float, int, str]] = []
        total = 0
        now = time.time()
        try:
            it = os.scandir(self.dir)
        except OSError:
            return 0, entries
        with it:
            for e in it:
                try:
                    st = e.stat()
                except OSError:
                    continue  # removed meanwhile
                if e.name.startswith(_TMP):
                    if now - st.st_mtime > _STALE_TMP_S:
                        _unlink(e.path)
                    continue
                if e.name.endswith(SUFFIX):
                    entries.append((st.st_mtime, st.st_size, e.path))
                    total += st.st_size
        return total, entries

    def evict(self, target: int) -> int:
        """Remove least recently used entries until at most ``target`` bytes remain;
        returns the bytes left."""
        total, entries = self._scan()
        entries.sort()
        for _, size, path in entries:
            if total <= target:
                break
            if _unlink(path):
                record.count("persistent_evictions")
            total -= size
        return total

    # -- the command line --------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        total, entries = self._scan()
        by_backend: dict[str, int] = {}
        for _, _, path in entries:
            name = _peek_backend(path)
            by_backend[name] = by_backend.get(name, 0) + 1
        model_cache = os.path.join(self.root, OPENVINO_MODEL_CACHE)
        return {"dir": self.dir, "entries": len(entries), "bytes": total,
                "max_bytes": self.max_bytes, "by_backend": by_backend,
                "openvino_model_cache": model_cache,
                "openvino_model_cache_bytes": _tree_bytes(model_cache)}

    def clear(self) -> tuple[int, int]:
        """Remove every entry (and OpenVINO's model cache beside them);
        returns (files removed, bytes freed)."""
        files = freed = 0
        for directory in (self.dir, os.path.join(self.root, OPENVINO_MODEL_CACHE)):
            for dirpath, _, names in os.walk(directory, topdown=False):
                for name in names:
                    path = os.path.join(dirpath, name)
                    try:
                        size = os.stat(path).st_size
                    except OSError:
                        continue
                    if _unlink(path):
                        files += 1
                        freed += size
        with self._lock:
            self._estimate = None
        return files, freed


def _unlink(path: str) -> bool:
    try:
        os.unlink(path)
        return True
    except OSError:
        return False


def _peek_backend(path: str) -> str:
    try:
        with open(path, "rb") as f:
            magic, head_len = _PREFIX.unpack(f.read(_PREFIX.size))
            if magic != MAGIC:
                return "?"
            return str(json.loads(f.read(head_len)).get("backend", "?"))
    except (OSError, ValueError, struct.error):
        return "?"


def _tree_bytes(directory: str) -> int:
    total = 0
    for dirpath, _, names in os.walk(directory):
        for name in names:
            try:
                total += os.stat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


_stores: dict[tuple[str, int], PersistentCache] = {}
_stores_lock = threading.Lock()


def _root() -> str | None:
    if not config.cache_dir:
        return None
    return os.path.abspath(os.path.expanduser(config.cache_dir))


def store_for_config() -> PersistentCache | None:
    """The store ``frame.config`` names (cache_dir, cache_max_bytes), enabled or not."""
    root = _root()
    if root is None:
        return None
    with _stores_lock:
        key = (root, int(config.cache_max_bytes))
        store = _stores.get(key)
        if store is None:
            store = _stores[key] = PersistentCache(root, key[1])
        return store


def active_store() -> PersistentCache | None:
    """The store to use now: None when ``frame.config.cache`` is off (FRAME_CACHE=0)
    or there is no cache directory."""
    if not config.cache:
        return None
    return store_for_config()


# --------------------------------------------------------------------------- CLI

def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def cache_command(action: str, out: TextIO | None = None) -> int:
    """``python -m frame cache info|clear``."""
    out = out or sys.stdout
    store = store_for_config()
    if store is None:
        print("frame cache: no cache directory (FRAME_CACHE_DIR is empty)", file=out)
        return 1
    if action == "clear":
        files, freed = store.clear()
        print(f"frame cache: removed {files} file(s), {_size(freed)}, under {store.root}", file=out)
        return 0
    info = store.info()
    state = "on" if config.cache else "off (FRAME_CACHE=0)"
    kinds = {"record:capture": "capture translations"}
    backends = ", ".join(f"{kinds.get(name, name)} {n}"
                         for name, n in sorted(info["by_backend"].items())) or "none"
    print(f"frame compile cache: {info['dir']}  ({state})", file=out)
    print(f"  entries:   {info['entries']} ({backends})", file=out)
    print(f"  size:      {_size(info['bytes'])} of {_size(info['max_bytes'])} "
          f"(FRAME_CACHE_MAX_BYTES)", file=out)
    print(f"  openvino model cache: {info['openvino_model_cache']} "
          f"({_size(info['openvino_model_cache_bytes'])})", file=out)
    return 0
