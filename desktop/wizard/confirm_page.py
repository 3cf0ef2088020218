"""Step 6: the commit page — a summary of everything and the ε that the ledger will record."""

from __future__ import annotations

from html import escape

from PySide6.QtWidgets import QCheckBox, QLabel, QVBoxLayout, QWizard

from core.errors import PrivetError
from desktop.controller import WizardController
from desktop.wizard.common import Page

MODEL_NAMES = {"default": "packaged SmolLM2-135M-Instruct", "hf": "Hugging Face folder", "gguf": "GGUF file",
               "tiny-random": "tiny random test model"}


class ConfirmPage(Page):
    def __init__(self, controller: WizardController) -> None:
        super().__init__(controller, "Confirm", "Check everything before the budget is spent.")
        self.setCommitPage(True)
        self.setButtonText(QWizard.WizardButton.CommitButton, "&Start run")
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.recorded = QLabel()
        self.recorded.setWordWrap(True)
        self.recorded.setObjectName("recorded")
        self.recorded.setStyleSheet("font-size: 14px; font-weight: bold; color: #b71c1c;")
        self.understood = QCheckBox("I &understand that once the run starts, this budget is spent, even if the "
                                    "run is cancelled or fails.")
        self.understood.toggled.connect(lambda *_: self.completeChanged.emit())
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.recorded)
        layout.addWidget(self.understood)
        layout.addStretch(1)
        layout.addWidget(self.message)
        self.plan_result = None

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
        rows = [
            ("Data", f"{escape(spec.data.path)}"
                     + (f" — {summary.n_units} units ({summary.unit_kind}s)" if summary else "")),
            ("Method", "DP-SynRAG" if spec.method == "dp_synrag" else spec.method.upper()),
            ("Privacy", f"ε = {spec.privacy.epsilon:g}, δ = "
                        f"{plan.delta:.2g}" if plan else f"ε = {spec.privacy.epsilon:g}"),
            ("Unit of privacy", escape(self.controller.unit_description())),
            ("Model", MODEL_NAMES.get(spec.llm.source, spec.llm.source)
                      + (f" ({escape(spec.llm.path)})" if spec.llm.path else "") + f", device {spec.llm.device}"),
            ("Task", escape(spec.task)),
            ("Synthetic documents", "one per private document" if spec.method == "rpsg" else f"up to {spec.dp_synrag.R}"),
            ("Formats", ", ".join(spec.output.formats)),
            ("Custodian", escape(spec.output.custodian or "(not given)")),
        ]
        self.summary.setText("<table>" + "".join(
            f"<tr><td><b>{k}:</b>&nbsp;</td><td>{v}</td></tr>" for k, v in rows) + "</table>")
        if plan is not None:
            self.recorded.setText(
                f"The ledger will record ε = {plan.epsilon:g} at δ = {plan.delta:.2g} (ρ = {plan.rho_total:.4g}) "
                "for this dataset. Once started, the budget is spent.")
        self.completeChanged.emit()

    def blocking_message(self) -> str:
        if self.plan_result is None:
            return self.message.text() or "The run could not be planned; go back and check the settings."
        if not self.understood.isChecked():
            return "Tick the box to confirm that the budget will be spent."
        return ""
