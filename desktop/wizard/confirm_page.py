"""Step 6: the commit page — a summary of everything, the ε this run spends and what the dataset will
have spent after it (from ``core.ledger.view``), and the time estimate (from ``core.run.estimate``)."""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QFormLayout, QLabel, QWizard,
)

from core.common.errors import PrivetError
from core.run.estimate import duration_words
from core.ledger.view import after_run_words
from core.specs.stage_labels import stage_label
from core.common.wording import PERMITTED_USE_NAMES, PERMITTED_USES, guarantee_words, permitted_use_words
from desktop.active_runs import ActiveRuns
from desktop.controller import METHOD_SHORT_NAMES, WizardController
from desktop.widgets.collapsible import Collapsible
from desktop.widgets.dataset_runs import DatasetRunsView
from desktop.widgets.wrapped_check import wrapped_check
from desktop.wizard.common import Page, scrolling_layouts
from desktop.wizard.spend_anyway import SpendAnywayBox
from desktop.wizard.task_page import FORMAT_NAMES

MODEL_NAMES = {"default": "packaged SmolLM2-135M-Instruct", "hf": "Hugging Face folder", "gguf": "GGUF file",
               "tiny-random": "tiny random test model"}


class ConfirmPage(Page):
    def __init__(self, controller: WizardController, active: ActiveRuns | None = None) -> None:
        super().__init__(controller, "Confirm", "Check everything before the budget is spent.")
        self.active = active or ActiveRuns(self)
        self.setCommitPage(True)
        self.setButtonText(QWizard.WizardButton.CommitButton, "&Start run")
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setObjectName("confirm_summary")
        self.recorded = QLabel()
        self.recorded.setWordWrap(True)
        self.recorded.setObjectName("recorded")
        self.recorded.setStyleSheet("font-size: 14px; font-weight: bold;")  # important, not an error: no red
        self.cumulative = QLabel()
        self.cumulative.setWordWrap(True)
        self.cumulative.setObjectName("cumulative")
        self.dataset_runs = DatasetRunsView()  # why the total is less than the sum, and this dataset's runs
        self.permitted_use = QComboBox()
        self.permitted_use.setObjectName("permitted_use")
        for use in PERMITTED_USES:
            self.permitted_use.addItem(PERMITTED_USE_NAMES[use], use)
        self.permitted_use.setToolTip("What the release may be used for: printed on the first page of the "
                                      "certificate, next to the advice for this budget")
        self.permitted_use.currentIndexChanged.connect(lambda *_: self._permitted_use_changed())
        self.permitted_advice = QLabel()
        self.permitted_advice.setWordWrap(True)
        self.permitted_advice.setObjectName("permitted_advice")
        self.permitted_advice.setTextFormat(Qt.TextFormat.PlainText)
        use_form = QFormLayout()
        use_form.addRow("&Permitted use:", self.permitted_use)
        use_form.labelForField(self.permitted_use).setBuddy(self.permitted_use)
        use_form.addRow("", self.permitted_advice)
        self.rho = QLabel()
        self.rho.setWordWrap(True)
        self.advanced = Collapsible("Advanced", self.rho)
        self.understood = QCheckBox()
        self.understood.toggled.connect(lambda *_: self.completeChanged.emit())
        self.spend_anyway = SpendAnywayBox(controller.spec.privacy, lambda: self.completeChanged.emit())
        # scrolls: the summary, the dataset's runs and the consent do not fit every screen
        layout, outer = scrolling_layouts(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.recorded)
        layout.addWidget(self.cumulative)
        layout.addWidget(self.dataset_runs)
        layout.addLayout(use_form)
        layout.addWidget(self.advanced)
        layout.addWidget(self.spend_anyway)
        layout.addWidget(wrapped_check(self.understood, "I &understand that once the run starts, this budget is spent, "
                                                        "even if the run is cancelled or fails."))
        layout.addStretch(1)
        outer.addWidget(self.message)
        self.plan_result: Any = None
        self.active.changed.connect(lambda: self.completeChanged.emit())

    def initializePage(self) -> None:  # noqa: N802 - Qt API
        self.understood.setChecked(False)
        spec = self.controller.spec
        try:
            self.plan_result = self.controller.plan()
        except PrivetError as exc:
            self.plan_result = None
            self.set_message(exc.user_message())
        plan = self.plan_result
        summary = self.controller.summary
        estimate = self.controller.estimate()
        out, options = spec.output, self.controller.wizard_options()
        rows = [
            ("Data", f"{escape(spec.data.path)}"
                     + (f" — {summary.n_units} {'people' if summary.unit_kind == 'person' else 'documents'}"
                        if summary else "")),
            ("Method", METHOD_SHORT_NAMES.get(spec.method, spec.method)),
            ("Privacy", (f"ε = {spec.privacy.epsilon:g}, δ = {plan.delta:.2g}" if plan
                         else f"ε = {spec.privacy.epsilon:g}")
             + f" — {guarantee_words(spec.privacy.epsilon, 1e-6).headline.lower()}"),
            ("Unit of privacy", escape(self.controller.unit_description())),
            ("Model", MODEL_NAMES.get(spec.llm.source, spec.llm.source)
                      + (f" ({escape(spec.llm.path)})" if spec.llm.path else "") + f", device {spec.llm.device}"),
            ("Task", escape(spec.task)),
            ("Synthetic documents", "one per private document" if options.documents == "one_per_unit"
             else escape(options.count_note) if options.documents == "settings" else self._documents_words()),
            ("Formats", ", ".join(FORMAT_NAMES.get(name, name) for name in out.formats)),
            ("Export folder", escape(f"{self.controller.export_folder()} (one folder per run inside it; "
                                     "you can change it when exporting)")),
            ("Custodian", escape(out.custodian or "(not given)")),
            ("Organisation", escape(out.organisation or "(not given)")),
            ("IRB protocol", escape(out.irb_protocol or "(not given)")),
            ("Time", (f"{duration_words(estimate.total_s)} (based on {escape(estimate.basis)})"
                      + stage_times(estimate) if estimate is not None else "no estimate")),
        ]
        self.summary.setText("<table>" + "".join(
            f"<tr><td><b>{k}:</b>&nbsp;</td><td>{v}</td></tr>" for k, v in rows) + "</table>")
        self.recorded.setText("")
        self.cumulative.setText("")
        self.rho.setText("")
        if plan is not None:
            self.recorded.setText(f"This run spends ε = {plan.epsilon:g} at δ = {plan.delta:.2g} of this dataset's "
                                  "budget. Once started, the budget is spent.")
            self.cumulative.setText(self._cumulative_text(plan))
            self.rho.setText(f"For specialists: the ledger adds up privacy loss as ρ (rho, from zero-concentrated "
                             f"differential privacy), because the ρ of several runs adds up exactly; the ε above is "
                             f"its conversion at δ. This run: ρ = {plan.rho_total:.4g}.")
        self.dataset_runs.show_dataset(self.controller.booked_key() if plan is not None else None)
        self.dataset_runs.setVisible(bool(self.cumulative.text()))
        self.permitted_use.blockSignals(True)
        self.permitted_use.setCurrentIndex(max(0, self.permitted_use.findData(spec.output.permitted_use)))
        self.permitted_use.blockSignals(False)
        self._permitted_use_changed()
        self.spend_anyway.show_plan(plan, spec.privacy)
        self.completeChanged.emit()

    def _documents_words(self) -> str:
        """Core's forecast of how many documents the run writes, as a range, in ``privet plan``'s words (or "up to
        R" when R is stated and there is no forecast)."""
        words = self.controller.documents_words()
        if words is None:
            stated = self.controller.wizard_section().R  # R of the section the task page stored it in
            return f"up to {stated}" if stated else "not known yet"
        return words

    def set_permitted_use(self, use: str) -> None:
        """Choose what the release may be used for (one of ``core.common.wording.PERMITTED_USES``)."""
        self.permitted_use.setCurrentIndex(self.permitted_use.findData(use))

    def _permitted_use_changed(self) -> None:
        use = self.permitted_use.currentData() or PERMITTED_USES[0]
        self.controller.spec.output.permitted_use = use
        _name, meaning, advice = permitted_use_words(use, self.controller.spec.privacy.epsilon)
        self.permitted_advice.setText(f"{meaning} {advice} It is printed on the certificate's first page.")

    def _cumulative_text(self, plan: Any) -> str:
        after = self.controller.cumulative(plan.rho_total, plan.delta, plan.delta_spent)
        if after is None:
            return ""
        cap = (f" Its cap is ε = {after.cap_epsilon:g}." if after.cap_epsilon is not None
               else " No cap is set for this dataset.")
        text = escape(after_run_words(after), quote=False) + cap  # the Budget page's words: one spent figure on every page
        if not after.within_cap:
            text += " This is more than the cap: the run will be refused."
        return text

    def is_instruction(self, problem: str) -> bool:
        return problem.startswith("Tick the box")

    def blocking_message(self) -> str:
        if self.plan_result is None:
            return self.message.text() or "The run could not be planned; go back and check the settings."
        summary = self.controller.summary
        own_run = self.wizard().run_page if self.wizard() is not None else None
        busy = self.active.busy_message(summary.fingerprint, own_run) if summary and summary.fingerprint else ""
        if busy:
            return busy
        if not self.spend_anyway.consented():
            return ("About 0 topics are expected, so this run would spend its budget for nothing. Go Back and "
                    "raise ε, load more documents or use fewer clusters, or tick 'Spend anyway'.")
        if not self.understood.isChecked():
            return "Tick the box to confirm that the budget will be spent."
        return ""


def stage_times(estimate: Any) -> str:
    """The time of each stage that will really run, longest first, in plain words (stages under a few
    seconds are left out)."""
    parts = [f"{stage_label(stage)} {duration_words(seconds)}" for stage, seconds in
             sorted(estimate.stages, key=lambda item: -item[1]) if seconds >= 5]
    return ("<br>" + escape("; ".join(parts))) if parts else ""
