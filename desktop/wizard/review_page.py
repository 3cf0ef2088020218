"""Step 8: browse the synthetic corpus, see the on-screen internal check, export and verify."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox, QFileDialog, QGroupBox, QHBoxLayout, QLabel, QLineEdit, QListWidget, QMessageBox, QPlainTextEdit,
    QPushButton,
    QSplitter, QVBoxLayout, QWidget,
)
from PySide6.QtCore import Qt

from core.errors import PrivetError
from desktop.controller import WizardController, verify_folder
from desktop.wizard.common import Page
from desktop.wizard.run_page import RunPage

LIST_LABEL_CHARS = 90
ALLOCATION_TOPICS = 12  # topics named on the Review page (the rest are counted)


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

        layout = QVBoxLayout(self)
        layout.addWidget(self.guarantee)
        layout.addWidget(self.count)
        layout.addWidget(self.allocation)
        layout.addWidget(self.classes)
        layout.addWidget(splitter, 1)
        layout.addWidget(check_box)
        layout.addLayout(row)
        layout.addWidget(self.export_result)
        layout.addWidget(self.path_row)
        layout.addWidget(self.message)

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
