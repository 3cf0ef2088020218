"""A horizontal stacked bar: the per-stage split of the privacy budget (or spent vs. cap)."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

PALETTE = ("#1565c0", "#6a1b9a", "#00838f", "#ef6c00", "#558b2f", "#ad1457", "#4e342e")


class _Bar(QWidget):
    """The bar itself: segments proportional to their values; it shrinks to any width."""

    HEIGHT = 22

    def __init__(self, owner: StackedBar) -> None:
        super().__init__(owner)
        self.owner = owner
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setFixedHeight(self.HEIGHT + 2)

    def sizeHint(self) -> QSize:
        return QSize(400, self.HEIGHT + 2)

    def minimumSizeHint(self) -> QSize:
        return QSize(40, self.HEIGHT + 2)

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt API
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        width = self.width() - 2
        painter.setPen(QPen(QColor("#9e9e9e")))
        painter.setBrush(QColor("#f5f5f5"))
        painter.drawRect(QRectF(1, 1, width, self.HEIGHT))
        segments, total = self.owner.segments(), self.owner.full_value()
        x = 1.0
        if total > 0:
            painter.setPen(Qt.PenStyle.NoPen)
            for i, (_, value) in enumerate(segments):
                w = width * min(value / total, 1.0)
                painter.setBrush(QColor(PALETTE[i % len(PALETTE)]))
                painter.drawRect(QRectF(x, 1, w, self.HEIGHT))
                x += w
        painter.end()


class StackedBar(QWidget):
    """Paints segments proportional to their values, with a legend underneath that wraps onto as many lines as
    the width needs (never cut: a long stage name on a laptop screen goes on the next line).

    ``total`` (optional) is the full width's value; when the segments sum to less, the rest
    stays empty (used by the budget meter, which fills as stages are charged).
    """

    BAR_HEIGHT = _Bar.HEIGHT

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._segments: list[tuple[str, float]] = []
        self._total: float | None = None
        self.bar = _Bar(self)
        self.legend = QLabel()
        self.legend.setObjectName("legend")
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.bar)
        layout.addWidget(self.legend)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)

    def set_segments(self, segments: list[tuple[str, float]], total: float | None = None, legend: bool = True) -> None:
        self._segments = [(name, max(0.0, float(v))) for name, v in segments]
        self._total = total
        self.setToolTip("\n".join(f"{name}: ρ = {v:.4g}" for name, v in self._segments))
        self.legend.setText(self.legend_html() if legend else "")
        self.legend.setVisible(legend and bool(self._segments))
        self.bar.update()

    def segments(self) -> list[tuple[str, float]]:
        return list(self._segments)

    def full_value(self) -> float:
        """The value of the bar's full width: ``total`` when given, else the segments' sum."""
        return self._total if self._total else sum(v for _, v in self._segments)

    def legend_html(self) -> str:
        """One entry per segment: a coloured square, the name and its share; entries wrap between lines."""
        total = self.full_value()
        entries = []
        for i, (name, value) in enumerate(self._segments):
            share = f" {100 * value / total:.0f}%" if total > 0 else ""
            entries.append(f"<span style='color:{PALETTE[i % len(PALETTE)]}'>■</span>&nbsp;{escape(name)}{share}")
        return " &nbsp;&nbsp; ".join(entries)

    def sizeHint(self) -> QSize:
        return QSize(400, super().sizeHint().height())
