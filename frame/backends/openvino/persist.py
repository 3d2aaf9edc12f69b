"""The openvino executable as a persistent artifact (``Backend.serialize`` /
``deserialize``, used by the on-disk compile cache).

A compiled model that OpenVINO loaded from its own model cache
(``$FRAME_CACHE_DIR/openvino``) exports bytes that ``import_model`` rejects
(OpenVINO 2026.4, measured); ``OpenVinoBackend.serialize`` compiles such a
graph once more without that cache and persists that model instead.

The compiled model is kept as ``CompiledModel.export_model()`` bytes and
loaded with ``Core.import_model`` (~15 ms for the 784-256-128-10 MLP, where
lowering plus ``compile_model`` take 50-150 ms).  Beside it: the graph
``compile`` was given (the executable re-runs it with the reference kernels
when a run-time exactness check fails; loading parses it only then, or when
a constant output needs its payload: its input and output types are kept
apart for that) and the binding plan of
``LoweredGraph`` (which model parameter each graph input is bound to and how,
where each graph output comes from, the check output).

    meta = {"format": 3, "graph": <dump_text>, "device": "CPU",
            "input_types": [[dtype, [dims]], ...], "output_types": [...],
            "inputs": [[param, mode] | None, ...], "outputs": [[kind, index | None], ...],
            "flag_output": int | None, "aliases": [[graph_input, param], ...],
            "host_checks": [[graph_input, low, high], ...],
            "errstates": [null or [[category, mode], ...], ...],
            "model_inputs": n, "model_outputs": m}
    blobs = {"constants": <npz>, "model": <export_model bytes>}   # no "model" when
                                                                # every output is an input
                                                                # or a constant
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import openvino as ov

from ...hal.backend import Artifact, pack_graph, type_from_json, type_to_json, unpack_graph
from ...errors import ErrorCode, FrameError
from ...ir.graph import Graph
from .executable import OpenVinoExecutable
from .lower import OUT_CONST, OUT_INPUT, OUT_MODEL, LoweredGraph

__all__ = ["serialize", "deserialize", "loaded_from_cache", "FORMAT"]

FORMAT = 3


def _refuse(why: str) -> FrameError:
    return FrameError(ErrorCode.INTERNAL, f"openvino artifact: {why}")


def loaded_from_cache(executable) -> bool:
    """Did OpenVINO take this executable's model from its own CACHE_DIR?  (Its
    export does not import: "Unable to read the model", OpenVINO 2026.4.)"""
    compiled = getattr(executable, "_compiled", None)
    if compiled is None:
        return False
    try:
        return bool(compiled.get_property("LOADED_FROM_CACHE"))
    except RuntimeError:
        return False


def serialize(graph: Graph, executable, device: str) -> Artifact | None:
    """The artifact for an ``OpenVinoExecutable`` compiled from ``graph`` for ``device``."""
    if type(executable) is not OpenVinoExecutable:
        return None
    inputs: list[list | None] = [None] * len(executable.input_types)
    for slot in executable._inputs[:len(executable._inputs) - len(executable._aliases)]:
        inputs[slot.graph_index] = [slot.param, slot.mode]
    outputs = [[kind, None if kind == OUT_CONST else int(where)]
               for kind, where in executable._outputs]
    text, payloads = pack_graph(graph)
    blobs = {"constants": payloads}
    compiled = executable._compiled
    if compiled is not None:
        if loaded_from_cache(executable):
            return None  # the backend compiles such a graph again, uncached, to persist it
        blobs["model"] = compiled.export_model().getvalue()
    meta = {"format": FORMAT, "graph": text, "device": device, "inputs": inputs,
            "input_types": [type_to_json(t) for t in executable.input_types],
            "output_types": [type_to_json(t) for t in executable.output_types],
            "outputs": outputs, "flag_output": executable._flag,
            "aliases": [list(a) for a in executable._aliases],
            "host_checks": [list(c) for c in executable._host_checks],
            "errstates": [None if s is None else [list(p) for p in s]
                          for s in executable._errstates.states],
            "model_inputs": 0 if compiled is None else len(compiled.inputs),
            "model_outputs": 0 if compiled is None else len(compiled.outputs)}
    return Artifact(meta, blobs)


def deserialize(core: ov.Core, artifact: Artifact, device: str,
                config_for: Callable[[Graph], dict]) -> OpenVinoExecutable:
    """Import the compiled model (with the settings ``config_for(graph)`` gives,
    those ``compile`` would use) and rebind it; FrameError(INTERNAL) when the
    artifact does not describe a model this device can load as recorded."""
    meta = artifact.meta
    if meta.get("format") != FORMAT:
        raise _refuse(f"format {meta.get('format')!r}, expected {FORMAT}")
    if meta["device"] != device:
        raise _refuse(f"compiled for device {meta['device']!r}, wanted {device!r}")
    types = ([type_from_json(t) for t in meta["input_types"]],
             [type_from_json(t) for t in meta["output_types"]])
    if len(meta["inputs"]) != len(types[0]) or len(meta["outputs"]) != len(types[1]):
        raise _refuse("the binding plan does not match the graph's types")

    def parse():
        graph = unpack_graph(meta["graph"], artifact.blobs["constants"])
        if ([v.type for v in graph.inputs], [v.type for v in graph.outputs]) != types:
            raise _refuse("the graph does not have the recorded types")
        return graph

    # The graph is parsed now only when a constant output needs its payload; else
    # on the first reference re-run (a run-time check firing), if ever.
    graph = parse() if any(kind == OUT_CONST for kind, _ in meta["outputs"]) else None
    inputs = [None if entry is None else (int(entry[0]), str(entry[1])) for entry in meta["inputs"]]
    outputs: list[tuple[str, object]] = []
    for k, (kind, where) in enumerate(meta["outputs"]):
        if kind == OUT_CONST:
            v = graph.outputs[k]
            if v.producer is None or v.producer.op != "constant":
                raise _refuse("a constant output is not a constant in the graph")
            outputs.append((OUT_CONST, np.array(v.producer.const, dtype=v.type.dtype.np)))
        elif kind in (OUT_MODEL, OUT_INPUT):
            outputs.append((kind, int(where)))
        else:
            raise _refuse(f"unknown output kind {kind!r}")
    compiled = None
    if "model" in artifact.blobs:
        try:
            compiled = core.import_model(artifact.blobs["model"], device, config_for(graph))
        except RuntimeError as err:
            first = str(err).strip().splitlines()[0] if str(err).strip() else repr(err)
            raise _refuse(f"import_model failed: {first}") from err
        if (len(compiled.inputs), len(compiled.outputs)) != (meta["model_inputs"],
                                                              meta["model_outputs"]):
            raise _refuse("the imported model's inputs and outputs are not the recorded ones")
    elif any(kind == OUT_MODEL for kind, _ in outputs):
        raise _refuse("outputs come from a model, but the artifact holds none")
    flag = meta["flag_output"]
    aliases = [(int(i), int(param)) for i, param in meta["aliases"]]
    host_checks = [(int(i), int(low), int(high)) for i, low, high in meta["host_checks"]]
    errstates = tuple(None if s is None else tuple((str(c), str(m)) for c, m in s)
                      for s in meta.get("errstates", [None]))
    lowered = LoweredGraph(None, inputs, outputs, None if flag is None else int(flag), aliases,
                           host_checks, errstates)
    return OpenVinoExecutable(graph if graph is not None else parse, lowered, compiled, types)
