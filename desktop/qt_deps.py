"""Check for the system libraries Qt's X11 (xcb) platform plugin needs; print the exact install command.

``python -m desktop.qt_deps`` (run by ``make setup`` and ``make run``) only warns: a headless CI box
without these libraries still installs and tests (Qt runs offscreen there). It never imports Qt.
"""

from __future__ import annotations

import ctypes
import shutil
import sys

# soname -> Debian/Ubuntu package. Qt >= 6.5 needs xcb-cursor; the rest are the xcb plugin's usual set.
QT_XCB_LIBRARIES = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
}


def _loadable(soname: str) -> bool:
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def missing_packages(loadable=_loadable) -> list[str]:
    """Debian package names of the xcb libraries that cannot be loaded ([] off Linux)."""
    if not sys.platform.startswith("linux"):
        return []
    return [package for soname, package in QT_XCB_LIBRARIES.items() if not loadable(soname)]


def install_command(packages: list[str]) -> str:
    prefix = "" if shutil.which("sudo") is None else "sudo "
    return f"{prefix}apt-get install -y {' '.join(packages)}"


def main() -> int:
    packages = missing_packages()
    if packages:
        print("Warning: the desktop window needs system libraries that are missing: " + ", ".join(packages) + ".\n"
              "Install them with:\n    " + install_command(packages) + "\n"
              "(The command line and the tests work without them; the offline installer lists them too.)",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
