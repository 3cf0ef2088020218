"""The run spec's ``[writing]`` section: the settings every method shares (the longest prompt, rows per wave, the
memory budget), read from ``[dp_synrag]`` in a spec written before the section existed, with the same meaning."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from core.common.errors import PrivetError
from core.methods.base import PlanSummary
from core.methods.dp_synrag.method import DPSynRAGMethod
from core.run.resume import canonical_spec, spec_differences
from core.specs.runspec import RunSpec
from core.specs.writing import SHARED_SETTINGS

OLD = {"max_prompt_tokens": 96, "batch_rows": 12, "memory_budget_mb": 300}


def test_an_older_spec_s_shared_settings_in_dp_synrag_are_read_into_writing(tmp_path):
    path = tmp_path / "old.toml"
    path.write_text("[dp_synrag]\nR = 4\nmax_prompt_tokens = 96\nbatch_rows = 12\nmemory_budget_mb = 300\n",
                    encoding="utf-8")
    spec = RunSpec.load(path)
    assert asdict(spec.writing) == OLD and spec.dp_synrag.R == 4
    saved = spec.to_dict()
    assert saved["writing"] == OLD and not set(SHARED_SETTINGS) & set(saved["dp_synrag"])
    assert RunSpec.from_dict(saved).to_dict() == saved  # what the app writes reads back the same


def test_a_setting_stated_in_both_sections_must_agree():
    same = RunSpec.from_dict({"dp_synrag": {"batch_rows": 12}, "writing": {"batch_rows": 12}})
    assert same.writing.batch_rows == 12
    with pytest.raises(PrivetError, match=r"\[dp_synrag\] batch_rows = 12 and \[writing\] batch_rows = 8"):
        RunSpec.from_dict({"dp_synrag": {"batch_rows": 12}, "writing": {"batch_rows": 8}})


def test_the_writing_settings_are_checked_under_their_section():
    with pytest.raises(PrivetError, match=r"\[writing\] max_prompt_tokens"):
        RunSpec.from_dict({"writing": {"max_prompt_tokens": 0}})
    with pytest.raises(PrivetError, match=r"\[writing\] max_prompt_tokens"):
        RunSpec.from_dict({"dp_synrag": {"max_prompt_tokens": 0}})  # an older spec's, named where it now lives


def test_a_run_recorded_before_writing_existed_resumes_under_the_same_settings():
    spec = RunSpec.from_dict({"writing": dict(OLD)})
    recorded = json.loads(canonical_spec(spec))
    recorded["dp_synrag"].update(recorded.pop("writing"))  # as run.json recorded the spec then
    old = json.dumps(recorded)
    assert spec_differences(old, canonical_spec(spec)) == []
    spec.writing.batch_rows, spec.writing.memory_budget_mb = 3, 100  # speed only: a resume may change them
    assert spec_differences(old, canonical_spec(spec)) == []
    spec.writing.max_prompt_tokens = 64  # what the model reads: refused
    assert spec_differences(old, canonical_spec(spec)) == ["writing.max_prompt_tokens"]


def test_the_certificate_lists_the_shared_settings_where_dp_synrag_listed_them():
    spec = RunSpec.from_dict({"writing": dict(OLD)})
    summary = PlanSummary("dp_synrag", 1.0, 1e-6, 0.1, [], {}, [], 10)
    names = list(DPSynRAGMethod().parameters(spec, summary))
    assert names[names.index("self_filter_mode") + 1: names.index("domain_lists")] == list(SHARED_SETTINGS)
    assert [names.count(n) for n in SHARED_SETTINGS] == [1, 1, 1]
