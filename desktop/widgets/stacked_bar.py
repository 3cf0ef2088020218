"""A horizontal stacked bar: the per-stage split of the privacy budget (or spent vs. cap)."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

PALETTE = ("#1565c0", "#6a1b9a", "#00838f", "#ef6c00", "#558b2f", "#ad1457", "#4e342e")


class StackedBar(QWidget):
    """Paints segments proportional to their values, with a legend row underneath.

    ``total`` (optional) is the full width's value; when the segments sum to less, the rest
    stays empty (used by the budget meter, which fills as stages are charged).
    """

    BAR_HEIGHT = 22
    LEGEND_HEIGHT = 20

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._segments: list[tuple[str, float]] = []
        self._total: float | None = None
        self._legend = True
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMinimumHeight(self.BAR_HEIGHT + self.LEGEND_HEIGHT + 4)

    def set_segments(self, segments: list[tuple[str, float]], total: float | None = None, legend: bool = True) -> None:
        self._segments = [(name, max(0.0, float(v))) for name, v in segments]
        self._total = total
        self._legend = legend
        self.setMinimumHeight(self.BAR_HEIGHT + (self.LEGEND_HEIGHT if legend else 0) + 4)
        self.setToolTip("\n".join(f"{name}: ρ = {v:.4g}" for name, v in self._segments))
        self.update()

    def segments(self) -> list[tuple[str, float]]:
        return list(self._segments)

    def sizeHint(self) -> QSize:
        return QSize(400, self.minimumHeight())

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt API
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        width = self.width() - 2
        painter.setPen(QPen(QColor("#9e9e9e")))
        painter.setBrush(QColor("#f5f5f5"))
        painter.drawRect(QRectF(1, 1, width, self.BAR_HEIGHT))
        total = self._total if self._total else sum(v for _, v in self._segments)
        x = 1.0
        if total > 0:
            painter.setPen(Qt.PenStyle.NoPen)
            for i, (_, value) in enumerate(self._segments):
                w = width * min(value / total, 1.0)
                painter.setBrush(QColor(PALETTE[i % len(PALETTE)]))
                painter.drawRect(QRectF(x, 1, w, self.BAR_HEIGHT))
                x += w
        if self._legend:
            self._paint_legend(painter, total)
        painter.end()

    def _paint_legend(self, painter: QPainter, total: float) -> None:
        x = 1
        y = self.BAR_HEIGHT + 6
        metrics = painter.fontMetrics()
        for i, (name, value) in enumerate(self._segments):
            share = f" {100 * value / total:.0f}%" if total > 0 else ""
            label = f"{name}{share}"
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(PALETTE[i % len(PALETTE)]))
            painter.drawRect(QRectF(x, y + 3, 10, 10))
            painter.setPen(QPen(self.palette().text().color()))
            painter.drawText(x + 14, y + metrics.ascent(), label)
            x += 14 + metrics.horizontalAdvance(label) + 14
