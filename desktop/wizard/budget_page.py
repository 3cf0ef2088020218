"""Step 3: the privacy budget — ε, δ, guidance, the ledger of this dataset and the per-stage split."""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView, QComboBox, QDoubleSpinBox, QFormLayout, QGroupBox, QHBoxLayout, QHeaderView, QLabel,
    QLineEdit, QPlainTextEdit, QSlider, QTableWidget, QVBoxLayout, QWidget,
)

from core.certificate.render import PARAMETER_MEANINGS
from core.common.errors import PrivetError
from core.ledger.view import after_run_words, spent_words
from core.privacy.budget import EPSILON_TRADE_OFF
from core.specs.stage_labels import stage_label
from desktop.budget_bands import band_for
from desktop.controller import WizardController
from desktop.widgets.collapsible import Collapsible
from desktop.widgets.dataset_runs import DatasetRunsView
from desktop.widgets.stacked_bar import StackedBar
from desktop.wizard.common import Page, scrolling_layouts
from desktop.wizard.epsilon_table import EpsilonTableSection

EPS_MIN, EPS_MAX = 0.1, 50.0
SLIDER_STEPS = 200
AUTO_DELTA = "automatic (recommended)"
DELTA_CHOICES = (AUTO_DELTA, "1e-5", "1e-6", "1e-7")
SYMBOLS = {"rho_total": "ρ", "sigma_h": "σ_h", "sigma_c": "σ_c", "sigma_mu": "σ_μ", "eps_theta": "ε_θ",
           "c_over_tau": "c/τ", "c": "c", "sigma": "σ", "min_topic_units": "units per topic",
           "rho_per_iteration": "ρ per round", "threshold": "vote threshold", "sensitivity": "sensitivity",
           "epsilon_guaranteed": "ε of the summary choice"}
TABLE_HEADERS = ("ε", "Protection", "Expected topics", "Expected documents")


def derived_label(key: str) -> str:
    """'σ_h — noise added to each keyword count': the symbol with its meaning from the certificate's table."""
    meaning = PARAMETER_MEANINGS.get(key, "")
    symbol = SYMBOLS.get(key, key.replace("_", " "))
    return f"{symbol} — {meaning}" if meaning else symbol


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slider_to_eps(position: int) -> float:
    """Slider positions map to ε on a log scale between EPS_MIN and EPS_MAX."""
    frac = position / SLIDER_STEPS
    return EPS_MIN * (EPS_MAX / EPS_MIN) ** frac


def eps_to_slider(epsilon: float) -> int:
    eps = min(max(epsilon, EPS_MIN), EPS_MAX)
    return round(SLIDER_STEPS * math.log(eps / EPS_MIN) / math.log(EPS_MAX / EPS_MIN))


class BudgetPage(EpsilonTableSection, Page):
    def __init__(self, controller: WizardController) -> None:
        super().__init__(controller, "Privacy budget",
                         "How much the synthetic corpus may reveal about any one unit. " + EPSILON_TRADE_OFF)
        self.plan_result: Any = None
        self._plan_error = ""

        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, SLIDER_STEPS)
        self.slider.setToolTip("Drag to choose ε (log scale from 0.1 to 50)")
        self.epsilon = QDoubleSpinBox()
        self.epsilon.setRange(0.01, 100.0)
        self.epsilon.setDecimals(2)
        self.epsilon.setSingleStep(0.1)
        self.epsilon.setToolTip("ε, the privacy loss parameter")
        self.delta = QComboBox()
        self.delta.setEditable(True)
        self.delta.addItems(DELTA_CHOICES)
        self.delta.setToolTip("δ, the small chance that the ε bound does not hold at all. Leave it on automatic "
                              "(10⁻⁶, or 1/(10·N) when a public upper bound N on the number of units is stated).")
        self.conversion = QComboBox()
        self.conversion.addItem("tight (Canonne, Kamath & Steinke 2020)", "tight")
        self.conversion.addItem("loose (ρ + 2√(ρ log 1/δ))", "loose")
        self.conversion.setToolTip("How the ledger's running total (kept in zero-concentrated DP, ρ) is turned into "
                                   "ε at δ. Tight is exact and recommended; loose is the older, larger formula.")

        self.dataset_name = QLineEdit()
        self.dataset_name.setObjectName("dataset_name")
        self.dataset_name.setPlaceholderText("the file or folder name (stays on this computer)")
        self.dataset_name.setToolTip(
            "The name this data is budgeted under on this computer: every run on the same documents (any file "
            "name, row order or columns) is charged to one budget. A name you type here appears in the certificate.")

        self.band = QLabel()
        self.band.setWordWrap(True)
        self.band.setObjectName("band")
        self.meaning = QLabel()
        self.meaning.setWordWrap(True)
        self.meaning.setObjectName("guarantee_meaning")
        self.delta_meaning = QLabel()
        self.delta_meaning.setWordWrap(True)
        self.delta_meaning.setObjectName("delta_meaning")
        self.rationale = QPlainTextEdit()
        self.rationale.setTabChangesFocus(True)
        self.rationale.setFixedHeight(48)
        self.rationale.setPlaceholderText("Record why this budget was chosen, e.g. 'moderate ε, as agreed with the "
                                          "IRB for internal analysis'. It is printed on the certificate.")
        self.rationale.setToolTip("Why this ε: printed on the certificate's first page. Do not put private "
                                  "details here.")
        eps_row = QHBoxLayout()
        eps_row.addWidget(self.slider, 1)
        eps_row.addWidget(self.epsilon)
        form = QFormLayout()
        form.addRow("Dataset &name:", self.dataset_name)
        form.addRow("&ε (epsilon):", eps_row)
        form.labelForField(eps_row).setBuddy(self.epsilon)
        form.addRow("&δ (delta):", self.delta)
        form.labelForField(self.delta).setBuddy(self.delta)
        form.addRow("", self.delta_meaning)

        # What each ε is expected to release (core.run.planning.epsilon_table): a row picked sets ε.
        self.table = QTableWidget(0, len(TABLE_HEADERS))
        self.table.setObjectName("epsilon_table")
        self.table.setHorizontalHeaderLabels(TABLE_HEADERS)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setToolTip("What each ε is expected to release on data of this size. Click a row to use its ε.")
        self.table.itemSelectionChanged.connect(self._row_picked)
        self.table_note = QLabel()
        self.table_note.setObjectName("epsilon_table_note")
        self.table_note.setWordWrap(True)
        self.epsilon_table: Any = None  # core.run.planning.EpsilonTable shown, or None
        self._table_key: Any = None
        self._suggested_for: set[Any] = set()  # the data and methods an ε was suggested for (once each)
        self._officer_chose = False  # ε typed, dragged or picked by the officer: never replaced by a suggestion
        self._syncing = False
        self.unit = QLabel()
        self.unit.setWordWrap(True)
        self.ledger = QLabel()
        self.ledger.setWordWrap(True)
        self.ledger.setObjectName("ledger")
        self.ledger.setToolTip("From the budget ledger on this computer: every run on this dataset is charged there.")
        self.after_run = QLabel()  # the dataset's total after this run (core.ledger.view.after_run_words)
        self.after_run.setWordWrap(True)
        self.after_run.setObjectName("after_run")
        self.dataset_runs = DatasetRunsView()  # why the total is less than the sum, and this dataset's runs
        self.split = StackedBar()
        self.split_caption = QLabel()
        self.split_caption.setWordWrap(True)  # one long line would widen the page past the window
        self.warnings = QLabel()
        self.warnings.setWordWrap(True)
        self.warnings.setStyleSheet("color: #8d6e00;")

        advanced_body = QWidget()
        advanced_layout = QVBoxLayout(advanced_body)
        advanced_layout.setContentsMargins(0, 0, 0, 0)
        conversion_form = QFormLayout()
        conversion_form.addRow("&Conversion:", self.conversion)
        conversion_note = QLabel("How the ledger's running total ρ (zero-concentrated DP, which adds up exactly "
                                 "across runs) is turned into ε at δ. Keep tight.")
        conversion_note.setWordWrap(True)
        conversion_form.addRow("", conversion_note)
        derived_note = QLabel("Noise levels the plan derives from ε (each with what it means):")
        derived_note.setWordWrap(True)
        conversion_form.addRow("", derived_note)
        advanced_layout.addLayout(conversion_form)
        self.derived_box = QWidget()
        self.derived = QFormLayout(self.derived_box)
        advanced_layout.addWidget(self.derived_box)
        self.advanced = Collapsible("Advanced", advanced_body)

        split_box = QGroupBox("How the budget is split between stages")
        split_layout = QVBoxLayout(split_box)
        split_layout.addWidget(self.split)
        split_layout.addWidget(self.split_caption)

        layout, outer = scrolling_layouts(self)  # scrolls: with Advanced open the page is taller than the wizard
        layout.addLayout(form)
        self.table_box = QGroupBox("What each ε is expected to release")
        table_layout = QVBoxLayout(self.table_box)
        table_layout.addWidget(self.table)
        table_layout.addWidget(self.table_note)
        layout.addWidget(self.table_box)
        layout.addWidget(self.band)
        layout.addWidget(self.meaning)
        rationale_form = QFormLayout()
        rationale_form.addRow("&Why this budget:", self.rationale)
        rationale_form.labelForField(self.rationale).setBuddy(self.rationale)
        layout.addLayout(rationale_form)
        layout.addWidget(self.unit)
        layout.addWidget(self.ledger)
        layout.addWidget(self.after_run)
        layout.addWidget(self.dataset_runs)
        layout.addWidget(split_box)
        layout.addWidget(self.warnings)
        layout.addWidget(self.advanced)
        layout.addStretch(1)
        outer.addWidget(self.message)

        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(200)
        self._debounce.timeout.connect(self.refresh_plan)
        self.slider.valueChanged.connect(self._slider_moved)
        self.epsilon.valueChanged.connect(self._epsilon_changed)
        self.delta.currentTextChanged.connect(lambda *_: self._debounce.start())
        self.conversion.currentIndexChanged.connect(lambda *_: self._debounce.start())
        self.dataset_name.editingFinished.connect(self.refresh_plan)

    # --- Qt wizard hooks ---------------------------------------------------------------------

    def initializePage(self) -> None:  # noqa: N802 - Qt API
        privacy = self.controller.spec.privacy
        self.dataset_name.setText(self.controller.spec.data.dataset_name)
        self._syncing = True
        self.epsilon.setValue(privacy.epsilon)  # the spec's ε, not a choice made on this page
        self._syncing = False
        self.delta.setCurrentText(AUTO_DELTA if privacy.delta <= 0 else f"{privacy.delta:g}")
        self.conversion.setCurrentIndex(max(0, self.conversion.findData(privacy.conversion)))
        self.rationale.setPlainText(privacy.rationale)
        self.unit.setText(f"<b>Unit of privacy:</b> {self.controller.unit_description()}. The guarantee "
                          "covers adding or removing any one such unit.")
        self.refresh_table()
        self._suggest_epsilon()
        self.refresh_plan()

    def store(self) -> None:
        self.controller.spec.privacy.rationale = self.rationale.toPlainText().strip()
        self.refresh_plan()

    def blocking_message(self) -> str:
        if self.parsed_delta() is None:
            return "δ must be a number between 0 and 1 (for example 1e-6), or 'automatic'."
        return self._plan_error

    # --- inputs ---------------------------------------------------------------------------------

    def set_epsilon(self, epsilon: float) -> None:
        """The officer's choice of ε (typed, or a test's): never replaced by the table's suggestion."""
        self._officer_chose = True
        self.epsilon.setValue(epsilon)

    def set_delta_text(self, text: str) -> None:
        self.delta.setCurrentText(text)
        self.refresh_plan()

    def parsed_delta(self) -> float | None:
        """δ from the field: 0.0 for automatic, ``None`` when it is not a valid number in [0, 1)."""
        text = self.delta.currentText().strip()
        if text == AUTO_DELTA or text.lower() in ("", "auto", "automatic"):
            return 0.0
        try:
            value = float(text)
        except ValueError:
            return None
        return value if 0.0 < value < 1.0 else None

    def _slider_moved(self, position: int) -> None:
        eps = round(slider_to_eps(position), 2)
        if abs(eps - self.epsilon.value()) > 0.005 and eps_to_slider(self.epsilon.value()) != position:
            self._officer_chose = True
            self.epsilon.setValue(eps)

    def _epsilon_changed(self, value: float) -> None:
        if not self._syncing and self.epsilon.hasFocus():
            self._officer_chose = True  # typed in the box
        self.slider.blockSignals(True)
        self.slider.setValue(eps_to_slider(value))
        self.slider.blockSignals(False)
        self._show_band(value)
        self._select_row(value)
        self._debounce.start()

    # --- plan -----------------------------------------------------------------------------------

    def refresh_plan(self) -> None:
        """Write ε/δ into the spec and ask the controller for the plan; update every display."""
        self._debounce.stop()
        delta = self.parsed_delta()
        self._show_band(self.epsilon.value())
        if delta is None:
            self.completeChanged.emit()
            return
        self.controller.spec.data.dataset_name = " ".join(self.dataset_name.text().split())
        privacy = self.controller.spec.privacy
        privacy.epsilon = float(self.epsilon.value())
        privacy.delta = delta
        privacy.conversion = self.conversion.currentData()
        self._plan_error = ""
        self.refresh_table()  # δ, the conversion or the dataset may have changed; ε alone does not redraw it
        try:
            self.plan_result = self.controller.plan()
        except PrivetError as exc:
            self.plan_result = None
            self._plan_error = exc.user_message()
        self._show_plan(self.plan_result)
        self._show_ledger()
        self.completeChanged.emit()

    def _show_band(self, epsilon: float) -> None:
        delta = self.parsed_delta()
        shown_delta = delta if delta else self.controller.effective_delta() if delta == 0.0 else 1e-6
        band = band_for(epsilon, shown_delta, self.controller.unit_word())
        self.band.setText(f"<span style='color:{band.colour}; font-weight:bold'>■ {band.headline} "
                          f"(ε = {epsilon:g})</span> — {band.guidance}")
        self.band.setProperty("band", band.name)
        self.meaning.setText(f"<b>What it means for one {self.controller.unit_word()}:</b> {band.meaning}")
        self.delta_meaning.setText(band.delta)

    def derived_rows(self) -> list[str]:
        """The meanings of the Advanced panel's derived-parameter rows (each parameter once), beside each value."""
        return [self.derived.itemAt(r, QFormLayout.ItemRole.FieldRole).widget().text()
                for r in range(self.derived.rowCount())]

    def _show_plan(self, plan: Any) -> None:
        while self.derived.rowCount() > 0:
            self.derived.removeRow(0)
        if plan is None:
            self.split.set_segments([])
            self.split_caption.setText("")
            self.warnings.setText("")
            return
        self.split.set_segments([(stage_label(name), rho) for name, rho in plan.stages])
        self.split_caption.setText(
            f"This run: ε = {plan.epsilon:g} at δ = {plan.delta:.2g}, shared between the steps above; a larger "
            "share means less noise for that step (the noise levels are under Advanced).")
        # The plan's warnings include core's δ warnings (core.privacy.planner.delta_warnings).
        self.warnings.setText("\n".join(f"⚠ {w}" for w in plan.warnings))
        shown = {"rho_total": plan.rho_total, **plan.derived}
        for key, value in shown.items():
            meaning = QLabel(derived_label(key))
            meaning.setWordWrap(True)  # the value first, then its meaning, which wraps instead of widening the page
            self.derived.addRow(QLabel(f"{value:.4g}"), meaning)

    def _show_ledger(self) -> None:
        plan = self.plan_result
        status = self.controller.ledger_status()
        self.dataset_runs.show_dataset(self.controller.booked_key() if status is not None else None)
        self.dataset_runs.setVisible(status is not None)
        self.after_run.setText("")
        if status is None:
            self.ledger.setText("<b>Budget already spent on this dataset:</b> none recorded.")
            return
        cap = (f"cap ε = {status.cap_epsilon:g} at δ = {status.cap_delta:.2g} (set or raised in Settings → Budgets)"
               if status.cap_epsilon is not None else "no cap set (a cap can be set in Settings → Budgets)")
        spent = spent_words(status.spent_epsilon, status.delta, status.n_runs)  # the same words on every page
        self.ledger.setText(f"<b>This run is booked on the dataset '{_html(status.dataset_name)}'.</b> Budget "
                            f"already spent on it: {spent}; {cap}.")
        if plan is not None:
            after = self.controller.cumulative(plan.rho_total, plan.delta, plan.delta_spent)
            if after is not None:
                self.after_run.setText(_html(after_run_words(after)))
            problem = self.controller.budget_problem(plan.rho_total, plan.delta, plan.delta_spent)
            if problem:
                self._plan_error = problem
