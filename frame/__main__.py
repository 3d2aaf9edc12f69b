"""Command line: ``python -m frame demo``, ``python -m frame run script.py [args...]``,
``python -m frame config``, ``python -m frame cache info|clear``, ``python -m frame --help``
(whose "Environment" section is generated from ``frame.config``'s settings)."""
from __future__ import annotations

import argparse
import os
import sys

from . import __version__
from . import trace_report as _trace_report
from .settings import config, environment_help
from .demo import add_arguments as _demo_arguments, run as _run_demo
from .runtime.persistent import cache_command
from .runtime.report import run_script


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m frame",
                                     description="frame: a compiled deep-learning framework",
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="Environment (read when frame is imported; "
                                     "assigning frame.config.<setting> in code wins):\n"
                                     + environment_help())
    sub = parser.add_subparsers(dest="command")
    demo = sub.add_parser("demo", help="train the flagship example (MLP on handwritten digits), "
                          "eager and jitted",
                          description="Train an MLP 784-256-128-10 on scikit-learn's handwritten "
                          "digits (synthetic data when scikit-learn is absent), eagerly and with "
                          "frame.jit; print time per step and test accuracy.")
    _demo_arguments(demo)
    sub.add_parser("version", help="print the version")
    sub.add_parser("config", help="print every setting, its effective value and where it came "
                   "from (default, environment variable)")
    cache = sub.add_parser("cache", help="the persistent compile cache under FRAME_CACHE_DIR")
    cache.add_argument("action", choices=["info", "clear"],
                       help="info: entries and size; clear: remove every entry")
    run = sub.add_parser("run", help="run a Python script, then print frame.report() (also if it fails)",
                         usage="python -m frame run [-h] script [args ...]",
                         description="Run SCRIPT as __main__ with sys.argv = [SCRIPT, *ARGS], then "
                         "print frame.report() to stderr, also when the script raises or exits.")
    # "?" and a check below: argparse would call the (optional) REMAINDER required too
    run.add_argument("script", nargs="?", help="path of the Python file to run")
    run.add_argument("args", nargs=argparse.REMAINDER,
                     help="arguments passed to the script (optional)")
    report = sub.add_parser("trace-report", help="render the compile events recorded under "
                            "FRAME_TRACE_DIR as one HTML page",
                            description="Write one self-contained HTML page (source with graph "
                            "regions and breaks, per-graph IR and timings, recompiles, a "
                            "timeline) from the trace files FRAME_TRACE_DIR=DIRECTORY recorded.")
    _trace_report.add_arguments(report)
    args = parser.parse_args(argv)
    if args.command == "trace-report":
        return _trace_report.main(args)
    if args.command == "demo":
        return _run_demo(args)
    if args.command == "run":
        if args.script is None:
            run.error("the following argument is required: script")
        if not os.path.isfile(args.script):
            run.error(f"no such file: {args.script}")
        return run_script(args.script, args.args)
    if args.command == "cache":
        return cache_command(args.action)
    if args.command == "config":
        print(config.describe())
        return 0
    if args.command == "version":
        print(__version__)
        return 0
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
