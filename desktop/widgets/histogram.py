"""A small bar chart of the unit-length histogram from the corpus load report."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget


class Histogram(QWidget):
    """Paints ``counts`` as bars, with the first and last bin edge written underneath."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._counts: list[int] = []
        self._edges: list[float] = []
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMinimumHeight(90)

    def set_data(self, counts: list[int], edges: list[float]) -> None:
        self._counts = list(counts)
        self._edges = list(edges)
        self.setToolTip(
            "\n".join(
                f"{edges[i]:.0f}–{edges[i + 1]:.0f} characters: {c} units" for i, c in enumerate(counts)
            )
            if len(edges) == len(counts) + 1
            else ""
        )
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(300, 90)

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt API
        painter = QPainter(self)
        text_h = painter.fontMetrics().height()
        area_h = self.height() - text_h - 4
        if self._counts:
            top = max(self._counts) or 1
            bar_w = (self.width() - 2) / len(self._counts)
            painter.setPen(QPen(QColor("#0d47a1")))
            painter.setBrush(QColor("#64b5f6"))
            for i, count in enumerate(self._counts):
                h = area_h * count / top
                painter.drawRect(QRectF(1 + i * bar_w, area_h - h, bar_w - 2, h))
        painter.setPen(QPen(self.palette().text().color()))
        if self._edges:
            painter.drawText(0, self.height() - 2, f"{self._edges[0]:.0f} chars")
            right = f"{self._edges[-1]:.0f} chars"
            painter.drawText(self.width() - painter.fontMetrics().horizontalAdvance(right) - 1,
                             self.height() - 2, right)
        painter.end()
