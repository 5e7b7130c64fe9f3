"""Which corpus files training draws: by length, with no one package filling the batches."""

import pytest

from model.data.corpus import SourceFile
from model.training.batches import FILE_WEIGHT_CAP, PACKAGE_WEIGHT_CAP, sampling_weights


def files_of(package: str, count: int, length: int) -> list[SourceFile]:
    return [SourceFile(package, f"{package}/m{i}.py", "x" * length) for i in range(count)]


def test_a_huge_package_counts_for_the_cap_and_the_others_are_untouched() -> None:
    huge = files_of("homeassistant", 2 * PACKAGE_WEIGHT_CAP // 5_000, 5_000)
    small = files_of("portable", 3, 1_000) + files_of("portable", 1, 3 * FILE_WEIGHT_CAP)
    weights = sampling_weights(huge + small)
    assert sum(weights[: len(huge)]) == pytest.approx(PACKAGE_WEIGHT_CAP)
    assert len(set(weights[: len(huge)])) == 1  # its files share the cap alike
    assert weights[len(huge):] == [1_000, 1_000, 1_000, FILE_WEIGHT_CAP]


def test_a_single_repository_keeps_its_files_relative_weights() -> None:
    # `redraft train --repo`: every file is one package, however large it is.
    repo = files_of("mine", 1_000, 10_000) + files_of("mine", 1, 30_000)
    weights = sampling_weights(repo)
    assert weights[0] * 2 == pytest.approx(weights[-1])
