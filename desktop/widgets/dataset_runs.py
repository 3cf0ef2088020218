"""Why a dataset's total is less than the sum of its runs, and the runs themselves: the one sentence
(``core.ledger.total.COMBINING_PLAIN``) and a small table of the dataset's runs with the ε each one spent,
read from the ledger rows (``desktop.overview.dataset_runs``). Shown wherever a dataset total appears."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from core.ledger.total import COMBINING_PLAIN
from desktop.overview import DatasetRun, dataset_runs

HEADERS = ["Run", "Date", "ε spent", "Exported"]
MAX_ROWS_SHOWN = 6  # the table's height shows this many runs; more scroll


class DatasetRunsView(QWidget):
    """The combining sentence over a table of one dataset's runs (run, date, ε, times exported)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.combining = QLabel(COMBINING_PLAIN)
        self.combining.setWordWrap(True)
        self.combining.setObjectName("combining")
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setObjectName("dataset_runs")
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QTableWidget.SelectionMode.NoSelection)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setToolTip("Each run's ε is the figure its certificate states; the dataset's total above "
                              "combines them, and is less than their sum.")
        self.runs: list[DatasetRun] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.combining)
        layout.addWidget(self.table)
        self.show_dataset(None)

    def show_dataset(self, key: str | None) -> None:
        """Show the runs of the dataset ``key`` (identity key or view fingerprint); ``None``: no dataset."""
        self.runs = dataset_runs(key) if key else []
        self.table.setRowCount(len(self.runs))
        for row, run in enumerate(self.runs):
            cells = (run.run_id, run.date, f"ε = {run.epsilon:.3g}",
                     "not yet" if not run.releases else f"{run.releases} time{'' if run.releases == 1 else 's'}")
            for col, value in enumerate(cells):
                self.table.setItem(row, col, QTableWidgetItem(value))
        shown = max(1, min(len(self.runs), MAX_ROWS_SHOWN))
        header = self.table.horizontalHeader().sizeHint().height()
        self.table.setFixedHeight(header + shown * self.table.verticalHeader().defaultSectionSize() + 4)
        self.table.setVisible(bool(self.runs))

    def cell_texts(self) -> list[list[str]]:
        """The table's cells, row by row (what the officer reads)."""
        return [[self.table.item(r, c).text() for c in range(self.table.columnCount())]
                for r in range(self.table.rowCount())]
