"""Step 7: the run — per-stage progress, the budget meter, live preview, log, cancel and resume.

The pipeline runs in a child process (``desktop.relay.RunRelay``); this page only shows
its events.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import (
    QGridLayout, QGroupBox, QHBoxLayout, QLabel, QListWidget, QMessageBox, QPlainTextEdit, QProgressBar, QPushButton,
    QSplitter, QVBoxLayout,
)
from PySide6.QtCore import Qt

from desktop.controller import WizardController
from desktop.relay import RunRelay
from desktop.widgets.stacked_bar import StackedBar
from desktop.wizard.common import Page

MAX_PREVIEWS = 200


class RunPage(Page):
    def __init__(self, controller: WizardController, relay: RunRelay) -> None:
        super().__init__(controller, "Run", "The run happens in a separate process; you can cancel it at any time.")
        self.relay = relay
        self.run_dir: Path | None = None
        self.result: dict[str, Any] | None = None
        self.state = "idle"  # idle / running / succeeded / cancelled / failed
        self.planned_rho = 0.0
        self.charged: list[tuple[str, float]] = []
        self.error_box: QMessageBox | None = None
        self.failure = ""
        self._bars: dict[str, tuple[QProgressBar, QLabel]] = {}

        self.stages = QGridLayout()
        stage_box = QGroupBox("Stages")
        stage_box.setLayout(self.stages)
        self.meter = StackedBar()
        self.meter.setToolTip("Budget charged so far; each stage is charged when it starts.")
        self.meter_label = QLabel()
        meter_box = QGroupBox("Budget meter")
        meter_layout = QVBoxLayout(meter_box)
        meter_layout.addWidget(self.meter)
        meter_layout.addWidget(self.meter_label)
        self.preview = QListWidget()
        self.preview.setWordWrap(True)
        self.preview.setToolTip("Synthetic documents as they are finished (never private text)")
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(2000)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        for title, widget in (("Live preview (synthetic)", self.preview), ("Log", self.log)):
            box = QGroupBox(title)
            QVBoxLayout(box).addWidget(widget)
            splitter.addWidget(box)

        self.cancel_button = QPushButton("&Cancel run")
        self.cancel_button.setToolTip("Stop the run. Stages that have started stay charged.")
        self.cancel_button.clicked.connect(self.cancel)
        self.resume_button = QPushButton("&Resume run")
        self.resume_button.setToolTip("Continue from the last checkpoint; charged stages are not charged again.")
        self.resume_button.clicked.connect(self.resume)
        self.resume_button.setVisible(False)
        buttons = QHBoxLayout()
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.resume_button)
        buttons.addStretch(1)

        layout = QVBoxLayout(self)
        layout.addWidget(stage_box)
        layout.addWidget(meter_box)
        layout.addWidget(splitter, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.message)

        relay.event.connect(self.on_event)
        relay.succeeded.connect(self.on_succeeded)
        relay.cancelled.connect(self.on_cancelled)
        relay.failed.connect(self.on_failed)

    # --- Qt wizard hooks ---------------------------------------------------------------------

    def initializePage(self) -> None:  # noqa: N802 - Qt API
        if self.state == "idle":
            self.start()

    def blocking_message(self) -> str:
        return {
            "running": "The run is in progress.",
            "cancelled": "The run was cancelled. Stages that had started stay charged in the ledger.",
            "failed": self.failure,
            "idle": "The run has not started.",
        }.get(self.state, "")

    def isComplete(self) -> bool:  # noqa: N802 - Qt API
        if self.state in ("running", "idle"):
            return False
        return super().isComplete()

    # --- run control ---------------------------------------------------------------------------

    def start(self, resume: bool = False) -> None:
        try:
            plan = self.controller.plan()
            self.planned_rho = float(plan.rho_total)
        except Exception:  # noqa: BLE001 - the meter then scales to what is charged
            self.planned_rho = 0.0
        if not resume or self.run_dir is None:
            self.run_dir = self.controller.new_run_dir()
            self.charged = []
            self._update_meter()
        self.state = "running"
        self.resume_button.setVisible(False)
        self.cancel_button.setEnabled(True)
        self.set_message("Running…", error=False)
        self._log(f"{'Resuming' if resume else 'Starting'} run in {self.run_dir}")
        self.relay.start(self.controller.run_spec_dict(), self.run_dir, resume=resume)
        self.completeChanged.emit()

    def cancel(self) -> None:
        if self.relay.running:
            self._log("Cancelling… (the run stops at its next check; it is stopped by force if it does not)")
            self.cancel_button.setEnabled(False)
            self.relay.cancel()

    def resume(self) -> None:
        self.start(resume=True)

    # --- events -----------------------------------------------------------------------------------

    def on_event(self, event: dict[str, Any]) -> None:
        kind, stage = event["kind"], event["stage"]
        if kind in ("stage_start", "progress", "stage_end"):
            bar, eta = self._bar(stage)
            total = max(int(event["total"]), 0)
            bar.setMaximum(total if total else 0)
            bar.setValue(total if kind == "stage_end" else int(event["done"]))
            eta.setText("done" if kind == "stage_end" else _eta_text(event.get("eta_s")))
            if kind == "stage_start":
                self._log(f"Stage started: {stage}" + (f" — {event['message']}" if event.get("message") else ""))
        elif kind == "charged":
            self.charged.append((stage, float(event.get("rho") or 0.0)))
            self._update_meter()
            self._log(f"Budget charged for {stage}: ρ = {event.get('rho') or 0:.4g}")
        elif kind == "preview":
            if self.preview.count() < MAX_PREVIEWS:
                self.preview.addItem(event["message"])
        elif kind in ("log", "done"):
            if event.get("message"):
                self._log(event["message"])

    def on_succeeded(self, result: dict[str, Any]) -> None:
        self.result = result
        self.state = "succeeded"
        self.cancel_button.setEnabled(False)
        self.set_message(f"Finished: {result['n_synthetic']} synthetic documents. Press Next to review and export.",
                         error=False)
        self._log("Run finished.")
        self.completeChanged.emit()

    def on_cancelled(self, message: str) -> None:
        self.state = "cancelled"
        self.cancel_button.setEnabled(False)
        self.resume_button.setVisible(self._resumable())
        self._log(message)
        self.completeChanged.emit()

    def on_failed(self, message: str, resumable: bool) -> None:
        self.state = "failed"
        self.failure = message
        self.cancel_button.setEnabled(False)
        self.resume_button.setVisible(resumable and self._resumable())
        self._log("The run failed.")
        self.completeChanged.emit()
        self.error_box = QMessageBox(QMessageBox.Icon.Critical, "The run failed", message,
                                     QMessageBox.StandardButton.Ok, self)
        self.error_box.setInformativeText("Privet is still running. Budget already charged stays charged."
                                          + (" You can resume the run." if self.resume_button.isVisibleTo(self)
                                             else ""))
        self.error_box.open()

    # --- helpers ----------------------------------------------------------------------------------

    def _resumable(self) -> bool:
        """A run can resume when the pipeline had started its run folder (checkpoints live there)."""
        return self.run_dir is not None and (self.run_dir / "run.json").is_file()

    def stage_names(self) -> list[str]:
        return list(self._bars)

    def _bar(self, stage: str) -> tuple[QProgressBar, QLabel]:
        if stage not in self._bars:
            row = len(self._bars)
            bar = QProgressBar()
            bar.setFormat("%v / %m")
            eta = QLabel()
            self.stages.addWidget(QLabel(stage), row, 0)
            self.stages.addWidget(bar, row, 1)
            self.stages.addWidget(eta, row, 2)
            self._bars[stage] = (bar, eta)
        return self._bars[stage]

    def _update_meter(self) -> None:
        spent = sum(r for _, r in self.charged)
        total = max(self.planned_rho, spent)
        self.meter.set_segments(self.charged, total=total or None)
        self.meter_label.setText(f"Charged ρ = {spent:.4g} of {self.planned_rho:.4g} planned "
                                 f"(ε = {self.controller.spec.privacy.epsilon:g} in total).")

    def _log(self, line: str) -> None:
        self.log.appendPlainText(line)


def _eta_text(eta: float | None) -> str:
    if eta is None:
        return ""
    if eta < 60:
        return f"about {eta:.0f} s left"
    return f"about {eta / 60:.0f} min left"

