"""Step 1: choose the private data (folder or table file) and its columns; show what was loaded."""

from __future__ import annotations

from html import escape
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox, QFileDialog, QFormLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout,
)

from core.common.errors import PrivetError
from core.corpus.profile import TableColumns
from desktop.controller import CorpusSummary, WizardController
from desktop.widgets.histogram import Histogram
from desktop.wizard.common import Page, scrolling_layouts

NONE = "(none)"
MISSING = "(not in this file)"
SKIPPED_STYLE = "QGroupBox { border: 2px solid #ef8f00; border-radius: 4px; font-weight: bold; margin-top: 1.4em; } " \
                "QGroupBox::title { subcontrol-origin: margin; left: 8px; color: #8d4e00; }"
SKIPPED_SHOWN = 30  # files listed by name (the rest are counted)
HEADERLESS_NOTE = ("This file has no header row, so its columns are named by position. Beside each: its words per "
                   "row, its share of numbers and how many different values it holds (never its text). Choose the "
                   "column that holds the documents as the text column.")


class DataPage(Page):
    def __init__(self, controller: WizardController) -> None:
        super().__init__(controller, "Private data",
                         "Choose a folder of .txt/.md files (one document per file) or a .csv, .tsv or .jsonl "
                         "file, then press Load. Document text is never shown here. New to Privet? The demo corpus "
                         "(synthetic clinic notes) is under Help → Try with the demo corpus in the main window.")
        self.path = QLineEdit()
        self.path.setPlaceholderText("Folder or table file with the private documents")
        self.path.setToolTip("The private corpus. It is read on this computer only.")
        browse_file = QPushButton("&File…")
        browse_file.setToolTip("Choose a .csv, .tsv or .jsonl file")
        browse_file.clicked.connect(self._browse_file)
        browse_dir = QPushButton("F&older…")
        browse_dir.setToolTip("Choose a folder of .txt or .md files")
        browse_dir.clicked.connect(self._browse_dir)
        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(browse_file)
        row.addWidget(browse_dir)

        self.text_column = QComboBox()
        self.text_column.setToolTip("The column that holds the document text")
        self.id_column = QComboBox()
        self.id_column.setToolTip("Optional: a column with a document id")
        self.person_column = QComboBox()
        self.person_column.setToolTip(
            "Optional: a column naming the person each document is about. When set, the unit of "
            "privacy is the person (all of their documents), which is what you want for patient records."
        )
        self.label_column = QComboBox()
        self.label_column.setToolTip(
            "Optional: a column that puts each document in a category with few values (a department, a "
            "diagnosis group, a rating). Every synthetic document then carries one of these labels, and each "
            "category is written from its own documents only, for the same privacy budget. A column of free "
            "text or of many different values is refused."
        )
        self.label_mode = QComboBox()
        self.label_mode.setObjectName("label_mode")
        for choice in controller.label_mode_choices():
            self.label_mode.addItem(choice.title, choice.mode)
            self.label_mode.setItemData(self.label_mode.count() - 1, choice.explanation, Qt.ItemDataRole.ToolTipRole)
        self.label_mode.setToolTip("How the label column is kept. " + " ".join(
            f"{c.title}: {c.explanation}" for c in controller.label_mode_choices()))
        self.label_mode.setEnabled(False)
        self.load_button = QPushButton("&Load")
        self.load_button.setToolTip("Read the data and show a summary")
        self.load_button.clicked.connect(self.load)
        self._load_error = ""
        self._column_note = ""  # a choice the new file lacks, replaced by a guess: said until the next Load

        form = QFormLayout()
        form.addRow("&Data:", row)
        form.itemAt(0, QFormLayout.ItemRole.LabelRole).widget().setBuddy(self.path)
        for label, combo in (("&Text column:", self.text_column), ("&Id column:", self.id_column),
                             ("&Person column:", self.person_column), ("La&bel column:", self.label_column),
                             ("How labels are &kept:", self.label_mode)):
            form.addRow(label, combo)
            form.labelForField(combo).setBuddy(combo)
        self.columns_note = QLabel()  # a file without a header row: its columns are named by position
        self.columns_note.setObjectName("columns_note")
        self.columns_note.setWordWrap(True)
        self.columns_note.setVisible(False)
        form.addRow("", self.columns_note)
        form.addRow("", self.load_button)

        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.histogram = Histogram()
        self.warnings = QLabel()
        self.warnings.setWordWrap(True)
        self.warnings.setObjectName("load_warnings")
        self.warnings.setStyleSheet("color: #8d6e00;")
        # Files of a folder that were not loaded, each by name with why and what to do: right under the counts,
        # above the chart, where she looks (never a warning line under the chart).
        self.skipped = QLabel()
        self.skipped.setObjectName("skipped_files")
        self.skipped.setWordWrap(True)
        self.skipped.setTextFormat(Qt.TextFormat.RichText)
        self.skipped_box = QGroupBox()
        self.skipped_box.setObjectName("skipped_files_box")
        self.skipped_box.setStyleSheet(SKIPPED_STYLE)
        QVBoxLayout(self.skipped_box).addWidget(self.skipped)
        self.skipped_box.setVisible(False)
        box = QGroupBox("What was loaded")
        box_layout = QVBoxLayout(box)
        box_layout.addWidget(self.summary)
        box_layout.addWidget(self.skipped_box)
        box_layout.addWidget(self.warnings)
        self.lengths_label = QLabel("Lengths (characters):")
        box_layout.addWidget(self.lengths_label)
        box_layout.addWidget(self.histogram)

        layout, outer = scrolling_layouts(self)  # scrolls: the summary and the warnings do not fit every screen
        layout.addLayout(form)
        layout.addWidget(box)
        layout.addStretch(1)
        outer.addWidget(self.message)  # why Next is blocked stays in view

        self.path.editingFinished.connect(self._path_changed)
        self.path.textChanged.connect(self._inputs_changed)
        for combo in (self.text_column, self.id_column, self.person_column, self.label_column):
            combo.currentIndexChanged.connect(self._inputs_changed)
        self.label_column.currentIndexChanged.connect(self._label_column_changed)
        self.label_mode.currentIndexChanged.connect(self._label_mode_changed)

    # --- Qt wizard hooks ---------------------------------------------------------------------

    def initializePage(self) -> None:  # noqa: N802 - Qt API
        data = self.controller.spec.data
        if data.path and self.path.text() != data.path:
            self.path.setText(data.path)
            self._fill_columns(data.text_column, data.id_column, data.person_column, label=data.label_column)
        self._select_label_mode(data.label_mode)
        self._show_summary(self.controller.summary)
        self.refresh()

    def blocking_message(self) -> str:
        if self._load_error:
            return self._load_error
        if not self.path.text().strip():
            return "Choose a folder or a table file, then press Load."
        if not self._loaded_matches_inputs():
            return (self._column_note + " " if self._column_note else "") + "Press Load to read the data with these settings."
        return ""

    def is_instruction(self, problem: str) -> bool:
        return problem != self._load_error  # "choose a file", "press Load": steps, not errors

    # --- actions -------------------------------------------------------------------------------

    def load(self) -> bool:
        """Load with the current inputs; show the summary or the loader's message."""
        self._fill_columns_if_needed()
        try:
            summary = self.controller.load_data(self.path.text().strip(), self._column(self.text_column),
                                                self._column(self.id_column), self._column(self.person_column),
                                                self._column(self.label_column))
        except PrivetError as exc:
            self.controller.summary = None
            self._show_summary(None)
            self._load_error = exc.user_message()
            self.completeChanged.emit()
            return False
        self._load_error = ""
        self._column_note = ""
        self._show_summary(summary)
        self._show_size_warnings()
        self.set_message("", error=False)
        self.completeChanged.emit()
        return True

    def _browse_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose a table file", self.path.text(),
                                              "Tables (*.csv *.tsv *.jsonl);;All files (*)")
        if path:
            self.path.setText(path)
            self._path_changed()

    def _browse_dir(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Choose a folder of documents", self.path.text())
        if path:
            self.path.setText(path)
            self._path_changed()

    # --- helpers -------------------------------------------------------------------------------

    def set_columns(self, text: str = "", id_: str = "", person: str = "", label: str = "") -> None:
        """Select columns by name (used by tests, the demo and opened run specs)."""
        self._fill_columns(text, id_, person, label=label)

    def _path_changed(self) -> None:
        """A new path: keep the column choices that still exist there and forget the old summary."""
        if self.controller.summary is not None and self.controller.spec.data.path != self.path.text().strip():
            self._show_summary(None)
        self._fill_columns(self._column(self.text_column), self._column(self.id_column),
                           self._column(self.person_column), suggest=True, label=self._column(self.label_column))

    def _fill_columns_if_needed(self) -> None:
        if self.text_column.count() == 0:
            self._fill_columns(suggest=True)

    def _fill_columns(self, text: str = "", id_: str = "", person: str = "", suggest: bool = False,
                      label: str = "") -> None:
        path = self.path.text().strip()
        found: TableColumns | None = None
        if path and Path(path).expanduser().is_file():
            try:
                found = self.controller.table_columns(path)
            except PrivetError as exc:
                self.set_message(exc.user_message())
        columns = found.names if found is not None else []
        choices = {p.name: p.choice() for p in found.profiles} if found is not None else {}
        self.columns_note.setText(HEADERLESS_NOTE if found is not None and not found.has_header else "")
        self.columns_note.setVisible(bool(self.columns_note.text()))
        if suggest and found is not None and columns:
            had_columns = self.text_column.count() > 1  # the user saw columns before: keep an explicit "(none)"
            guess = found.suggested()  # by name; without a header row, the wordiest column as the text
            before = {"text": text, "id": id_, "person": person}
            text = text if text in columns else guess["text"]
            id_ = id_ if id_ in columns or (had_columns and not id_) else guess["id"]
            person = person if person in columns or (had_columns and not person) else guess["person"]
            self._say_replaced(before, {"text": text, "id": id_, "person": person}, Path(path).name)
            label = label if label in columns else ""  # never guessed: a label column is the custodian's choice
        for combo, chosen, with_none in ((self.text_column, text, False), (self.id_column, id_, True),
                                         (self.person_column, person, True), (self.label_column, label, True)):
            combo.blockSignals(True)
            combo.clear()
            combo.addItem(NONE if with_none else "(automatic)", "")
            for name in columns:
                combo.addItem(choices.get(name, name), name)  # the name, with core's statistics of the column
            if chosen and columns and chosen not in columns:
                # A name asked for (a run spec, the demo) that this file lacks stays chosen, so that Load
                # says so with the columns found (core.corpus.column_choice) instead of silently using another.
                combo.addItem(f"{chosen} {MISSING}", chosen)
            index = combo.findData(chosen) if chosen else 0
            combo.setCurrentIndex(max(index, 0))
            combo.setEnabled(bool(columns))
            combo.blockSignals(False)
        self._label_column_changed()
        self.completeChanged.emit()

    def _say_replaced(self, before: dict[str, str], after: dict[str, str], file_name: str) -> None:
        """A new file without a column chosen before: say which choice was changed (never the file's names)."""
        changed = [f"{role} column '{name}'" for role, name in before.items() if name and after[role] != name]
        self._column_note = (f"{file_name} has no {' or '.join(changed)}: another column was picked by its name. "
                             "Check the column choices." if changed else "")

    @staticmethod
    def _column(combo: QComboBox) -> str:
        return combo.currentData() or ""

    def _loaded_matches_inputs(self) -> bool:
        data = self.controller.spec.data
        return (self.controller.summary is not None
                and data.path == self.path.text().strip()
                and data.person_column == self._column(self.person_column)
                and data.label_column == self._column(self.label_column)
                and data.id_column == self._column(self.id_column)
                and data.text_column == self._column(self.text_column))

    def _select_label_mode(self, mode: str) -> None:
        self.label_mode.blockSignals(True)
        self.label_mode.setCurrentIndex(max(self.label_mode.findData(mode), 0))
        self.label_mode.blockSignals(False)
        self.label_mode.setEnabled(bool(self._column(self.label_column)))

    def _label_column_changed(self) -> None:
        self.label_mode.setEnabled(bool(self._column(self.label_column)))

    def _label_mode_changed(self) -> None:
        """A new label mode: kept in the spec at once (it needs no new Load), the summary's words follow it."""
        self.controller.set_label_mode(self.label_mode.currentData() or "auto")
        if self.controller.summary is not None:
            self._show_summary(self.controller.summary)

    def _inputs_changed(self) -> None:
        self._load_error = ""
        self.completeChanged.emit()

    def _show_size_warnings(self) -> None:
        """The planner's warnings for this corpus size (e.g. too few units for any topic to survive the noise)."""
        try:
            plan = self.controller.plan()
        except PrivetError:
            return
        extra = [w for w in plan.warnings if w not in self.warnings.text()]
        if extra:
            text = self.warnings.text()
            self.warnings.setText((text + "\n" if text else "") + "\n".join(f"⚠ {w}" for w in extra))

    def skipped_names(self) -> list[str]:
        """The files listed as not loaded (what she reads in the box)."""
        summary = self.controller.summary
        return [f.name for f in summary.skipped_files] if summary is not None else []

    def _show_skipped(self, summary: CorpusSummary | None) -> None:
        files = list(summary.skipped_files) if summary is not None else []
        self.skipped_box.setVisible(bool(files))
        if not files:
            self.skipped.clear()
            return
        n = len(files)
        self.skipped_box.setTitle(f"⚠ {n} file{'s were' if n != 1 else ' was'} not loaded")
        items = "".join(f"<li><b>{escape(f.name)}</b>: {escape(f.why)}" + (f" — {escape(f.fix)}." if f.fix else ".")
                        + "</li>" for f in files[:SKIPPED_SHOWN])
        more = f"<p>… and {n - SKIPPED_SHOWN} more.</p>" if n > SKIPPED_SHOWN else ""
        self.skipped.setText(f"<ul style='margin-left: 0px; -qt-list-indent: 1;'>{items}</ul>{more}"
                             "Their documents are not part of this run. Fix them and press Load again, or go on "
                             "without them.")

    def _show_summary(self, summary: CorpusSummary | None) -> None:
        self._show_skipped(summary)
        if summary is None:
            self.summary.setText("Nothing loaded yet.")
            self.histogram.set_data([], [])
            self.warnings.clear()
            return
        by_person = summary.unit_kind == "person"
        if by_person:
            protected = (f"<b>{summary.n_units}</b> people, from <b>{summary.n_documents}</b> documents. The "
                         "privacy guarantee protects each person: all of their documents together.")
        else:
            protected = (f"<b>{summary.n_units}</b> documents. The privacy guarantee protects each document "
                         "(choose a person column to protect each person instead).")
        whole = "People whose documents were" if by_person else "Documents"
        lines = [protected, f"Empty documents skipped: {summary.n_empty_skipped}. {whole} shortened to the "
                            f"length limit: {summary.n_truncated}."]
        self.lengths_label.setText("Length of each person's documents together (characters):" if by_person
                                   else "Length of each document (characters):")
        if summary.lengths is not None:
            ls = summary.lengths
            lines.append(f"Length: median {ls.median:.0f} characters (from {ls.min} to {ls.max}).")
            # The axis names the shortest and the longest length, as the line above does: the last bin's
            # upper edge (a whole bin width past the shortest) would read as a length no unit has.
            edges = list(ls.bin_edges)
            if edges:
                edges[0], edges[-1] = float(ls.min), float(ls.max)
            self.histogram.set_data(ls.bin_counts, edges)
        if summary.n_label_values:
            lines.append(f"Labels: <b>{summary.n_label_values}</b> different values in the column "
                         f"'{self.controller.spec.data.label_column}'. Each synthetic document will carry one. "
                         + self.controller.label_mode_words())
        self.summary.setText("<br>".join(lines))
        self.warnings.setText("\n".join(f"⚠ {w}" for w in summary.warnings))
