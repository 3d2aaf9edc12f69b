"""Command line: ``python -m frame demo``, ``python -m frame --help``."""
from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m frame",
                                     description="frame: a compiled deep-learning framework")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("demo", help="run the flagship example briefly")
    sub.add_parser("version", help="print the version")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from .demo import run_demo
        return run_demo()
    if args.command == "version":
        import frame
        print(frame.__version__)
        return 0
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
