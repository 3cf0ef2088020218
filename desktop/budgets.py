"""Settings → Budgets: each dataset's spent ε, its cap and its releases, and where the officer sets or
raises a cap.

A cap is a ceiling on a dataset's total. ``core.ledger.Ledger.set_cap`` refuses a cap below what is spent
(its message, with the spent figure, is shown as it is); raising a cap needs a reason, which the ledger
keeps in the cap's row and every later certificate of the dataset prints. Every figure shown is read from
the ledger (``Ledger.summary`` through ``desktop.overview``), never computed here.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDoubleSpinBox, QFormLayout, QGroupBox, QHeaderView, QLabel, QLineEdit, QPushButton, QTableWidget,
    QTableWidgetItem, QVBoxLayout, QWidget,
)

from core.common.errors import PrivetError
from core.ledger import Ledger
from core.ledger.view import DatasetSpend
from desktop.overview import ledger_overview
from desktop.widgets.dataset_runs import DatasetRunsView

HEADERS = ["Dataset", "Spent", "Cap", "Runs", "Releases"]
INTRO = ("A cap is a ceiling on everything spent on one dataset: a run that would go over it is refused before "
         "anything is charged. A cap cannot be set below what is already spent. Raising a cap needs a reason; "
         "the ledger keeps it and every later certificate of the dataset prints it. A cap is recorded as soon as "
         "you press Set cap (Cancel does not undo it).")
ERROR_STYLE = "color: #b71c1c;"
DONE_STYLE = "color: #2e7d32;"


def spent_words(spend: DatasetSpend) -> str:
    return f"ε = {spend.spent_epsilon:.3g} at δ = {spend.delta:.2g}"


def cap_words(spend: DatasetSpend) -> str:
    if spend.cap_epsilon is None or spend.cap_delta is None:
        return "no cap"
    return f"ε = {spend.cap_epsilon:g} at δ = {spend.cap_delta:.2g}"


def is_raise(spend: DatasetSpend, epsilon: float, delta: float) -> bool:
    """Whether a new cap of (``epsilon``, ``delta``) raises the dataset's existing cap (a larger ε or δ)."""
    if spend.cap_epsilon is None or spend.cap_delta is None:
        return False
    return epsilon > spend.cap_epsilon or delta > spend.cap_delta


class BudgetsPanel(QWidget):
    """The datasets of the ledger with their spend and cap; set or raise the selected dataset's cap."""

    changed = Signal()  # a cap was set

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        intro = QLabel(INTRO)
        intro.setWordWrap(True)
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setObjectName("budgets")
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setMinimumHeight(110)
        self.table.itemSelectionChanged.connect(self._selection_changed)
        self.cap_epsilon = QDoubleSpinBox()
        self.cap_epsilon.setRange(0.01, 1000.0)
        self.cap_epsilon.setDecimals(2)
        self.cap_epsilon.setValue(10.0)
        self.cap_epsilon.setToolTip("The largest total ε this dataset may ever spend, all runs together")
        self.cap_delta = QLineEdit()
        self.cap_delta.setToolTip("The δ the cap (and the dataset's total) is stated at, e.g. 1e-5")
        self.reason = QLineEdit()
        self.reason.setObjectName("cap_reason")
        self.reason.setPlaceholderText("Why the cap is raised, e.g. 'agreed with the IRB on 1 December' (needed to "
                                       "raise a cap)")
        self.reason.setToolTip("Recorded in the ledger and printed on every later certificate of this dataset. "
                               "Do not put private details here.")
        self.set_button = QPushButton("&Set cap")
        self.set_button.clicked.connect(lambda: self.set_cap(self.cap_epsilon.value(), self._delta(), self.reason.text()))
        self.result = QLabel()
        self.result.setWordWrap(True)
        self.result.setObjectName("cap_result")
        self.runs_view = DatasetRunsView()
        form = QFormLayout()
        form.addRow("Cap &ε:", self.cap_epsilon)
        form.addRow("Cap &δ:", self.cap_delta)
        form.addRow("&Reason:", self.reason)
        form.addRow("", self.set_button)
        for widget in (self.cap_epsilon, self.cap_delta, self.reason):
            form.labelForField(widget).setBuddy(widget)
        self.cap_box = QGroupBox("Cap of the selected dataset")
        box_layout = QVBoxLayout(self.cap_box)
        box_layout.addLayout(form)
        box_layout.addWidget(self.result)
        runs_box = QGroupBox("Runs of the selected dataset")
        QVBoxLayout(runs_box).addWidget(self.runs_view)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.cap_box)
        layout.addWidget(runs_box)
        self._spends: list[DatasetSpend] = []
        self.refresh()

    # --- reading ------------------------------------------------------------------------------

    def refresh(self, keep: str | None = None) -> None:
        """Re-read the ledger; keep the dataset ``keep`` (a fingerprint) selected, else the first."""
        keep = keep or (self.selected().fingerprint if self.selected() else None)
        self._spends = ledger_overview()
        self.table.blockSignals(True)
        self.table.setRowCount(len(self._spends))
        for row, spend in enumerate(self._spends):
            cells = (spend.name or "(no name recorded)", spent_words(spend), cap_words(spend), str(spend.n_runs),
                     str(spend.n_releases))
            for col, value in enumerate(cells):
                item = QTableWidgetItem(value)
                item.setToolTip(f"Dataset key {spend.fingerprint}")
                self.table.setItem(row, col, item)
        self.table.blockSignals(False)
        rows = [r for r, s in enumerate(self._spends) if s.fingerprint == keep]
        if self._spends:
            self.table.selectRow(rows[0] if rows else 0)
        self._selection_changed()

    def datasets(self) -> list[DatasetSpend]:
        return list(self._spends)

    def selected(self) -> DatasetSpend | None:
        rows = getattr(self, "_spends", [])
        row = self.table.currentRow()
        return rows[row] if 0 <= row < len(rows) else None

    def select(self, fingerprint: str) -> bool:
        """Select the dataset with this key (as ``Ledger.summary`` lists it); False when it is not listed."""
        for row, spend in enumerate(self._spends):
            if spend.fingerprint == fingerprint:
                self.table.selectRow(row)
                self._selection_changed()
                return True
        return False

    def _selection_changed(self) -> None:
        spend = self.selected()
        self.cap_box.setEnabled(spend is not None)
        self.runs_view.show_dataset(spend.fingerprint if spend else None)
        if spend is None:
            self.cap_box.setTitle("Cap of the selected dataset (no dataset in the ledger yet)")
            return
        self.cap_box.setTitle(f"Cap of '{spend.name or spend.fingerprint[:16]}': now {cap_words(spend)}; spent "
                              f"{spent_words(spend)}")
        self.cap_epsilon.setValue(spend.cap_epsilon if spend.cap_epsilon is not None
                                  else max(10.0, round(spend.spent_epsilon + 0.5)))
        self.cap_delta.setText(f"{spend.cap_delta if spend.cap_delta is not None else spend.delta:.2g}")

    def _delta(self) -> float:
        try:
            return float(self.cap_delta.text().strip())
        except ValueError:
            return float("nan")

    # --- setting a cap ------------------------------------------------------------------------

    def _say(self, text: str, error: bool) -> None:
        self.result.setStyleSheet(ERROR_STYLE if error else DONE_STYLE)
        self.result.setText(text)

    def set_cap(self, epsilon: float, delta: float, reason: str = "") -> bool:
        """Set the selected dataset's cap; True when the ledger recorded it. A raise without a reason, and a
        cap the ledger refuses (below what is spent, an invalid δ), are refused with the reason shown."""
        spend = self.selected()
        if spend is None:
            self._say("Select a dataset first.", error=True)
            return False
        if not (0 < delta < 1):
            self._say("The cap's δ must be a number between 0 and 1, for example 1e-5. Nothing was changed.",
                      error=True)
            return False
        if is_raise(spend, epsilon, delta) and not reason.strip():
            self._say(f"This raises the cap from {cap_words(spend)} to ε = {epsilon:g} at δ = {delta:.2g}. Write the "
                      "reason for the raise (for example who agreed to it) and press Set cap again: it is recorded "
                      "in the ledger and printed on every later certificate. Nothing was changed.", error=True)
            self.reason.setFocus()
            return False
        try:
            with Ledger() as ledger:
                ledger.set_cap(spend.fingerprint, epsilon, delta, reason=reason.strip())
        except PrivetError as exc:
            self._say(exc.user_message() + " Nothing was changed.", error=True)
            return False
        noted = " with your reason" if reason.strip() else ""
        self.reason.clear()
        self.refresh(keep=spend.fingerprint)
        self._say(f"Cap set to ε = {epsilon:g} at δ = {delta:.2g}; the change is recorded in the ledger{noted}.",
                  error=False)
        self.changed.emit()
        return True
