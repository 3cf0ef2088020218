"""Render resources/icons/privet.svg to the 256x256 PNG the bundle, the window and the desktop entry use."""

from __future__ import annotations

import sys

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

from core.common.paths import resources_dir

SIZE = 256


def render(size: int = SIZE) -> None:
    folder = resources_dir() / "icons"
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    QSvgRenderer(str(folder / "privet.svg")).render(painter)
    painter.end()
    if not image.save(str(folder / "privet.png")):
        raise SystemExit(f"could not write {folder / 'privet.png'}")


if __name__ == "__main__":
    app = QGuiApplication(sys.argv[:1])
    render()
