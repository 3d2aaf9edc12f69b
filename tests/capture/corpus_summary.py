"""How the differential corpus (``test_corpus_*.py``) and the coverage corpus
(``test_coverage_*.py``) are captured: per case,
``frame.explain``'s graph and break counts, and a summary (cases, xfail
marks, cases run as exactly one graph with no break).

    PYTHONPATH=. python -m tests.capture.corpus_summary [-v]

A report, not a test: the tests compare results; this shows how much of the
corpus the compiler actually takes.
"""
from __future__ import annotations

import argparse
import collections
import logging
import os
import warnings

os.environ.setdefault("FRAME_CACHE", "0")
os.environ.setdefault("FRAME_TIERED", "0")

import frame  # noqa: E402

import importlib  # noqa: E402
import pathlib  # noqa: E402

from .corpus import effective_backend  # noqa: E402

logging.getLogger("tests.corpus").addHandler(logging.NullHandler())  # the cases' own records

MODULES = tuple(
    importlib.import_module(f"{__package__}.{path.stem}")
    for pattern in ("test_corpus_*.py", "test_coverage_*.py")
    for path in sorted(pathlib.Path(__file__).parent.glob(pattern)))


def _explain(c):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return frame.explain(c.fn)(*c.args(), **c.kwargs), None
    except Exception as e:  # noqa: BLE001 - jit refuses the callable (a reported xfail)
        return None, f"{type(e).__name__}: {e}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per case")
    opts = parser.parse_args()
    logging.getLogger("frame").setLevel(logging.ERROR)
    total = one_graph = no_graph = xfails = 0
    kinds: collections.Counter = collections.Counter()
    for module in MODULES:
        m_total = m_one = 0
        for c in module.case.cases:
            out, error = _explain(c)
            total += 1
            m_total += 1
            xfails += c.xfail is not None and (c.xfail_on is None or c.xfail_on == effective_backend())
            if out is None:
                shape = f"jit refused ({error})"
            else:
                whole = out.graph_count == 1 and out.graph_break_count == 0
                one_graph += whole
                no_graph += out.graph_count == 0 and out.graph_break_count == 0
                m_one += whole
                for r in out.break_reasons:
                    kinds[r.kind] += 1
                shape = f"graphs={out.graph_count} breaks={out.graph_break_count}"
                if out.break_reasons:
                    shape += f" ({out.break_reasons[0].kind}: {out.break_reasons[0].reason[:70]})"
            if opts.verbose:
                mark = " [xfail]" if c.xfail else ""
                print(f"{module.__name__.rsplit('.', 1)[-1]}::{c.name}{mark}: {shape}")
        print(f"{module.__name__.rsplit('.', 1)[-1]}: {m_total} cases, {m_one} as one graph "
              f"with no break")
    print(f"backend {effective_backend()}: {total} cases, {xfails} marked xfail, "
          f"{one_graph} ({one_graph / total:.0%}) as exactly one graph with no break, "
          f"{no_graph} more captured whole with no tensor op (no graph)")
    print("break kinds:", dict(kinds.most_common()))


if __name__ == "__main__":
    main()
