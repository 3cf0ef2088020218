"""The run wizard: eight pages from private files to an exported synthetic corpus."""

from __future__ import annotations

from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget, QWizard

from core.errors import PrivetError
from desktop.controller import WizardController
from desktop.hardware import GpuInfo
from desktop.relay import RunRelay
from desktop.wizard.budget_page import BudgetPage
from desktop.wizard.confirm_page import ConfirmPage
from desktop.wizard.data_page import DataPage
from desktop.wizard.method_page import MethodPage
from desktop.wizard.model_page import ModelPage
from desktop.wizard.review_page import ReviewPage
from desktop.wizard.run_page import RunPage
from desktop.wizard.task_page import TaskPage

DATA, METHOD, BUDGET, MODEL, TASK, CONFIRM, RUN, REVIEW = range(8)
SAVE_BUTTON = QWizard.WizardButton.CustomButton1
OPEN_BUTTON = QWizard.WizardButton.CustomButton2


class RunWizard(QWizard):
    """Edits ``controller.spec`` page by page, runs it in a child process, then reviews and exports."""

    def __init__(self, controller: WizardController | None = None, parent: QWidget | None = None,
                 gpus: list[GpuInfo] | None = None, identity: dict[str, str] | None = None,
                 grace_ms: int | None = None) -> None:
        super().__init__(parent)
        self.controller = controller or WizardController()
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
        self.confirm_page = ConfirmPage(self.controller)
        self.run_page = RunPage(self.controller, self.relay)
        self.review_page = ReviewPage(self.controller, self.run_page)
        for page_id, page in enumerate((self.data_page, self.method_page, self.budget_page, self.model_page,
                                        self.task_page, self.confirm_page, self.run_page, self.review_page)):
            self.setPage(page_id, page)
        self.currentIdChanged.connect(self._page_changed)
        self.resize(900, 720)

    def save_spec(self, path: str) -> None:
        self.controller.save_spec(path)

    def open_spec(self, path: str) -> None:
        """Load a run spec and start again from the first page with its choices."""
        self.controller.open_spec(path)
        self.restart()

    def reject(self) -> None:
        """Closing the wizard during a run cancels the run first (hard stop if needed)."""
        if self.relay.running:
            self.relay.cancel()
            self.relay.hard_stop()
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
