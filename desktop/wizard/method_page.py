"""Step 2: choose the method (only the implemented ones are offered)."""

from __future__ import annotations

from PySide6.QtWidgets import QButtonGroup, QLabel, QRadioButton

from desktop.controller import WizardController
from desktop.wizard.common import Page, scrolling_layouts


class MethodPage(Page):
    def __init__(self, controller: WizardController) -> None:
        super().__init__(controller, "Method", "How the synthetic text is made.")
        self.group = QButtonGroup(self)
        self.buttons: dict[str, QRadioButton] = {}
        layout, outer = scrolling_layouts(self)  # the explanations wrap; on a small screen the page scrolls
        for i, info in enumerate(controller.available_methods()):
            button = QRadioButton(f"&{i + 1}  {info.title}")
            button.setToolTip(info.scope)
            self.group.addButton(button)
            self.buttons[info.key] = button
            explanation = QLabel(info.explanation)
            explanation.setWordWrap(True)
            explanation.setContentsMargins(24, 0, 0, 0)
            scope = QLabel(f"<b>Privacy scope:</b> {info.scope}")
            scope.setWordWrap(True)
            scope.setContentsMargins(24, 0, 0, 8)
            if not info.end_to_end_dp:  # a weaker formal scope (RPSG): said in the warning colour
                scope.setStyleSheet("color: #8d4e00;")
            layout.addWidget(button)
            layout.addWidget(explanation)
            layout.addWidget(scope)
        layout.addStretch(1)
        outer.addWidget(self.message)
        self.group.buttonToggled.connect(lambda *_: self.completeChanged.emit())

    def initializePage(self) -> None:  # noqa: N802 - Qt API
        button = self.buttons.get(self.controller.spec.method)
        if button is None and self.buttons:
            button = next(iter(self.buttons.values()))
        if button is not None:
            button.setChecked(True)

    def selected(self) -> str:
        for key, button in self.buttons.items():
            if button.isChecked():
                return key
        return ""

    def select(self, key: str) -> None:
        self.buttons[key].setChecked(True)

    def is_instruction(self, problem: str) -> bool:
        return problem == "Choose a method."

    def blocking_message(self) -> str:
        return "" if self.selected() else "Choose a method."

    def store(self) -> None:
        self.controller.spec.method = self.selected() or self.controller.spec.method
