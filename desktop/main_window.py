"""The main window: recent runs (with Resume for interrupted ones and Show for running ones), the budget
ledger per dataset, and the entry points. It updates live while runs are going, and asks before quitting
during a run."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog, QGroupBox, QHBoxLayout, QHeaderView, QLabel, QMainWindow, QMessageBox, QPushButton,
    QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget,
)

from core import __version__
from core.common.errors import PrivetError
from core.common.paths import data_dir, resources_dir
from core.ledger.view import DatasetSpend
from desktop.active_runs import ActiveRuns
from desktop.controller import WizardController
from desktop.dialogs import BUDGETS, GENERAL, SettingsDialog, VerifyDialog
from desktop.overview import RunInfo, ledger_overview, recent_runs
from desktop.settings import DesktopSettings
from desktop.widgets.dataset_runs import DatasetRunsView
from desktop.wizard import RunWizard

LIVE_REFRESH_MS = 3000
DEMO_SPEC = "demo/demo_run.toml"
DEMO_CORPUS = "demo/clinic/notes.csv"
GETTING_STARTED = (
    "Privet turns a private collection of texts (clinical notes, case files, reviews) into a synthetic "
    "collection with a mathematical privacy guarantee, plus a signed certificate for your privacy officer or "
    "IRB. Everything runs on this computer. Three steps: <b>1.</b> New synthetic corpus: choose the data, the "
    "method and the privacy budget. <b>2.</b> Run it and watch the progress. <b>3.</b> Read the synthetic "
    "documents, then export them with the certificate. Not sure yet? Try the demo corpus: synthetic clinic notes, "
    "no real patient."
)
HELP_TEXT = (
    "<p><b>What Privet does.</b> It writes a synthetic corpus from your private texts with differential privacy: "
    "a limit, set by the privacy budget ε, on how much the result can depend on any one person or document. It "
    "exports only the synthetic texts and a signed certificate; the private texts never leave this computer.</p>"
    "<p><b>The three steps.</b> 1. <i>File → New synthetic corpus</i>: choose the data, the method, the budget "
    "ε, the model and the task. 2. Start the run: the budget is spent when each stage starts; you can cancel and "
    "resume. 3. Review the synthetic documents and export them; give the IRB the release folder and your public "
    "key (<i>Settings → Export public key…</i>).</p>"
    "<p><b>The demo corpus</b> (synthetic clinic notes, no real patient) is at {demo}. <i>Help → Try with the "
    "demo corpus</i> opens the wizard with it.</p>"
    "<p><b>Your data folder</b> (runs, the budget ledger, the signing key) is {data}.</p>"
)
ABOUT_TEXT = ("Privet {version}: differentially private synthetic text with a signed privacy certificate. "
              "It runs entirely on this computer and sends nothing over the network.")


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
        self.wizards: list[RunWizard] = []
        self.active = ActiveRuns(self)
        self.active.changed.connect(self.refresh)
        self._runs: list[RunInfo] = []
        self._live = QTimer(self)  # re-read the ledger and runs while a run is going
        self._live.setInterval(LIVE_REFRESH_MS)
        self._live.timeout.connect(self.refresh)
        self.setWindowTitle("Privet — private synthetic text")

        self.getting_started = QLabel(GETTING_STARTED)
        self.getting_started.setWordWrap(True)
        self.getting_started.setObjectName("getting_started")
        self.getting_started.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        try_demo = QPushButton("&Try with the demo corpus")
        try_demo.setToolTip("Open the wizard with the synthetic demo clinic corpus and its settings loaded")
        try_demo.clicked.connect(lambda: self.try_demo())
        self.start_box = QGroupBox("Getting started")
        start_layout = QVBoxLayout(self.start_box)
        start_layout.addWidget(self.getting_started)
        start_layout.addWidget(try_demo, 0, Qt.AlignmentFlag.AlignLeft)

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

        self.runs = _table(["Run", "Started", "Method", "Data", "Status", ""])
        self.runs.setToolTip("Runs on this computer (the run folders are private workspace, never shared)")
        self.ledger = _table(["Dataset", "Budget spent (ε)", "Cap (ε)", "Runs", "Releases"])
        self.ledger.setToolTip("Every run is charged to its dataset in the append-only ledger")
        self.ledger.itemSelectionChanged.connect(self._ledger_selection_changed)
        self.dataset_runs = DatasetRunsView()  # the combining sentence and the selected dataset's runs
        budgets = QPushButton("&Budgets and caps…")
        budgets.setToolTip("Settings → Budgets: set or raise the selected dataset's cap (a raise needs a reason)")
        budgets.clicked.connect(lambda: self.show_budgets())
        runs_box = QGroupBox("Recent runs")
        QVBoxLayout(runs_box).addWidget(self.runs)
        ledger_box = QGroupBox("Privacy budget ledger, per dataset")
        ledger_layout = QVBoxLayout(ledger_box)
        ledger_layout.addWidget(self.ledger)
        ledger_layout.addWidget(self.dataset_runs)
        ledger_layout.addWidget(budgets, 0, Qt.AlignmentFlag.AlignLeft)

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.addWidget(self.start_box)
        layout.addLayout(actions)
        layout.addWidget(runs_box, 1)
        layout.addWidget(ledger_box, 1)
        layout.addWidget(QLabel(f"Data folder: {data_dir()}"))
        self.status = QLabel()  # the status line: wraps instead of being cut off, cleared when a run ends
        self.status.setWordWrap(True)
        self.status.setObjectName("status")
        self.statusBar().addWidget(self.status, 1)
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
                                     ("&Budgets and caps…", None, self.show_budgets),
                                     ("&Quit", QKeySequence.StandardKey.Quit, self.close)):
            action = QAction(text, self)
            if shortcut is not None:
                action.setShortcut(shortcut)
            action.triggered.connect(lambda checked=False, s=slot: s())
            file_menu.addAction(action)
        help_menu = self.menuBar().addMenu("&Help")
        for text, slot in (("&Getting started", self.show_help), ("Try with the &demo corpus", self.try_demo),
                           ("&About Privet", self.show_about)):
            action = QAction(text, self)
            action.triggered.connect(lambda checked=False, s=slot: s())
            help_menu.addAction(action)
        self.help_menu = help_menu

    def refresh(self) -> None:
        """Re-read the runs folder and the ledger (live while a run is going)."""
        running = {Path(r.run_dir) for r in self.active.runs()}
        self._runs = recent_runs()
        self.runs.setRowCount(len(self._runs))
        for row, run in enumerate(self._runs):
            status = "running" if Path(run.run_dir) in running else run.status
            for col, value in enumerate((run.run_id, run.started_at, run.method, run.data_path, status)):
                item = QTableWidgetItem(value)
                item.setToolTip(str(run.run_dir))
                self.runs.setItem(row, col, item)
            self.runs.setCellWidget(row, 5, self._run_action(run, status))
        self._budgets = ledger_overview()
        self.ledger.setRowCount(len(self._budgets))
        for row, b in enumerate(self._budgets):
            cells = (b.name or "(no name recorded)", f"{b.spent_epsilon:.3g}",
                     "none" if b.cap_epsilon is None else f"{b.cap_epsilon:g}", str(b.n_runs), str(b.n_releases))
            details = (f"Data identity, for support: {b.fingerprint}. Figures at δ = {b.delta:.2g}, the small chance "
                       "that the ε bound does not hold.")
            for col, value in enumerate(cells):
                item = QTableWidgetItem(value)
                item.setToolTip(details)
                self.ledger.setItem(row, col, item)
        self._ledger_selection_changed()
        self.start_box.setVisible(not self._runs)  # the getting-started panel greets a first start
        if running and not self._live.isActive():
            self._live.start()
        elif not running:
            self._live.stop()

    def _run_action(self, run: RunInfo, status: str) -> QWidget | None:
        if status == "running":
            button = QPushButton("Show")
            button.setToolTip("Show the window of this run")
            button.clicked.connect(lambda checked=False, d=run.run_dir: self.show_run(d))
            return button
        if status == "interrupted":
            button = QPushButton("Resume")
            button.setToolTip("Continue this run from its last checkpoint; stages already charged are not charged again")
            button.clicked.connect(lambda checked=False, d=run.run_dir: self._resume_clicked(d))
            return button
        return None

    def runs_listed(self) -> list[RunInfo]:
        return list(self._runs)

    def show_run(self, run_dir: str | Path) -> RunWizard | None:
        wizard = self.active.owner_of(Path(run_dir))
        wizard = wizard.wizard() if wizard is not None else None
        if wizard is not None:
            wizard.show()
            wizard.raise_()
            wizard.activateWindow()
        return wizard

    def resume_run(self, run_dir: str | Path) -> RunWizard:
        """Open a run window on an interrupted run and resume it through core's resume path."""
        controller = WizardController.for_run(run_dir)
        wizard = self._open_wizard(controller)
        wizard.resume_run(run_dir)
        wizard.show()
        return wizard

    def _resume_clicked(self, run_dir: Path) -> None:
        try:
            self.resume_run(run_dir)
        except PrivetError as exc:
            QMessageBox.warning(self, "Resume", exc.user_message())
        except (OSError, ValueError, KeyError) as exc:
            QMessageBox.warning(self, "Resume", f"The run folder {run_dir} cannot be resumed ({type(exc).__name__}). "
                                "Start a new run instead.")

    def _open_wizard(self, controller: WizardController) -> RunWizard:
        wizard = RunWizard(controller, self, identity=self.settings.identity(), active=self.active)
        wizard.finished.connect(lambda *_: self.refresh())
        wizard.relay.ended.connect(self.refresh)
        wizard.relay.event.connect(self._run_event)
        wizard.relay.cancelled.connect(lambda *_: self._report_stop(wizard))
        wizard.kept_running.connect(lambda: self.show_status(
            "The run goes on in the background; it is listed under Recent runs (Show opens its window)."))
        wizard.relay.succeeded.connect(lambda *_: self.show_status(""))
        self.wizards.append(wizard)
        self.wizard = wizard
        return wizard

    def _run_event(self, event: dict) -> None:
        if event.get("kind") in ("charged", "stage_end"):
            self.refresh()

    def _report_stop(self, wizard: RunWizard) -> None:
        if wizard.run_page.stop_report:
            self.show_status(wizard.run_page.stop_report)

    def show_status(self, text: str) -> None:
        """The status line (wrapped, never cut off); '' clears it."""
        self.status.setText(text)

    def status_text(self) -> str:
        return self.status.text()

    def running_wizards(self) -> list[RunWizard]:
        return [w for w in self.wizards if w.relay.running]

    def quit_question(self) -> str:
        running = self.running_wizards()
        facts = " ".join(f"Run {w.run_page.run_id}: {w.run_page.charged_now()}" for w in running)
        return (f"{len(running)} run(s) in progress. Quitting Privet stops them.\n\n{facts}\n\n"
                "A stopped run can be resumed later from this window.")

    def ask_to_quit(self) -> bool:
        """True: stop the runs and quit (tests replace this method)."""
        answer = QMessageBox.question(self, "Runs in progress", self.quit_question(),
                                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                      QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt API
        if self.running_wizards():
            if not self.ask_to_quit():
                event.ignore()
                return
            for wizard in self.running_wizards():
                wizard.run_page.stop_now()
        self._live.stop()
        for wizard in self.wizards:
            wizard.relay.shutdown()
        super().closeEvent(event)

    def budgets(self) -> list[DatasetSpend]:
        return list(self._budgets)

    def new_run(self, spec_path: str | None = None) -> RunWizard:
        """Open the run wizard (optionally with a run spec loaded)."""
        controller = WizardController()
        if spec_path:
            controller.open_spec(spec_path)
        wizard = self._open_wizard(controller)
        wizard.show()
        return wizard

    def try_demo(self) -> RunWizard:
        """Open the wizard on the packaged demo corpus (synthetic clinic notes) with the demo's settings."""
        return self.new_run(str(resources_dir() / DEMO_SPEC))

    def help_text(self) -> str:
        return HELP_TEXT.format(demo=resources_dir() / DEMO_CORPUS, data=data_dir())

    def show_help(self) -> QMessageBox:
        box = QMessageBox(QMessageBox.Icon.Information, "Getting started with Privet", self.help_text(),
                          QMessageBox.StandardButton.Close, self)
        box.setTextFormat(Qt.TextFormat.RichText)
        box.open()
        return box

    def show_about(self) -> QMessageBox:
        box = QMessageBox(QMessageBox.Icon.Information, "About Privet", ABOUT_TEXT.format(version=__version__),
                          QMessageBox.StandardButton.Close, self)
        box.open()
        return box

    def show_verify(self) -> VerifyDialog:
        dialog = VerifyDialog(self)
        dialog.show()
        return dialog

    def show_settings(self, page: str = GENERAL) -> SettingsDialog:
        dialog = SettingsDialog(self.settings, self, page=page)
        dialog.budgets.changed.connect(self.refresh)
        dialog.show()
        return dialog

    def show_budgets(self) -> SettingsDialog:
        """Settings → Budgets, on the dataset selected in the ledger (if any)."""
        dialog = self.show_settings(BUDGETS)
        selected = self.selected_budget()
        if selected is not None:
            dialog.budgets.select(selected.fingerprint)
        return dialog

    def selected_budget(self) -> DatasetSpend | None:
        row = self.ledger.currentRow()
        budgets = getattr(self, "_budgets", [])
        return budgets[row] if 0 <= row < len(budgets) else None

    def _ledger_selection_changed(self) -> None:
        """The runs of the selected dataset (the only one when the ledger holds one)."""
        budgets = getattr(self, "_budgets", [])
        chosen = self.selected_budget() or (budgets[0] if len(budgets) == 1 else None)
        self.dataset_runs.show_dataset(chosen.fingerprint if chosen else None)

    def _open_spec(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open run spec", "", "Run spec (*.toml)")
        if path:
            try:
                self.new_run(path)
            except PrivetError as exc:
                QMessageBox.warning(self, "Run spec", exc.user_message())
