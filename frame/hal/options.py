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
    """

    device: str = "CPU"
    precision: str = "f32"             # OpenVINO INFERENCE_PRECISION_HINT
    fusion: bool = True
    extra: tuple[tuple[str, str], ...] = ()
    dump_ir_after: str | None = dataclasses.field(default=None, compare=False)

    def fingerprint(self) -> str:
        extra = ",".join(f"{k}={v}" for k, v in sorted(self.extra))
        return f"device={self.device};precision={self.precision};fusion={int(self.fusion)};extra=[{extra}]"

    def replace(self, **changes) -> "CompileOptions":
        return dataclasses.replace(self, **changes)
