"""User-facing linalg functions (being written)."""
__all__: list[str] = []
METHODS: list[str] = []
