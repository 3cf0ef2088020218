"""One default for library, CLI, wizard and demo (issue 32): the realised writer, its budget shares, and a
document form chosen by a public rule when the custodian picks none (never silently the plain document)."""

from __future__ import annotations

import pytest
from tests.helpers import tiny_spec

from core.cli import main as privet
from core.methods.dp_synrag.release.budget import (
    DEFAULT_LENGTH_FRACTION,
    DEFAULT_SIZE_FRACTION,
    REALISED_FRACTIONS,
    plan_dp_synrag,
)
from core.methods.dp_synrag.shape.forms import with_chosen_form
from core.specs.document_forms import (
    DOCUMENT_FORMS,
    FALLBACK_FORM,
    FORM_LABELS,
    NO_FORM,
    form_for_task,
    public_example,
    shipped_example,
)
from core.specs.runspec import RunSpec
from core.specs.dp_synrag import DPSynRAGSpec


def test_library_cli_and_wizard_start_from_one_default():
    from desktop.controller import fresh_spec

    wizard = fresh_spec()
    assert wizard.dp_synrag == RunSpec().dp_synrag == DPSynRAGSpec()  # one object: no wizard-only setting
    assert DPSynRAGSpec().text == "realised" and not DPSynRAGSpec().token_stage
    assert wizard.privacy.epsilon == pytest.approx(4.0)  # the recommended ε is the only thing the wizard adds


@pytest.mark.parametrize(("task", "form"), [
    ("Answer patients' questions about which disease matches their symptoms.", "clinical_note"),
    ("Summarise customer reviews of kitchen products", "review"),
    ("Recommend films to people like these viewers", "film_ratings"),
    ("Search local news articles about the council", "news_article"),
    ("Help caseworkers find similar client situations", "case_file"),
    ("Something else entirely", FALLBACK_FORM),
    ("", FALLBACK_FORM),
])
def test_the_public_rule_picks_a_shipped_form_from_the_task(task, form):
    chosen, why = form_for_task(task)
    assert chosen == form and chosen in DOCUMENT_FORMS and why


def test_a_task_that_names_no_document_reads_the_chosen_column_names():
    """The wizard's default task ("documents of the kind found in the collection …") names no kind of document: the
    chosen columns' names (public schema) decide before the case file, and the task still wins when it names one."""
    default_task = "Write realistic documents of the kind found in the collection “notes”."
    assert form_for_task(default_task, ("note", "id", "patient"))[0] == "clinical_note"
    assert "column names mention 'patient'" in form_for_task(default_task, ("note", "patient"))[1]
    assert form_for_task(default_task, ("text", "customer_id"))[0] == "review"
    assert form_for_task(default_task, ("text", "id"))[0] == FALLBACK_FORM
    assert form_for_task("Summarise customer reviews", ("note", "patient"))[0] == "review"
    spec = RunSpec()
    spec.task, spec.data.text_column, spec.data.person_column = default_task, "note", "patient"
    assert spec.data.column_names() == ("note", "patient")
    assert with_chosen_form(spec).document.document_form == "clinical_note"


def test_an_explicit_choice_is_kept_and_none_means_a_plain_document():
    spec = RunSpec()
    spec.task = "Answer patients' questions"
    assert with_chosen_form(spec).document.document_form == "clinical_note"
    assert spec.document.document_form == ""  # the caller's spec is not changed
    spec.document.document_form = "review"
    assert with_chosen_form(spec).document.document_form == "review"
    spec.document.document_form = NO_FORM
    assert with_chosen_form(spec).document.document_form == NO_FORM
    assert public_example(NO_FORM, "") == ""
    spec.document.document_form, spec.document.public_example = "", "An invented note about [topic]."
    assert with_chosen_form(spec).document.document_form == ""  # the custodian's own example wins
    assert set(FORM_LABELS) == {"", NO_FORM, *DOCUMENT_FORMS}
    assert all(shipped_example(form) for form in DOCUMENT_FORMS)


def test_without_a_token_stage_the_topics_get_the_realised_shares():
    plan = plan_dp_synrag(DPSynRAGSpec(), 10.0, 1e-6)
    stages = plan.per_stage()
    total = plan.rho_total
    # the DP size count and the DP length statistic take their shares
    weights = sum(REALISED_FRACTIONS.values()) / (1.0 - DEFAULT_SIZE_FRACTION - DEFAULT_LENGTH_FRACTION)
    assert stages["size"] / total == pytest.approx(DEFAULT_SIZE_FRACTION)
    assert stages["length"] / total == pytest.approx(DEFAULT_LENGTH_FRACTION)
    assert stages["histogram"] / total == pytest.approx(REALISED_FRACTIONS["hist"] / weights)
    assert stages["phrases"] / total == pytest.approx(REALISED_FRACTIONS["phrases"] / weights)
    assert sum(stages.values()) == pytest.approx(total)
    seed = plan_dp_synrag(DPSynRAGSpec(text="private"), 10.0, 1e-6).per_stage()
    assert seed["histogram"] < stages["histogram"] and "private_prediction" in seed


def test_privet_plan_says_which_form_the_writer_follows_and_why(tmp_path, capsys):
    spec = tiny_spec(tmp_path, text="realised")
    spec.task = "Answer patients' questions about their symptoms"
    spec.privacy.spend_anyway = True
    spec_file = tmp_path / "spec.toml"
    spec.save(spec_file)
    assert privet(["plan", str(spec_file)]) == 0
    out = capsys.readouterr().out
    assert "Document form: the corpus's own forms" in out  # structure discovery, with the task's pick as fallback
    assert "Clinical note" in out and "'patient'" in out


def test_a_realised_document_with_nothing_beyond_the_forms_opening_is_not_kept():
    from core.methods.dp_synrag.write.drafts import has_own_sentence

    lead = "Consultation note."
    assert not has_own_sentence("Consultation note.", lead)  # became "Consultation note. Key terms: tightness."
    assert not has_own_sentence("", lead)
    assert not has_own_sentence("Consultation note. K. M., 47,", lead)
    assert has_own_sentence("Consultation note. K. M., 47, reports cramps.", lead)
    assert has_own_sentence("A short review of a kettle that works well.", "")
