"""The Fourier transform extension, ``xp.fft`` (being written)."""
