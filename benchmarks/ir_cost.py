"""Cost of the IR utilities on the compile path (the cache key is dump_text).

    python benchmarks/ir_cost.py
"""
from __future__ import annotations

import numpy as np

import frame
from frame.ir import GraphBuilder, clone_graph, dump_text, plan_memory, verify
from _harness import interleaved


def chain(n: int):
    b = GraphBuilder()
    x = b.input(frame.float32, (64, 64))
    v = x
    ops = ["add", "mul", "sub", "maximum"]
    for i in range(n):
        if i % 3 == 0:
            v = b.op("relu", v)
        else:
            v = b.op(ops[i % 4], v, b.scalar(float(i), like=v))
    return b.build(v)


def main() -> None:
    g = chain(30)
    print(f"graph: {len(g.nodes)} nodes")
    res = interleaved({
        "dump_text": lambda: dump_text(g),
        "verify": lambda: verify(g),
        "clone_graph": lambda: clone_graph(g),
        "plan_memory": lambda: plan_memory(g),
    }, number=200, rounds=9, warmup=20)
    for name, sec in res.items():
        print(f"  {name:<12} {sec * 1e6:8.1f} us")


if __name__ == "__main__":
    main()
