"""Shared pieces of the wizard pages: the base page and the message line."""

from __future__ import annotations

from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QComboBox, QFrame, QLabel, QScrollArea, QSizePolicy, QVBoxLayout, QWidget, QWizardPage,
)

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


def shrinkable(combo: QComboBox, characters: int = 24) -> QComboBox:
    """A combo box whose longest choice does not set the page's smallest width: it fills the row it is in and
    shrinks to ``characters`` on a narrow screen (its list still shows every choice whole)."""
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(characters)
    combo.setSizePolicy(QSizePolicy.Policy.Expanding, combo.sizePolicy().verticalPolicy())
    return combo


def fit_to_screen(window: QWidget) -> None:
    """Shrink ``window`` to the free area of its screen (less the taskbar; its frame included), so that a laptop
    screen (1280 × 720, or 1366 × 768 at 125 %) shows its buttons: the pages scroll up and down instead."""
    screen = window.screen()
    if screen is None:
        return
    free = screen.availableGeometry()
    frame = window.frameGeometry().size() - window.geometry().size()  # the title bar and borders, once shown
    width = min(window.width(), free.width() - frame.width())
    height = min(window.height(), free.height() - frame.height())
    if (width, height) != (window.width(), window.height()):
        window.resize(max(width, window.minimumWidth()), max(height, window.minimumHeight()))


class FitsScreen:
    """Mixin for a top-level window: the first time it is shown, it is shrunk to fit its screen."""

    _fitted = False

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)  # type: ignore[misc]
        if not self._fitted:
            self._fitted = True
            fit_to_screen(self)  # type: ignore[arg-type]


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
