"""Which code is the user's: everything outside frame's and capture's own
packages, the standard library and installed packages (what breaks, the
trace report and auto-jit treat as library code)."""
from __future__ import annotations

import functools
import os
import sysconfig

import frame

__all__ = ["library_dirs"]


@functools.cache
def library_dirs() -> tuple[str, ...]:
    """The directories of library code, each ending in ``os.sep`` (for
    ``path.startswith``): frame, capture, Python's own library, site-packages."""
    dirs = {os.path.dirname(os.path.abspath(frame.__file__)), os.path.dirname(os.path.abspath(__file__))}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            dirs.add(os.path.abspath(path))
    return tuple(sorted(d.rstrip(os.sep) + os.sep for d in dirs))
