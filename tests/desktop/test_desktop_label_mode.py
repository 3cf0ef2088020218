"""The wizard's "How labels are kept" choice ([data] label_mode, docs/method.md §6.3) on the Private data page:
the core's choices and words, stored in the spec, enabled only with a label column, and a mode the chosen method
cannot use refused by the core's spec check."""

from __future__ import annotations

import pytest
from tests.corpus.test_label_column import write_labelled

from core.common.errors import PrivetError
from core.specs.common import LABEL_MODES
from core.specs.label_modes import label_mode_choices, label_mode_words


def test_the_core_words_every_mode_and_says_what_each_method_does_with_labels():
    assert [c.mode for c in label_mode_choices()] == list(LABEL_MODES)
    assert all(c.title and c.explanation for c in label_mode_choices())
    assert "by topic" in label_mode_words("auto", "dp_synrag")
    assert "per category" in label_mode_words("auto", "aug_pe")
    assert "without differential privacy" in label_mode_words("per_class", "rpsg")
    assert "without differential privacy" not in label_mode_words("per_class", "dp_synrag")
    assert label_mode_words("topic_labels", "rpsg") == ""  # not a mode RPSG can use: the spec check says why


def test_the_data_page_offers_the_label_mode_with_a_label_column_and_stores_it(wizard, tmp_path):
    page, controller = wizard.data_page, wizard.controller
    titles = [page.label_mode.itemText(i) for i in range(page.label_mode.count())]
    assert titles == [c.title for c in label_mode_choices()]
    path = write_labelled(tmp_path, 60)
    page.path.setText(str(path))
    page.set_columns("note", "id", "patient")
    assert not page.label_mode.isEnabled()  # no label column: nothing to choose
    page.set_columns("note", "id", "patient", label="department")
    assert page.label_mode.isEnabled()
    assert page.load(), page.message.text()
    assert controller.spec.data.label_mode == "auto"
    controller.spec.method = "dp_synrag"
    page.label_mode.setCurrentIndex(page.label_mode.findData("per_class"))
    assert controller.spec.data.label_mode == "per_class"
    assert page.blocking_message() == ""  # no new Load needed
    assert label_mode_words("per_class", "dp_synrag") in page.summary.text()
    page.label_mode.setCurrentIndex(page.label_mode.findData("topic_labels"))
    assert "kept by topic" in page.summary.text()

    controller.spec.method = "rpsg"  # a method that labels per class only: the core's check refuses the mode
    with pytest.raises(PrivetError, match="topic_labels"):
        controller.spec.check()
    page.label_mode.setCurrentIndex(page.label_mode.findData("auto"))
    page.initializePage()
    assert "without differential privacy" in page.summary.text()
    controller.spec.check()

    page.label_column.setCurrentIndex(0)  # "(none)": the mode goes back to automatic with the next Load
    assert not page.label_mode.isEnabled()
    page.label_mode.setCurrentIndex(page.label_mode.findData("per_class"))
    assert page.load()
    assert controller.spec.data.label_mode == "auto"
