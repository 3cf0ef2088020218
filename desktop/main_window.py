"""The main window: recent runs, the budget ledger per dataset, and the entry points."""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog, QGroupBox, QHBoxLayout, QHeaderView, QInputDialog, QLabel, QMainWindow, QMessageBox, QPushButton,
    QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget,
)

from core.errors import PrivetError
from core.paths import data_dir
from desktop.controller import WizardController
from desktop.dialogs import SettingsDialog, VerifyDialog
from desktop.overview import DatasetBudget, ledger_overview, recent_runs
from desktop.settings import DesktopSettings
from desktop.wizard import RunWizard


def _table(headers: list[str]) -> QTableWidget:
    table = QTableWidget(0, len(headers))
    table.setHorizontalHeaderLabels(headers)
    table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
    table.verticalHeader().setVisible(False)
    return table


class MainWindow(QMainWindow):
    def __init__(self, settings: DesktopSettings | None = None) -> None:
        super().__init__()
        self.settings = settings or DesktopSettings.load()
        self.settings.apply_to_environment()
        self.wizard: RunWizard | None = None
        self.setWindowTitle("Privet — private synthetic text")

        new_run = QPushButton("&New synthetic corpus…")
        new_run.setToolTip("Start the wizard: from private files to an exported synthetic corpus")
        new_run.clicked.connect(lambda: self.new_run())
        open_spec = QPushButton("&Open run spec…")
        open_spec.clicked.connect(self._open_spec)
        verify = QPushButton("&Verify a certificate…")
        verify.clicked.connect(self.show_verify)
        settings_button = QPushButton("&Settings…")
        settings_button.clicked.connect(self.show_settings)
        actions = QHBoxLayout()
        for button in (new_run, open_spec, verify, settings_button):
            actions.addWidget(button)
        actions.addStretch(1)

        self.runs = _table(["Started", "Method", "Data", "Status", "Folder"])
        self.runs.setToolTip("Runs on this computer (the run folders are private workspace, never shared)")
        self.ledger = _table(["Dataset (fingerprint)", "Spent ε", "δ", "Cap ε", "Runs", "Releases"])
        self.ledger.setToolTip("Every run is charged to its dataset in the append-only ledger")
        set_cap = QPushButton("Set &cap for selected dataset…")
        set_cap.clicked.connect(self._set_cap)
        runs_box = QGroupBox("Recent runs")
        QVBoxLayout(runs_box).addWidget(self.runs)
        ledger_box = QGroupBox("Privacy budget ledger, per dataset")
        ledger_layout = QVBoxLayout(ledger_box)
        ledger_layout.addWidget(self.ledger)
        ledger_layout.addWidget(set_cap)

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.addLayout(actions)
        layout.addWidget(runs_box, 1)
        layout.addWidget(ledger_box, 1)
        layout.addWidget(QLabel(f"Data folder: {data_dir()}"))
        self.setCentralWidget(central)
        self._menu()
        self.refresh()
        self.resize(980, 640)

    def _menu(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        for text, shortcut, slot in (("&New synthetic corpus…", QKeySequence.StandardKey.New, self.new_run),
                                     ("&Open run spec…", QKeySequence.StandardKey.Open, self._open_spec),
                                     ("&Verify a certificate…", None, self.show_verify),
                                     ("&Settings…", QKeySequence.StandardKey.Preferences, self.show_settings),
                                     ("&Quit", QKeySequence.StandardKey.Quit, self.close)):
            action = QAction(text, self)
            if shortcut is not None:
                action.setShortcut(shortcut)
            action.triggered.connect(lambda checked=False, s=slot: s())
            file_menu.addAction(action)

    def refresh(self) -> None:
        """Re-read the runs folder and the ledger."""
        runs = recent_runs()
        self.runs.setRowCount(len(runs))
        for row, run in enumerate(runs):
            for col, value in enumerate((run.started_at, run.method, run.data_path, run.status, str(run.run_dir))):
                self.runs.setItem(row, col, QTableWidgetItem(value))
        self._budgets = ledger_overview()
        self.ledger.setRowCount(len(self._budgets))
        for row, b in enumerate(self._budgets):
            cells = (b.fingerprint[:16] + "…", f"{b.spent_epsilon:.3g}", f"{b.delta:.2g}",
                     "none" if b.cap_epsilon is None else f"{b.cap_epsilon:g}", str(b.n_runs), str(b.n_releases))
            for col, value in enumerate(cells):
                self.ledger.setItem(row, col, QTableWidgetItem(value))

    def budgets(self) -> list[DatasetBudget]:
        return list(self._budgets)

    def new_run(self, spec_path: str | None = None) -> RunWizard:
        """Open the run wizard (optionally with a run spec loaded)."""
        controller = WizardController()
        if spec_path:
            controller.open_spec(spec_path)
        self.wizard = RunWizard(controller, self, identity=self.settings.identity())
        self.wizard.finished.connect(lambda *_: self.refresh())
        self.wizard.relay.ended.connect(self.refresh)
        self.wizard.show()
        return self.wizard

    def show_verify(self) -> VerifyDialog:
        dialog = VerifyDialog(self)
        dialog.show()
        return dialog

    def show_settings(self) -> SettingsDialog:
        dialog = SettingsDialog(self.settings, self)
        dialog.show()
        return dialog

    def _open_spec(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open run spec", "", "Run spec (*.toml)")
        if path:
            try:
                self.new_run(path)
            except PrivetError as exc:
                QMessageBox.warning(self, "Run spec", exc.user_message())

    def _set_cap(self) -> None:
        row = self.ledger.currentRow()
        if row < 0 or row >= len(self._budgets):
            QMessageBox.information(self, "Set a cap", "Select a dataset in the ledger first.")
            return
        eps, ok = QInputDialog.getDouble(self, "Set a cap", "Largest total ε for this dataset:", 10.0, 0.01, 1000, 2)
        if not ok:
            return
        from core.ledger import Ledger

        Ledger().set_cap(self._budgets[row].fingerprint, eps, self._budgets[row].delta)
        self.refresh()
