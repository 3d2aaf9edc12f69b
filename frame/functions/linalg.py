"""User-facing linear algebra: ``frame.matmul`` (also ``a @ b``)."""
from __future__ import annotations

from ._core import apply1, bind_schema, operands

__all__ = ["matmul"]
METHODS = ["matmul"]

_NO_ATTRS: dict = {}


@bind_schema("matmul")
def matmul(x, y):
    """Matrix product with numpy.matmul's rules: 1-D operands act as row/column
    vectors, leading dimensions broadcast as a batch, dtypes promote as NumPy's.

    >>> (frame.ones((4, 2, 3)) @ frame.ones(3)).shape
    (4, 2)
    """
    return apply1("matmul", operands(x, y), _NO_ATTRS)
