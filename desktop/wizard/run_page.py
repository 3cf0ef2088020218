"""Step 7: the run — per-stage progress, overall time left, the budget meter in ε, live preview, log,
cancel and resume.

The pipeline runs in a child process (``desktop.relay.RunRelay``); this page only shows its events.
Every budget figure comes from ``core`` (the plan, the ledger via ``core.ledger.view``); every
time figure from ``core.run.estimate`` (computed in the child during the run).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QGridLayout, QGroupBox, QHBoxLayout, QLabel, QListWidget, QMessageBox, QPlainTextEdit,
    QProgressBar, QPushButton, QSplitter, QVBoxLayout,
)

from core.common.errors import PrivetError
from core.run.estimate import EtaTracker
from core.ledger.view import charged_summary
from core.specs.stage_labels import STAGE_LABELS, stage_label
from desktop.active_runs import ActiveRuns
from desktop.controller import WizardController
from desktop.controller_budget import in_app_words
from desktop.relay import RunRelay
from desktop.widgets.collapsible import Collapsible
from desktop.widgets.stacked_bar import StackedBar
from desktop.wizard.common import Page, scrolling_layouts
from desktop.wizard.run_progress import RunProgressSection

PREVIEW_MIN_HEIGHT = 160  # pixels of the live preview and the log, at least (the page scrolls)
TICK_MS = 1000  # the time left counts down once a second between progress events


class RunPage(RunProgressSection, Page):
    def __init__(self, controller: WizardController, relay: RunRelay, active: ActiveRuns | None = None) -> None:
        super().__init__(controller, "Run", "The run happens in a separate process; you can cancel it at any time.")
        self.relay = relay
        self.active = active or ActiveRuns(self)
        self.run_dir: Path | None = None
        self.result: dict[str, Any] | None = None
        self.state = "idle"  # idle / running / succeeded / cancelled / failed
        self.planned_rho = 0.0
        self.planned_epsilon = 0.0
        self.planned_delta = 0.0
        self.charged: list[tuple[str, float]] = []
        self.error_box: QMessageBox | None = None
        self.failure = ""
        self.stop_report = ""
        self._resume_dir: Path | None = None
        self._bars: dict[str, tuple[QProgressBar, QLabel]] = {}
        self._n_previews = 0
        self.resume_text = ""  # the last resume consent text shown
        self.resume_free = False  # the last resume quote charged nothing (no question asked)
        self.tracker: EtaTracker | None = None  # core's time-left model, fed with this run's events
        self._basis = ""
        self._tick = QTimer(self)
        self._tick.setInterval(TICK_MS)
        self._tick.timeout.connect(self.show_time_left)

        self.stages = QGridLayout()
        stage_box = QGroupBox("Stages")
        stage_box.setLayout(self.stages)
        self.overall = QLabel()
        self.overall.setWordWrap(True)
        self.overall.setObjectName("overall_eta")
        self.meter = StackedBar()
        self.meter.setToolTip("Budget charged so far; each stage is charged when it starts.")
        self.meter_label = QLabel()
        self.meter_label.setWordWrap(True)
        self.meter_rho = QLabel()  # the ledger's own unit, for specialists: under Advanced
        self.meter_rho.setWordWrap(True)
        self.meter_advanced = Collapsible("Advanced", self.meter_rho)
        meter_box = QGroupBox("Privacy budget spent by this run")
        meter_layout = QVBoxLayout(meter_box)
        meter_layout.addWidget(self.meter)
        meter_layout.addWidget(self.meter_label)
        meter_layout.addWidget(self.meter_advanced)
        self.preview = QListWidget()
        self.preview.setWordWrap(True)
        self.preview.setAlternatingRowColors(True)
        self.preview.setSpacing(4)
        self.preview.setToolTip("Synthetic documents as they are finished (never private text); newest at the bottom")
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(2000)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        for title, widget in (("Live preview (synthetic documents)", self.preview), ("Log", self.log)):
            box = QGroupBox(title)
            QVBoxLayout(box).addWidget(widget)
            splitter.addWidget(box)

        self.cancel_button = QPushButton("&Cancel run…")
        self.cancel_button.setToolTip("Stop the run. Budget already charged stays charged.")
        self.cancel_button.clicked.connect(self.cancel)
        self.resume_button = QPushButton("&Resume run")
        self.resume_button.setToolTip("Continue from the last checkpoint; shows what it would charge again and asks first.")
        self.resume_button.clicked.connect(self.resume)
        self.resume_button.setVisible(False)
        buttons = QHBoxLayout()
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.resume_button)
        buttons.addStretch(1)

        splitter.setMinimumHeight(PREVIEW_MIN_HEIGHT)
        # The stages, the meter and the preview scroll (up and down) on a small screen; Cancel and the message stay.
        layout, outer = scrolling_layouts(self)
        layout.addWidget(stage_box)
        layout.addWidget(self.overall)
        layout.addWidget(meter_box)
        layout.addWidget(splitter, 1)
        outer.addLayout(buttons)
        outer.addWidget(self.message)

        relay.event.connect(self.on_event)
        relay.succeeded.connect(self.on_succeeded)
        relay.cancelled.connect(self.on_cancelled)
        relay.failed.connect(self.on_failed)
        relay.ended.connect(lambda: self.active.release(self))

    # --- Qt wizard hooks ---------------------------------------------------------------------

    def initializePage(self) -> None:  # noqa: N802 - Qt API
        if self.state == "idle":
            if self._resume_dir is not None:
                self.run_dir = self._resume_dir
                self.start(resume=True)
            else:
                self.start()

    def blocking_message(self) -> str:
        return {
            "running": "The run is in progress.",
            "cancelled": self.stop_report or "The run was cancelled.",
            "failed": self.failure,
            "idle": "The run has not started.",
        }.get(self.state, "")

    def isComplete(self) -> bool:  # noqa: N802 - Qt API
        if self.state in ("running", "idle"):
            return False
        return super().isComplete()

    # --- run control ---------------------------------------------------------------------------

    def prepare_resume(self, run_dir: Path) -> None:
        """Make the page resume ``run_dir`` when it is shown (used by the main window's Resume)."""
        self._resume_dir = Path(run_dir)

    def show_finished(self, run_dir: Path, n_synthetic: int) -> None:
        """Show a run that finished earlier (e.g. for screenshots of a real run): nothing is started."""
        self.run_dir = Path(run_dir)
        self.result = {"run_dir": str(run_dir), "synthetic_path": str(Path(run_dir) / "synthetic.jsonl"),
                       "n_synthetic": n_synthetic}
        try:
            plan = self.controller.plan()
            self.planned_rho, self.planned_epsilon, self.planned_delta = plan.rho_total, plan.epsilon, plan.delta
        except Exception:  # noqa: BLE001 - the meter then scales to what was charged
            pass
        self.charged = self._charged_from_ledger()
        self._update_meter()
        self.on_succeeded(self.result)

    @property
    def run_id(self) -> str:
        return self.run_dir.name if self.run_dir is not None else ""

    def start(self, resume: bool = False) -> None:
        estimate = None
        try:
            plan = self.controller.plan()
            self.planned_rho = float(plan.rho_total)
            self.planned_epsilon = float(plan.epsilon)
            self.planned_delta = float(plan.delta)
            estimate = self.controller.estimate()
        except Exception:  # noqa: BLE001 - the meter then scales to what is charged
            self.planned_rho = 0.0
        if not resume or self.run_dir is None:
            self.run_dir = self.controller.new_run_dir()
        accepted_rho = None
        if resume:
            accepted_rho = self.ask_resume_consent()
            if accepted_rho is None:
                self.state = "cancelled"
                self.stop_report = ("The run was not resumed: nothing more was charged. You can resume it later "
                                    "or start a new run.")
                self.resume_button.setVisible(self._resumable())
                self.set_message(self.stop_report, error=False)
                self.completeChanged.emit()
                return
        fingerprint = self.controller.summary.fingerprint if self.controller.summary else ""
        problem = self.active.claim(fingerprint, self.run_dir, self) if fingerprint else ""
        if problem:
            self.state = "failed"
            self.failure = problem
            self.cancel_button.setEnabled(False)
            self.completeChanged.emit()
            return
        self.charged = self._charged_from_ledger() if resume else []
        self._update_meter()
        self.state = "running"
        self.stop_report = ""
        self.resume_button.setVisible(False)
        self.cancel_button.setEnabled(True)
        self.set_message(self._running_words(resume), error=False)
        if resume and self.resume_text:
            self._log(self.resume_text)
        self.tracker = EtaTracker(estimate) if estimate is not None else None
        self._basis = estimate.basis if estimate is not None else ""
        self.show_time_left()
        self._tick.start()
        self._log(f"{'Resuming' if resume else 'Starting'} run {self.run_id} in {self.run_dir}")
        self.relay.start(self.controller.run_spec_dict(), self.run_dir, resume=resume,
                         estimate=estimate.to_dict() if estimate is not None else None, accepted_rho=accepted_rho)
        self.completeChanged.emit()

    def _running_words(self, resume: bool) -> str:
        """The page's message as the run starts: a resume that charges nothing says so."""
        if resume and self.resume_free:
            return "Resuming. Nothing more will be charged: every stage that was charged has finished."
        return "Resuming…" if resume else "Running…"

    def ask_resume_consent(self) -> float | None:
        """Show what resuming charges again (``core.run.pipeline.resume_quote``) and ask; the ρ accepted, or ``None``.
        A resume that charges nothing asks nothing (``resume_free``; the page then says so)."""
        self.resume_free = False
        try:
            quote = self.controller.resume_quote(self.run_dir)
        except PrivetError as exc:
            self.resume_text = exc.user_message()
            QMessageBox.warning(self, "The run cannot be resumed", self.resume_text)
            return None
        self.resume_text = quote.words(stage_label)
        if not quote.charges_anything:
            self.resume_free = True
            return quote.resume_rho
        answer = QMessageBox.question(
            self, "Resume and charge the budget again?",
            self.resume_text + "\n\nResume the run and accept this charge?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
        return quote.resume_rho if answer == QMessageBox.StandardButton.Yes else None

    def resume_words(self) -> str:
        """What a resume after stopping now would charge again, in words (for the Cancel dialog)."""
        if self.run_dir is None or not self._resumable():
            return "A run stopped now cannot be resumed: it has not started its first private step."
        try:
            quote = self.controller.resume_quote(self.run_dir)
        except PrivetError:
            return "A stopped run can be resumed later; the stage in progress is then drawn and charged again."
        if not quote.redrawn:
            return "A stopped run can be resumed later: no stage charged so far would be charged again."
        listed = ", ".join(stage_label(s) for s, _ in quote.redrawn)
        return (f"A stopped run can be resumed later: stages that finished are not charged again, but the stage in "
                f"progress ({listed}) is drawn again and charged again, up to ε = {quote.extra_epsilon:.3g} more.")

    def confirm_cancel(self) -> bool:
        """Ask before stopping; says what has been charged so far (from the ledger) and what a resume would cost."""
        answer = QMessageBox.question(
            self, "Stop the run?",
            "Stop this run?\n\n" + self.charged_now() + "\n" + self.resume_words(),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def cancel(self) -> None:
        if not self.relay.running or not self.confirm_cancel():
            return
        self._log("Stopping… (the run stops at its next check; it is stopped by force after a few seconds)")
        self.set_message("Stopping the run…", error=False)
        self.cancel_button.setEnabled(False)
        self.relay.cancel()

    def stop_now(self) -> None:
        """Stop at once (closing the window): the child is terminated; charges stay in the ledger."""
        if self.relay.running:
            self.relay.hard_stop()

    def resume(self) -> None:
        self.start(resume=True)

    def charged_now(self) -> str:
        """What the ledger has charged to this run so far, in words."""
        if self.run_dir is None:
            return "Nothing has been charged to the privacy budget yet."
        spend = self.controller.run_spend(self.run_id)
        if not spend.charged:
            return "Nothing has been charged to the privacy budget yet: stopping now costs nothing."
        return charged_summary(spend, STAGE_LABELS)

    # --- events -----------------------------------------------------------------------------------

    def on_succeeded(self, result: dict[str, Any]) -> None:
        self._tick.stop()
        self.result = result
        self.state = "succeeded"
        self.cancel_button.setEnabled(False)
        self.overall.setText("<b>Whole run:</b> finished.")
        self.set_message(f"Finished: {result['n_synthetic']} synthetic documents. Press Next to review and export.",
                         error=False)
        self._log("Run finished.")
        self.completeChanged.emit()

    def on_cancelled(self, message: str) -> None:
        self._tick.stop()
        self.state = "cancelled"
        self.cancel_button.setEnabled(False)
        self.resume_button.setVisible(self._resumable())
        self.charged = self._charged_from_ledger()
        self._update_meter()
        spend = self.controller.run_spend(self.run_id) if self.run_dir is not None else None
        self.stop_report = "The run was stopped. " + (charged_summary(spend, STAGE_LABELS) if spend is not None else "")
        if self._resumable():
            self.stop_report += " You can resume it here or from the main window."
        self._log(message)
        self._log(self.stop_report)
        self.completeChanged.emit()

    def on_failed(self, message: str, resumable: bool) -> None:
        message = in_app_words(message)  # a cap refusal points to Settings → Budgets, not the command line
        self._tick.stop()
        self.state = "failed"
        self.failure = message
        self.cancel_button.setEnabled(False)
        self.resume_button.setVisible(resumable and self._resumable())
        self._log("The run failed.")
        self.completeChanged.emit()
        self.error_box = QMessageBox(QMessageBox.Icon.Critical, "The run failed", message,
                                     QMessageBox.StandardButton.Ok, self)
        self.error_box.setInformativeText("Privet is still running. " + self.charged_now()
                                          + (" You can resume the run." if self.resume_button.isVisibleTo(self)
                                             else ""))
        self.error_box.open()

    # --- helpers ----------------------------------------------------------------------------------

    def _resumable(self) -> bool:
        """A run can resume when the pipeline had started its run folder (checkpoints live there)."""
        return self.run_dir is not None and (self.run_dir / "run.json").is_file()

    def _charged_from_ledger(self) -> list[tuple[str, float]]:
        return list(self.controller.run_spend(self.run_id).stages) if self.run_dir is not None else []
