"""Which floating-point type computes fastest on this CPU: measured, not assumed.

bf16 is 2–3× faster than fp32 on CPUs with native bf16 instructions (AVX512-BF16, AMX),
and more than 10× *slower* on CPUs without them (AVX2 only), where every bf16 matmul is
emulated. A short timing of the model's typical matmul decides, once per process.
``REDRAFT_DTYPE=float32|bfloat16`` overrides the measurement.
"""

from __future__ import annotations

import functools
import logging
import os
import time

import torch

log = logging.getLogger(__name__)

CHOICES = {"float32": torch.float32, "bfloat16": torch.bfloat16}
PROBE_SHAPE = (256, 256, 768)  # context tokens × width × MLP width
PROBE_REPEATS = 5


def _seconds_per_matmul(dtype: torch.dtype) -> float:
    rows, inner, cols = PROBE_SHAPE
    a, b = torch.randn(rows, inner).to(dtype), torch.randn(inner, cols).to(dtype)
    a @ b  # warm-up: the first call pays for kernel selection
    best = float("inf")
    for _ in range(PROBE_REPEATS):
        started = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - started)
    return best


@functools.cache
def fastest_dtype() -> torch.dtype:
    """bfloat16 if it beats float32 on this machine's matmuls, else float32."""
    forced = os.environ.get("REDRAFT_DTYPE")
    if forced:
        if forced not in CHOICES:
            raise ValueError(f"REDRAFT_DTYPE must be one of {', '.join(CHOICES)}, not {forced!r}")
        return CHOICES[forced]
    fp32, bf16 = _seconds_per_matmul(torch.float32), _seconds_per_matmul(torch.bfloat16)
    chosen = torch.bfloat16 if bf16 < fp32 else torch.float32
    log.info("matmul %.2f ms fp32, %.2f ms bf16 → computing in %s", fp32 * 1e3, bf16 * 1e3, chosen)
    return chosen


def use_bf16_autocast() -> bool:
    return fastest_dtype() is torch.bfloat16
