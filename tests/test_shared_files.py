"""The shared-folder locator fails, not skips, under CI."""

from pathlib import Path

import pytest

from shared_files import SharedMissing, golden_cases, locate


def test_missing_folder_skips_outside_ci(tmp_path: Path) -> None:
    assert locate(tmp_path, "golden", ci=False) is None


def test_missing_folder_fails_under_ci(tmp_path: Path) -> None:
    with pytest.raises(SharedMissing, match="golden"):
        locate(tmp_path, "golden", ci=True)


def test_present_folder_found(tmp_path: Path) -> None:
    (tmp_path / "golden").mkdir()
    assert locate(tmp_path, "golden", ci=True) == tmp_path / "golden"


def test_golden_cases_found_where_shared_is(shared: Path) -> None:
    cases = golden_cases("explain", "preempt", "sequence", pattern="*.yaml")
    assert len(cases) > 100 and all(str(c).startswith(str(shared)) for c in cases)
