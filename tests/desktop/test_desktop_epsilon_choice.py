"""Issue 56 items 2, 3 and 6 (pytest-qt, offscreen): ε chosen from what the release will hold (the Budget page's
table), the ICD-10-CM list offered for clinical text, and one budget figure on every page."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from tests.helpers import tiny_controller, wizard_notes

from core.ledger import Ledger
from core.ledger.view import CumulativeSpend, after_run_words, spent_words
from core.methods.list_offer import ICD10_CM, offered_lists, plan_offer_lines
from core.run.planning import EPSILON_TABLE, epsilon_table
from core.privacy.budget import RECOMMENDED_EPSILON
from desktop.wizard.wizard import BUDGET, CONFIRM, METHOD, MODEL, TASK

UNITS_FOR_TOPICS = 300  # the tiny plan expects topics from ε = 2 on 300 units, and at no ε of the table on 40


def to_budget(wiz, tmp_path, n: int = UNITS_FOR_TOPICS, person: str = "patient") -> None:
    page = wiz.data_page
    page.path.setText(str(wizard_notes(tmp_path, n)))
    page.set_columns("note", "id", person)
    assert page.load(), page.message.text()
    wiz.next()
    assert wiz.currentId() == METHOD
    wiz.method_page.select("dp_synrag")
    wiz.next()
    assert wiz.currentId() == BUDGET


# --- item 2: the ε table ----------------------------------------------------------------------------------------


def test_the_budget_page_shows_a_row_per_epsilon_with_its_band_topics_and_documents(wizard, tmp_path):
    to_budget(wizard, tmp_path)
    page = wizard.budget_page
    rows = page.table_rows()
    assert [float(r[0].split()[0]) for r in rows] == list(EPSILON_TABLE)
    assert [r[1] for r in rows] == ["■ Strong protection", "■ Moderate protection", "■ Moderate protection",
                                    "■ Weak protection", "■ Weak protection"]
    bands = [page.table.item(r, 1).data(Qt.ItemDataRole.UserRole + 1) for r in range(len(rows))]
    assert bands == ["green", "amber", "amber", "red", "red"]
    core = epsilon_table(wizard.controller.spec, UNITS_FOR_TOPICS)  # the same figures as core's (one home)
    assert [r[2] for r in rows] == [row.topics_words() for row in core.rows]
    assert [r[3] for r in rows] == [row.documents_words() for row in core.rows]
    note = page.table_note.text()
    assert f"for the {UNITS_FOR_TOPICS} units loaded" in note and "does not look at the documents' words" in note


def test_the_default_row_is_the_smallest_epsilon_that_finds_topics(wizard, tmp_path):
    to_budget(wizard, tmp_path)
    page = wizard.budget_page
    suggested = page.epsilon_table.suggested
    assert suggested is not None and suggested != RECOMMENDED_EPSILON
    assert all(not row.holds_topics for row in page.epsilon_table.rows if row.epsilon < suggested)
    assert page.epsilon.value() == suggested and wizard.controller.spec.privacy.epsilon == suggested
    row = page.selected_row()
    assert row is not None and page.table_rows()[row][0] == f"{suggested:g} (smallest that finds topics)"
    assert f"is ε = {suggested:g}" in page.table_note.text()


def test_clicking_a_row_sets_epsilon_and_the_choice_stands(wizard, qtbot, tmp_path):
    to_budget(wizard, tmp_path)
    page = wizard.budget_page
    last = page.table.rowCount() - 1
    rect = page.table.visualRect(page.table.model().index(last, 2))
    qtbot.mouseClick(page.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert page.epsilon.value() == EPSILON_TABLE[-1] and page.selected_row() == last
    page.refresh_plan()
    assert wizard.controller.spec.privacy.epsilon == EPSILON_TABLE[-1]
    assert f"ε = {EPSILON_TABLE[-1]:g}" in page.band.text()
    page.set_epsilon(3.0)  # typed: not a row of the table
    assert page.selected_row() is None
    wizard.next()
    wizard.back()
    page.initializePage()  # the page shown again: her choice is not replaced by the suggestion
    assert page.epsilon.value() == 3.0


def test_no_epsilon_is_suggested_when_none_finds_topics(wizard, tmp_path):
    to_budget(wizard, tmp_path, n=40)
    page = wizard.budget_page
    assert page.table.rowCount() == len(EPSILON_TABLE) and page.epsilon_table.suggested is None
    assert page.epsilon.value() == RECOMMENDED_EPSILON
    assert "No ε up to 10 is expected to find a topic" in page.table_note.text()


def test_a_stated_public_bound_is_what_the_table_is_computed_for(tmp_path):
    controller = tiny_controller()
    controller.load_data(str(wizard_notes(tmp_path, 40)), "note", "id", "patient")
    controller.spec.privacy.max_units = UNITS_FOR_TOPICS
    table = controller.epsilon_table()
    assert table.public_bound and table.units == UNITS_FOR_TOPICS
    assert "public upper bound of 300 units" in table.count_words()
    assert table.suggested is not None  # from the bound, never from the 40 loaded


def test_privet_plan_prints_the_table_and_the_list_offer(tmp_path):
    from core.run.pipeline_cli import choice_lines

    controller = tiny_controller()
    controller.load_data(str(wizard_notes(tmp_path, UNITS_FOR_TOPICS)), "note", "id", "patient")
    lines = choice_lines(controller.spec, UNITS_FOR_TOPICS)
    assert lines[0].startswith("Expected release by epsilon, for the 300 units loaded")
    assert sum(" protection " in line and line.strip()[0].isdigit() for line in lines) == len(EPSILON_TABLE)
    assert any("<- smallest that finds topics" in line for line in lines)
    assert any(line.startswith("Public word list: icd10-cm fits this task") and "costs no privacy budget" in line
               for line in lines)


# --- item 3: the ICD-10-CM list offered for clinical text ---------------------------------------------------------


def test_the_offer_reads_public_words_only():
    assert [o.name for o in offered_lists(["Answer questions about clinic visits."])] == [ICD10_CM]
    assert offered_lists(["note", "id", "patient_id"])[0].because == ("patient",)
    assert offered_lists(["Write film reviews for a recommender.", "text", "id", "user"]) == []
    assert offered_lists(["medication", "clinical"])[0].words().endswith("it is published, not read from your data.")


def test_plan_says_the_list_is_used_once_it_is(tmp_path):
    controller = tiny_controller()
    controller.spec.data.person_column = "patient"
    assert "fits this task" in plan_offer_lines(controller.spec)[0]
    controller.spec.dp_synrag.domain_lists = [ICD10_CM]
    assert plan_offer_lines(controller.spec)[0].startswith("Public word list: icd10-cm is used")


def to_task(wiz) -> None:
    wiz.next()
    assert wiz.currentId() == MODEL
    wiz.model_page.select_source("tiny-random")
    wiz.next()
    assert wiz.currentId() == TASK


def test_clinical_columns_tick_icd10_with_why_it_is_free(wizard, tmp_path):
    to_budget(wizard, tmp_path, n=40)
    to_task(wizard)
    names = wizard.task_page.topic_names
    assert names.lists[ICD10_CM].isChecked()
    assert "“patient”" in names.offer.text() and "costs no privacy budget" in names.offer.text()
    assert not names.offer.isHidden()
    wizard.next()
    assert wizard.currentId() == CONFIRM
    assert ICD10_CM in wizard.controller.spec.dp_synrag.domain_lists


def test_no_clinical_words_no_tick_and_her_untick_stands(wizard, qtbot, tmp_path):
    to_budget(wizard, tmp_path, n=40, person="")
    to_task(wizard)
    page = wizard.task_page
    names = page.topic_names
    page.task.setPlainText("Write short product reviews.")
    assert not names.lists[ICD10_CM].isChecked() and names.offer.isHidden()
    page.task.setPlainText("Write short clinic notes for triage training.")  # the task now points to clinical text
    assert names.lists[ICD10_CM].isChecked() and "“clinic”" in names.offer.text()
    names.lists[ICD10_CM].click()  # she unticks it
    page.task.setPlainText("Write short clinic notes about patients.")
    assert not names.lists[ICD10_CM].isChecked() and names.offer.isHidden()


def test_an_opened_spec_keeps_its_lists(wizard, tmp_path):
    wizard.controller.suggest_defaults = False  # as ``open_spec`` and ``for_run`` set it
    to_budget(wizard, tmp_path)
    assert wizard.budget_page.epsilon.value() == RECOMMENDED_EPSILON  # no ε suggested either
    to_task(wizard)
    assert not wizard.task_page.topic_names.lists[ICD10_CM].isChecked()


# --- item 6: one budget figure -------------------------------------------------------------------------------------


def test_spent_and_after_run_words_count_runs_and_say_why_delta_moves():
    assert spent_words(4.0, 1e-6, 1) == "ε = 4 at δ = 1e-06 in 1 run"
    assert spent_words(0.0, 1e-6, 0) == "nothing yet"
    moved = CumulativeSpend(2e-6, 3.83, 7.2, None, 4.0, 1e-6, 2)
    text = after_run_words(moved)
    assert "ε ≈ 7.2 at δ = 2e-06" in text and "Spent so far: ε = 4 at δ = 1e-06 in 2 runs" in text
    assert "Why the δ changes" in text and "sum of its runs' δ" in text and "ε ≈ 3.83" in text
    capped = CumulativeSpend(1e-5, 4.0, 7.0, 20.0, 4.0, 1e-5, 1)
    assert "Why" not in after_run_words(capped)


def test_every_page_states_the_same_spent_figure_in_runs(wizard, tmp_path):
    to_budget(wizard, tmp_path, n=40)
    key = wizard.controller.booking().key
    with Ledger() as ledger:  # two earlier runs of three stages each: 2 runs, not 6 charges
        for run in ("run-1", "run-2"):
            for stage in ("histogram", "cluster_keywords", "phrases"):
                ledger.charge(key, run, stage, 0.05, 1e-6, "an earlier run")
        spent = ledger.summary(key)
    page = wizard.budget_page
    page.set_epsilon(4.0)
    page.refresh_plan()
    figure = spent_words(spent.spent_epsilon, spent.delta, 2)
    assert figure.endswith("in 2 runs") and figure in page.ledger.text() and "charge" not in page.ledger.text()
    assert figure in page.after_run.text() and "After this run, this dataset's total will be" in page.after_run.text()
    assert "Why the δ changes" in page.after_run.text()  # no cap: stated at the runs' δ summed with this one's
    to_task(wizard)
    wizard.next()
    assert wizard.currentId() == CONFIRM
    confirm = wizard.confirm_page.cumulative.text()
    assert figure in confirm and "Why the δ changes" in confirm
    after = page.after_run.text().split(" Spent so far")[0]
    assert after in confirm  # the Budget page's total after this run is Confirm's


@pytest.mark.parametrize("n_runs", [1, 5])
def test_no_page_counts_charges(n_runs):
    assert "charge" not in spent_words(1.0, 1e-6, n_runs)
