"""Step 8: browse the synthetic corpus, see the on-screen internal check, export and verify."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox, QFileDialog, QGridLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit, QListView, QListWidget, QMessageBox,
    QPlainTextEdit, QPushButton, QScrollArea, QSplitter, QTabWidget, QVBoxLayout, QWidget,
)
from PySide6.QtCore import Qt

from core.common.errors import PrivetError
from core.evaluation.run_fidelity import figure_lines
from core.specs.method_catalogue import ReleasedFormsView
from desktop.controller import WizardController, verify_folder
from desktop.widgets.collapsible import Collapsible
from desktop.wizard.common import Page, scrolling_layouts
from desktop.wizard.run_page import RunPage

LIST_LABEL_CHARS = 90
ALLOCATION_TOPICS = 12  # topics named on the Review page (the rest are counted)
FORMS_LISTED = 5  # the corpus's own forms listed on the Review page (the rest are counted)
FORM_CHARS = 110  # the commonest form quoted in the summary line, at most
DOCUMENTS_TAB = "Synthetic documents"
PAIRS_TAB = "Side by side with yours (real text: this screen only)"
TABS_MIN_HEIGHT = 220  # pixels of the documents (or the side-by-side view), at least: the page scrolls
PAIR_MIN_HEIGHT = 90  # pixels of one document side by side, at least (the tab scrolls)


def _short(text: str, chars: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"


def forms_words(view: ReleasedFormsView | None) -> str:
    """The Review page's one paragraph on the corpus's own forms ("" when the run looked for none)."""
    if view is None:
        return ""
    shipped = f"the shipped {view.fallback_form} form" if view.fallback_form else "a shipped form"
    if view.followed and view.forms:
        n = len(view.forms)
        skeleton, count = view.forms[0]
        return (f"Written in the corpus's own forms, released under DP: {n} form{'s' if n != 1 else ''}. The "
                f"commonest (noisy count {max(count, 0.0):.0f}): “{_short(skeleton, FORM_CHARS)}”. Slots such as "
                "[name], [number] and [text] were filled with words the run released and public values, never with "
                "your text.")
    words = f"No form of the corpus stood for enough of it; the documents follow {shipped}."
    if view.forms:
        n = len(view.forms)
        words += (f" ({n} form{'s were' if n != 1 else ' was'} released under DP, standing for too little of the "
                  "corpus by their noisy counts.)")
    return words


def forms_listing(view: ReleasedFormsView | None, most: int = FORMS_LISTED) -> str:
    """The released forms, commonest first, each with its noisy count (plain text)."""
    if view is None or not view.forms:
        return ""
    lines = [f"{i}. (noisy count {max(count, 0.0):.0f}) {skeleton}" for i, (skeleton, count)
             in enumerate(view.forms[:most], 1)]
    if len(view.forms) > most:
        lines.append(f"… and {len(view.forms) - most} more.")
    return "\n\n".join(lines)


def _reader(text: str, name: str) -> QPlainTextEdit:
    box = QPlainTextEdit(text)
    box.setReadOnly(True)
    box.setObjectName(name)
    box.setMinimumHeight(PAIR_MIN_HEIGHT)
    return box


def allocation_words(allocation: list[tuple[str, float, int]]) -> str:
    """The documents planned per topic in plain words ("" without any), commonest topics first."""
    if not allocation:
        return ""
    shown = sorted(allocation, key=lambda t: -t[2])
    listed = ", ".join(f"{word} {n}" for word, _count, n in shown[:ALLOCATION_TOPICS])
    more = f", and {len(shown) - ALLOCATION_TOPICS} more topics" if len(shown) > ALLOCATION_TOPICS else ""
    return (f"Documents planned per topic, in proportion to how many documents each topic stands for (estimated from "
            f"noisy counts released by the run; a document a more specific topic describes counts there): "
            f"{listed}{more}. A few may have been dropped as near-duplicates or by the usefulness check.")


class ReviewPage(Page):
    def __init__(self, controller: WizardController, run_page: RunPage) -> None:
        super().__init__(controller, "Review and export", "Read the synthetic corpus, then export it with its "
                         "signed certificate.")
        self.run_page = run_page
        self.texts: list[str] = []
        self.exported: Path | None = None

        self.documents = QListWidget()
        self.documents.setToolTip("Synthetic documents; select one to read it")
        # each document's first words wrap within the list: it never scrolls sideways on a laptop screen
        self.documents.setWordWrap(True)
        self.documents.setResizeMode(QListView.ResizeMode.Adjust)
        self.documents.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.viewer = QPlainTextEdit()
        self.viewer.setReadOnly(True)
        self.documents.currentRowChanged.connect(self._show_document)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.documents)
        splitter.addWidget(self.viewer)
        self.count = QLabel()
        self.allocation = QLabel()  # documents per topic (released values: docs/method.md §6.2)
        self.allocation.setWordWrap(True)
        self.allocation.setObjectName("allocation")
        self.classes = QLabel()
        self.classes.setWordWrap(True)
        self.classes.setObjectName("class_counts")
        self.classes.setToolTip("How many units carry each label, as released with noise (part of the certificate), "
                                "and how many synthetic documents carry it")

        self.check = QLabel()
        self.check.setWordWrap(True)
        self.check.setObjectName("internal_check")
        check_box = QGroupBox("Internal check — shown on this screen only, never exported")
        check_box.setToolTip("Names from the private corpus found in the synthetic text. This uses the "
                             "private data without any noise, so it is not part of the export.")
        QVBoxLayout(check_box).addWidget(self.check)

        # The corpus's own forms (structure discovery): released under DP, so part of what the certificate covers.
        self.forms = QLabel()
        self.forms.setWordWrap(True)
        self.forms.setTextFormat(Qt.TextFormat.PlainText)  # a skeleton is the corpus's wording, never markup
        self.forms.setObjectName("released_forms")
        self.forms_list = QPlainTextEdit()
        self.forms_list.setReadOnly(True)
        self.forms_list.setObjectName("released_forms_list")
        self.forms_list.setMaximumHeight(100)
        self.forms_more = Collapsible("The forms released, commonest first", self.forms_list)
        self.forms_section = QWidget()
        forms_layout = QVBoxLayout(self.forms_section)
        forms_layout.setContentsMargins(0, 0, 0, 0)
        forms_layout.addWidget(self.forms)
        forms_layout.addWidget(self.forms_more)

        # The fidelity report: computed on the private corpus without noise at the end of the run (run folder only).
        self.fidelity = QLabel()
        self.fidelity.setWordWrap(True)
        self.fidelity.setTextFormat(Qt.TextFormat.PlainText)
        self.fidelity.setObjectName("fidelity")
        self.pairs = QWidget()
        self.pairs_grid = QGridLayout(self.pairs)
        self.pairs_grid.setContentsMargins(0, 0, 0, 0)
        self.pairs.setObjectName("side_by_side")
        self.side_by_side = QPushButton("Read 3 synthetic documents beside the nearest of &yours")
        self.side_by_side.setToolTip("Each synthetic document beside the most similar of your own documents (real "
                                     "text, shown on this screen only; never exported)")
        self.side_by_side.clicked.connect(self.show_side_by_side)
        self.fidelity_box = QGroupBox("Fidelity — shown on this screen only, never exported")
        self.fidelity_box.setToolTip("How close the synthetic documents are to yours, computed on your private "
                                     "documents without noise at the end of the run. Kept in the private run folder; "
                                     "never part of the export or the certificate.")
        fidelity_layout = QVBoxLayout(self.fidelity_box)
        fidelity_layout.addWidget(self.fidelity)
        button_row = QHBoxLayout()
        button_row.addWidget(self.side_by_side)
        button_row.addStretch(1)
        fidelity_layout.addLayout(button_row)
        # the documents and the side-by-side view share the page's stretching area, so it fits a 1280×720 screen
        self.tabs = QTabWidget()
        self.tabs.setObjectName("review_tabs")
        self.tabs.addTab(splitter, DOCUMENTS_TAB)
        pairs_scroll = QScrollArea()  # scrolls rather than growing the page
        pairs_scroll.setWidgetResizable(True)
        pairs_scroll.setWidget(self.pairs)
        self.pairs_tab = self.tabs.addTab(pairs_scroll, PAIRS_TAB)

        self.out_dir = QLineEdit()
        self.out_dir.setToolTip("The export folder (it must not exist yet, unless Overwrite is ticked)")
        browse = QPushButton("&Browse…")
        browse.clicked.connect(self._browse)
        self.overwrite = QCheckBox("&Overwrite")
        self.export_button = QPushButton("&Export")
        self.export_button.setToolTip("Write the synthetic corpus and the signed certificate to the folder")
        self.export_button.clicked.connect(self.export)
        self.open_button = QPushButton("&Open folder")
        self.open_button.setEnabled(False)
        self.open_button.clicked.connect(self._open_folder)
        row = QHBoxLayout()
        row.addWidget(QLabel("Export to:"))
        row.addWidget(self.out_dir, 1)
        row.addWidget(browse)
        row.addWidget(self.overwrite)
        row.addWidget(self.export_button)
        row.addWidget(self.open_button)
        self.export_result = QLabel()
        self.export_result.setWordWrap(True)
        self.export_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.exported_path = QLineEdit()
        self.exported_path.setReadOnly(True)
        self.exported_path.setToolTip("Where the release was written; copy it to open it yourself")
        self.copy_button = QPushButton("Cop&y path")
        self.copy_button.clicked.connect(self.copy_path)
        path_row = QHBoxLayout()
        path_row.addWidget(QLabel("Release folder:"))
        path_row.addWidget(self.exported_path, 1)
        path_row.addWidget(self.copy_button)
        self.path_row = QWidget()
        self.path_row.setLayout(path_row)
        self.path_row.setVisible(False)
        self.guarantee = QLabel()
        self.guarantee.setWordWrap(True)
        self.guarantee.setObjectName("guarantee")
        self.guarantee.setStyleSheet("font-weight: bold;")

        # What there is to read scrolls (up and down) on a small screen; the export row and its outcome stay in view.
        self.tabs.setMinimumHeight(TABS_MIN_HEIGHT)
        layout, outer = scrolling_layouts(self)
        layout.addWidget(self.guarantee)
        layout.addWidget(self.count)
        layout.addWidget(self.allocation)
        layout.addWidget(self.classes)
        layout.addWidget(self.forms_section)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(check_box)
        layout.addWidget(self.fidelity_box)
        outer.addLayout(row)
        outer.addWidget(self.export_result)
        outer.addWidget(self.path_row)
        outer.addWidget(self.message)

    def initializePage(self) -> None:  # noqa: N802 - Qt API
        result = self.run_page.result or {}
        path = result.get("synthetic_path")
        self.texts = self.controller.read_synthetic(path) if path and Path(path).is_file() else []
        self.documents.clear()
        for i, text in enumerate(self.texts):
            label = text.replace("\n", " ")
            self.documents.addItem(f"{i + 1}. {label[:LIST_LABEL_CHARS]}{'…' if len(label) > LIST_LABEL_CHARS else ''}")
        self.count.setText(f"{len(self.texts)} synthetic documents.")
        run_dir = result.get("run_dir")
        self.allocation.setText(allocation_words(self.controller.released_allocation(run_dir)) if run_dir else "")
        self.allocation.setVisible(bool(self.allocation.text()))
        self._show_classes(result.get("run_dir"))
        self._show_forms(run_dir)
        self._show_fidelity(run_dir)
        self.guarantee.setText(self.controller.guarantee_heading(result["run_dir"]) if result.get("run_dir") else "")
        if self.texts:
            self.documents.setCurrentRow(0)
        self._show_check()
        run_id = Path(result["run_dir"]).name if result.get("run_dir") else ""
        self.out_dir.setText(str(self.controller.export_folder(run_id)))
        size = self.controller.release_size(result["run_dir"]) if result.get("run_dir") else None
        self.set_message(size.problem if size is not None else "", error=False)

    def export(self) -> Path | None:
        """Export the run; verify the folder and say where it went."""
        run_dir = (self.run_page.result or {}).get("run_dir")
        if not run_dir:
            self.set_message("There is no finished run to export.")
            return None
        size = self.controller.release_size(run_dir)
        if size.problem and not self.ask_about_small_release(size.problem):
            self.set_message("Not exported. " + size.problem, error=False)
            return None
        try:
            out = self.controller.export(run_dir, self.out_dir.text().strip(), overwrite=self.overwrite.isChecked(),
                                         allow_empty=size.empty)
            outcome = verify_folder(out)
        except PrivetError as exc:
            self.set_message(exc.user_message())
            return None
        self.exported = out
        self.open_button.setEnabled(True)
        verdict = ("the certificate verifies" if outcome.ok else
                   "but verification found problems: " + "; ".join(outcome.problems))
        self.export_result.setText(f"Exported to <b>{out}</b> — {verdict}.")
        self.exported_path.setText(str(out))
        self.path_row.setVisible(True)
        self.set_message("", error=False)
        return out

    def ask_about_small_release(self, problem: str) -> bool:
        """True: export anyway. Asked when the run produced no or very few documents (tests replace this)."""
        answer = QMessageBox.question(self, "Export this release?", problem + "\n\nExport it anyway?",
                                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                      QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def _show_check(self) -> None:
        check = self.controller.internal_check(self.texts)
        if check is None:
            self.check.setText("Not available (the private corpus is not loaded in this window).")
        elif not check.found:
            self.check.setText(f"None of {check.n_identifiers} private names or identifiers were found in the "
                               "synthetic text.")
        else:
            names = ", ".join(f"{name} ({n})" for name, n in check.found[:20])
            self.check.setText(f"<span style='color:#b71c1c'><b>{check.n_found}</b> of {check.n_identifiers} "
                               f"private names appear in the synthetic text:</span> {names}. Names can also occur "
                               "by chance (common names); review the documents before sharing.")

    def _show_forms(self, run_dir: str | None) -> None:
        """The corpus's own forms the run released under DP, or that it followed a shipped form (hidden when the
        run looked for no forms of its corpus)."""
        view = self.controller.released_forms(run_dir) if run_dir else None
        self.forms.setText(forms_words(view))
        listing = forms_listing(view)
        self.forms_list.setPlainText(listing)
        self.forms_more.setVisible(bool(listing))
        self.forms_more.set_expanded(False)
        self.forms_section.setVisible(view is not None)

    def _show_fidelity(self, run_dir: str | None) -> None:
        """The fidelity figures and the side-by-side documents, from the private run folder (screen only)."""
        report = self.controller.fidelity(run_dir) if run_dir else None
        while self.pairs_grid.count():
            item = self.pairs_grid.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.setParent(None)  # gone at once, not at the next turn of the event loop
                widget.deleteLater()
        if report is None:
            self.fidelity.setText("Not available: this run has no fidelity report (a run computes one when it "
                                  "finishes, from this version on).")
            self._pairs_shown(False)
            return
        self.fidelity.setText("\n".join(figure_lines(report)))
        pairs = [p for p in report.get("pairs") or [] if isinstance(p, dict)]
        for column, words in enumerate(("<b>Synthetic</b>", "<b>Nearest of yours</b> (real text: this screen only)")):
            header = QLabel(words)
            header.setWordWrap(True)
            self.pairs_grid.addWidget(header, 0, column)
        for row, pair in enumerate(pairs, 1):
            self.pairs_grid.addWidget(_reader(str(pair.get("synthetic", "")), f"pair_synthetic_{row}"), row, 0)
            self.pairs_grid.addWidget(_reader(str(pair.get("real", "")), f"pair_real_{row}"), row, 1)
        self._pairs_shown(bool(pairs))

    def _pairs_shown(self, shown: bool) -> None:
        self.side_by_side.setVisible(shown)
        self.tabs.setTabVisible(self.pairs_tab, shown)
        self.tabs.setCurrentIndex(0)

    def show_side_by_side(self) -> None:
        """The side-by-side tab: 3 synthetic documents, each beside the nearest of the custodian's own."""
        self.tabs.setCurrentIndex(self.pairs_tab)

    def _show_classes(self, run_dir: str | None) -> None:
        """A labelled run: each label's released (noisy) count of units and its documents."""
        classes = self.controller.class_counts(run_dir) if run_dir else []
        self.classes.setVisible(bool(classes))
        unit = self.controller.unit_word()
        listed = "; ".join(f"<b>{label}</b>: about {max(0.0, noisy):.0f} {unit}s (a count released with noise), "
                           f"{kept} document{'s' if kept != 1 else ''}" for label, noisy, kept in classes)
        self.classes.setText(f"Labels — each document carries one; documents per label follow the counts released "
                             f"with noise: {listed}." if classes else "")

    def _show_document(self, row: int) -> None:
        self.viewer.setPlainText(self.texts[row] if 0 <= row < len(self.texts) else "")

    def _browse(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Choose where to export")
        if path:
            self.out_dir.setText(str(Path(path) / Path(self.out_dir.text()).name))

    def copy_path(self) -> None:
        QGuiApplication.clipboard().setText(self.exported_path.text())
        self.set_message("The folder's path is on the clipboard.", error=False)

    def open_folder(self, opener=QDesktopServices.openUrl) -> bool:
        """Open the release folder in the file manager; without one, say so and point at the path to copy."""
        if not self.exported:
            return False
        opened = bool(opener(QUrl.fromLocalFile(str(self.exported))))
        if not opened:
            self.path_row.setVisible(True)
            self.set_message("No file manager could be opened on this computer. The release is in the folder "
                             f"shown above ({self.exported}); use Copy path to paste it elsewhere.", error=False)
        return opened

    def _open_folder(self) -> None:
        self.open_folder()
