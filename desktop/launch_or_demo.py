"""``make run``: the desktop app with the demo corpus when there is a display, else the headless demo."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from core.common.paths import resources_dir

DEMO_SPEC = "demo/demo_run.toml"


def has_display(environ: dict[str, str] | None = None) -> bool:
    """A usable display: DISPLAY or WAYLAND_DISPLAY set and Qt not forced offscreen (macOS/Windows always)."""
    env = os.environ if environ is None else environ
    if env.get("QT_QPA_PLATFORM", "").startswith(("offscreen", "minimal")):
        return False
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if has_display():
        from desktop.app import main as app_main

        return app_main(["--demo", *argv])
    from core.cli import main as cli_main

    if "--output" not in argv:
        argv += ["--output", str(Path("privet-demo-output") / time.strftime("%Y%m%d-%H%M%S"))]
    print("No display found: running the headless demo (privet run on the demo corpus).", file=sys.stderr)
    return cli_main(["run", str(resources_dir() / DEMO_SPEC), *argv])


if __name__ == "__main__":
    sys.exit(main())
