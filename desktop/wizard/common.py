"""Shared pieces of the wizard pages: the base page and the message line."""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget, QWizardPage

from desktop.controller import WizardController

ERROR_STYLE = "color: #b71c1c;"
INFO_STYLE = "color: #37474f;"


def message_label() -> QLabel:
    """The line under a page's inputs that says why Next is disabled (or what happened)."""
    label = QLabel()
    label.setWordWrap(True)
    label.setObjectName("message")
    label.setStyleSheet(ERROR_STYLE)
    return label


def scrolling_layouts(page: QWidget) -> tuple[QVBoxLayout, QVBoxLayout]:
    """A page whose content scrolls (never squashed when Advanced opens or the screen is small): the layout
    of the scrolled content, and the page's outer layout (for what stays below it, e.g. the message)."""
    body = QWidget()
    layout = QVBoxLayout(body)
    scroll = QScrollArea()
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    scroll.setWidget(body)
    outer = QVBoxLayout(page)
    outer.setContentsMargins(0, 0, 0, 0)
    outer.addWidget(scroll, 1)
    return layout, outer


class Page(QWizardPage):
    """A wizard page bound to the controller; ``message`` says why Next is blocked."""

    def __init__(self, controller: WizardController, title: str, subtitle: str = "") -> None:
        super().__init__()
        self.controller = controller
        self.setTitle(title)
        if subtitle:
            self.setSubTitle(subtitle)
        self.message = message_label()

    def set_message(self, text: str, error: bool = True) -> None:
        self.message.setStyleSheet(ERROR_STYLE if error else INFO_STYLE)
        self.message.setText(text)

    def blocking_message(self) -> str:
        """Why the page is not complete ('' when it is). Subclasses override."""
        return ""

    def is_instruction(self, problem: str) -> bool:
        """True when a blocking message is only the next step to take (shown plainly, not in the error colour).
        Subclasses override; errors stay red."""
        return False

    def isComplete(self) -> bool:  # noqa: N802 - Qt API
        problem = self.blocking_message()
        if problem:
            self.set_message(problem, error=not self.is_instruction(problem))
            self._blocking_shown = problem
        elif self.message.styleSheet() == ERROR_STYLE or self.message.text() == getattr(self, "_blocking_shown", None):
            self.message.clear()
        return not problem

    def store(self) -> None:
        """Write what the user typed on this page into the spec. Subclasses override."""

    def validatePage(self) -> bool:  # noqa: N802 - Qt API
        self.store()
        return True

    def cleanupPage(self) -> None:  # noqa: N802 - Qt API
        """Back keeps what was typed: store it instead of Qt's reset of the page's fields."""
        self.store()

    def refresh(self) -> None:
        """Re-evaluate completeness (and the message)."""
        self.completeChanged.emit()
