"""Writes an evaluation's figures: ``results.json`` and PNG plots (matplotlib, Agg backend).

These results are for the custodian and the developers; nothing here is ever written into
an exported release or its certificate (SPEC §5).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

RESULTS_JSON = "results.json"
PLOTS = ("utility_vs_epsilon.png", "dp_rag_queries.png", "membership_auc.png")


def write_report(result: dict, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / RESULTS_JSON
    path.write_text(json.dumps(result, indent=2, ensure_ascii=False, allow_nan=True), encoding="utf-8")
    import matplotlib

    matplotlib.use("Agg")
    written = [path]
    written.append(plot_utility(result, out_dir / PLOTS[0]))
    written.append(plot_dp_rag(result, out_dir / PLOTS[1]))
    written.append(plot_membership(result, out_dir / PLOTS[2]))
    return written


def _references(rows: list[dict]) -> dict[str, dict]:
    return {r["method"]: r for r in rows if r["method"] in ("private", "none")}


def plot_utility(result: dict, path: Path) -> Path:
    import matplotlib.pyplot as plt

    rows = result["utility"]
    refs = _references(rows)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, key, title in ((axes[0], "retrieval_hit_rate", "Retrieval proxy (gold in top-k)"),
                           (axes[1], "answer_accuracy", "RAG answer accuracy")):
        methods = sorted({r["method"] for r in rows if r["method"] not in refs})
        for m in methods:
            pts = sorted((r["epsilon"], r[key]) for r in rows if r["method"] == m and r[key] is not None)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=m)
        for name, style in (("private", "--"), ("none", ":")):
            if name in refs and refs[name][key] is not None:
                ax.axhline(refs[name][key], linestyle=style, color="grey", label=refs[name]["corpus"])
        ax.set_xscale("log")
        ax.set_xlabel("ε (δ fixed)")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(title)
        ax.legend(fontsize=7)
    fig.suptitle(f"Utility on {result['dataset']} ({result['scale']} scale)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_dp_rag(result: dict, path: Path) -> Path:
    import matplotlib.pyplot as plt

    d = result["dp_rag"]
    fig, ax = plt.subplots(figsize=(6, 4))
    xs = [p["queries"] for p in d["points"]]
    ax.plot(xs, [p["accuracy"] for p in d["points"]], marker="o", label="DP-RAG (budget spent per query)")
    for key, style, label in (("synthetic_accuracy", "-", f"synthetic corpus ({d['synthetic_corpus']})"),
                              ("private_accuracy", "--", "non-private RAG"), ("none_accuracy", ":", "no retrieval")):
        if d.get(key) is not None:
            ax.axhline(d[key], linestyle=style, color="C1" if key.startswith("synthetic") else "grey", label=label)
    ax.set_xscale("log")
    ax.set_xlabel(f"number of queries sharing ε={d['epsilon_total']:g} in total")
    ax.set_ylabel("answer accuracy")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("Query-time DP-RAG vs a synthetic corpus")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_membership(result: dict, path: Path) -> Path:
    import matplotlib.pyplot as plt

    rows = result["membership"]
    attacks = sorted({a["attack"] for r in rows for a in r["attacks"]})
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(rows)), 4))
    width = 0.8 / max(1, len(attacks))
    for j, attack in enumerate(attacks):
        xs, ys, lo, hi = [], [], [], []
        for i, r in enumerate(rows):
            a = next((a for a in r["attacks"] if a["attack"] == attack), None)
            if a is None or (isinstance(a["auc"], float) and math.isnan(a["auc"])):
                continue
            xs.append(i + (j - (len(attacks) - 1) / 2) * width)
            ys.append(a["auc"])
            lo.append(a["auc"] - a["ci_low"])
            hi.append(a["ci_high"] - a["auc"])
        ax.bar(xs, ys, width, yerr=[lo, hi], capsize=3, label=attack)
    ax.axhline(0.5, color="black", linewidth=0.8, linestyle="--")
    ax.set_xticks(range(len(rows)), [r["corpus"] for r in rows], fontsize=7, rotation=15)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("ROC AUC (95% bootstrap CI)")
    ax.set_title("Membership inference (0.5 = chance)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
