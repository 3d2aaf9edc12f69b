"""The registry-driven op test table.

Each ``cases_*.py`` module registers, per op, a generator of ``Case``s: input
arrays, attrs, and an *independent* NumPy formula for the expected outputs
(written in the test, not calling the reference kernel).  ``test_registry.py``
runs every case for every registered op, and fails if an op has no cases.
"""
from __future__ import annotations

import dataclasses
import importlib
from typing import Callable, Iterable

import numpy as np

OP_CASES: dict[str, Callable[[], Iterable["Case"]]] = {}
CASE_MODULES = ("cases_elementwise", "cases_shape", "cases_nn", "cases_autograd", "cases_scan",
                "cases_linalg", "cases_stats", "cases_contract")


@dataclasses.dataclass
class Case:
    inputs: list
    attrs: dict
    expected: Callable  # (inputs, attrs) -> list[np.ndarray]
    rtol: float | None = None
    atol: float | None = None
    id: str = ""


def cases(*ops: str):
    def deco(gen):
        for op in ops:
            if op in OP_CASES:
                raise ValueError(f"cases for {op} registered twice")
            OP_CASES[op] = (lambda gen=gen, op=op: gen(op))
        return gen
    return deco


def load_all() -> dict:
    for name in CASE_MODULES:
        try:
            importlib.import_module(f"tests.ops.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"tests.ops.{name}":
                raise
    return OP_CASES


def check_each(what: str, items, check) -> None:
    """``check(*item)`` for every ``(item id, item)`` of ``items`` (an item is a
    tuple of arguments); fails once at the end, naming every failing item and
    its error.  Registry tests use it to run all cases of an op in one test
    item: thousands of one-case items cost more in pytest/xdist bookkeeping
    than in checking."""
    import pytest

    failures, n = [], 0
    for item_id, item in items:
        n += 1
        try:
            check(*item)
        except Exception as e:  # noqa: BLE001  (reported per item below)
            failures.append(f"[{item_id}] {type(e).__name__}: {e}")
    if failures:
        pytest.fail(f"{len(failures)} of {n} cases of {what} failed:\n" + "\n".join(failures),
                    pytrace=False)


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def sample(shape, dtype, seed: int = 0, low=-3.0, high=3.0, positive=False) -> np.ndarray:
    """Random data of a dtype; ``positive`` keeps floats in (0.1, high)."""
    g = rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return g.random(shape) > 0.5
    if dt.kind in "iu":
        lo = 1 if positive else int(low) if dt.kind == "i" else max(int(low), 0)
        return g.integers(lo, max(int(high), lo + 1) + 1, size=shape).astype(dt)
    if dt.kind == "c":
        return (g.uniform(low, high, shape) + 1j * g.uniform(low, high, shape)).astype(dt)
    if positive:
        return g.uniform(0.1, high, shape).astype(dt)
    return g.uniform(low, high, shape).astype(dt)


def tolerance(dtype) -> tuple[float, float]:
    dt = np.dtype(dtype)
    if dt in (np.float16,):
        return 2e-3, 2e-3
    if dt in (np.float32, np.complex64):
        return 1e-5, 1e-6
    if dt.kind in "fc":
        return 1e-12, 1e-12
    return 0.0, 0.0


FLOATS = ("float16", "float32", "float64")
INTS = ("int32", "int64", "int8", "int16", "uint8", "uint16")
NUMERIC = FLOATS + INTS
ALL = NUMERIC + ("bool",)
# shapes exercising 0-d, 1-d, n-d and broadcasting
UNARY_SHAPES = [(), (5,), (2, 3), (2, 1, 4)]
BINARY_SHAPES = [((), ()), ((4,), ()), ((2, 3), (3,)), ((2, 1, 4), (3, 1)), ((1,), (2, 2))]
