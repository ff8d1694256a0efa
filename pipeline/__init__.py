"""mobeval: exact, fast, out-of-core evaluation of mobility and recommendation models."""

import os

# Numba's OpenMP threads spin after every parallel kernel by default, competing for the cores with
# the Polars / Arrow work between kernels: each chunk then pays 10-35 ms per kernel call. Sleeping
# threads cost nothing measurable in the kernels themselves. A user's explicit setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"
