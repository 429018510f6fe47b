"""95% confidence intervals of a cell's mean: Wilson's score interval for hit rates (0/1 per question), a
seeded percentile bootstrap for means of continuous scores (set recall/precision)."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

Z95 = 1.959963984540054
BOOTSTRAP_SAMPLES = 2000


def wilson_interval(hits: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of ``hits``/``n`` (``(0, 1)`` when ``n`` is 0)."""
    if n <= 0:
        return (0.0, 1.0)
    if not 0 <= hits <= n:
        raise ValueError(f"hits must be between 0 and n={n}; got {hits}")
    p = hits / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if hits == 0 else max(0.0, centre - half)  # exact ends: no rounding past the observed rate
    hi = 1.0 if hits == n else min(1.0, centre + half)
    return (min(lo, p), max(hi, p))


def bootstrap_interval(
    values: Sequence[float], samples: int = BOOTSTRAP_SAMPLES, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval (2.5%, 97.5%) of the mean of ``values`` (seeded: reproducible)."""
    n = len(values)
    if n == 0:
        return (0.0, 1.0)
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(samples))
    return (means[int(0.025 * (samples - 1))], means[math.ceil(0.975 * (samples - 1))])


def mean_interval(values: Sequence[float]) -> tuple[float, float]:
    """Wilson when every value is 0 or 1, else the bootstrap."""
    if all(v in (0.0, 1.0) for v in values):
        return wilson_interval(int(sum(values)), len(values))
    return bootstrap_interval(values)
