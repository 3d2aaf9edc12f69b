"""frame.fft: rfft and irfft along the last axis (being written)."""
__all__: list[str] = []
