"""Which floating-point type computes fastest on this CPU: measured, not assumed.

bf16 is 2–3× faster than fp32 on CPUs with native bf16 instructions (AVX512-BF16, AMX),
and more than 10× *slower* on CPUs without them (AVX2 only), where every bf16 matmul is
emulated. On x86 Linux the CPU's flags decide at no cost (timing an emulated bf16 matmul
would add a second to the server's cold start); elsewhere a short timing of the model's
typical matmul decides, once per process. ``REDRAFT_DTYPE=float32|bfloat16`` overrides both.
"""

from __future__ import annotations

import functools
import logging
import os
import platform
import time

import torch

log = logging.getLogger(__name__)

CHOICES = {"float32": torch.float32, "bfloat16": torch.bfloat16}
PROBE_SHAPE = (64, 256, 768)  # tokens × width × MLP width
PROBE_REPEATS = 3
NATIVE_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})


def x86_cpu_flags() -> frozenset[str] | None:
    """The CPU's feature flags on x86 Linux, else None."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return None
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("flags"):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return None


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
    flags = x86_cpu_flags()
    if flags is not None:
        chosen = torch.bfloat16 if flags & NATIVE_BF16_FLAGS else torch.float32
        log.info("CPU %s native bf16 → computing in %s", "has" if chosen is torch.bfloat16 else "lacks", chosen)
        return chosen
    fp32, bf16 = _seconds_per_matmul(torch.float32), _seconds_per_matmul(torch.bfloat16)
    chosen = torch.bfloat16 if bf16 < fp32 else torch.float32
    log.info("matmul %.2f ms fp32, %.2f ms bf16 → computing in %s", fp32 * 1e3, bf16 * 1e3, chosen)
    return chosen


def use_bf16_autocast() -> bool:
    return fastest_dtype() is torch.bfloat16
