"""fft ops (being written)."""
