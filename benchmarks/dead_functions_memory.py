"""Memory held by dead jitted functions.

    python benchmarks/dead_functions_memory.py              # cpu and openvino
    python benchmarks/dead_functions_memory.py cpu          # one backend
    python benchmarks/dead_functions_memory.py --count 4000

Each backend runs in a fresh child process (persistent cache off, tiered
compilation off: the backend compiles every graph itself).  The child makes
``--count`` distinct functions, each in a namespace of its own (``exec`` of a
source with its own constant, so every function has its own code object and
its own graph), jits each one, calls it once and drops it (function,
namespace and wrapper).  It reports the resident set size (VmRSS, after a
``gc.collect()``) after 500 functions and after all of them, and the growth
per function in between: capture keeps the code caches of at most
``capture.jit.CODES_KEPT`` code objects besides those still alive (these
functions' namespaces refer to them), and the in-process compile cache keeps
at most ``frame.config.compile_cache_size`` executables, so the growth per
function should be near zero (allocator noise) once both are full.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

_CHILD = r"""
import gc, json, sys
sys.path.insert(0, {root!r})
import numpy as np
import frame
from frame.runtime import compile as runtime_compile

SOURCE = '''
def f(x):
    return (x * {{k}} + 1.0).tanh() - {{k}}
'''


def rss_kb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])


x = frame.tensor(np.arange(8, dtype=np.float32))
marks = {{}}
for i in range({count}):
    ns = {{}}
    exec(compile(SOURCE.format(k=i + 0.5), f"<fn {{i}}>", "exec"), ns)
    jitted = frame.jit(ns["f"], backend={backend!r})
    jitted(x)
    del jitted, ns
    if i + 1 in (500, {count}):
        gc.collect()
        marks[i + 1] = rss_kb()
print(json.dumps({{"marks": marks, "compile_cache": len(runtime_compile.compilation_cache),
                  "limit": frame.config.compile_cache_size}}))
"""


def run(backend: str, count: int) -> None:
    env = {**os.environ, "FRAME_CACHE": "0", "FRAME_TIERED": "0", "FRAME_EAGER": "0"}
    out = subprocess.run([sys.executable, "-c", _CHILD.format(root=ROOT, backend=backend,
                                                               count=count)],
                         capture_output=True, text=True, env=env)
    if out.returncode != 0:
        print(f"{backend}: child failed\n{out.stderr}")
        return
    result = json.loads(out.stdout.strip().splitlines()[-1])
    marks = {int(k): v for k, v in result["marks"].items()}
    first, last = marks[500], marks[count]
    per_fn = (last - first) * 1024 / (count - 500)
    print(f"  {backend:<9} RSS after 500: {first / 1024:7.1f} MB   after {count}: "
          f"{last / 1024:7.1f} MB   growth {per_fn / 1024:6.2f} KB per function   "
          f"(compile cache: {result['compile_cache']} executables, limit {result['limit']})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("backends", nargs="*", default=["cpu", "openvino"])
    parser.add_argument("--count", type=int, default=2000)
    args = parser.parse_args()
    print(f"RSS of a process that jits, calls once and drops {args.count} distinct functions:")
    for backend in args.backends:
        run(backend, args.count)


if __name__ == "__main__":
    main()
