"""What "fits the screen" means for a window, checked on its real widgets (issue 56 item 1).

``layout_problems(window)`` lists, in words, every way the shown window does not fit: the window larger than the
screen's free area; a visible control (button, check box, combo box, line or text edit, spin box, slider, table,
list, progress bar) or label outside the window or cut by a parent; a scroll area that scrolls sideways; a label
cut short (a one-line label narrower than its text, a wrapped label shorter than its text); a combo box choice
that would show cut when chosen; a tab out of its bar (a stacked bar's legend is a wrapped label:
``desktop.widgets.stacked_bar``). Scrolling up and down inside a page is allowed: a widget below a scroll area's
visible part is not a problem.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractButton, QAbstractScrollArea, QAbstractSlider, QAbstractSpinBox, QApplication, QComboBox, QLabel,
    QLineEdit, QProgressBar, QScrollArea, QScrollBar, QStyle, QStyleOptionComboBox, QTabBar, QWidget,
)

# The free area of the two laptop screens of issue 56, less about 60 px for a taskbar and the title bar:
# 1280 × 720 at 100 %, and 1366 × 768 at 125 % scaling (a logical screen of 1093 × 614); the smaller one also with
# a larger desktop font.
# The free area of each screen and the desktop's font (None: Qt's default, 9 pt here; 11 pt: GNOME's and Ubuntu's).
SCREENS: dict[str, tuple[tuple[int, int], float | None]] = {
    "1280x720": ((1280, 660), None),
    "1366x768-125%": ((1093, 554), None),
    "1366x768-125%-font-11pt": ((1093, 554), 11.0),
}
CONTROLS = (QAbstractButton, QComboBox, QLineEdit, QAbstractSpinBox, QAbstractSlider, QProgressBar,
            QAbstractScrollArea, QLabel)
SLACK = 1  # pixels of rounding


@contextmanager
def desktop_font(points: float | None) -> Iterator[None]:
    """The application's font at ``points`` (None: unchanged) for the widgets made inside the block."""
    app = QApplication.instance()
    before = app.font()  # type: ignore[union-attr]
    if points is not None:
        font = QFont(before)
        font.setPointSizeF(points)
        app.setFont(font)  # type: ignore[union-attr]
    try:
        yield
    finally:
        app.setFont(before)  # type: ignore[union-attr]


def settle(window: QWidget, rounds: int = 6) -> None:
    """Let the layouts (and the scroll bars' ranges, which follow them) settle."""
    for _ in range(rounds):
        QApplication.processEvents()
    if window.layout() is not None:
        window.layout().activate()
    for _ in range(rounds):
        QApplication.processEvents()


def show_at(window: QWidget, size: tuple[int, int]) -> None:
    """Show ``window`` (shrunk to the test screen, as on any screen), then give it the laptop's free area."""
    window.show()
    settle(window)
    window.resize(*size)
    settle(window)


def _name(widget: QWidget) -> str:
    text = ""
    if isinstance(widget, (QLabel, QAbstractButton)):
        text = widget.text()
    elif isinstance(widget, QLineEdit):
        text = widget.placeholderText() or widget.text()
    elif isinstance(widget, QComboBox):
        text = widget.currentText()
    text = " ".join(text.split())
    short = text[:60] + ("…" if len(text) > 60 else "")
    return f"{type(widget).__name__}{'#' + widget.objectName() if widget.objectName() else ''} '{short}'"


def _rect_in(widget: QWidget, ancestor: QWidget) -> QRect:
    return QRect(widget.mapTo(ancestor, QPoint(0, 0)), widget.size())


def _scroll_areas(window: QWidget) -> set[QWidget]:
    """The viewports of the scroll areas that hold other widgets (vertical scrolling in them is allowed)."""
    return {area.viewport() for area in window.findChildren(QScrollArea)}


def _cut_by(widget: QWidget, window: QWidget, viewports: set[QWidget]) -> str:
    """Which ancestor (or the window) cuts ``widget`` off ('' when none): inside a scroll area only sideways."""
    rect = _rect_in(widget, window)
    parent = widget.parentWidget()
    while parent is not None:
        outer = _rect_in(parent, window) if parent is not window else window.rect()
        sideways_only = parent in viewports
        left, right = rect.left() < outer.left() - SLACK, rect.right() > outer.right() + SLACK
        up, down = rect.top() < outer.top() - SLACK, rect.bottom() > outer.bottom() + SLACK
        if left or right or (not sideways_only and (up or down)):
            return "the window" if parent is window else _name(parent)
        if sideways_only:  # below or above the visible part of a page that scrolls: fine; its area is checked
            rect = QRect(rect.left(), outer.top(), rect.width(), min(rect.height(), outer.height()))
        if parent is window:
            break
        parent = parent.parentWidget()
    return ""


def _label_cut(label: QLabel) -> str:
    if not label.text().strip():
        return ""
    if label.wordWrap():
        need = label.heightForWidth(label.contentsRect().width() + label.contentsMargins().left()
                                    + label.contentsMargins().right())
        if need > label.height() + SLACK:
            return f"is {label.height()} px high but its wrapped text needs {need} px"
        return ""
    need = label.sizeHint().width()
    if need > label.width() + SLACK:
        return f"is {label.width()} px wide but its text needs {need} px (cut short)"
    return ""


def _combo_cut(combo: QComboBox) -> str:
    """Why a combo box's choice is cut when shown ('' when each of its choices shows whole)."""
    if combo.isEditable() or combo.count() == 0:
        return ""
    option = QStyleOptionComboBox()
    combo.initStyleOption(option)
    field = combo.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, option,
                                         QStyle.SubControl.SC_ComboBoxEditField, combo)
    need, longest = max((combo.fontMetrics().horizontalAdvance(combo.itemText(i)), combo.itemText(i))
                        for i in range(combo.count()))
    return f"{field.width()} px for {need} px of '{longest[:40]}…'" if need > field.width() + SLACK else ""


def layout_problems(window: QWidget, screen: tuple[int, int]) -> list[str]:
    """Every way the shown ``window`` does not fit ``screen`` (its free width and height), in words."""
    settle(window)
    problems = []
    if window.width() > screen[0] or window.height() > screen[1]:
        problems.append(f"the window is {window.width()}×{window.height()}, larger than the screen's "
                        f"{screen[0]}×{screen[1]} (its smallest size is {window.minimumSize().width()}×"
                        f"{window.minimumSize().height()})")
    viewports = _scroll_areas(window)
    for widget in window.findChildren(QWidget):
        if not widget.isVisible() or isinstance(widget, QScrollBar) or not isinstance(widget, CONTROLS):
            continue
        if isinstance(widget, QLabel) and not widget.text().strip() and widget.pixmap().isNull():
            continue
        if widget.width() <= 0 or widget.height() <= 0:
            problems.append(f"{_name(widget)} is squeezed to nothing ({widget.width()}×{widget.height()})")
            continue
        cut = _cut_by(widget, window, viewports)
        if cut:
            problems.append(f"{_name(widget)} lies outside {cut}")
        if isinstance(widget, QLabel):
            words = _label_cut(widget)
            if words:
                problems.append(f"{_name(widget)} {words}")
        if isinstance(widget, QComboBox) and _combo_cut(widget):
            problems.append(f"{_name(widget)} shows a choice cut short ({_combo_cut(widget)})")
        if isinstance(widget, QAbstractScrollArea) and widget.horizontalScrollBar().maximum() > 0:
            problems.append(f"{_name(widget)} scrolls sideways ({widget.horizontalScrollBar().maximum()} px)")
    for bar in window.findChildren(QTabBar):
        if bar.isVisible():
            for i in range(bar.count()):
                if bar.isTabVisible(i) and not bar.rect().contains(bar.tabRect(i)):
                    problems.append(f"the tab '{bar.tabText(i)}' lies outside its tab bar")
    return problems
