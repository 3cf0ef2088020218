"""The run wizard: eight pages from private files to an exported synthetic corpus."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget, QWizard

from core.common.errors import PrivetError
from desktop.active_runs import ActiveRuns
from desktop.controller import WizardController
from desktop.hardware import GpuInfo
from desktop.relay import RunRelay
from desktop.wizard.budget_page import BudgetPage
from desktop.wizard.confirm_page import ConfirmPage
from desktop.wizard.data_page import DataPage
from desktop.wizard.method_page import MethodPage
from desktop.wizard.model_page import ModelPage
from desktop.wizard.common import FitsScreen
from desktop.wizard.review_page import ReviewPage
from desktop.wizard.run_page import RunPage
from desktop.wizard.task_page import TaskPage

DATA, METHOD, BUDGET, MODEL, TASK, CONFIRM, RUN, REVIEW = range(8)
SAVE_BUTTON = QWizard.WizardButton.CustomButton1
OPEN_BUTTON = QWizard.WizardButton.CustomButton2
KEEP, STOP, BACK = "keep", "stop", "back"


class RunWizard(FitsScreen, QWizard):
    """Edits ``controller.spec`` page by page, runs it in a child process, then reviews and exports.

    Closing it during a run asks first: keep the run going (the wizard hides; the main window lists
    the run and can show it again) or stop it (what was charged is reported from the ledger).
    """

    kept_running = Signal()

    def __init__(self, controller: WizardController | None = None, parent: QWidget | None = None,
                 gpus: list[GpuInfo] | None = None, identity: dict[str, str] | None = None,
                 grace_ms: int | None = None, active: ActiveRuns | None = None) -> None:
        super().__init__(parent)
        self.controller = controller or WizardController()
        self.active = active or ActiveRuns(self)
        self.relay = RunRelay(self) if grace_ms is None else RunRelay(self, grace_ms=grace_ms)
        self.setWindowTitle("Privet — new synthetic corpus")
        self.setWizardStyle(QWizard.WizardStyle.ClassicStyle)
        self.setOption(QWizard.WizardOption.NoBackButtonOnLastPage, False)
        self.setOption(QWizard.WizardOption.HaveCustomButton1, True)
        self.setOption(QWizard.WizardOption.HaveCustomButton2, True)
        self.setButtonText(SAVE_BUTTON, "Sa&ve run spec…")
        self.setButtonText(OPEN_BUTTON, "O&pen run spec…")
        self.button(SAVE_BUTTON).setToolTip("Save these choices as a run spec (TOML) that `privet run` also runs")
        self.button(OPEN_BUTTON).setToolTip("Load choices from a run spec file")
        self.customButtonClicked.connect(self._custom_button)
        self.data_page = DataPage(self.controller)
        self.method_page = MethodPage(self.controller)
        self.budget_page = BudgetPage(self.controller)
        self.model_page = ModelPage(self.controller, gpus)
        self.task_page = TaskPage(self.controller, identity)
        self.confirm_page = ConfirmPage(self.controller, self.active)
        self.run_page = RunPage(self.controller, self.relay, self.active)
        self.review_page = ReviewPage(self.controller, self.run_page)
        for page_id, page in enumerate((self.data_page, self.method_page, self.budget_page, self.model_page,
                                        self.task_page, self.confirm_page, self.run_page, self.review_page)):
            self.setPage(page_id, page)
        self.currentIdChanged.connect(self._page_changed)
        self.resize(900, 720)  # shrunk to the screen's free area when shown (FitsScreen): the pages scroll

    def save_spec(self, path: str) -> None:
        self.controller.save_spec(path)

    def open_spec(self, path: str) -> None:
        """Load a run spec and start again from the first page with its choices."""
        self.controller.open_spec(path)
        self.restart()

    def resume_run(self, run_dir: str | Path) -> None:
        """Open straight on the Run page and resume the interrupted run in ``run_dir`` (core's resume path)."""
        self.run_page.prepare_resume(Path(run_dir))
        self.setStartId(RUN)
        self.restart()

    def running_question(self) -> str:
        """The question asked when the window is closed during a run (budget facts from the ledger)."""
        return ("A run is in progress. Closing this window does not have to stop it.\n\n"
                + self.run_page.charged_now()
                + "\n\nKeep it running: the main window shows it and can open this window again. "
                "Stop it: it can be resumed later from the main window.")

    def ask_about_running_run(self) -> str:
        """KEEP, STOP or BACK (tests replace this method)."""
        box = QMessageBox(QMessageBox.Icon.Question, "A run is in progress", self.running_question(),
                          QMessageBox.StandardButton.NoButton, self)
        keep = box.addButton("&Keep it running", QMessageBox.ButtonRole.AcceptRole)
        stop = box.addButton("&Stop the run", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton("Go &back", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(keep)
        box.exec()
        clicked = box.clickedButton()
        return KEEP if clicked is keep else STOP if clicked is stop else BACK

    def reject(self) -> None:
        """Closing during a run asks first: keep it running (hide), stop it, or go back."""
        if self.relay.running:
            choice = self.ask_about_running_run()
            if choice == BACK:
                return
            if choice == KEEP:
                self.hide()
                self.kept_running.emit()
                return
            self.run_page.stop_now()
        super().reject()

    def _page_changed(self, page_id: int) -> None:
        editable = page_id <= CONFIRM
        self.button(SAVE_BUTTON).setVisible(editable)
        self.button(OPEN_BUTTON).setVisible(page_id == DATA)

    def _custom_button(self, which: int) -> None:
        which = getattr(which, "value", which)
        try:
            if which == SAVE_BUTTON.value:
                path, _ = QFileDialog.getSaveFileName(self, "Save run spec", "run.toml", "Run spec (*.toml)")
                if path:
                    self.save_spec(path)
            elif which == OPEN_BUTTON.value:
                path, _ = QFileDialog.getOpenFileName(self, "Open run spec", "", "Run spec (*.toml)")
                if path:
                    self.open_spec(path)
        except PrivetError as exc:
            QMessageBox.warning(self, "Run spec", exc.user_message())
