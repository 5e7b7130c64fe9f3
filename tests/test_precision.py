"""The compute dtype is measured per machine, and can be forced."""

from __future__ import annotations

import pytest
import torch

from model import precision


def test_measured_choice_is_one_of_the_two(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REDRAFT_DTYPE", raising=False)
    precision.fastest_dtype.cache_clear()
    assert precision.fastest_dtype() in (torch.float32, torch.bfloat16)


def test_slower_bf16_is_not_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REDRAFT_DTYPE", raising=False)
    monkeypatch.setattr(precision, "x86_cpu_flags", lambda: None)  # not x86 Linux: timed
    monkeypatch.setattr(precision, "_seconds_per_matmul",
                        lambda dtype: 0.010 if dtype is torch.float32 else 0.170)
    precision.fastest_dtype.cache_clear()
    assert precision.fastest_dtype() is torch.float32
    assert not precision.use_bf16_autocast()
    monkeypatch.setattr(precision, "_seconds_per_matmul",
                        lambda dtype: 0.010 if dtype is torch.float32 else 0.004)
    precision.fastest_dtype.cache_clear()
    assert precision.fastest_dtype() is torch.bfloat16
    precision.fastest_dtype.cache_clear()


def test_environment_overrides_and_rejects_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDRAFT_DTYPE", "bfloat16")
    precision.fastest_dtype.cache_clear()
    assert precision.fastest_dtype() is torch.bfloat16
    monkeypatch.setenv("REDRAFT_DTYPE", "float8")
    precision.fastest_dtype.cache_clear()
    with pytest.raises(ValueError, match="REDRAFT_DTYPE"):
        precision.fastest_dtype()
    precision.fastest_dtype.cache_clear()


def test_x86_flags_decide_without_timing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REDRAFT_DTYPE", raising=False)

    def never(dtype: torch.dtype) -> float:
        raise AssertionError("timed although the flags tell")

    monkeypatch.setattr(precision, "_seconds_per_matmul", never)
    monkeypatch.setattr(precision, "x86_cpu_flags", lambda: frozenset({"avx2", "fma"}))
    precision.fastest_dtype.cache_clear()
    assert precision.fastest_dtype() is torch.float32
    monkeypatch.setattr(precision, "x86_cpu_flags", lambda: frozenset({"avx2", "avx512_bf16"}))
    precision.fastest_dtype.cache_clear()
    assert precision.fastest_dtype() is torch.bfloat16
    precision.fastest_dtype.cache_clear()
