"""Writes an evaluation's figures: ``results.json``, PNG plots (matplotlib, Agg backend) and
``summary.md`` (the same figures as Markdown tables).

These results are for the custodian and the developers; nothing here is ever written into
an exported release or its certificate (docs/method.md §5).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

RESULTS_JSON = "results.json"
SUMMARY_MD = "summary.md"
PLOTS = ("utility_vs_epsilon.png", "dp_rag_queries.png", "membership_auc.png")


def write_report(result: dict, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / RESULTS_JSON
    path.write_text(json.dumps(_finite(result), indent=2, ensure_ascii=False, allow_nan=False), encoding="utf-8")
    import matplotlib

    matplotlib.use("Agg")
    written = [path]
    if "utility" in result:  # datasets with held-out questions (free text has coverage only)
        written.append(plot_utility(result, out_dir / PLOTS[0]))
        written.append(plot_dp_rag(result, out_dir / PLOTS[1]))
        written.append(plot_membership(result, out_dir / PLOTS[2]))
    summary = out_dir / SUMMARY_MD
    summary.write_text(markdown_summary(result), encoding="utf-8")
    written.append(summary)
    return written


def _finite(value):
    """The result with NaN/inf (e.g. a distance over an empty corpus) as null: strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


REFERENCE_METHODS = ("private", "none", "public_only")  # drawn as horizontal lines, not over ε


def _references(rows: list[dict]) -> dict[str, dict]:
    return {r["method"]: r for r in rows if r["method"] in REFERENCE_METHODS}


def _share_axis(ax, title: str) -> None:
    """A panel of a share (0 to 1) against ε: its x label, y range, title and legend."""
    ax.set_xlabel("ε (δ fixed)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title)
    ax.legend(fontsize=7)


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
        for name, style in (("private", "--"), ("none", ":"), ("public_only", "-.")):
            if name in refs and refs[name][key] is not None:
                ax.axhline(refs[name][key], linestyle=style, color="grey", label=refs[name]["corpus"])
        ax.set_xscale("log")
        _share_axis(ax, title)
    fig.suptitle(f"Utility on {result['dataset']} ({result['scale']} scale)")
    return _save(fig, path)


DOWNSTREAM_REFERENCES = (("real_sample", "--"), ("public_only", "-."), ("majority", ":"))


def plot_downstream(result: dict, path: Path) -> Path:
    """Downstream accuracy against ε (``privet evaluate --downstream``): each synthetic method's classifier
    accuracy per ε, beside the same-size real sample (the first, at the largest ε's size), the public-only
    writer and the majority class as horizontal lines; one panel per classifier."""
    import matplotlib
    import matplotlib.pyplot as plt

    matplotlib.use("Agg")
    rows = result.get("rows", [])
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, key, title in ((axes[0], "tfidf", "TF-IDF + logistic regression"),
                           (axes[1], "embedding", "MiniLM + logistic regression")):
        for method in sorted({r["method"] for r in rows if r["kind"] == "synthetic"}):
            pts = sorted((r["epsilon"], (r.get(key) or {}).get("accuracy")) for r in rows
                         if r["kind"] == "synthetic" and r["method"] == method and r.get("epsilon"))
            pts = [(e, a) for e, a in pts if a is not None]
            if pts:
                ax.plot([e for e, _ in pts], [a for _, a in pts], marker="o", label=method)
        for kind, style in DOWNSTREAM_REFERENCES:
            ref = next((r for r in rows if r["kind"] == kind and (r.get(key) or {}).get("accuracy") is not None), None)
            if ref is not None:
                ax.axhline(ref[key]["accuracy"], linestyle=style, color="grey", label=ref["corpus"])
        ax.set_ylabel("accuracy on held-out real documents")
        _share_axis(ax, title)
    fig.suptitle(f"Downstream accuracy on {result['dataset']} ({len(result.get('labels') or [])} labels)")
    return _save(fig, path)


def plot_dp_rag(result: dict, path: Path) -> Path:
    import matplotlib.pyplot as plt

    d = result["dp_rag"]
    fig, ax = plt.subplots(figsize=(6, 4))
    xs = [p["queries"] for p in d["points"]]
    ax.plot(xs, [p["accuracy"] for p in d["points"]], marker="o", label="DP-RAG (budget spent per query)")
    for key, style, label in (("synthetic_accuracy", "-", f"synthetic corpus ({d['synthetic_corpus']})"),
                              ("private_accuracy", "--", "non-private RAG"), ("none_accuracy", ":", "no retrieval"),
                              ("public_only_accuracy", "-.", "public-only corpus (ε = 0)")):
        if d.get(key) is not None:
            ax.axhline(d[key], linestyle=style, color="C1" if key.startswith("synthetic") else "grey", label=label)
    ax.set_xscale("log")
    ax.set_xlabel(f"number of queries sharing ε={d['epsilon_total']:g} in total")
    ax.set_ylabel("answer accuracy")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("Query-time DP-RAG vs a synthetic corpus")
    ax.legend(fontsize=7)
    return _save(fig, path)


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
    return _save(fig, path)


def _fmt(value, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return f"{value:.{digits}f}"
    return str(value)


def _table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(c) if not isinstance(c, str) else c for c in row) + " |" for row in rows]
    return "\n".join(lines)


def markdown_summary(result: dict) -> str:
    """Every table of a run (summary.md), generated from results.json; docs/results.md shows a few (results_page)."""
    parts = [f"Dataset `{result['dataset']}`, scale `{result['scale']}`, models {result['models']['llm']} / "
             f"{result['models']['embedder']}; {result['split']['members']} members, "
             f"{result['split']['non_members']} non-members, {result['split']['canaries']} canaries; "
             f"total time {result['seconds'] / 60:.1f} min."]
    parts.append("### Runs\n\n" + _table(
        ["corpus", "ε", "δ", "ρ (zCDP)", "documents", "seconds"],
        [[r["label"], r["epsilon"], f"{r['delta']:.0e}" if r["delta"] else "–", r["rho_total"], r["n_synthetic"],
          r["seconds"]] for r in result["runs"]]))
    if result.get("coverage"):
        parts.append(coverage_markdown(result["coverage"]))
    if result.get("roles"):
        parts.append(roles_markdown(result["roles"]))
    if result.get("fidelity"):
        parts.append(fidelity_markdown(result["fidelity"]))
    if "utility" not in result:  # free text: coverage and quality only
        parts.append(_quality_markdown(result))
        if result.get("notes"):
            parts.append("Notes: " + " ".join(result["notes"]))
        return "\n\n".join(parts) + "\n"
    parts.append("### Utility\n\n" + _table(
        ["corpus", "documents", "questions", "retrieval proxy", "RAG accuracy"],
        [[u["corpus"], u["n_documents"], u["n_questions"], u["retrieval_hit_rate"], u["answer_accuracy"]]
         for u in result["utility"]]))
    parts.append("### Leakage (share of texts naming a member; control = names of non-members)\n\n" + _table(
        ["corpus", "in corpus", "canaries in corpus", "benign answers", "attack answers", "attack success",
         "control (corpus / answers)"],
        [[r["corpus"], r["in_corpus"]["member_rate"], str(r["in_corpus"]["canaries_reproduced"]),
          r["benign_answers"]["member_rate"], r["attack_answers"]["member_rate"], r["attack_success"],
          f"{r['in_corpus']['control_rate']:.2f} / {r['attack_answers']['control_rate']:.2f}"]
         for r in result["leakage"]]))
    parts.append(_quality_markdown(result))
    mia_rows = []
    for r in result["membership"]:
        for a in r["attacks"]:
            mia_rows.append([r["corpus"], a["attack"], a["auc"], f"[{a['ci_low']:.2f}, {a['ci_high']:.2f}]",
                             f"{a['n_members']} / {a['n_non_members']}"])
    parts.append("### Membership inference\n\n" + _table(
        ["released corpus", "attack", "AUC", "95% CI", "members / non-members"], mia_rows))
    d = result["dp_rag"]
    parts.append(f"### Query-time DP-RAG (total ε={d['epsilon_total']:g}, δ={d['delta']:.0e}, "
                 f"{d['n_questions']} questions)\n\n" + _table(
        ["queries sharing the budget", "ε per query (basic)", "clip c", "accuracy"],
        [[str(p["queries"]), p["epsilon_per_query_basic"], f"{p['clip']:.3g}", p["accuracy"]] for p in d["points"]]
        + [[f"synthetic corpus ({d['synthetic_corpus']}), any number", "–", "–", d["synthetic_accuracy"]],
           ["non-private RAG", "∞", "–", d["private_accuracy"]],
           ["public-only corpus (no private data), any number", "0", "–", d.get("public_only_accuracy")],
           ["no retrieval", "0", "–", d["none_accuracy"]]]))
    if result.get("notes"):
        parts.append("Notes: " + " ".join(result["notes"]))
    return "\n\n".join(parts) + "\n"


def _quality_markdown(result: dict) -> str:
    return "### Quality\n\n" + _table(
        ["corpus", "documents", "mean words", "distinct-1", "distinct-2", "Self-BLEU", "Fréchet to members",
         "MMD² to members"],
        [[q["corpus"], q["n_documents"], q["mean_words"], q["distinct_1"], q["distinct_2"], q["self_bleu"],
          q["frechet_to_private"], q["mmd2_to_private"]] for q in result["quality"]])


def coverage_markdown(rows: list[dict]) -> str:
    """How much of the held-out non-members each corpus carries (core/evaluation/coverage.py)."""
    return ("### Coverage of held-out non-members (model-independent)\n\n"
            "Best cosine: mean over held-out documents of the cosine to the nearest corpus document (embedder "
            "space). Content words: share of the held-out documents' 200 commonest content words found in the "
            "corpus. MMD² beside a same-size random sample of real member documents (lower = closer).\n\n"
            + _table(["corpus", "ε", "documents", "best cosine", "content words", "MMD²", "MMD² real same-size",
                      "junk rate", "distinct-2", "mean words"],
                     [[r["corpus"], "–" if r["epsilon"] is None else f"{r['epsilon']:g}", r["n_documents"],
                       r["best_cosine"], r["content_words"], _fmt(r["mmd2"], 3), _fmt(r["mmd2_real"], 3),
                       r["junk_rate"], r["distinct_2"], r["mean_words"]] for r in rows])
            + _samples_markdown(rows))


def fidelity_markdown(rows: list[dict]) -> str:
    """The fidelity report of each corpus (core/evaluation/fidelity.py), figures only."""
    method = next((r["own_form_method"] for r in rows if r.get("own_form_method")), "")
    form = ("the share matching one of the generator's own templates in full" if method == "templates" else
            "a skeleton proxy: the share whose skeleton (the 100 commonest member words and punctuation) at least "
            "two members share")
    return ("### Fidelity (real-vs-synthetic classifier, own forms)\n\n"
            "Classifier AUC: TF-IDF + logistic regression telling members from the corpus's documents, 5-fold "
            "cross-validated on as many members as documents (0.5: indistinguishable; beside it, the same test "
            f"between members and held-out non-members). Own forms: {form}; beside it, the held-out non-members'. "
            "Template mix TV: total variation between the corpus's and the members' template mixes. MMD² to the "
            "held-out non-members beside a same-size member sample's.\n\n"
            + _table(["corpus", "ε", "documents", "classifier AUC (real vs real)", "own forms (real)",
                      "template mix TV", "MMD² (real same-size)"],
                     [[r["corpus"], "–" if r["epsilon"] is None else f"{r['epsilon']:g}", r["n_synthetic"],
                       f"{_fmt(r['c2st_auc'])} ({_fmt(r['c2st_auc_real'])})",
                       f"{_fmt(r['own_form_share'])} ({_fmt(r['own_form_share_real'])})",
                       r.get("template_mix_tv"), f"{_fmt(r['mmd2'], 3)} ({_fmt(r['mmd2_real'], 3)})"]
                      for r in rows]))


def roles_markdown(rows: list[dict]) -> str:
    """Role accuracy of each corpus (core/evaluation/roles.py)."""
    def share(row: dict, role: str) -> str:
        n = row["by_role"].get(role, {"pairs": 0, "placed": 0})
        return f"{n['placed']}/{n['pairs']}" if n["pairs"] else "–"

    return ("### Role accuracy and topic shares\n\nRole accuracy: share of (document, word of the generator's catalogue) "
            "pairs whose word stands in the section of its true role and in no other role's section. Topic TV: total "
            "variation between the shares of documents naming each condition first (or none) and the members' "
            "(core/evaluation/roles.py; lower = closer). TV floor: the least TV possible with the conditions the corpus "
            "names, the members' share of those it never names first (a condition no released topic holds is in it).\n\n"
            + _table(["corpus", "ε", "pairs", "role accuracy", "symptoms", "conditions", "drugs", "topic TV", "TV floor"],
                     [[r["corpus"], "–" if r["epsilon"] is None else f"{r['epsilon']:g}", str(r["pairs"]),
                       r["role_accuracy"], share(r, "symptom"), share(r, "condition"), share(r, "drug"),
                       r.get("topic_tv"), r.get("topic_tv_floor")]
                      for r in rows]))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ⏎ ")


def _samples_markdown(rows: list[dict]) -> str:
    """Verbatim samples of the synthetic and public-only corpora (one line each), with their junk reasons."""
    lines = [f"| {_cell(r['corpus'])} | {_cell(s['text'][:300])} | {_cell('; '.join(s['junk']) or 'clean')} |"
             for r in rows for s in r.get("samples", [])]
    if not lines:
        return ""
    return ("\n\nSamples (verbatim, first 300 characters):\n\n| corpus | text | junk |\n|---|---|---|\n"
            + "\n".join(lines))


def _save(fig, path: Path) -> Path:
    """Lay out, write and close a figure."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
