"""The Confirm page's "spend anyway" block (docs/method.md §1.9): shown when the plan is expected to release
about 0 topics (``PlanSummary.spends_for_nothing``, computed in core). The run needs the box ticked, which sets
the run spec's ``[privacy] spend_anyway``, only when it would be refused without it: about 0 topics even at the
public bound on the units the settings state (``PlanSummary.needs_spend_anyway``; SPEC §6, never the loaded
count)."""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtWidgets import QCheckBox, QLabel, QVBoxLayout, QWidget

from desktop.widgets.wrapped_check import wrapped_check

WARNING_STYLE = "color: #b71c1c;"


class SpendAnywayBox(QWidget):
    """Plain-words forecast, what would help, and the explicit consent box."""

    def __init__(self, spec_privacy: Any, on_change: Any) -> None:
        super().__init__()
        self.setObjectName("spend_anyway_box")
        self._privacy = spec_privacy
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setObjectName("forecast_warning")
        self.text.setStyleSheet(WARNING_STYLE)
        self.box = QCheckBox()
        self.box.setObjectName("spend_anyway")
        self.box.toggled.connect(self._toggled)
        self.box.toggled.connect(lambda *_: on_change())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.text)
        self.box_row = wrapped_check(self.box, "&Spend anyway: I accept that this run may release no topics, only "
                                       "text no better than a public model writes from the task alone.")
        layout.addWidget(self.box_row)
        self.needed = False  # the run is refused without the tick (decided from public values only)
        self.warned = False  # about 0 topics expected (shown; at the loaded count it only warns)
        self.hide()

    def show_plan(self, plan: Any, spec_privacy: Any) -> None:
        """Show the forecast when about 0 topics are expected; ask for consent only when the run would be refused
        without it (``PlanSummary.needs_spend_anyway``: at the stated public bound on the units, SPEC §6). The
        forecast at the loaded count is a warning for the custodian's eyes: it never decides whether a run goes."""
        self._privacy = spec_privacy
        self.box.setChecked(False)
        spec_privacy.spend_anyway = False
        self.needed = bool(plan is not None and plan.needs_spend_anyway)
        self.warned = bool(plan is not None and (plan.spends_for_nothing or self.needed))
        self.setVisible(self.warned)
        self.box.setVisible(self.needed)
        self.box_row.setVisible(self.needed)  # the box's words with it
        if not self.warned:
            self.text.setText("")
            return
        f = plan.gate_forecast if self.needed else plan.topic_forecast
        helps = "".join(f"<li>{escape(a)}</li>" for a in plan.forecast_advice)
        if self.needed:
            needs = (f"A topic needs about {f.min_topic_support:.0f} units to share a word, even with the {f.n_units} "
                     "units at most that the settings state in advance.")
            decides = "It runs only if you tick 'Spend anyway' below."
        else:
            needs = (f"A topic needs about {f.min_topic_support:.0f} units to share a word, more than the "
                     f"{plan.n_units} units loaded." if f.support_share >= 1 else
                     f"A topic needs about {f.min_topic_support:.0f} of the {plan.n_units} units to share a word "
                     f"({f.support_share:.0%}), more than a typical collection shares.")
            decides = ("Privet does not stop the run on this figure, which comes from the number of units loaded: "
                       "whether a run goes ahead may depend only on values known in advance. You decide: go Back "
                       "and change the settings, or run it knowing this.")
        self.text.setText(
            f"<b>This run is expected to find about {f.expected_topics:.0f} topics.</b> {needs} The budget would "
            "be spent, and the synthetic text would be no better than a public model writing from the task alone "
            f"(the public-only baseline, which costs nothing). {decides}<br>What would help:<ul>{helps}</ul>")

    def consented(self) -> bool:
        return not self.needed or self.box.isChecked()

    def _toggled(self, checked: bool) -> None:
        self._privacy.spend_anyway = bool(checked)
