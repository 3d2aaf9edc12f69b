"""The IR's text form: ``dump_text`` and its exact inverse ``parse_text``.

The text is deterministic (it is the compilation cache key) and human
readable (it is what verify errors, ``FRAME_DUMP_IR_AFTER`` and golden tests
show)::

    graph @gpu                                      # only when device != "cpu"
    %0 = input : float32[32,784]
    %1 = input : float32[784,256]
    %2 = matmul(%0, %1) : float32[32,256]
    %3 = sum(%2) {axes=(0,1), keepdims=False} : float32[]
    %4, %5 = split(%3) {axis=0, sizes=(1,1)} : float32[1], float32[1]
    %6 = constant() {dtype=float32, shape=(2,), value=[1.0, 2.5]} : float32[2]
    %7 = constant() {digest=sha256:<64 hex>, dtype=float32, shape=(64,64)} : float32[64,64]
    %8 = relu(%2) : float32[32,256] @npu           # a node device is printed when set
    %9 = fused(%2, %6) : float32[32,256] {
      %0 = input : float32[32,256]
      %1 = input : float32[2]
      %2 = exp(%0) : float32[32,256]
      graph_output(%2)
    }
    graph_output(%2, %4)

Rules:

* Values are numbered ``%0, %1, ...`` in definition order: graph inputs first,
  then node outputs in node order.  A fused node's body is its own scope,
  numbered from ``%0`` again, printed indented by two spaces per level between
  the node line (which ends with `` {``) and a closing ``}`` line at the node
  line's indentation.  Body lines never refer to outer values.
* A graph's device is printed as a first ``graph @<device>`` line only when it
  is not ``"cpu"`` (the default of ``Graph()``); the same rule holds for bodies.
* Attrs are sorted by name: ints as ``3``, floats by ``repr`` (``1.0``,
  ``1e-05``, ``nan``, ``-inf``, ``-0.0``), strs JSON-quoted (ASCII only), bools
  ``True``/``False``, dtypes by name (``float32``), tuples without spaces
  (``(1,2)``, ``(1,)``, ``()``).
* A node carrying a payload (``Node.const``) shows it as one more sorted
  pseudo-attr: ``value=[...]`` (the elements flattened in C order; the node's
  first output type gives dtype and shape) when it has at most 16 elements,
  else ``digest=sha256:<hex>`` (sha256 over numpy dtype, shape and bytes).
  Parsing a digest needs the payload: ``parse_text(text, graph_constants(g))``.
  Payload syntax (a list, a bare ``sha256:`` word) never looks like an attr
  value, so an op's own attr called ``value`` stays unambiguous.
* Literal elements round-trip exactly: floats by ``repr`` of the Python float;
  a NaN whose bits are not the dtype's canonical quiet NaN is written
  ``nan:0x<bits>`` (so ``0*inf``'s negative NaN survives); complex as
  ``(re+imj)`` with the imaginary part's sign always written; bools
  ``True``/``False``; ints in decimal.
* Node devices are printed as a `` @<device>`` suffix when not None; devices
  that are not plain words are JSON-quoted.
* A node's NumPy error state (``Node.errstate``) is printed as a
  `` !errstate(divide=ignore,invalid=ignore)`` suffix (after the device)
  when not None.
* A zero-output node prints as ``op(args) {attrs}`` with no ``=`` and no types.

``parse_text`` also accepts blank lines, ``#`` comment lines, any whitespace
between tokens and any unique ``%name`` (golden tests may be hand-written);
``dump_text`` always renumbers.  Invalid graphs still dump (so verify can show
them): an undefined value prints as ``%?<k>``, an invalid attr or type as
``<invalid ...>``; such text does not parse.
"""
from __future__ import annotations

import functools
import hashlib
import json
import math
import re
import struct
from typing import Any, Mapping

import numpy as np

from ..dtypes import DType, all_dtypes
from ..errors import ErrorCode, FrameError
from .graph import Graph, Node, Value
from .types import DYNAMIC, TensorType

__all__ = ["dump_text", "parse_text", "graph_constants", "constant_digest", "IRParseError",
           "LITERAL_MAX_ELEMENTS"]

LITERAL_MAX_ELEMENTS = 16  # payloads up to this many elements print as literals

_DTYPES_BY_NAME: dict[str, DType] = {d.name: d for d in all_dtypes}
_UINT_BY_SIZE = {2: np.uint16, 4: np.uint32, 8: np.uint64}
_WORD_RE = re.compile(r"[A-Za-z0-9_.:+\-?]+")


class IRParseError(FrameError, ValueError):
    """``parse_text`` could not read its input; the message names the line."""

    def __init__(self, message: str):
        super().__init__(ErrorCode.INVALID_ARGUMENT, message)


# =========================================================================== dump

@functools.lru_cache(maxsize=4096)
def _tensor_type_str(t: TensorType) -> str:
    return str(t)


def _type_str(t: Any) -> str:
    if type(t) is TensorType:
        return _tensor_type_str(t)
    return f"<invalid type {t!r}>".replace("\n", " ")


def _nan_bits(dtype: np.dtype) -> int:
    """The bits of the NaN that a Python ``float('nan')`` becomes in ``dtype``."""
    return int(np.array(math.nan, dtype=dtype).view(_UINT_BY_SIZE[dtype.itemsize]))


_CANONICAL_NAN = {np.dtype(t): _nan_bits(np.dtype(t)) for t in (np.float16, np.float32, np.float64)}
_PY_NAN_BITS = struct.unpack("<Q", struct.pack("<d", math.nan))[0]


def _fmt_float(x: float) -> str:
    """A Python float attr: repr, with non-canonical NaNs spelled by their bits."""
    if x != x:
        bits = struct.unpack("<Q", struct.pack("<d", x))[0]
        if bits != _PY_NAN_BITS:
            return f"nan:0x{bits:016x}"
    return repr(x)


def _fmt_attr(v: Any) -> str:
    t = type(v)
    if t is bool:
        return "True" if v else "False"
    if t is int:
        return str(v)
    if t is float:
        return _fmt_float(v)
    if t is str:
        return json.dumps(v)
    if isinstance(v, DType):
        return v.name
    if t is tuple:
        if all(type(e) is int for e in v):
            body = ",".join([str(e) for e in v])
        elif all(type(e) is float for e in v):
            body = ",".join([_fmt_float(e) for e in v])
        else:
            return f"<invalid tuple: {v!r}>".replace("\n", " ")
        return f"({body},)" if len(v) == 1 else f"({body})"
    return f"<invalid {t.__name__}: {v!r}>".replace("\n", " ")


def _fmt_device(device: Any) -> str:
    if type(device) is str and _WORD_RE.fullmatch(device):
        return device
    return json.dumps(str(device))


def _float_elements(flat: np.ndarray) -> list[str]:
    """Exact text of a flat float array: repr, and NaN bits when not canonical."""
    values = flat.tolist()
    out = [repr(x) for x in values]
    if any(x != x for x in values):
        bits = flat.view(_UINT_BY_SIZE[flat.dtype.itemsize]).tolist()
        canonical = _CANONICAL_NAN[flat.dtype]
        width = 2 * flat.dtype.itemsize
        for i, x in enumerate(values):
            if x != x and bits[i] != canonical:
                out[i] = f"nan:0x{bits[i]:0{width}x}"
    return out


def _complex_elements(flat: np.ndarray) -> list[str]:
    """``(re+imj)`` per element; the parts are formatted as floats of the part dtype."""
    parts = _float_elements(np.ascontiguousarray(flat).view(flat.real.dtype))
    out = []
    for re_s, im_s in zip(parts[0::2], parts[1::2]):
        if im_s.startswith("-"):
            out.append(f"({re_s}{im_s}j)")
        else:
            out.append(f"({re_s}+{im_s}j)")
    return out


def _literal(arr: np.ndarray) -> str:
    flat = np.ascontiguousarray(arr).reshape(-1)
    kind = flat.dtype.kind
    if kind == "f" and flat.dtype in _CANONICAL_NAN:
        items = _float_elements(flat)
    elif kind == "c" and flat.real.dtype in _CANONICAL_NAN:
        items = _complex_elements(flat)
    elif kind == "b":
        items = ["True" if x else "False" for x in flat.tolist()]
    elif kind in "iu":
        items = [str(x) for x in flat.tolist()]
    else:
        return f"<invalid payload {arr.dtype}>"
    return "[" + ", ".join(items) + "]"


def constant_digest(arr: np.ndarray) -> str:
    """``sha256:<hex>`` over the payload's NumPy dtype, shape and bytes."""
    # ascontiguousarray makes 0-d arrays 1-d: take the shape from the original
    h = hashlib.sha256(f"{arr.dtype.str}|{','.join(map(str, arr.shape))}|".encode())
    if arr.size:
        h.update(np.ascontiguousarray(arr).reshape(-1).view(np.uint8))
    return "sha256:" + h.hexdigest()


def _payload_attr(const: Any) -> tuple[str, str]:
    if not isinstance(const, np.ndarray):
        return ("value", f"<invalid payload {type(const).__name__}>")
    if const.size <= LITERAL_MAX_ELEMENTS:
        return ("value", _literal(const))
    return ("digest", constant_digest(const))


def _fmt_attrs(node: Node) -> str:
    attrs = node.attrs
    const = node.const
    if not attrs and const is None:
        return ""
    items = [(k if type(k) is str else f"<invalid name {k!r}>", _fmt_attr(v))
             for k, v in attrs.items()]
    if const is not None:
        items.append(_payload_attr(const))
    items.sort()
    return " {" + ", ".join([f"{k}={v}" for k, v in items]) + "}"


def _dump_block(graph: Graph, lines: list[str], indent: int, sites: dict[Any, int] | None) -> None:
    """Append ``graph``'s lines; ``sites`` (when given) records where things were
    printed, for verify's error context."""
    pad = "  " * indent
    if graph.device != "cpu":
        lines.append(f"{pad}graph @{_fmt_device(graph.device)}")
    # Number every definition first, so a use before its definition (an invalid
    # graph that verify is showing) still prints the number it is defined with.
    names: dict[int, str] = {}
    n = 0
    for v in graph.inputs:
        if id(v) not in names:
            names[id(v)] = f"%{n}"
            n += 1
    for node in graph.nodes:
        for v in node.outputs:
            if id(v) not in names:
                names[id(v)] = f"%{n}"
                n += 1

    undefined: list[int] = []

    def use(v: Any) -> str:
        name = names.get(id(v))
        if name is None:  # not defined in this graph: only invalid graphs get here
            name = names[id(v)] = f"%?{len(undefined)}"
            undefined.append(id(v))
        return name

    for i, v in enumerate(graph.inputs):
        if sites is not None:
            sites[("input", id(graph), i)] = len(lines)
        lines.append(f"{pad}{names[id(v)]} = input : {_type_str(getattr(v, 'type', None))}")
    for node in graph.nodes:
        if sites is not None:
            sites[id(node)] = len(lines)
        args = ", ".join([names.get(id(v)) or use(v) for v in node.inputs])
        call = f"{node.op}({args}){_fmt_attrs(node)}"
        if node.outputs:
            outs = ", ".join([names[id(v)] for v in node.outputs])
            types = ", ".join([_type_str(getattr(v, "type", None)) for v in node.outputs])
            line = f"{pad}{outs} = {call} : {types}"
        else:
            line = pad + call
        if node.device is not None:
            line += f" @{_fmt_device(node.device)}"
        if node.errstate is not None:
            line += f" !errstate({_fmt_errstate(node.errstate)})"
        if node.body is None:
            lines.append(line)
        else:
            lines.append(line + " {")
            _dump_block(node.body, lines, indent + 1, sites)
            lines.append(pad + "}")
    if sites is not None:
        sites[("outputs", id(graph))] = len(lines)
    lines.append(f"{pad}graph_output({', '.join([use(v) for v in graph.outputs])})")


def dump_text(graph: Graph) -> str:
    """The deterministic text of ``graph`` (see the module docstring).

        >>> from frame.ir import GraphBuilder
        >>> b = GraphBuilder(); x = b.input("float32", (2,))
        >>> print(dump_text(b.build(b.op("relu", x))))
        %0 = input : float32[2]
        %1 = relu(%0) : float32[2]
        graph_output(%1)
    """
    lines: list[str] = []
    _dump_block(graph, lines, 0, None)
    return "\n".join(lines)


def dump_lines_with_sites(graph: Graph) -> tuple[list[str], dict[Any, int]]:
    """``dump_text``'s lines plus a map to line indexes: ``id(node)`` for nodes
    (nested bodies included), ``("input", id(g), i)`` and ``("outputs", id(g))``."""
    lines: list[str] = []
    sites: dict[Any, int] = {}
    _dump_block(graph, lines, 0, sites)
    return lines, sites


def graph_constants(graph: Graph) -> dict[str, np.ndarray]:
    """digest -> payload for every payload printed as a digest (bodies included)."""
    out: dict[str, np.ndarray] = {}
    for node in graph.nodes:
        const = node.const
        if isinstance(const, np.ndarray) and const.size > LITERAL_MAX_ELEMENTS:
            out[constant_digest(const)] = const
        if node.body is not None:
            out.update(graph_constants(node.body))
    return out


# =========================================================================== parse

_TOKEN_RE = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|(%[A-Za-z0-9_.?]+)|([A-Za-z0-9_.:+\-?]+)|(\S))')
_STR, _REF, _WORD, _PUNCT = 0, 1, 2, 3
_INT_RE = re.compile(r"-?\d+")
_UFLOAT = r"(?:nan(?::0x[0-9a-f]+)?|inf|\d+(?:\.\d*)?(?:e[+-]?\d+)?)"
_COMPLEX_RE = re.compile(rf"(-?{_UFLOAT})([+-]{_UFLOAT})j")


_TOKENS_RE = re.compile(_TOKEN_RE.pattern[len(r"\s*(?:"):-1])  # the same alternatives, unanchored


def _tokenize(line: str) -> list[tuple[int, str]]:
    # one findall per line (whitespace between tokens is what it skips: the
    # last alternative takes any other character)
    return [(_STR, s) if s else (_REF, r) if r else (_WORD, w) if w else (_PUNCT, p)
            for s, r, w, p in _TOKENS_RE.findall(line)]


class _Line:
    """A cursor over one line's tokens, with errors that name the line."""

    def __init__(self, number: int, text: str):
        self.number = number
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0

    def error(self, message: str) -> IRParseError:
        return IRParseError(f"line {self.number}: {message}\n    {self.text.strip()}")

    def peek(self) -> tuple[int, str] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def at(self, text: str) -> bool:
        tok = self.peek()
        return tok is not None and tok[1] == text and tok[0] in (_PUNCT, _WORD)

    def at_end(self) -> bool:
        return self.i >= len(self.tokens)

    def take(self, kind: int | None = None, what: str = "a token") -> str:
        tok = self.peek()
        if tok is None or (kind is not None and tok[0] != kind):
            found = "end of line" if tok is None else repr(tok[1])
            raise self.error(f"expected {what}, found {found}")
        self.i += 1
        return tok[1]

    def expect(self, text: str) -> None:
        if not self.at(text):
            tok = self.peek()
            raise self.error(f"expected {text!r}, found {'end of line' if tok is None else repr(tok[1])}")
        self.i += 1

    def refs_until(self, close: str) -> list[str]:
        """``%a, %b`` up to and including ``close``."""
        out: list[str] = []
        if self.at(close):
            self.i += 1
            return out
        while True:
            out.append(self.take(_REF, "a value like %0"))
            if self.at(close):
                self.i += 1
                return out
            self.expect(",")


def _parse_float(line: _Line, token: str) -> float:
    neg = token.startswith("-")
    body = token[1:] if neg else token
    if body.startswith("nan:0x"):
        try:
            bits = int(body[6:], 16)
            value = struct.unpack("<d", struct.pack("<Q", bits))[0]
        except (ValueError, struct.error):
            raise line.error(f"bad NaN literal {token!r}") from None
        return -value if neg else value
    try:
        return float(token)
    except ValueError:
        raise line.error(f"expected a number, found {token!r}") from None


def _parse_attr_value(line: _Line) -> Any:
    tok = line.peek()
    if tok is None:
        raise line.error("expected an attribute value, found end of line")
    kind, text = tok
    if kind == _STR:
        line.i += 1
        return json.loads(text)
    if kind == _PUNCT and text == "(":
        line.i += 1
        items: list[str] = []
        while not line.at(")"):
            items.append(line.take(_WORD, "a number"))
            if not line.at(")"):
                line.expect(",")
        line.i += 1
        if all(_INT_RE.fullmatch(t) for t in items):
            return tuple(int(t) for t in items)
        if any(_INT_RE.fullmatch(t) for t in items):
            raise line.error("a tuple attribute mixes ints and floats")
        return tuple(_parse_float(line, t) for t in items)
    if kind != _WORD:
        raise line.error(f"expected an attribute value, found {text!r}")
    line.i += 1
    if text == "True" or text == "False":
        return text == "True"
    if text in _DTYPES_BY_NAME:
        return _DTYPES_BY_NAME[text]
    if _INT_RE.fullmatch(text):
        return int(text)
    return _parse_float(line, text)


def _parse_type(line: _Line) -> TensorType:
    name = line.take(_WORD, "a type like float32[2,3]")
    dtype = _DTYPES_BY_NAME.get(name)
    if dtype is None:
        raise line.error(f"unknown dtype {name!r}")
    line.expect("[")
    dims: list[int] = []
    while not line.at("]"):
        d = line.take(_WORD, "a dimension")
        if d == "?":
            dims.append(DYNAMIC)
        elif _INT_RE.fullmatch(d):
            dims.append(int(d))
        else:
            raise line.error(f"bad dimension {d!r}")
        if not line.at("]"):
            line.expect(",")
    line.i += 1
    return TensorType(dtype, tuple(dims))


def _fmt_errstate(errstate: Any) -> str:
    try:
        return ",".join([f"{category}={mode}" for category, mode in errstate])
    except (TypeError, ValueError):
        return f"<invalid errstate: {errstate!r}>".replace("\n", " ")


def _parse_errstate(line: _Line) -> tuple[tuple[str, str], ...]:
    line.expect("errstate")
    line.expect("(")
    pairs = []
    while not line.at(")"):
        if pairs:
            line.expect(",")
        category = line.take(_WORD, "an error category")
        line.expect("=")
        pairs.append((category, line.take(_WORD, "an error mode")))
    line.i += 1
    if pairs != sorted(set(pairs)) or len({c for c, _ in pairs}) != len(pairs):
        raise line.error("errstate pairs must be sorted by category, each named once")
    return tuple(pairs)


def _parse_device(line: _Line) -> str:
    tok = line.peek()
    if tok is not None and tok[0] == _STR:
        line.i += 1
        return json.loads(tok[1])
    return line.take(_WORD, "a device name")


def _parse_literal(line: _Line) -> list[str]:
    """``[e, e, ...]`` -> element words (complex elements keep their parentheses off)."""
    line.expect("[")
    items: list[str] = []
    while not line.at("]"):
        if line.at("("):
            line.i += 1
            items.append("(" + line.take(_WORD, "a complex number") + ")")
            line.expect(")")
        else:
            items.append(line.take(_WORD, "a number"))
        if not line.at("]"):
            line.expect(",")
    line.i += 1
    return items


def _float_array(line: _Line, words: list[str], dtype: np.dtype) -> np.ndarray:
    """Floats from their text, restoring NaN bit patterns written as ``nan:0x``."""
    values, patches = [], []
    for i, w in enumerate(words):
        if "nan:0x" in w:
            try:
                patches.append((i, int(w.split("0x", 1)[1], 16)))
            except ValueError:
                raise line.error(f"bad NaN literal {w!r}") from None
            values.append(math.nan)
        else:
            values.append(_parse_float(line, w))
    arr = np.array(values, dtype=dtype)
    if patches:
        bits = arr.view(_UINT_BY_SIZE[dtype.itemsize])
        for i, b in patches:
            bits[i] = b
    return arr


def _literal_array(line: _Line, words: list[str], ttype: TensorType) -> np.ndarray:
    dt = ttype.dtype.np
    if len(words) != ttype.size:
        raise line.error(f"payload has {len(words)} elements but type {ttype} has {ttype.size}")
    if dt.kind == "b":
        if any(w not in ("True", "False") for w in words):
            raise line.error("a bool payload holds only True and False")
        arr = np.array([w == "True" for w in words], dtype=dt)
    elif dt.kind in "iu":
        if not all(_INT_RE.fullmatch(w) for w in words):
            raise line.error(f"an integer payload holds only integers: {words}")
        try:
            arr = np.array([int(w) for w in words], dtype=dt)
        except OverflowError:
            raise line.error(f"payload value out of range for {ttype.dtype.name}") from None
    elif dt.kind == "f":
        arr = _float_array(line, words, dt)
    elif dt.kind == "c":
        parts: list[str] = []
        for w in words:
            m = _COMPLEX_RE.fullmatch(w[1:-1]) if w.startswith("(") and w.endswith(")") else None
            if m is None:
                raise line.error(f"expected a complex number like (1.0+2.0j), found {w!r}")
            parts.append(m.group(1))
            parts.append(m.group(2).lstrip("+"))
        arr = _float_array(line, parts, np.dtype(dt.char.lower())).view(dt)
    else:
        raise line.error(f"cannot read a {ttype.dtype.name} payload")
    return arr.reshape(ttype.shape)


class _Parser:
    def __init__(self, text: str, constants: Mapping[str, np.ndarray] | None):
        self.lines = text.split("\n")
        self.next = 0
        self.constants = constants

    def line(self) -> _Line | None:
        """The next non-blank, non-comment line, or None at the end."""
        while self.next < len(self.lines):
            text = self.lines[self.next]
            self.next += 1
            stripped = text.strip()
            if stripped and not stripped.startswith("#"):
                return _Line(self.next, text)
        return None

    def end_error(self, message: str) -> IRParseError:
        return IRParseError(f"line {len(self.lines)}: {message}")

    def block(self, nested: bool) -> Graph:
        graph = Graph()
        names: dict[str, Value] = {}
        first = True
        while True:
            line = self.line()
            if line is None:
                raise self.end_error("unexpected end of text: missing graph_output(...)")
            if first and line.at("graph") and len(line.tokens) > 1 and line.tokens[1][1] == "@":
                line.i += 1
                line.expect("@")
                graph.device = _parse_device(line)
                self.finish(line)
                first = False
                continue
            first = False
            if line.at("graph_output"):
                line.i += 1
                line.expect("(")
                graph.set_outputs(self.resolve(line, names, r) for r in line.refs_until(")"))
                self.finish(line)
                break
            if line.at("}"):
                raise line.error("unexpected '}'")
            self.definition(line, graph, names)
        if nested:
            line = self.line()
            if line is None:
                raise self.end_error("unexpected end of text: missing '}' closing a fused body")
            line.expect("}")
            self.finish(line)
        return graph

    @staticmethod
    def finish(line: _Line) -> None:
        if not line.at_end():
            raise line.error(f"unexpected {line.peek()[1]!r}")

    @staticmethod
    def resolve(line: _Line, names: dict[str, Value], ref: str) -> Value:
        v = names.get(ref)
        if v is None:
            raise line.error(f"{ref} is used before it is defined")
        return v

    def definition(self, line: _Line, graph: Graph, names: dict[str, Value]) -> None:
        outs: list[str] = []
        tok = line.peek()
        if tok is not None and tok[0] == _REF:
            while True:
                outs.append(line.take(_REF, "a value like %0"))
                if line.at("="):
                    line.i += 1
                    break
                line.expect(",")
        for ref in outs:
            if ref in names or outs.count(ref) > 1:
                raise line.error(f"{ref} is defined more than once")
        op = line.take(_WORD, "an op name")
        if op == "input" and not line.at("("):
            if graph.nodes:
                raise line.error("graph inputs must come before every node")
            if len(outs) != 1:
                raise line.error("an input line defines exactly one value")
            line.expect(":")
            names[outs[0]] = graph.add_input(_parse_type(line))
            self.finish(line)
            return
        line.expect("(")
        inputs = [self.resolve(line, names, r) for r in line.refs_until(")")]
        attrs: dict[str, Any] = {}
        payload: tuple[str, Any] | None = None
        if line.at("{") and line.i + 1 < len(line.tokens):  # '{' ending the line opens a body
            line.i += 1
            while True:
                key = line.take(_WORD, "an attribute name")
                line.expect("=")
                if key in attrs or (payload is not None and key == payload[0]):
                    raise line.error(f"attribute {key!r} given twice")
                nxt = line.peek()
                if key == "value" and line.at("["):
                    payload = ("value", _parse_literal(line))
                elif key == "digest" and nxt is not None and nxt[0] == _WORD and nxt[1].startswith("sha256:"):
                    payload = ("digest", line.take(_WORD))
                else:
                    attrs[key] = _parse_attr_value(line)
                if line.at("}"):
                    line.i += 1
                    break
                line.expect(",")
        types: list[TensorType] = []
        if line.at(":"):
            line.i += 1
            types.append(_parse_type(line))
            while line.at(","):
                line.i += 1
                types.append(_parse_type(line))
        if len(types) != len(outs):
            raise line.error(f"{len(outs)} result(s) but {len(types)} type(s)")
        device = None
        if line.at("@"):
            line.i += 1
            device = _parse_device(line)
        errstate = None
        if line.at("!"):
            line.i += 1
            errstate = _parse_errstate(line)
        body = None
        if line.at("{"):
            line.i += 1
            self.finish(line)
            body = self.block(nested=True)
        else:
            self.finish(line)
        const = self.payload(line, payload, types) if payload is not None else None
        node = Node(op, inputs, attrs, const=const, body=body, device=device, errstate=errstate)
        for ref, v in zip(outs, node.set_output_types(types)):
            names[ref] = v
        graph.append(node)

    def payload(self, line: _Line, payload: tuple[str, Any], types: list[TensorType]) -> np.ndarray:
        if not types:
            raise line.error("a node with a payload needs an output type")
        kind, data = payload
        if kind == "value":
            return _literal_array(line, data, types[0])
        if self.constants is None or data not in self.constants:
            raise line.error(f"constant payload {data} is not provided; pass "
                             f"parse_text(text, constants=graph_constants(graph))")
        arr = np.asarray(self.constants[data])
        if constant_digest(arr) != data:
            raise line.error(f"the array given for {data} does not have that digest")
        return arr


def parse_text(text: str, constants: Mapping[str, np.ndarray] | None = None) -> Graph:
    """Read back what ``dump_text`` writes; ``constants`` maps digests to payloads.

        >>> g = parse_text("%0 = input : float32[2]\\n%1 = relu(%0) : float32[2]\\ngraph_output(%1)")
        >>> [n.op for n in g.nodes]
        ['relu']

    Raises IRParseError (a ValueError) naming the line on malformed text or a
    missing digest payload.
    """
    parser = _Parser(text, constants)
    graph = parser.block(nested=False)
    line = parser.line()
    if line is not None:
        raise line.error("text after graph_output(...)")
    return graph


def _graph_str(graph: Graph) -> str:
    """``str(graph)``: its ``dump_text``."""
    return dump_text(graph)


# Graph's text form is defined here (text.py imports graph.py, not the other way round);
# frame.ir imports this module, so every Graph prints as its text.
Graph.__str__ = _graph_str
