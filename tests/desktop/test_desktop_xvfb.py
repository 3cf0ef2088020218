"""A real-window smoke test: the app opens its main window and the wizard on an X server (Xvfb).

Slow suite; skipped where Xvfb or Qt's xcb libraries are missing (``desktop.qt_deps`` names them).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

from desktop.qt_deps import missing_packages
from tests.helpers import ROOT

SCRIPT = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from desktop.main_window import MainWindow
from desktop.settings import DesktopSettings
app = QApplication(sys.argv[:1])
assert app.platformName() == "xcb", app.platformName()
window = MainWindow(DesktopSettings())
window.show()
wizard = window.new_run()
def check():
    ok = window.isVisible() and wizard.isVisible() and wizard.windowHandle() is not None
    print("window-ok" if ok else "window-missing", flush=True)
    window.close()
    app.exit(0 if ok else 1)
QTimer.singleShot(1500, check)
sys.exit(app.exec())
"""


@pytest.mark.slow
def test_the_app_opens_real_windows_under_xvfb(tmp_path):
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        pytest.skip("Xvfb is not installed (apt-get install xvfb)")
    missing = missing_packages()
    if missing:
        pytest.skip(f"Qt's xcb libraries are missing: {', '.join(missing)}")
    display = f":{90 + os.getpid() % 9}"
    server = subprocess.Popen([xvfb, display, "-screen", "0", "1280x900x24", "-nolisten", "tcp"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.5)
        env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
        result = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True,
                                text=True, timeout=120)
    finally:
        server.terminate()
        server.wait(10)
    assert result.returncode == 0 and "window-ok" in result.stdout, result.stdout + result.stderr
