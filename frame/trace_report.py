"""``python -m frame trace-report DIR -o report.html``: the compile events that
FRAME_TRACE_DIR recorded (``frame/runtime/trace.py``) as one self-contained
HTML page (inline CSS and JavaScript, no network access).

    FRAME_TRACE_DIR=traces python train.py
    python -m frame trace-report traces -o report.html

Sections: a summary; a timeline per process (translations, compiles, breaks,
recompiles, tier events); the user's source with the lines each graph covers
highlighted and breaks and native runs annotated at their lines; each graph
with its IR before and after the pass pipeline and its pass and compile
times; recompiles with the failing guard; graph breaks; fallbacks; tier/PGO
decisions; every translation with its guards.  See docs/trace-report.md.
"""
from __future__ import annotations

import collections
import dataclasses
import glob
import html
import json
import os
import time
from typing import Iterable

__all__ = ["load_traces", "render", "write_report", "main", "Trace"]

SECTIONS = ("summary", "timeline", "source", "graphs", "recompiles", "breaks", "fallbacks",
            "tiers", "translations")
CONTEXT_LINES = 4        # lines shown around annotated lines of a long file
WHOLE_FILE_LINES = 300   # files up to this long are shown whole


@dataclasses.dataclass
class Trace:
    """The records of one process (one trace file)."""
    path: str
    process: dict
    records: list[dict]

    @property
    def label(self) -> str:
        argv = " ".join(self.process.get("argv") or []) or "?"
        return f"pid {self.process.get('pid', '?')}: {argv}"

    def of(self, *events: str) -> list[dict]:
        return [r for r in self.records if r.get("event") in events]


def load_traces(directory: str) -> list[Trace]:
    """Every trace file of ``directory`` (oldest first).  A line that is not
    JSON (a process killed mid-write) is skipped."""
    paths = sorted(glob.glob(os.path.join(directory, "frame-trace-*.jsonl")))
    traces = []
    for path in paths:
        records = []
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
        process = next((r for r in records if r.get("event") == "process"), {})
        traces.append(Trace(path, process, [r for r in records if r.get("event") != "process"]))
    traces.sort(key=lambda t: t.process.get("wall", 0.0))
    return traces


# -- helpers ---------------------------------------------------------------------------------

def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _ms(seconds) -> str:
    try:
        return f"{float(seconds) * 1e3:.1f} ms"
    except (TypeError, ValueError):
        return "?"


def _table(headers: Iterable[str], rows: list[list[str]], empty: str) -> str:
    if not rows:
        return f'<p class="empty">{_e(empty)}</p>'
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _gid(trace_index: int, gid) -> str:
    return f"g{trace_index}-{gid}"


def _graph_link(trace_index: int, gid, known: set) -> str:
    if gid is None:
        return ""
    if (trace_index, gid) in known:
        return f'<a class="chip" href="#{_gid(trace_index, gid)}">#{_e(gid)}</a>'
    return f'<span class="chip dim" title="not compiled in this process (an in-process cache ' \
           f'hit, or compiled later)">#{_e(gid)}</span>'


# -- source ----------------------------------------------------------------------------------

def _highlighted_lines(text: str) -> list[str]:
    """``text``'s lines as HTML, Python syntax coloured (plain when pygments,
    which rich brings, is missing)."""
    try:
        from pygments.lexers import PythonLexer
        from pygments.token import STANDARD_TYPES
    except ImportError:
        return [_e(line) for line in text.split("\n")]
    lines, current = [], []
    for token, value in PythonLexer(stripnl=False, ensurenl=False).get_tokens(text):
        css = ""
        t = token
        while t is not None and t not in STANDARD_TYPES:
            t = t.parent
        if t is not None and STANDARD_TYPES[t]:
            css = STANDARD_TYPES[t]
        parts = value.split("\n")
        for i, part in enumerate(parts):
            if i:
                lines.append("".join(current))
                current = []
            if part:
                current.append(f'<span class="{css}">{_e(part)}</span>' if css else _e(part))
    lines.append("".join(current))
    return lines


def _source_section(traces: list[Trace], known: set) -> str:
    # file -> its text (the newest record), and per line what happened there
    texts: dict[str, str] = {}
    regions: dict[str, dict[int, list]] = collections.defaultdict(lambda: collections.defaultdict(list))
    notes: dict[str, dict[int, list]] = collections.defaultdict(lambda: collections.defaultdict(list))
    by_base: dict[str, str] = {}
    for ti, tr in enumerate(traces):
        for r in tr.of("source"):
            texts[r["file"]] = r.get("text", "")
            by_base.setdefault(os.path.basename(r["file"]), r["file"])
    for ti, tr in enumerate(traces):
        for r in tr.of("translation"):
            file = r.get("file")
            if not file:
                continue
            region = (ti, r.get("id"), r.get("graphs") or [], r.get("kind"), r.get("function"))
            for line in r.get("lines") or []:
                regions[file][line].append(region)
            for inner in r.get("inlined") or []:   # the user's functions traced into the graph
                region = (ti, r.get("id"), r.get("graphs") or [], "inlined", inner.get("function"))
                for line in inner.get("lines") or []:
                    regions[inner.get("file")][line].append(region)
            if r.get("kind") == "native" and r.get("reason"):
                reason = r["reason"]
                line = reason.get("line") if _same_file(reason, file) else None
                notes[file][line or r.get("first_line", 1)].append(
                    ("native", f"{r.get('function')} runs natively: {reason.get('kind')}: "
                               f"{reason.get('reason')}", reason.get("hint")))
        for r in tr.of("break"):
            if not r.get("graph_break"):
                continue
            file = r.get("file") if _same_file(r, r.get("file")) else by_base.get(
                str(r.get("location", "")).rpartition(":")[0])
            if file and r.get("line"):
                notes[file][r["line"]].append(
                    ("break", f"graph break ({r.get('kind')}): {r.get('reason')}", r.get("hint")))
        for r in tr.of("recompile"):
            file = by_base.get(str(r.get("location", "")).rpartition(":")[0])
            line = str(r.get("location", "")).rpartition(":")[2]
            if file and line.isdigit():
                notes[file][int(line)].append(
                    ("recompile", f"recompile of {r.get('function')}: guard failed: {r.get('guard')}",
                     None))
    files = [f for f in texts if f in regions or f in notes]
    if not files:
        return '<p class="empty">No source recorded (no translation of a function in a file).</p>'
    out = ['<p class="legend"><span class="sw r0"></span>graph region (one colour per graph '
           'of a function) <span class="sw brk"></span>graph break '
           '<span class="sw nat"></span>runs natively <span class="sw rec"></span>recompile '
           '<label><input type="checkbox" id="only-annotated"> only annotated lines</label></p>']
    for file in files:
        lines = _highlighted_lines(texts[file])
        shown = _shown_lines(len(lines), set(regions[file]) | set(notes[file]))
        colour: dict[tuple, int] = {}
        rows, last = [], 0
        for n in shown:
            if last and n != last + 1:
                rows.append('<tr class="gap"><td colspan="3">…</td></tr>')
            last = n
            here = regions[file].get(n, [])
            cls, chips = [], []
            for ti, tid, graphs, kind, function in here:
                key = (ti, function, tid)
                colour.setdefault(key, len([k for k in colour if k[1] == function]))
                for g in graphs:
                    if (ti, g) not in known:  # reused from the in-process cache, or not compiled
                        continue
                    chip = _graph_link(ti, g, known)
                    if chip not in chips:
                        chips.append(chip)
            if here:
                first = here[0]
                cls.append(f"r{colour[(first[0], first[4], first[1])] % 4}")
            kinds = {k for k, _, _ in notes[file].get(n, [])}
            if "break" in kinds:
                cls.append("brk")
            elif "native" in kinds:
                cls.append("nat")
            elif "recompile" in kinds:
                cls.append("rec")
            if here or kinds:
                cls.append("ann")
            rows.append(f'<tr class="{" ".join(cls)}"><td class="ln">{n}</td>'
                        f'<td class="code"><code>{lines[n - 1] if n <= len(lines) else ""}</code></td>'
                        f'<td class="chips">{"".join(chips[:6])}{" …" if len(chips) > 6 else ""}</td></tr>')
            seen_notes = set()
            for kind, text, hint in notes[file].get(n, []):
                if (kind, text) in seen_notes:
                    continue
                seen_notes.add((kind, text))
                hint_html = f'<div class="hint">hint: {_e(hint)}</div>' if hint else ""
                rows.append(f'<tr class="note {kind} ann"><td></td><td colspan="2">'
                            f'<div class="msg">{_e(text)}</div>{hint_html}</td></tr>')
        out.append(f'<h3 class="file">{_e(file)}</h3><table class="src">{"".join(rows)}</table>')
    return "".join(out)


def _same_file(reason: dict, file: str | None) -> bool:
    loc = str(reason.get("location", ""))
    return bool(file) and loc.rpartition(":")[0] == os.path.basename(file)


def _shown_lines(count: int, marked: set[int]) -> list[int]:
    if count <= WHOLE_FILE_LINES:
        return list(range(1, count + 1))
    keep = set()
    for n in marked:
        keep.update(range(max(1, n - CONTEXT_LINES), min(count, n + CONTEXT_LINES) + 1))
    return sorted(keep)


# -- graphs ----------------------------------------------------------------------------------

def _graphs_section(traces: list[Trace], translations: dict) -> str:
    out = []
    for ti, tr in enumerate(traces):
        for r in tr.of("graph", "graph_loaded"):
            gid = r.get("id")
            t = translations.get((ti, r.get("translation")))
            who = (f'<a href="#t{ti}-{t["id"]}">{_e(t.get("function"))}'
                   f'{" (resume)" if t.get("resume") else ""}</a>' if t else "background / unknown")
            if r["event"] == "graph_loaded":
                head = (f'<h3 id="{_gid(ti, gid)}">graph #{_e(gid)} <small>{_e(r.get("backend"))}, '
                        f'loaded from the persistent cache ({_e(r.get("executable"))})</small></h3>')
                out.append(f'<div class="graph">{head}<p>for {who}</p>'
                           f'<details open><summary>IR</summary><pre>{_e(r.get("ir_before", ""))}'
                           f'</pre></details></div>')
                continue
            passes = _table(["pass", "time"], [[_e(n), _ms(s)] for n, s in r.get("passes") or []],
                            "no pass ran")
            flags = " <b class=\"warn\">fallback</b>" if r.get("fallback") else ""
            out.append(
                f'<div class="graph"><h3 id="{_gid(ti, gid)}">graph #{_e(gid)} '
                f'<small>{_e(r.get("backend"))}, {r.get("nodes", 0)} nodes, '
                f'{_e(r.get("executable"))}{flags}</small></h3>'
                f'<p>for {who}; ops: {_e(", ".join(r.get("ops") or []))}; passes {_ms(r.get("pass_s"))}, '
                f'compile {_ms(r.get("compile_s"))} (at {_ms(r.get("t"))} in {_e(tr.label)})</p>'
                f'<div class="cols"><details class="ir" open><summary>IR before passes</summary>'
                f'<pre>{_e(r.get("ir_before", ""))}</pre></details>'
                f'<details class="ir" open><summary>IR after passes</summary>'
                f'<pre>{_e(r.get("ir_after") or "")}</pre></details></div>'
                f'<details><summary>pass times</summary>{passes}</details></div>')
    return "".join(out) or '<p class="empty">No graph was compiled.</p>'


# -- timeline --------------------------------------------------------------------------------

def _timeline_section(traces: list[Trace]) -> str:
    out = []
    width, left = 1000, 110
    for ti, tr in enumerate(traces):
        recs = tr.records
        end = max([float(r.get("t", 0.0)) for r in recs] + [1e-3])
        scale = (width - left - 10) / end
        rows = [("translations", [r for r in tr.of("translation")], "bar tr", "duration_s"),
                ("compiles", [r for r in tr.of("graph")], "bar gr", "compile_s"),
                ("breaks", tr.of("break"), "mark brk", None),
                ("recompiles", tr.of("recompile", "recompile_limit"), "mark rec", None),
                ("fallbacks", tr.of("fallback"), "mark fb", None),
                ("tiers, cache", tr.of("tier", "graph_loaded"), "mark tier", None)]
        height = 22 * len(rows) + 30
        svg = [f'<svg class="timeline" viewBox="0 0 {width} {height}" width="100%" '
               f'role="img" aria-label="timeline of {_e(tr.label)}">']
        for i, (name, items, cls, dur) in enumerate(rows):
            y = 10 + 22 * i
            svg.append(f'<text x="4" y="{y + 13}" class="lbl">{name} ({len(items)})</text>')
            svg.append(f'<line x1="{left}" x2="{width - 10}" y1="{y + 9}" y2="{y + 9}" class="axis"/>')
            for r in items:
                t = float(r.get("t", 0.0))
                title = _e(_describe(r))
                if dur:
                    d = float(r.get(dur) or 0.0)
                    x = left + max(0.0, t - d) * scale
                    w = max(2.0, d * scale)
                    svg.append(f'<rect class="{cls}" x="{x:.1f}" y="{y + 2}" width="{w:.1f}" '
                               f'height="14"><title>{title}</title></rect>')
                else:
                    x = left + t * scale
                    svg.append(f'<rect class="{cls}" x="{x - 1.5:.1f}" y="{y}" width="3" '
                               f'height="18"><title>{title}</title></rect>')
        y = 10 + 22 * len(rows)
        for k in range(6):
            x = left + (width - left - 10) * k / 5
            svg.append(f'<text x="{x:.1f}" y="{y + 14}" class="tick">{end * k / 5 * 1e3:.0f} ms</text>')
        svg.append("</svg>")
        out.append(f"<h3>{_e(tr.label)}</h3>{''.join(svg)}")
    return "".join(out) or '<p class="empty">No trace file.</p>'


def _describe(r: dict) -> str:
    ev = r.get("event")
    at = f"at {float(r.get('t', 0)) * 1e3:.1f} ms"
    if ev == "translation":
        return (f"translation of {r.get('function')} ({r.get('kind')}), "
                f"{float(r.get('duration_s') or 0) * 1e3:.1f} ms, {at}")
    if ev == "graph":
        return f"compile of graph #{r.get('id')} for {r.get('backend')}, {_ms(r.get('compile_s'))}, {at}"
    if ev == "break":
        return f"{r.get('kind')} at {r.get('location')}: {r.get('reason')} ({at})"
    if ev in ("recompile", "recompile_limit"):
        return f"{ev} of {r.get('function')}: {r.get('guard')} ({at})"
    if ev == "fallback":
        return f"fallback of op {r.get('op')} on {r.get('backend')} -> {r.get('target')} ({at})"
    if ev == "tier":
        return f"{r.get('label')}: {r.get('text')} ({at})"
    if ev == "graph_loaded":
        return f"graph #{r.get('id')} loaded from the persistent cache ({at})"
    return f"{ev} {at}"


# -- the page --------------------------------------------------------------------------------

def render(traces: list[Trace], title: str = "frame compile report") -> str:
    """The HTML page for ``traces``."""
    known = {(ti, r.get("id")) for ti, tr in enumerate(traces) for r in tr.of("graph", "graph_loaded")}
    translations = {(ti, r.get("id")): r for ti, tr in enumerate(traces) for r in tr.of("translation")}
    count = collections.Counter(r.get("event") for tr in traces for r in tr.records)
    all_recs = [r for tr in traces for r in tr.records]
    summary = [
        ("processes", len(traces)),
        ("translations", count["translation"]),
        ("graphs compiled", count["graph"]),
        ("graphs from the persistent cache", count["graph_loaded"]),
        ("graph breaks", sum(1 for r in all_recs if r.get("event") == "break" and r.get("graph_break"))),
        ("native runs", sum(1 for r in all_recs if r.get("event") == "break" and not r.get("graph_break"))),
        ("recompiles", count["recompile"] + count["recompile_limit"]),
        ("fallback hops", count["fallback"]),
        ("time translating", _ms(sum(float(r.get("duration_s") or 0) for r in all_recs
                                      if r.get("event") == "translation"))),
        ("time compiling", _ms(sum(float(r.get("compile_s") or 0) for r in all_recs
                                    if r.get("event") == "graph"))),
    ]
    cards = "".join(f'<div class="card"><div class="num">{_e(v)}</div><div>{_e(k)}</div></div>'
                    for k, v in summary)

    recompiles = [[_e(tr.label), _ms(r.get("t")), _e(r.get("function")), _e(r.get("location", "")),
                   f"<code>{_e(r.get('guard'))}</code>",
                   "recompile limit reached: runs natively" if r["event"] == "recompile_limit"
                   else f"{_e(r.get('entries'))} entr{'y' if r.get('entries') == 1 else 'ies'} before"]
                  for tr in traces for r in tr.of("recompile", "recompile_limit")]
    breaks = [[_e(tr.label), _ms(r.get("t")), _e(r.get("function")), _e(r.get("location")),
               _e(r.get("kind")), "graph break" if r.get("graph_break") else
               ("raised GraphBreakError" if r.get("raises") else "runs natively"),
               _e(r.get("reason")), _e(r.get("hint") or "")]
              for tr in traces for r in tr.of("break")]
    fallbacks = [[_e(tr.label), _ms(r.get("t")), f"<code>{_e(r.get('op'))}</code>", _e(r.get("backend")),
                  _e(r.get("target")), _e(r.get("reason"))]
                 for tr in traces for r in tr.of("fallback")]
    tiers = [[_e(tr.label), _ms(r.get("t")), _graph_link(ti, r.get("graph"), known), _e(r.get("what")),
              _e(r.get("text"))]
             for ti, tr in enumerate(traces) for r in tr.of("tier")]
    trans = []
    for ti, tr in enumerate(traces):
        for r in tr.of("translation"):
            reason = r.get("reason") or {}
            why = f"{reason.get('kind')} at {reason.get('location')}: {reason.get('reason')}" if reason else ""
            if r.get("error"):
                why = r["error"]
            guards = r.get("guards") or []
            trans.append([
                f'<span id="t{ti}-{r.get("id")}">{_e(r.get("id"))}</span>', _ms(r.get("t")),
                _e(r.get("function")) + (" <small>(resume)</small>" if r.get("resume") else ""),
                _e(r.get("kind")), _e(r.get("backend") or ""),
                " ".join(_graph_link(ti, g, known) for g in r.get("graphs") or []),
                _ms(r.get("duration_s")), _e(why),
                f"<details><summary>{len(guards)} guard(s)</summary><pre>"
                f"{_e(chr(10).join(guards))}</pre></details>" if guards else "none",
                _e(r.get("tier") or "")])

    sections = {
        "summary": ("Summary", f'<div class="cards">{cards}</div><p class="files">'
                               + "<br>".join(_e(tr.path) for tr in traces) + "</p>"),
        "timeline": ("Timeline", _timeline_section(traces)),
        "source": ("Source", _source_section(traces, known)),
        "graphs": ("Graphs", _graphs_section(traces, translations)),
        "recompiles": ("Recompiles", _table(["process", "at", "function", "where", "failing guard", ""],
                                            recompiles, "No recompile.")),
        "breaks": ("Graph breaks and native runs",
                   _table(["process", "at", "function", "where", "kind", "what", "reason", "hint"],
                          breaks, "No graph break.")),
        "fallbacks": ("Fallbacks", _table(["process", "at", "op", "backend", "runs via", "why"],
                                          fallbacks, "No fallback.")),
        "tiers": ("Tiers and PGO", _table(["process", "at", "graph", "event", "what"], tiers,
                                          "No tier event (untiered, or no background compile "
                                          "finished).")),
        "translations": ("Translations", _table(
            ["id", "at", "function", "kind", "backend", "graphs", "time", "break / native reason",
             "guards", "tier after translation"], trans, "No translation.")),
    }
    nav = "".join(f'<a href="#{k}">{_e(sections[k][0])}</a>' for k in SECTIONS)
    body = "".join(f'<section id="{k}"><h2>{_e(sections[k][0])}</h2>{sections[k][1]}</section>'
                   for k in SECTIONS)
    generated = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{_e(title)}</title><style>{_CSS}</style>"
            f"<script>{_ERROR_HOOK}</script></head>"
            f"<body><header><h1>{_e(title)}</h1><p>generated {generated} from "
            f"{len(traces)} trace file(s)</p><nav>{nav}</nav></header><main>{body}</main>"
            f'<pre id="js-errors" hidden></pre><script>{_JS}</script></body></html>\n')


def write_report(directory: str, output: str) -> str:
    """Render the traces of ``directory`` into ``output``; returns ``output``."""
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"no such trace directory: {directory}")
    html_text = render(load_traces(directory))
    with open(output, "w", encoding="utf-8") as f:
        f.write(html_text)
    return output


def add_arguments(parser) -> None:
    parser.add_argument("directory", help="the FRAME_TRACE_DIR the traces were recorded in")
    parser.add_argument("-o", "--output", default="frame-report.html",
                        help="the HTML file to write (default: frame-report.html)")


def main(args) -> int:
    """``python -m frame trace-report DIR -o FILE``."""
    import sys
    if not os.path.isdir(args.directory):
        print(f"python -m frame trace-report: no such directory: {args.directory}", file=sys.stderr)
        return 2
    traces = load_traces(args.directory)
    if not traces:
        print(f"python -m frame trace-report: no trace file (frame-trace-*.jsonl) in "
              f"{args.directory}; record some with FRAME_TRACE_DIR={args.directory}",
              file=sys.stderr)
        return 1
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(render(traces))
    events = sum(len(t.records) for t in traces)
    print(f"wrote {args.output} ({len(traces)} process(es), {events} event(s))")
    return 0


# -- inline assets ---------------------------------------------------------------------------

_ERROR_HOOK = """
window.__frameErrors = [];
window.addEventListener('error', function (e) {
  window.__frameErrors.push(String(e.message || e));
});
"""

_JS = """
(function () {
  var box = document.getElementById('only-annotated');
  if (box) {
    box.addEventListener('change', function () {
      document.body.classList.toggle('only-annotated', box.checked);
    });
  }
  document.querySelectorAll('a.chip').forEach(function (a) {
    a.addEventListener('click', function () {
      var target = document.getElementById(a.getAttribute('href').slice(1));
      if (target) {
        var box = target.closest('.graph');
        if (box) { box.classList.add('flash'); setTimeout(function () { box.classList.remove('flash'); }, 1200); }
      }
    });
  });
  var sections = document.querySelectorAll('main > section').length;
  var errors = document.getElementById('js-errors');
  errors.textContent = window.__frameErrors.join('\\n');
  document.body.setAttribute('data-sections', String(sections));
  document.body.setAttribute('data-rendered', window.__frameErrors.length ? 'errors' : 'ok');
})();
"""

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1f2a44;color:#fff;padding:14px 24px 8px}
header h1{margin:0;font-size:22px}header p{margin:4px 0;color:#c8d0e0}
nav a{color:#9fc3ff;margin-right:14px;text-decoration:none}nav a:hover{text-decoration:underline}
main{padding:6px 24px 40px}
section{background:#fff;border:1px solid #dfe3ea;border-radius:6px;margin:16px 0;padding:6px 16px 14px}
h2{font-size:18px;border-bottom:1px solid #e8ebf0;padding-bottom:4px}
h3{font-size:15px;margin:14px 0 6px}h3 small{color:#5b6476;font-weight:normal}
.cards{display:flex;flex-wrap:wrap;gap:10px}
.card{border:1px solid #dfe3ea;border-radius:6px;padding:8px 14px;min-width:110px;background:#fafbfc}
.card .num{font-size:20px;font-weight:600}
.files{color:#5b6476;font-size:12px}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{border-bottom:1px solid #eceff3;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f2f4f7}
.empty{color:#5b6476;font-style:italic}
pre{background:#f7f8fa;border:1px solid #e5e8ee;padding:6px;overflow:auto;max-height:360px;font-size:12px;margin:4px 0}
code{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,monospace}
.cols{display:flex;gap:10px}.cols>details{flex:1;min-width:0}
.graph{border-top:1px solid #eceff3;padding-top:4px}.graph.flash{background:#fff6cc}
.warn{color:#b4400a}
.chip{display:inline-block;font:11px ui-monospace,monospace;background:#e7eefc;color:#1b4fb5;border-radius:8px;padding:0 6px;margin:1px 2px;text-decoration:none}
.chip.dim{background:#eee;color:#777}
table.src{font-size:12.5px;border:1px solid #e5e8ee}
table.src td{border:none;padding:0 6px}
table.src td.ln{color:#8a93a5;text-align:right;width:40px;user-select:none;border-right:3px solid transparent}
table.src td.code{white-space:pre;font-family:ui-monospace,"DejaVu Sans Mono",Menlo,monospace}
table.src td.chips{width:180px;text-align:right}
tr.r0 td.ln{border-right-color:#2e9d57}tr.r0 td.code{background:#e6f6ea}
tr.r1 td.ln{border-right-color:#2c7fb8}tr.r1 td.code{background:#e4f0fa}
tr.r2 td.ln{border-right-color:#8856a7}tr.r2 td.code{background:#f0e8f6}
tr.r3 td.ln{border-right-color:#d08c00}tr.r3 td.code{background:#fbf1da}
tr.brk td.code{background:#fde2e1 !important}tr.brk td.ln{border-right-color:#d7301f !important}
tr.nat td.code{background:#ffe9d2 !important}tr.rec td.code{box-shadow:inset 3px 0 #e6a100}
tr.note td{padding:2px 6px 4px 12px}
tr.note .msg{font-size:12px}
tr.note.break .msg{color:#b3261e}tr.note.native .msg{color:#a0510a}tr.note.recompile .msg{color:#7a5a00}
tr.note .hint{font-size:12px;color:#5b6476}
tr.gap td{color:#8a93a5;text-align:center;background:#fafbfc}
body.only-annotated table.src tr:not(.ann){display:none}
.legend{font-size:12px;color:#5b6476}.legend label{margin-left:14px}
.sw{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:middle;margin:0 4px 0 10px}
.sw.r0{background:#bfe6c9}.sw.brk{background:#f6b3ad}.sw.nat{background:#ffcf9e}.sw.rec{background:#f5d47a}
svg.timeline{background:#fbfcfd;border:1px solid #e5e8ee;border-radius:4px}
svg .lbl{font-size:11px;fill:#394256}svg .tick{font-size:10px;fill:#8a93a5}
svg .axis{stroke:#e3e7ee}
svg .bar.tr{fill:#2c7fb8}svg .bar.gr{fill:#2e9d57}
svg .mark.brk{fill:#d7301f}svg .mark.rec{fill:#e6a100}svg .mark.fb{fill:#8856a7}svg .mark.tier{fill:#1b4fb5}
.k{color:#0b5cad;font-weight:600}.kn,.kc,.ow{color:#0b5cad}.s,.s1,.s2,.sd,.sa,.si{color:#a0360e}
.c,.c1,.ch,.cm{color:#6a7385;font-style:italic}.mi,.mf,.m{color:#116644}.nf,.nc{color:#6f2da8}.nd{color:#8a5a00}
.nb,.bp{color:#2f6f9f}.o{color:#555}
"""
