"""``privet models`` — the models available on this machine, and the compute devices."""

from __future__ import annotations

import argparse
import json

from core.models.devices import detect_devices
from core.models.registry import list_local_models
from core.models.sources import user_models_dir


def _size_text(n_bytes: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n_bytes < 1000 or unit == "GB":
            return f"{n_bytes:.0f} {unit}" if unit == "B" else f"{n_bytes:.1f} {unit}"
        n_bytes /= 1000
    return f"{n_bytes:.1f} GB"


def _device_text(device: dict) -> str:
    if device["device"] == "cpu":
        return f"cpu ({device['cores']} cores)"
    return f"{device['device']}: {device['name']}, {device['memory_bytes'] / 2**30:.0f} GiB"


def models_report() -> dict:
    """Everything ``privet models`` shows, as plain data (the --json output)."""
    return {
        "models": list_local_models(),
        "devices": detect_devices(),
        "user_models_folder": str(user_models_dir()),
    }


def _print_table(report: dict) -> None:
    rows = [("NAME", "KIND", "SOURCE", "SIZE", "BACKENDS")]
    for m in report["models"]:
        source = "packaged" if m["packaged"] else m["source"]
        rows.append((m["name"], m["kind"], source, _size_text(m["size"]), ", ".join(m["backends"])))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    print()
    print("Devices: " + "; ".join(_device_text(d) for d in report["devices"]))
    print(f"Your own models (GGUF files, Hugging Face folders) go in: {report['user_models_folder']}")


def run_models(args: argparse.Namespace) -> int:
    report = models_report()
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print_table(report)
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "models",
        help="list the local models (packaged and your own) and the compute devices",
        description="List the packaged models, the models in your models folder, and the devices.",
    )
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    parser.set_defaults(func=run_models)
