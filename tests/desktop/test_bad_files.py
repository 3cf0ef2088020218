"""Issue 56 item 7: bad files handled in the wizard's words, driven through the Private data page's widgets.

A CSV without a header row: the column pickers list "column 1", "column 2", … with core's statistics of each
(words per row, share of numbers, different values: never a cell's text), the wordiest is proposed as the text, and
Load reads the file by those names, its first row included. A folder with a file that is not UTF-8: the file is
listed by name, with why and what to do, in a box right under the counts (above the length chart), on a laptop
screen without scrolling.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QScrollArea
from tests.desktop.fits import SCREENS, layout_problems, show_at
from tests.helpers import tiny_controller

from desktop.wizard import RunWizard

NAMES = ("Alma Fenwick", "Borislav Quint", "Carys Odell", "Dorian Plaskett", "Elspeth Varga")
NOTE = "{name} came in with a dry cough and a mild fever and was sent home to rest for {days} days."


@pytest.fixture
def wizard(qtbot):
    wiz = RunWizard(tiny_controller(), gpus=[], grace_ms=3000)
    qtbot.addWidget(wiz, before_close_func=lambda w: w.relay.shutdown())
    yield wiz
    wiz.relay.shutdown()


def headerless_csv(folder: Path, n: int = 30) -> Path:
    """Rows of ``number, person, note``, with no header row (the first row is a patient's record)."""
    path = folder / "clinic.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        for i in range(n):
            writer.writerow([1000 + i, NAMES[i % len(NAMES)], NOTE.format(name=NAMES[i % len(NAMES)], days=i % 7 + 1)])
    return path


def choose_file(wizard: RunWizard, qtbot, path: Path) -> None:
    """Type the path and leave the field, as she does."""
    page = wizard.data_page
    page.path.setFocus()
    page.path.setText(str(path))
    page.path.editingFinished.emit()


def items(combo) -> list[tuple[str, str]]:
    return [(combo.itemText(i), combo.itemData(i)) for i in range(combo.count())]


def test_a_file_without_a_header_lists_its_columns_by_position_with_statistics(wizard, qtbot, tmp_path):
    page = wizard.data_page
    wizard.show()
    choose_file(wizard, qtbot, headerless_csv(tmp_path))
    listed = items(page.text_column)
    assert [data for _text, data in listed] == ["", "column 1", "column 2", "column 3"]
    texts = " ".join(text for text, _data in listed)
    assert "column 1 — 1.0 words a row, all numbers, every row different" in texts
    assert "column 2 — 2.0 words a row, no numbers, 5 different values" in texts
    assert "column 3 — " in texts and "words a row, no numbers" in texts
    for private in (*NAMES, "cough", "1000", "fever"):
        assert private not in texts, private  # statistics only: never a cell's text
    assert items(page.person_column)[1:] == listed[1:], "every picker lists the same columns"
    assert page.columns_note.isVisible() and "no header row" in page.columns_note.text()
    assert page.text_column.currentData() == "column 3", "the wordiest column is proposed as the text"
    page.person_column.setCurrentIndex(page.person_column.findData("column 2"))
    qtbot.mouseClick(page.load_button, Qt.MouseButton.LeftButton)
    summary = wizard.controller.summary
    assert summary is not None, page.message.text()
    assert summary.n_documents == 30, "the first row is a record, loaded as one"
    assert summary.n_units == len(NAMES) and summary.unit_kind == "person"
    assert "<b>5</b> people, from <b>30</b> documents" in page.summary.text()
    data = wizard.controller.spec.data
    assert (data.text_column, data.person_column) == ("column 3", "column 2")
    assert page.isComplete()


def test_without_a_text_column_the_message_names_both_ways(wizard, qtbot, tmp_path):
    """Load with "(automatic)" on a header-less file of several wordy columns: core's message, in the wizard, names
    the picker and the command line, and no cell."""
    path = tmp_path / "two.csv"
    path.write_text("".join(f"{NOTE.format(name=n, days=2)},{NOTE.format(name=n, days=3)}\n" for n in NAMES),
                    encoding="utf-8")
    page = wizard.data_page
    wizard.show()
    choose_file(wizard, qtbot, path)
    page.text_column.setCurrentIndex(0)  # (automatic)
    qtbot.mouseClick(page.load_button, Qt.MouseButton.LeftButton)
    message = page.message.text()
    assert "no header row, so its 2 columns are named by position: column 1, column 2" in message
    assert '--text-column "column 3"' in message and "Text column picker on the Private data page" in message
    assert not any(name in message for name in NAMES)
    page.text_column.setCurrentIndex(page.text_column.findData("column 2"))
    qtbot.mouseClick(page.load_button, Qt.MouseButton.LeftButton)
    assert wizard.controller.summary is not None and wizard.controller.summary.n_documents == len(NAMES)


def test_a_file_with_a_header_keeps_its_names(wizard, qtbot, tmp_path):
    path = tmp_path / "notes.csv"
    path.write_text("id,patient,note\n" + "".join(f"{i},{NAMES[i % 5]},{NOTE.format(name='x', days=i)}\n"
                                                  for i in range(12)), encoding="utf-8")
    page = wizard.data_page
    wizard.show()
    choose_file(wizard, qtbot, path)
    assert [data for _t, data in items(page.text_column)] == ["", "id", "patient", "note"]
    assert page.text_column.currentData() == "note" and page.person_column.currentData() == "patient"
    assert page.columns_note.isHidden()


def not_utf8_folder(folder: Path) -> Path:
    folder.mkdir()
    for i in range(12):
        (folder / f"note-{i:02d}.txt").write_text(NOTE.format(name=NAMES[i % 5], days=i), encoding="utf-8")
    (folder / "note-latin1.txt").write_bytes("Le patient est allé à la clinique, fièvre.".encode("latin-1"))
    (folder / "scan.pdf").write_bytes(b"%PDF-1.4 not a document")
    return folder


@pytest.mark.parametrize("screen", ["1366x768-125%", "1280x720"])
def test_a_skipped_file_is_listed_where_she_looks(wizard, qtbot, tmp_path, screen):
    page = wizard.data_page
    size, _points = SCREENS[screen]
    show_at(wizard, size)
    choose_file(wizard, qtbot, not_utf8_folder(tmp_path / "notes"))
    qtbot.mouseClick(page.load_button, Qt.MouseButton.LeftButton)
    assert wizard.controller.summary is not None and wizard.controller.summary.n_units == 12
    assert page.skipped_box.isVisible() and page.skipped_box.title() == "⚠ 2 files were not loaded"
    listed = page.skipped.text()
    assert "note-latin1.txt" in listed and "not in UTF-8 or UTF-16" in listed and "save it again as UTF-8" in listed
    assert "scan.pdf" in listed and "not a .txt or .md file" in listed
    assert page.skipped_names() == ["note-latin1.txt", "scan.pdf"]
    assert "clinique" not in listed, "never the file's text"
    assert not any("UTF-8" in w or "ignored" in w for w in wizard.controller.summary.warnings), "listed once"
    # Above the length chart, and on screen as the page opens (no scrolling to find it).
    top = page.skipped_box.mapTo(wizard, QPoint(0, 0)).y()
    assert top < page.histogram.mapTo(wizard, QPoint(0, 0)).y()
    scroll = page.findChild(QScrollArea)
    visible = scroll.viewport().mapTo(wizard, QPoint(0, 0)).y() + scroll.viewport().height()
    assert top + page.skipped_box.height() <= visible, "the whole list is in view without scrolling"
    assert not layout_problems(wizard, size)
    wizard.next()  # she may go on without them
    assert wizard.currentPage() is wizard.method_page


def test_a_clean_folder_shows_no_skipped_box(wizard, qtbot, tmp_path):
    folder = tmp_path / "clean"
    folder.mkdir()
    for i in range(5):
        (folder / f"n{i}.txt").write_text(NOTE.format(name="x", days=i), encoding="utf-8")
    page = wizard.data_page
    wizard.show()
    choose_file(wizard, qtbot, folder)
    qtbot.mouseClick(page.load_button, Qt.MouseButton.LeftButton)
    assert wizard.controller.summary is not None and page.skipped_box.isHidden()
