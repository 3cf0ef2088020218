"""The run spec's ``[document]`` section: the form of the documents every method writes (``document_form``,
``public_example``), read from the method's section in a spec written before the section existed, with the same
meaning."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from core.common.errors import PrivetError
from core.methods.base import PlanSummary
from core.methods.dp_synrag.method import DPSynRAGMethod
from core.run.resume import canonical_spec, spec_differences
from core.specs.document import DOCUMENT_SETTINGS
from core.specs.runspec import RunSpec

OLD = {"document_form": "review", "public_example": "Review. [product] is [opinion]."}


def test_an_older_spec_s_form_in_dp_synrag_is_read_into_document(tmp_path):
    path = tmp_path / "old.toml"
    path.write_text('[dp_synrag]\nR = 4\ndocument_form = "review"\npublic_example = "Review. [product] is [opinion]."\n',
                    encoding="utf-8")
    spec = RunSpec.load(path)
    assert asdict(spec.document) == OLD and spec.dp_synrag.R == 4
    saved = spec.to_dict()
    assert saved["document"] == OLD and not set(DOCUMENT_SETTINGS) & set(saved["dp_synrag"])
    assert RunSpec.from_dict(saved).to_dict() == saved  # what the app writes reads back the same
    assert "[document]" in spec.to_toml()


def test_a_form_stated_in_both_sections_must_agree():
    same = RunSpec.from_dict({"dp_synrag": {"document_form": "review"}, "document": {"document_form": "review"}})
    assert same.document.document_form == "review"
    with pytest.raises(PrivetError, match=r"\[dp_synrag\] document_form = 'review' and \[document\] document_form = "
                                          r"'news_article'"):
        RunSpec.from_dict({"dp_synrag": {"document_form": "review"}, "document": {"document_form": "news_article"}})
    with pytest.raises(PrivetError, match=r"\[dp_synth\] public_example"):
        RunSpec.from_dict({"method": "dp_synth", "dp_synth": {"public_example": "A [x]."},
                           "document": {"public_example": "B [y]."}})


def test_the_form_is_checked_under_its_section():
    with pytest.raises(PrivetError, match=r"\[document\] document_form"):
        RunSpec.from_dict({"document": {"document_form": "poem"}})
    with pytest.raises(PrivetError, match=r"\[document\] document_form"):
        RunSpec.from_dict({"dp_synrag": {"document_form": "poem"}})  # an older spec's, named where it now lives


def test_the_method_s_own_section_is_the_one_read():
    """A saved spec stated every section: the form of the method that ran is moved, the other's dropped."""
    synrag = RunSpec.from_dict({"dp_synrag": {"document_form": "review"}, "dp_synth": {"document_form": ""}})
    assert synrag.document.document_form == "review"
    synth = RunSpec.from_dict({"method": "dp_synth", "dp_synrag": {"document_form": "review"},
                               "dp_synth": {"document_form": "news_article"}})
    assert synth.document.document_form == "news_article"


def test_a_run_recorded_before_document_existed_resumes_under_the_same_settings():
    spec = RunSpec.from_dict({"document": dict(OLD)})
    recorded = json.loads(canonical_spec(spec))
    recorded["dp_synrag"].update(recorded.pop("document"))  # as run.json recorded the spec then
    old = json.dumps(recorded)
    assert spec_differences(old, canonical_spec(spec)) == []
    spec.document.public_example = "Review. [product] was [opinion]."  # what the writer is shown: refused
    assert spec_differences(old, canonical_spec(spec)) == ["document.public_example"]


def test_the_certificate_lists_the_form_where_dp_synrag_listed_it():
    spec = RunSpec.from_dict({"document": dict(OLD)})
    summary = PlanSummary("dp_synrag", 1.0, 1e-6, 0.1, [], {}, [], 10)
    params = DPSynRAGMethod().parameters(spec, summary)
    names = list(params)
    assert names[names.index("text") + 1: names.index("realisation_tokens")] == list(DOCUMENT_SETTINGS)
    assert params["document_form"] == "review" and params["public_example"] == OLD["public_example"]
