"""The op registry and every built-in op.  Importing this package registers them."""
from .schema import AttrSpec, OpSchema, REQUIRED
from .registry import register, get_schema, lookup, all_ops, all_schemas
from . import creation, elementwise, reduction, shape, linalg, nn, fft, scan  # noqa: F401  (registers ops)
from . import stats  # noqa: F401  (nan_reduce: NumPy's NaN-ignoring reductions)
from . import contract  # noqa: F401  (einsum, convolve, correlate: NumPy's own loops)
from . import fused  # noqa: F401  (registers the 'fused' op of operator_fusion)
from . import autograd_ops  # noqa: F401  (scatter_add, conj, real: ops gradient rules use)
from . import collective  # noqa: F401  (all_reduce, broadcast, reduce: frame.distributed)
from . import layout  # noqa: F401  (relayout: NumPy's strides for a layout-sensitive reader)

__all__ = ["AttrSpec", "OpSchema", "REQUIRED", "register", "get_schema", "lookup", "all_ops",
           "all_schemas"]
