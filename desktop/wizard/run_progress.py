"""The run page's live progress: each stage's bar and time left, the whole run's time left, the budget meter, the
preview of synthetic documents and the log, updated from the run's events. A part of ``RunPage``
(desktop/wizard/run_page.py), which builds the widgets it uses and holds the run's state.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel, QListWidgetItem, QProgressBar

from core.run.estimate import duration_words
from core.specs.stage_labels import stage_label

MAX_PREVIEWS = 200


class RunProgressSection:
    """The progress display's methods of ``RunPage``."""

    def on_event(self, event: dict[str, Any]) -> None:
        kind, stage = event["kind"], event["stage"]
        if kind in ("stage_start", "progress", "stage_end"):
            bar, eta = self._bar(stage)
            total = max(int(event["total"]), 0)
            bar.setMaximum(total if total else 0)
            bar.setValue(total if kind == "stage_end" else int(event["done"]))
            if kind == "stage_end":
                eta.setText("done")
            elif self.tracker is None:
                eta.setText(_eta_text(event.get("eta_s")))
            if kind == "stage_start":
                self._log(f"Started: {stage_label(stage)}" + (f" — {event['message']}" if event.get("message") else ""))
        elif kind == "charged":
            self.charged.append((stage, float(event.get("rho") or 0.0)))
            self._update_meter()
            self._log(f"Budget charged for {stage_label(stage)} (the ledger records it before any noise is drawn).")
        elif kind == "preview":
            self._add_preview(str(event["message"]))
        elif kind in ("log", "done"):
            if event.get("message"):
                self._log(event["message"])
        if self.tracker is not None:
            self.tracker.update(event)
            if kind in ("stage_start", "progress", "stage_end"):
                self.show_time_left()

    def time_left_s(self) -> float | None:
        """The whole run's time left from core's tracker (None without an estimate)."""
        return self.tracker.remaining_s() if self.tracker is not None else None

    def show_time_left(self) -> None:
        """Show the time left of the whole run and of the current stage (called on events and every second)."""
        if self.state != "running" or self.tracker is None:
            return
        basis = ("refined from this run's progress" if self.tracker.refined
                 else f"estimate based on {self._basis}")
        self.overall.setText(f"<b>Whole run:</b> {self.tracker.run_words()} ({basis}).")
        for stage, (_bar, eta) in self._bars.items():
            if eta.text() == "done" or not self.tracker.started(stage):
                continue
            words = self.tracker.stage_words(stage)  # "a little longer than planned" once past its estimate
            if words:
                eta.setText(words)

    def stage_names(self) -> list[str]:
        return list(self._bars)

    def _bar(self, stage: str) -> tuple[QProgressBar, QLabel]:
        if stage not in self._bars:
            row = len(self._bars)
            bar = QProgressBar()
            bar.setFormat("%v / %m")
            eta = QLabel()
            eta.setWordWrap(True)  # "a little longer than planned": wrapped, never cut
            label = QLabel(stage_label(stage).capitalize())  # whole: wrapped, never cut
            label.setWordWrap(True)
            label.setToolTip(stage)
            self.stages.addWidget(label, row, 0)
            self.stages.addWidget(bar, row, 1)
            self.stages.addWidget(eta, row, 2)
            self._bars[stage] = (bar, eta)
        return self._bars[stage]

    def _add_preview(self, text: str) -> None:
        if self.preview.count() >= MAX_PREVIEWS:
            self.preview.takeItem(0)
        self._n_previews += 1
        item = QListWidgetItem(f"Synthetic document {self._n_previews}\n{text}")
        self.preview.addItem(item)
        self.preview.scrollToBottom()

    def _update_meter(self) -> None:
        spent = sum(r for _, r in self.charged)
        total = max(self.planned_rho, spent)
        self.meter.set_segments(meter_segments(self.charged), total=total or None)
        delta = self.planned_delta or self.controller.effective_delta()
        # the ledger's figure for this run (δ_p of phrase discovery included): the one its certificate states
        spend = self.controller.run_spend(self.run_id) if self.run_dir is not None and self.run_id else None
        spent_eps = spend.epsilon if spend is not None and spend.charged else self.controller.rho_to_eps(spent, delta)
        self.meter_label.setText(
            f"Charged so far: ε = {spent_eps:.3g} of ε = {self.planned_epsilon:g} planned for this run "
            f"(at δ = {delta:.2g}).")
        self.meter_rho.setText(
            f"For specialists: ρ = {spent:.4g} of {self.planned_rho:.4g}. The ledger adds up privacy loss as ρ (rho, "
            "from zero-concentrated differential privacy), because ρ adds up exactly across stages and runs; ε is "
            "its conversion at δ.")

    def _log(self, line: str) -> None:
        self.log.appendPlainText(line)


def meter_segments(charged: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """One legend entry per charge; a stage charged again after a resume is named so (no duplicate entries)."""
    seen: dict[str, int] = {}
    out = []
    for stage, rho in charged:
        seen[stage] = seen.get(stage, 0) + 1
        label = stage_label(stage)
        if seen[stage] > 1:
            label += " (charged again on resume)" if seen[stage] == 2 else f" (charged again, {seen[stage]})"
        out.append((label, rho))
    return out


def _eta_text(eta: float | None) -> str:
    if eta is None:
        return ""
    return duration_words(eta) + " left"
