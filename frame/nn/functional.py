"""frame.nn.functional (being written)."""
__all__: list[str] = []
