"""The demo clinic's evaluation with structure discovery off: what the forms' share of ρ costs the topics.

Runs ``privet evaluate --dataset clinic --scale demo --methods dp_synrag --no-domain-list`` with
``[dp_synrag] discover_forms = false`` in the demo scale's spec (its share of ρ then goes to the other stages), and
writes ``results.json`` and ``summary.md`` to OUT, as the command does. Compare with the same command run as
shipped (docs/results/history.md, "Round 5, session 6")::

    PRIVET_HOME=/tmp/ev8/home .venv/bin/python bench/ablation_forms_off.py --out /tmp/ev8/clinic --epsilons 4
"""

from __future__ import annotations

import argparse
from dataclasses import replace


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="folder for results.json and the plots")
    parser.add_argument("--epsilons", default="4", help="comma-separated ε values (default 4)")
    args = parser.parse_args()

    import core.evaluation.config as config
    from core.cli import main as privet

    demo = config.SCALE_CONFIGS["demo"]
    config.SCALE_CONFIGS["demo"] = replace(demo, dp_synrag=replace(demo.dp_synrag, discover_forms=False))
    return privet(["evaluate", "--dataset", "clinic", "--out", args.out, "--scale", "demo", "--epsilons",
                   args.epsilons, "--methods", "dp_synrag", "--no-domain-list"])


if __name__ == "__main__":
    raise SystemExit(main())
