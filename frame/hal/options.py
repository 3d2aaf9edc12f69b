"""CompileOptions: everything besides the graph that changes a compiled artifact."""
from __future__ import annotations

import dataclasses

__all__ = ["CompileOptions"]


@dataclasses.dataclass(frozen=True)
class CompileOptions:
    """Options passed to ``runtime.compile`` and on to ``Backend.compile``.

    ``fingerprint()`` is part of the compilation cache key: two option sets with
    equal fingerprints must produce interchangeable executables.
    ``dump_ir_after`` is diagnostic only and is left out of the fingerprint.

    ``donate`` lists ``(output index, input index)`` pairs: the caller gives
    up the contents of that input array, which it would overwrite with that
    output after the run anyway (capture's write-back of an in-place update,
    e.g. an optimizer step's parameters).  An executable may then compute the
    output straight into the input's memory and return the input array
    itself as that output; it never writes a donated input otherwise, and
    never one that is not donated.  The caller promises that the input is
    writeable and shares no memory with any other input, and tests
    ``outputs[k] is inputs[j]`` to skip its copy.  A permission, not an
    obligation: backends that cannot honour it (OpenVINO, the fallback
    chain's partitions) return fresh outputs as usual.
    """

    device: str = "CPU"
    precision: str = "f32"             # OpenVINO INFERENCE_PRECISION_HINT
    fusion: bool = True
    extra: tuple[tuple[str, str], ...] = ()
    donate: tuple[tuple[int, int], ...] = ()
    dump_ir_after: str | None = dataclasses.field(default=None, compare=False)

    def fingerprint(self) -> str:
        extra = ",".join(f"{k}={v}" for k, v in sorted(self.extra))
        text = f"device={self.device};precision={self.precision};fusion={int(self.fusion)};extra=[{extra}]"
        if self.donate:  # (absent when empty: keys of executables without donations are unchanged)
            text += ";donate=[" + ",".join(f"{o}<-{i}" for o, i in sorted(self.donate)) + "]"
        return text

    def replace(self, **changes) -> "CompileOptions":
        return dataclasses.replace(self, **changes)
