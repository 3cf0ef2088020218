"""Private folders stay private whatever the umask: data folder and run folders 0700, files 0600."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from tests.helpers import TINY_SIZES, tiny_spec, write_notes

from core.run.pipeline import run_pipeline
from core.common.private_files import private_folder, write_private
from core.specs.runspec import RunSpec

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")


@pytest.fixture
def loose_umask():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _spec(tmp_path: Path) -> RunSpec:
    corpus = write_notes(tmp_path, 30, note="Patient {i} came in with fever and was treated with rest.", person=None)
    return tiny_spec(tmp_path, corpus, TINY_SIZES, release=None)


def test_helpers_ignore_the_umask(tmp_path, loose_umask):
    folder = private_folder(tmp_path / "a" / "b")
    assert _mode(folder) == 0o700 and _mode(tmp_path / "a") == 0o700
    assert _mode(write_private(folder / "x.json", "{}")) == 0o600
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o755)
    assert _mode(private_folder(loose)) == 0o700  # an existing folder is tightened


def test_a_run_leaves_only_private_folders_and_files(tmp_path, privet_home, loose_umask):
    os.chmod(privet_home, 0o755)  # as if created by an older version
    result = run_pipeline(_spec(tmp_path))
    from core.common.paths import data_dir

    assert _mode(data_dir()) == 0o700
    assert result.run_dir.is_relative_to(privet_home)
    checked = 0
    for path in [privet_home, *privet_home.rglob("*")]:
        if path.is_symlink():
            continue
        expected = 0o700 if path.is_dir() else 0o600
        assert _mode(path) == expected, f"{path.relative_to(privet_home)} is {oct(_mode(path))}"
        checked += 1
    names = {p.name for p in privet_home.rglob("*")}
    assert {"ledger.db", "ledger.witness", "run.json", "synthetic.jsonl", "installation.key"} <= names
    assert checked > 8
