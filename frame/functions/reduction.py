"""User-facing reduction functions (being written)."""
__all__: list[str] = []
METHODS: list[str] = []
