"""A check box whose words wrap onto several lines (a QCheckBox's own text never wraps, and one long sentence
widens its page past a laptop screen)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QWidget


class _ClickLabel(QLabel):
    """The words of a check box: a click on them toggles it, as a click on the box's own text would."""

    def __init__(self, text: str, box: QCheckBox) -> None:
        super().__init__(text)
        self.box = box
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setBuddy(box)  # its mnemonic (&K) moves the focus to the box
        self.setCursor(Qt.CursorShape.PointingHandCursor)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        if event.button() == Qt.MouseButton.LeftButton and self.box.isEnabled():
            self.box.click()
        super().mouseReleaseEvent(event)


def wrapped_check(box: QCheckBox, text: str) -> QWidget:
    """``box`` with ``text`` (a mnemonic '&' allowed) beside it, wrapped: the row to put in a layout. The box keeps
    the words as its accessible name; disable or hide the row (not the box alone) to grey or hide its words too."""
    box.setText("")
    box.setAccessibleName(text.replace("&", ""))
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(4)
    label = _ClickLabel(text, box)
    label.setToolTip(box.toolTip())
    layout.addWidget(box, 0, Qt.AlignmentFlag.AlignTop)
    layout.addWidget(label, 1)
    row.setObjectName((box.objectName() or "check") + "_row")
    return row
