"""DP-Synth's own run-spec section ``[dp_synth]``, and the upgrade path of a spec that keeps its settings in
``[dp_synrag]`` (written before the section existed)."""

from __future__ import annotations

import tomllib

import pytest

from core.common.errors import PrivetError
from core.specs.method_catalogue import facts
from core.methods.dp_synth.plan import plan_dp_synth
from core.methods.registry import get as get_method
from core.specs.runspec import DPSynRAGSpec, DPSynthSpec, RunSpec
from core.specs.dp_synth import SEED_BATCHES, settings_of

OLD_STYLE = """
method = "dp_synth"
task = "Answer questions about the patients in these clinic notes."
[data]
path = "notes.csv"
[privacy]
epsilon = 4.0
[dp_synrag]
T = 40
tau = 0.8
self_filter = false
"""


def test_a_dp_synth_section_round_trips_through_toml(tmp_path):
    spec = RunSpec(method="dp_synth")
    spec.dp_synth = DPSynthSpec(R=40, T=32, tau=0.7, clip="spec", public_row="none", self_filter_mode="score")
    spec.document.document_form = "review"
    path = tmp_path / "spec.toml"
    spec.save(path)
    assert "[dp_synth]" in path.read_text(encoding="utf-8")
    loaded = RunSpec.load(path)
    assert loaded.dp_synth == spec.dp_synth and loaded.document.document_form == "review"
    assert settings_of(loaded) is loaded.dp_synth  # its own section, not [dp_synrag]


def test_a_spec_without_the_section_writes_none():
    assert "dp_synth" not in RunSpec().to_dict()
    assert "[dp_synth]" not in RunSpec(method="dp_synth").to_toml()


def test_the_defaults_are_what_dp_synth_got_from_dp_synrag():
    assert DPSynthSpec.from_dp_synrag(DPSynRAGSpec()) == DPSynthSpec()
    assert DPSynthSpec().R == SEED_BATCHES


def test_an_old_style_spec_still_loads_and_plans_the_same_rho(tmp_path):
    path = tmp_path / "old.toml"
    path.write_text(OLD_STYLE, encoding="utf-8")
    old = RunSpec.load(path)
    assert old.dp_synth is None
    read = settings_of(old)
    assert (read.R, read.T, read.tau, read.self_filter) == (SEED_BATCHES, 40, 0.8, False)  # R = 0: the seed's 500
    new = RunSpec.from_dict({**tomllib.loads(OLD_STYLE), "dp_synth": {"T": 40, "tau": 0.8, "self_filter": False}})
    adapter = get_method("dp_synth")
    for spec in (old, new):
        assert plan_dp_synth(settings_of(spec), 4.0, 1e-6) == plan_dp_synth(read, 4.0, 1e-6)
    old_summary, new_summary = adapter.plan_summary(old, 1e-6, 100), adapter.plan_summary(new, 1e-6, 100)
    assert old_summary.rho_total == new_summary.rho_total and old_summary.stages == new_summary.stages
    assert old_summary.derived == new_summary.derived
    assert adapter.parameters(old, old_summary) == adapter.parameters(new, new_summary)


def test_a_public_row_is_needed_by_dclip_and_named_where_it_is_set():
    spec = {"method": "dp_synth", "data": {"path": "notes.csv"}}
    with pytest.raises(PrivetError) as info:
        RunSpec.from_dict({**spec, "dp_synth": {"public_row": "none"}})
    assert '[dp_synth] clip = "dclip"' in info.value.user_message() and "public_row" in info.value.user_message()
    with pytest.raises(PrivetError) as info:
        RunSpec.from_dict({**spec, "dp_synrag": {"public_prompt": "none"}})
    assert "[dp_synrag]" in info.value.user_message() and "public_prompt" in info.value.user_message()
    RunSpec.from_dict({**spec, "dp_synth": {"public_row": "none", "clip": "spec"}})  # the SPEC clip needs none


@pytest.mark.parametrize("name, value, words", [("R", 0, "out of range"), ("public_row", "keyword", "not one of"),
                                                ("T", 0, "out of range"), ("document_form", "memo", "not one of")])
def test_nonsense_in_the_section_is_refused(name, value, words):
    with pytest.raises(PrivetError) as info:
        RunSpec.from_dict({"method": "dp_synth", "data": {"path": "notes.csv"}, "dp_synth": {name: value}})
    where = "document" if name == "document_form" else "dp_synth"  # an older spec's form is read into [document]
    assert f"[{where}] {name}" in info.value.user_message() and words in info.value.user_message()


def test_the_form_is_chosen_from_the_task_and_named_in_its_section():
    spec = RunSpec(method="dp_synth", task="Answer questions about the patients in these clinic notes.")
    spec.dp_synth = DPSynthSpec()
    chosen = facts("dp_synth").public_defaults(spec)
    assert chosen.document.document_form == "clinical_note" and spec.document.document_form == ""
    (line,) = facts("dp_synth").plan_header(spec)
    assert "[document] document_form" in line
    old = RunSpec(method="dp_synth", task=spec.task)  # the upgrade path: [dp_synrag]'s rules fill it as before
    assert facts("dp_synth").public_defaults(old).document.document_form == "clinical_note"


def test_an_old_dp_synth_spec_keeps_its_form():
    """A DP-Synth spec written before [document]: its section's form is read into [document]; without a section,
    an automatic form is none where DP-SynRAG's writer does not run, as ``from_dp_synrag`` read it."""
    from core.specs.dp_synth import form_of

    own = RunSpec.from_dict({"method": "dp_synth", "dp_synrag": {"document_form": "", "public_example": ""},
                             "dp_synth": {"document_form": "review"}})  # a saved spec states both sections
    assert own.document.document_form == "review" and form_of(own).document_form == "review"
    private = RunSpec.from_dict({"method": "dp_synth", "dp_synrag": {"text": "private"}})
    assert private.document.document_form == "" and form_of(private).document_form == "none"
    facts("dp_synth").wizard_section(private)  # the wizard gives it a [dp_synth] section: the form stays none
    assert form_of(private).document_form == "none"


def test_both_sections_give_the_engine_the_same_settings():
    from core.methods.private_prediction.stage import engine_config

    assert engine_config(DPSynthSpec(), 0.5, 8) == engine_config(DPSynRAGSpec(), 0.5, 8)
    assert engine_config(DPSynthSpec(public_row="none", clip="spec"), 0.5, 8).public_anchor is False


def test_the_wizard_writes_dp_synth_settings_into_its_own_section():
    spec = RunSpec(method="dp_synth")
    section = facts("dp_synth").wizard_section(spec)
    assert section is spec.dp_synth and section == DPSynthSpec()
    assert facts("dp_synrag").wizard_section(spec) is spec.dp_synrag


def test_the_wizard_reads_and_stores_the_shape_settings_through_the_facts():
    from dataclasses import replace

    from core.specs.dp_synrag import AUTOMATIC_DOCUMENTS

    spec = RunSpec()
    values = facts("dp_synrag").wizard_values(spec)
    assert values.documents == spec.dp_synrag.documents == AUTOMATIC_DOCUMENTS  # the automatic default kept
    assert values.documents_setting == spec.dp_synrag.documents_setting and not values.token_stage
    changed = replace(values, documents=12, k=5, document_form="review", domain_lists=("icd10-cm",),
                      discover_phrases=False)
    facts("dp_synrag").store_wizard_values(spec, changed)
    p = spec.dp_synrag
    assert (p.documents, p.k, p.domain_lists, p.discover_phrases) == (12, 5, ["icd10-cm"], False)
    assert spec.document.document_form == "review"  # the form is every method's: [document]
    assert "[document]" in spec.to_toml() and "document_form" not in spec.to_dict()["dp_synrag"]
    assert facts("dp_synrag").wizard_values(spec) == replace(changed, documents_setting=12)
    spec.method = "dp_synth"  # a method that asks none of them is shown the shared section's (disabled)
    assert facts("dp_synth").wizard_values(spec) == facts("dp_synrag").wizard_values(spec)
