"""User-facing creation functions (being written)."""
__all__: list[str] = []
METHODS: list[str] = []
