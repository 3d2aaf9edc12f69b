"""reduction ops (being written)."""
