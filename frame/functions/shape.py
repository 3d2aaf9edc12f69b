"""User-facing shape functions (being written)."""
__all__: list[str] = []
METHODS: list[str] = []
