"""``frame.report()``: ``frame.stats()`` as rich tables, on stderr.

    frame.report()                   # now
    FRAME_REPORT=1 python train.py   # at exit (or frame.config.report = True)
    python -m frame run train.py     # run a script, then report

Sections: a summary (graph lookups in the in-process compile cache: hits,
and misses by how each was served -- loaded from the persistent cache,
compiled, started tiered; graphs compiled, total, by backend and in the
background; translations; recompiles; graph breaks; fallback hops;
translation, pass and compile time), then, when they have rows, recompiles
with their failing guards, graph breaks by kind and their top locations,
fallbacks by (op, backend, target), tier choice (the PGO counters and the
tier decided for each graph, ``tiered.py``), and every other counter or
timer in ``StatsSnapshot.extra`` / ``extra_times`` (the persistent cache and
tiering add theirs there).  When nothing was recorded at all the report is one line
saying so, also at exit: setting FRAME_REPORT=1 always answers.  When eager
mode is forced (``FRAME_EAGER=1``, ``frame.config.eager``) or functions were
jitted with ``eager=True``, a first line says so: then nothing is captured,
and an empty report is why.

Importing this module (``import frame`` does) applies FRAME_LOG and registers
the exit hook; the hook prints only if ``frame.config.report`` is true when
the process exits, so setting it at any time works.
"""
from __future__ import annotations

import atexit
import os
import runpy
import sys
import traceback
from types import TracebackType
from typing import IO, Sequence

from ..settings import config, eager_forced
from . import logs
from .stats import StatsSnapshot, stats

__all__ = ["report", "run_script", "TOP"]

TOP = 10  # rows shown per ranked table (recompile reasons, break sites, fallbacks)

# the tier-choice table's counters (frame/runtime/tiered.py), in this order
PGO_COUNTERS = (("pgo_trials", "timed trial calls"),
                ("pgo_decisions", "graphs decided by measurement"),
                ("pgo_switches", "decisions keeping a tier other than the backend asked for"),
                ("pgo_stored", "decisions read from the persistent cache"),
                ("pgo_noisy", "decisions left noisy after the extended trial (not stored)"),
                ("pgo_drifts", "decided graphs measured again: their time drifted"),
                ("backpressure_hits", "trial calls not timed: a compile was running"),
                ("cooldown_hits", "calls that waited out cooldown_s after a refused request"))


def report(file: IO[str] | None = None, *, snapshot: StatsSnapshot | None = None) -> None:
    """Print ``frame.stats()`` (or ``snapshot``) as tables to ``file`` (stderr).

    >>> frame.report()  # doctest: +SKIP
    """
    from rich.console import Console

    s = snapshot if snapshot is not None else stats()
    out = file if file is not None else sys.stderr
    # a terminal (or $COLUMNS) gives the width; pipes and files get 120 columns, not rich's 80
    sized = getattr(out, "isatty", lambda: False)() or os.environ.get("COLUMNS")
    console = Console(file=out, width=None if sized else 120, highlight=False)
    eager = _eager_line(s)
    if eager is not None:
        console.print(eager)
    if _is_empty(s):
        console.print("frame report: nothing to report (no translation, compile, graph break "
                      "or fallback was recorded)")
        return
    for table in _tables(s):
        console.print(table)


def _eager_line(s: StatsSnapshot) -> str | None:
    """Why nothing may have been captured: eager mode (None when it is off)."""
    calls = s.extra.get("eager_calls", 0)
    if eager_forced():
        return (f"frame report: eager mode is forced (FRAME_EAGER=1 or frame.config.eager): "
                f"frame.jit captures nothing, jitted functions run natively "
                f"({calls} such call(s) recorded)")
    if calls:
        return (f"frame report: {calls} call(s) of jitted functions ran natively in eager mode "
                f"(eager=True, or FRAME_EAGER / frame.config.eager when they were jitted): "
                f"nothing captured")
    return None


def _is_empty(s: StatsSnapshot) -> bool:
    return not (s.translations or s.compiles or s.cache_hits or s.cache_misses or s.recompiles
                or s.graph_breaks or s.fallbacks or s.fallback_targets
                or any(s.extra.values()) or any(s.extra_times.values()) or s.tier_decisions
                or s.auto_jit)


def _tables(s: StatsSnapshot) -> list:
    tables = [_summary(s)]
    for build in (_fusion, _recompiles, _breaks_by_kind, _break_sites, _fallbacks, _tiers, _auto_jit,
                  _other):
        table = build(s)
        if table is not None:
            tables.append(table)
    return tables


def _table(title: str, *columns: str, caption: str | None = None):
    from rich.table import Table

    table = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
    for name in columns:
        numeric = name in ("count", "value")
        table.add_column(name, justify="right" if numeric else "left", overflow="fold",
                         no_wrap=numeric)
    return table


def _more(n_total: int, shown: int) -> str | None:
    return f"... and {n_total - shown} more" if n_total > shown else None


def _time(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms" if seconds < 10 else f"{seconds:.2f} s"


def _ranked(d: dict) -> list:
    return sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))


# the in-process misses by how they were served (frame/runtime/compile.py), in this order
MISS_ROWS = (("cache_misses_persistent", "  misses loaded from the persistent cache (no compile)"),
             ("cache_misses_compiled", "  misses compiled now"),
             ("cache_misses_tiered", "  misses started tiered (each also looks up its fast tier)"))


def _summary(s: StatsSnapshot):
    """Graph lookups, split so the numbers add up: lookups = hits + misses, each
    miss served one way (MISS_ROWS); graphs compiled = misses compiled + the
    slow tiers compiled in the background."""
    t = _table("frame report", "what", "value")
    lookups = s.cache_hits + s.cache_misses
    rate = f" ({100 * s.cache_hits / lookups:.0f}% in memory)" if lookups else ""
    t.add_row("graph lookups (in-process compile cache)", f"{lookups}{rate}")
    t.add_row("  hits: executable already in memory", str(s.cache_hits))
    served = 0
    for name, label in MISS_ROWS:
        n = s.extra.get(name, 0)
        served += n
        t.add_row(label, str(n))
    if s.cache_misses > served:  # a compile that raised, or counters reset mid-way
        t.add_row("  misses not served (an error was raised)", str(s.cache_misses - served))
    t.add_row("graphs compiled (passes + Backend.compile)", str(s.compiles))
    for backend, n in _ranked(s.compiles_by_backend):
        t.add_row(f"  for backend {backend}", str(n))
    background = s.compiles - s.extra.get("cache_misses_compiled", 0)
    if background > 0:
        t.add_row("  of which slow tiers compiled in the background", str(background))
    t.add_row("translations", str(s.translations))
    t.add_row("recompiles", str(s.recompiles))
    if s.extra.get("compiled_backward_compiles"):  # compiled autograd across the jit boundary
        t.add_row("compiled backwards (of jitted calls' results)",
                  str(s.extra["compiled_backward_compiles"]))
        t.add_row("  compiled backward runs", str(s.extra.get("compiled_backward_runs", 0)))
    t.add_row("graph breaks", str(sum(s.graph_breaks.values())))
    t.add_row("fallback hops", str(sum(s.fallback_targets.values()) or sum(s.fallbacks.values())))
    t.add_row("translation time (compiles included)", _time(s.translation_time_s))
    t.add_row("pass time", _time(s.pass_time_s))
    t.add_row("compile time (passes included)", _time(s.compile_time_s))
    return t


def _recompiles(s: StatsSnapshot):
    if not s.recompile_reasons:
        return None
    rows = _ranked(s.recompile_reasons)
    t = _table("recompiles: the guard that failed", "function", "failing guard", "count",
               caption=_more(len(rows), TOP))
    for (fn, guard), n in rows[:TOP]:
        t.add_row(fn, guard, str(n))
    return t


def _breaks_by_kind(s: StatsSnapshot):
    if not s.graph_breaks:
        return None
    explain = _catalogue()
    t = _table("graph breaks by kind", "kind", "count", "what it means")
    for kind, n in _ranked(s.graph_breaks):
        t.add_row(kind, str(n), explain.get(kind, ""))
    return t


def _break_sites(s: StatsSnapshot):
    if not s.graph_break_sites:
        return None
    rows = _ranked(s.graph_break_sites)
    t = _table("graph breaks: top locations", "location", "kind", "count", "reason",
               caption=_more(len(rows), TOP))
    for (kind, location), n in rows[:TOP]:
        t.add_row(location, kind, str(n), s.graph_break_reasons.get((kind, location), ""))
    return t


def _fallbacks(s: StatsSnapshot):
    if not (s.fallback_targets or s.fallbacks):
        return None
    # fallback_targets refines fallbacks; a recorder that only gave (op, backend) shows target "?"
    rows = dict(s.fallback_targets)
    covered = {(op, be) for op, be, _ in rows}
    rows.update({(op, be, "?"): n for (op, be), n in s.fallbacks.items() if (op, be) not in covered})
    ranked = _ranked(rows)
    t = _table("fallbacks by op, backend, target", "op", "backend", "ran via", "count",
               caption=_more(len(ranked), TOP))
    for (op, backend, target), n in ranked[:TOP]:
        t.add_row(op, backend, target, str(n))
    return t


def _tiers(s: StatsSnapshot):
    counters = [(name, what, s.extra.get(name, 0)) for name, what in PGO_COUNTERS]
    if not (s.tier_decisions or any(n for _, _, n in counters)):
        return None
    t = _table("tier choice (PGO)", "graph / counter", "decision / value",
               caption=_more(len(s.tier_decisions), TOP))
    for name, what, n in counters:
        t.add_row(f"{name}: {what}", str(n))
    for label, text in list(s.tier_decisions.items())[-TOP:]:
        t.add_row(label, text)
    return t


def _auto_jit(s: StatsSnapshot):
    """Auto-jit's units (capture/autojit.py): most time saved first."""
    if not s.auto_jit:
        return None
    rows = sorted(s.auto_jit.items(), key=lambda kv: -kv[1]["saved_s"])
    t = _table("auto-jit units (FRAME_AUTO_JIT)", "unit", "kind", "state", "calls", "hits",
               "compile s", "eager ms/call", "compiled ms/call", "saved s (est.)",
               caption=_more(len(rows), TOP))

    def ms(v):
        return "-" if v is None else f"{v:.3f}"
    for label, u in rows[:TOP]:
        state = u["state"] + (f" ({u['reason']})" if u["reason"] else "")
        t.add_row(label, u["kind"], state, str(u["calls"]), str(u["hits"]),
                  f"{u['compile_s']:.3f}", ms(u["eager_ms"]), ms(u["compiled_ms"]),
                  f"{u['saved_s']:.3f}")
    return t


def _fusion(s: StatsSnapshot):
    """Fused nodes per phase over the graphs compiled (operator_fusion's counts)."""
    def get(phase: str, what: str) -> int:
        return s.extra.get(f"fusion_{phase}_{what}", 0)
    if not any(get(p, "ops") for p in ("forward", "backward", "update")):
        return None
    t = _table("operator fusion (graphs compiled)", "phase", "ops", "fused nodes",
               "ops fused", "fraction")
    for phase in ("forward", "backward", "update"):
        ops, fused = get(phase, "ops"), get(phase, "fused_ops")
        t.add_row(phase, str(ops), str(get(phase, "fused_nodes")), str(fused),
                  f"{fused / ops:.0%}" if ops else "-")
    return t


def _other(s: StatsSnapshot):
    shown = {name for name, _ in PGO_COUNTERS} | {name for name, _ in MISS_ROWS} | \
        {"compiled_backward_compiles", "compiled_backward_runs"}   # (in the summary)
    counters = {k: v for k, v in s.extra.items()
                if v and k not in shown and not k.startswith("fusion_")}
    times = {k: v for k, v in s.extra_times.items() if v}
    if not (counters or times):
        return None
    t = _table("other counters", "counter", "value")
    for name in sorted(counters):
        t.add_row(name, str(counters[name]))
    for name in sorted(times):
        t.add_row(f"{name} time", _time(times[name]))
    return t


def _catalogue() -> dict[str, str]:
    """kind -> explanation, from capture's catalogue when capture is in use
    (graph breaks are only recorded by capture, so it normally is)."""
    errors = sys.modules.get("capture.errors")
    catalogue = getattr(errors, "CATALOGUE", {})
    return {kind: entry[0] for kind, entry in catalogue.items()}


# --- at exit and ``python -m frame run`` --------------------------------------

_exit_report_done = False


def _report_at_exit() -> None:
    if config.report and not _exit_report_done:
        report()


def run_script(path: str, argv: Sequence[str] = ()) -> int:
    """Run the Python file ``path`` as ``__main__`` with ``sys.argv = [path, *argv]``,
    then print the report, also when the script raises or calls ``sys.exit``.

    Returns the exit status ``python path`` would have: 0, the ``sys.exit``
    code, or 1 after an uncaught exception, whose traceback is printed (from
    the script's own frames on) before the report.
    """
    global _exit_report_done
    saved_argv, saved_path = sys.argv, sys.path[:]
    sys.argv = [path, *argv]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # as `python script.py` does
    try:
        runpy.run_path(path, run_name="__main__")
        status = 0
    except SystemExit as exit_:
        status = _exit_status(exit_.code)
    except BaseException as err:  # noqa: BLE001 - reported like the interpreter would
        traceback.print_exception(type(err), err, _from_script(err, path))
        status = 130 if isinstance(err, KeyboardInterrupt) else 1
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
    sys.stdout.flush()  # the script's output first, then the report
    _exit_report_done = True  # FRAME_REPORT=1 would otherwise print it a second time
    report()
    return status


def _exit_status(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message"), as the interpreter does
    return 1


def _from_script(err: BaseException, path: str) -> TracebackType | None:
    """``err``'s traceback without the frames of ``python -m frame run`` and
    runpy, as ``python script.py`` would show it.  A SyntaxError in the script
    has no script frame and needs none; any other error without one keeps
    the whole traceback."""
    target = os.path.abspath(path)
    tb = err.__traceback__
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != target:
        tb = tb.tb_next
    if tb is None and not isinstance(err, SyntaxError):
        return err.__traceback__
    return tb


logs.apply()  # FRAME_LOG from the environment
atexit.register(_report_at_exit)
