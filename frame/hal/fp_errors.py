"""Is NumPy asked, right now, to do more with a floating-point error than warn?

A backend that computes without NumPy's floating-point error state (OpenVINO:
its kernels set no status flags frame could read) returns ``inf``/``nan``
where NumPy, under ``np.seterr(all="raise")`` or ``np.errstate(divide=
"raise")``, raises ``FloatingPointError``, and where a ``warnings`` filter
turns NumPy's ``RuntimeWarning`` into an error.  Such an executable asks
``raise_requested()`` before a run and, when it is true, runs its graph on the
reference kernels instead: NumPy's own ufuncs, which raise exactly there (the
caller then decides: capture runs the call natively, giving the plain
function's exception).

Cheap on the common path (~0.15 us): NumPy's error state is a context
variable holding one object per state, and the answer for the last object seen
is kept; the ``warnings`` filters are read again only when the list was
replaced (as ``warnings.catch_warnings`` does), changed length or got a new
first filter (``simplefilter``/``filterwarnings`` insert at the front).

What is "more than warn": an ``np.errstate`` mode other than ``"ignore"`` and
``"warn"`` (``"raise"``, ``"call"``, ``"print"``, ``"log"``) for any of
``divide``, ``over``, ``under``, ``invalid``; or a mode ``"warn"`` while a
``warnings`` filter with action ``"error"`` for ``RuntimeWarning`` (or a base
class of it) comes before any unconditional filter for it.  A filter limited
to a message or module counts as one that may apply (conservative: the
reference run then is merely slower).

A graph whose nodes run under error states of their own (``Node.errstate``:
a ``with np.errstate(...)`` block of the traced code) asks
``GraphErrorStates(graph.errstates()).raise_requested()``: the same question
for each node's effective state (its own modes over the caller's), so a block
that ignores errors does not count when the caller raises on them, and a
block that raises counts whatever the caller's state.

``WarningCheck(specs).raises()`` asks the filters the same question for the
warnings a traced function gives itself (``warnings.warn``: capture's
entries run the plain function when one would raise).

``serial_requested()`` asks the same and also whether a ``RuntimeWarning``
would be shown every time (an ``"always"`` filter): the cpu executable then
runs its parallel elementwise regions unchunked, one ufunc call per op, so
that each op warns once, as in NumPy.
"""
from __future__ import annotations

import warnings

import numpy as np

__all__ = ["raise_requested", "serial_requested", "GraphErrorStates", "StateSwitch", "reset_state",
           "WarningCheck", "warning_action", "strict_state"]

try:  # NumPy 2: the error state is a context variable (np.errstate sets it)
    from numpy._core._ufunc_config import _extobj_contextvar as _STATE
except ImportError:  # pragma: no cover -- another NumPy layout: ask np.geterr() every time
    _STATE = None

_CATEGORIES = ("divide", "over", "under", "invalid")
_NO_STATE = object()
# the last state object seen and its answer: (state, modes ask more than warn, some
# mode warns); one tuple, replaced whole, so threads never pair a state with
# another state's answer
_last_modes: tuple = (_NO_STATE, False, True)
# the warnings filters last read: (the list, its length, its first filter,
# (an "error" filter may apply, an "always" filter may apply))
_last_filters: tuple = (None, -1, None, (False, False))


def _modes(state) -> tuple:
    global _last_modes
    err = np.geterr()
    modes = [err[c] for c in _CATEGORIES]
    answer = (state, any(m not in ("ignore", "warn") for m in modes), "warn" in modes)
    if _STATE is not None:  # without the variable there is nothing to tell states apart
        _last_modes = answer
    return answer


def _read_filters(filters: list) -> tuple[bool, bool]:
    global _last_filters
    error = always = False
    for action, message, category, module, lineno in filters:
        if not issubclass(RuntimeWarning, category):
            continue
        if action == "error":
            error = True
            break
        if action in ("always", "all"):
            always = True
        if message is None and module is None and not lineno:
            break  # an unconditional filter for RuntimeWarning decides first
    answer = (error, always)
    _last_filters = (filters, len(filters), filters[0] if filters else None, answer)
    return answer


def _filters() -> tuple[bool, bool]:
    filters = warnings.filters
    seen, length, first, answer = _last_filters
    if filters is seen and len(filters) == length and (filters[0] if filters else None) is first:
        return answer
    return _read_filters(filters)


# the actions ``warnings.warn_explicit`` takes without raising (any other raises: "error" the
# warning itself, an unknown action RuntimeError)
_QUIET_ACTIONS = frozenset({"ignore", "always", "default", "module", "once"})


def _matches(pattern, text) -> bool:
    """A filter's message or module pattern against ``text``, as CPython's
    ``check_matched``: None matches, a plain ``str`` (the filters the
    interpreter installs) must be equal, anything else is asked ``match``."""
    if pattern is None:
        return True
    if type(pattern) is str:
        return pattern == text
    return bool(pattern.match(text))


def warning_action(category: type, text: str, module, lineno: int) -> str:
    """The action of the first filter in ``warnings.filters`` matching a
    warning (``warnings.defaultaction`` when none does), as ``warn_explicit``
    looks it up."""
    for action, message, cat, mod, ln in warnings.filters:
        if _matches(message, text) and issubclass(category, cat) and _matches(mod, module) \
                and (ln == 0 or lineno == ln):
            return action
    return warnings.defaultaction


class WarningCheck:
    """Would ``warnings.warn`` raise for one of ``specs`` -- (category,
    message text, line number, the warning frame's globals) -- under the
    filters in force now (an ``"error"`` action, or one it does not know)?
    Capture's entries that issue warnings the traced code gives ask it
    before anything else, and run the plain function when it is true.  The
    answer is kept as ``_filters`` keeps its own: read again only when the
    filter list was replaced, changed length or got a new first filter, or
    ``warnings.defaultaction`` changed (~0.15 us otherwise).  A filter that
    would raise counts even when the module registry would show nothing
    (the warning already shown once): the plain function then runs, which is
    exact, only slower."""

    __slots__ = ("specs", "_last")

    def __init__(self, specs: tuple):
        self.specs = tuple(specs)
        self._last: tuple = (None, -1, None, None, False)

    def raises(self) -> bool:
        filters = warnings.filters
        seen, length, first, default, answer = self._last
        head = filters[0] if filters else None
        if filters is seen and len(filters) == length and head is first \
                and warnings.defaultaction is default:
            return answer
        answer = any(warning_action(category, text, f_globals.get("__name__", "<string>"), lineno)
                     not in _QUIET_ACTIONS for category, text, lineno, f_globals in self.specs)
        self._last = (filters, len(filters), head, warnings.defaultaction, answer)
        return answer

    def __repr__(self) -> str:
        return f"WarningCheck({[(c.__name__, t, n) for c, t, n, _ in self.specs]!r})"


def _current_modes() -> tuple:
    """(state, some mode does more than warn, some mode warns) for the error
    state in force."""
    state = _STATE.get() if _STATE is not None else _NO_STATE
    last = _last_modes
    return last if last[0] is state else _modes(state)


def raise_requested() -> bool:
    """Would NumPy raise (or call, print, log) on a floating-point error now,
    rather than warn or ignore it?"""
    _, strict, warns = _current_modes()
    if strict:
        return True
    return warns and _filters()[0]


def serial_requested() -> bool:
    """Must elementwise work run as one ufunc call per op, as NumPy runs it,
    rather than in row blocks on several threads?  True when NumPy would do
    more than warn (``raise_requested``) or when its ``RuntimeWarning`` would be
    shown every time it is issued (a filter with action ``"always"``, as
    ``pytest.warns`` and ``np.testing.assert_warns`` install): each block's
    ufunc warns on its own, so a region cut in 8 blocks would show NumPy's one
    warning up to 8 times.  Under the default filters a warning is shown once
    per code location, and every block warns from the same line."""
    _, strict, warns = _current_modes()
    return _serial(strict, warns)


def _serial(strict: bool, warns: bool) -> bool:
    """``serial_requested``'s answer for modes that raise (``strict``) or warn."""
    if strict:
        return True
    if not warns:
        return False
    error, always = _filters()
    return error or always


class GraphErrorStates:
    """``raise_requested`` for a graph whose nodes run under the error states
    ``states`` (``Graph.errstates()``: tuples of ``(category, mode)`` pairs
    set over the caller's state, None for the caller's state itself), and
    ``serial_requested`` for a region of such nodes.  The answer is kept per
    NumPy error-state object, as above."""

    __slots__ = ("states", "_own", "_last")

    def __init__(self, states: tuple):
        self.states = tuple(states)
        # only the caller's state: the module's cached answer is this one
        self._own = self.states not in ((), (None,))
        self._last: tuple = (_NO_STATE, False, True)

    def _modes(self, state) -> tuple:
        err = np.geterr()
        strict = warns = False
        for own in self.states:
            modes = dict(err)
            if own is not None:
                modes.update(own)
            strict |= any(modes[c] not in ("ignore", "warn") for c in _CATEGORIES)
            warns |= any(modes[c] == "warn" for c in _CATEGORIES)
        answer = (state, strict, warns)
        if _STATE is not None:
            self._last = answer
        return answer

    def _current(self) -> tuple:
        state = _STATE.get() if _STATE is not None else _NO_STATE
        last = self._last
        return last if last[0] is state else self._modes(state)

    def raise_requested(self) -> bool:
        """Would NumPy do more than warn on a floating-point error of some
        node, under that node's state in force now?"""
        if not self._own:
            return bool(self.states) and raise_requested()
        _, strict, warns = self._current()
        if strict:
            return True
        return warns and _filters()[0]

    def serial_requested(self) -> bool:
        """``serial_requested`` for these ops: would NumPy do more than warn,
        or warn with every warning shown, under some op's state now?"""
        if not self._own:
            return bool(self.states) and serial_requested()
        _, strict, warns = self._current()
        return _serial(strict, warns)

    def __repr__(self) -> str:
        return f"GraphErrorStates({self.states!r})"


class StateSwitch:
    """Set NumPy's error state to ``modes`` over the one in force, cheaply:
    ``token = switch()`` ... ``reset_state(token)`` does what ``with
    np.errstate(**modes):`` does (~0.3 us against ~1 us, measured; the cpu
    executable's code around a ``with np.errstate`` block's ops).  The state
    made over each state object seen is kept (a few, held, so their ids stay
    theirs)."""

    __slots__ = ("modes", "_made")

    _KEEP = 16

    def __init__(self, modes: tuple):
        self.modes = dict(modes)
        self._made: dict = {}

    def __call__(self):
        outer = _STATE.get()
        made = self._made.get(outer)
        if made is None:
            with np.errstate(**self.modes):
                made = _STATE.get()
            if len(self._made) >= self._KEEP:
                self._made.clear()
            self._made[outer] = made
        return _STATE.set(made)

    def __repr__(self) -> str:
        return f"StateSwitch({self.modes!r})"


_strict_made: dict = {}


def strict_state():
    """Make every floating-point error NumPy would act on (a mode other than
    ``"ignore"``) raise, until ``reset_state(token)``: the state a capture
    entry runs its graph in when the traced code gives a warning that
    NumPy's own warnings of later ops must follow (capture/codegen.py,
    ``_warning_order``).  A graph that meets such an error then raises, and
    the entry runs the plain function, which warns in its order; one that
    meets none gave no NumPy warning.  The state made over each state
    object seen is kept, as ``StateSwitch`` keeps its own."""
    outer = _STATE.get()
    made = _strict_made.get(outer)
    if made is None:
        modes = {c: ("ignore" if m == "ignore" else "raise") for c, m in np.geterr().items()}
        with np.errstate(**modes):
            made = _STATE.get()
        if len(_strict_made) >= StateSwitch._KEEP:
            _strict_made.clear()
        _strict_made[outer] = made
    return _STATE.set(made)


# ``reset_state(token)``: back to the state before ``StateSwitch()``; None when this
# NumPy keeps its error state elsewhere (then the codegen uses ``with np.errstate``)
reset_state = _STATE.reset if _STATE is not None else None
