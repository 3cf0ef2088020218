"""``privet-desktop``: the desktop application's entry point."""

from __future__ import annotations

import argparse
import multiprocessing
import sys

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QMessageBox

from core.common.errors import PrivetError
from core.common.paths import resources_dir
from desktop.main_window import MainWindow

DEMO_SPEC = "demo/demo_run.toml"


def demo_spec_path() -> str:
    return str(resources_dir() / DEMO_SPEC)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="privet-desktop", description="Privet desktop application")
    parser.add_argument("--demo", action="store_true", help="open the wizard with the demo clinic corpus loaded")
    parser.add_argument("--spec", help="open the wizard with this run spec loaded")
    return parser


def main(argv: list[str] | None = None) -> int:
    multiprocessing.freeze_support()
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Privet")
    app.setWindowIcon(QIcon(str(resources_dir() / "icons" / "privet.png")))
    window = MainWindow()
    window.show()
    spec = demo_spec_path() if args.demo else args.spec
    if spec:
        try:
            window.new_run(spec)
        except PrivetError as exc:
            QMessageBox.warning(window, "Run spec", exc.user_message())
    return int(app.exec())


if __name__ == "__main__":
    sys.exit(main())
