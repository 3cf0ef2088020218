"""How much of a corpus structure discovery's released forms would stand for (docs/method-reference.md §2.0b, "What
splits a skeleton"): the proposals counted exactly (no noise), openers above τ_o taken as released, then the share of
the units behind a skeleton above τ_s. The thresholds are the plan's at ``--epsilon`` (δ = 1e-6) unless given.

Prints counts and the released skeletons (public wording and slot markers only, never a filler) for a developer's
CSV; with ``--templates`` (a demo folder's ``templates.json``) it also says which template each skeleton fills::

    .venv/bin/python bench/form_coverage.py FILE.csv --text-column note [--person-column patient] [--epsilon 10]
        [--templates FOLDER/templates.json] [--out F.json]

Evaluation only: exact counts of private proposals are for the developer's screen, as ``privet plan``'s outlook.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", type=Path)
    parser.add_argument("--text-column", required=True)
    parser.add_argument("--person-column", default="")
    parser.add_argument("--epsilon", type=float, default=10.0)
    parser.add_argument("--tau-o", type=float, default=0.0, help="the openers' threshold (default: the plan's)")
    parser.add_argument("--tau-s", type=float, default=0.0, help="the skeletons' threshold (default: the plan's)")
    parser.add_argument("--templates", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    from core.corpus import Unit
    from core.corpus.units import UNIT_SEPARATOR
    from core.evaluation.own_form import TemplateMatcher, load_templates
    from core.methods.dp_synrag.release.budget import plan_dp_synrag
    from core.methods.dp_synrag.release.form_proposals import SLOT
    from core.methods.dp_synrag.release.structure import exact_form_counts
    from core.specs.dp_synrag import DPSynRAGSpec

    plan = plan_dp_synrag(DPSynRAGSpec(), args.epsilon, 1e-6)
    tau_o, tau_s = args.tau_o or plan.tau_o, args.tau_s or plan.tau_s
    with open(args.csv, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    people: dict[str, list[str]] = {}
    for i, row in enumerate(rows):
        people.setdefault(row[args.person_column] if args.person_column else str(i), []).append(row[args.text_column])
    units = [Unit(key, UNIT_SEPARATOR.join(docs), len(docs)) for key, docs in people.items()]
    released, skeletons = exact_form_counts(units, plan, tau_o)
    kept = sorted(((s, c) for s, c in skeletons.items() if c > tau_s), key=lambda item: -item[1])
    matcher = TemplateMatcher(load_templates(args.templates)) if args.templates else None
    fill = {"name": "Ann Lee", "number": "12", "month": "May", "text": "fever"}
    result = {
        "units": len(units), "tau_o": tau_o, "tau_s": tau_s, "openers": len(released), "skeletons": len(kept),
        "coverage": sum(c for _, c in kept) / max(len(units), 1),
        "released": [{"count": c, "skeleton": s,
                      "template": matcher.which(SLOT.sub(lambda m: fill[m.group(1)], s)) if matcher else None}
                     for s, c in kept],
    }
    text = json.dumps(result, indent=1)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
