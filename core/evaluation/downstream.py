"""``privet evaluate --downstream``: train a classifier on a labelled synthetic corpus, test it on real data.

The test researchers run on shared data (SPEC §6, "Downstream evaluation"; docs/method.md §6.4): a labelled
corpus is split by position into members (every row but every third) and held-out non-members (every
third row); the members go through labelled synthesis (``core.methods.class_conditional``, typed labels:
DP-SynRAG labels by topic by default, the other methods per class; ``--label-mode`` and ``--documents`` choose),
and two classifiers are trained on each training set and tested on the non-members:

* TF-IDF (words and word pairs) + logistic regression (scikit-learn);
* the packaged MiniLM sentence embeddings + logistic regression.

Training sets, each scored by accuracy and macro-F1 over the held-out classes:

* every synthetic corpus (method, ε), its documents labelled by the class they were synthesised for;
* a same-size random sample of real members with their true labels (the ceiling a synthetic corpus of that
  size aims at), and, when its texts hold links or handles, the same sample with them removed, as DP-SynRAG's
  keywords see the texts (the ceiling of a corpus written from the texts' content alone);
* the public-only writer's texts, labelled by prompt: the packaged model writes each class's share of
  documents from the public task and the label's name alone (no private data, ε = 0);
* the majority class of the members (no text at all).

The labelled datasets and their split are ``core.evaluation.labelled_data``'s (the clinic, news, healthtweets).

Figures only leave (accuracy, F1, counts) plus a few verbatim synthetic documents (DP output): no member
text. Evaluation randomness (which real sample) is seeded on purpose: it is not a DP draw.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from core.specs import method_catalogue
from core.evaluation import membership, runs
from core.evaluation.config import REFERENCE_METHOD, EvaluationConfig
from core.evaluation.labelled_data import LabelledRow, evenly, labelled_rows, split_labelled, write_labelled_members
from core.evaluation.public_only import PUBLIC_ONLY_LABEL, public_only_documents
from core.evaluation.report import plot_downstream
from core.evaluation.retrieval import VectorIndex
from core.common.links import without_links
from core.models.registry import load_embedder, load_language_model
from core.common.progress import NULL_REPORTER, ProgressEvent, Reporter

DEFAULT_MEMBERS = 600  # members given to the generator when --members is not given
HELD_OUT_SCORED = 600  # held-out non-members the classifiers are tested on (evenly spaced)
REAL_SAMPLE_SEED = 0  # which real members form the same-size sample (evaluation only, not a DP draw)
SAMPLES_PER_CORPUS = 3
MAJORITY = "majority class (of the members)"
REAL_SAMPLE = "same-size real sample (members)"
LINKS_REMOVED = "links and handles removed"


# --- the classifiers ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scores:
    accuracy: float
    macro_f1: float

    def to_dict(self) -> dict[str, float]:
        return {"accuracy": round(self.accuracy, 4), "macro_f1": round(self.macro_f1, 4)}


def score(truth: Sequence[str], predicted: Sequence[str]) -> Scores:
    """Accuracy, and F1 averaged over the held-out set's classes (a class never predicted scores 0)."""
    from sklearn.metrics import accuracy_score, f1_score

    classes = sorted(set(truth))
    return Scores(float(accuracy_score(truth, predicted)),
                  float(f1_score(truth, predicted, labels=classes, average="macro", zero_division=0)))


def _fit_predict(train_x, train_y: Sequence[str], test_x) -> list[str]:
    """Logistic regression; a training set of one class predicts that class (nothing to learn)."""
    from sklearn.linear_model import LogisticRegression

    classes = sorted(set(train_y))
    n_test = test_x.shape[0]
    if len(classes) < 2:
        return [classes[0] if classes else ""] * n_test
    model = LogisticRegression(max_iter=2000, C=10.0)
    model.fit(train_x, list(train_y))
    return [str(y) for y in model.predict(test_x)]


def tfidf_predictions(train: Sequence[str], train_y: Sequence[str], test: Sequence[str]) -> list[str]:
    from sklearn.feature_extraction.text import TfidfVectorizer

    if not train:
        return [""] * len(test)
    vectoriser = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=1, max_features=50_000)
    return _fit_predict(vectoriser.fit_transform(train), train_y, vectoriser.transform(test))


def embedding_predictions(train_emb: np.ndarray, train_y: Sequence[str], test_emb: np.ndarray) -> list[str]:
    if len(train_y) == 0:
        return [""] * len(test_emb)
    return _fit_predict(train_emb, train_y, test_emb)


@dataclass
class TrainingSet:
    """One training set of the comparison: its texts and labels."""

    name: str
    kind: str  # "synthetic" | "real_sample" | "real_sample_content" (links removed) | "public_only" | "majority"
    texts: list[str]
    labels: list[str]
    epsilon: float | None = None
    method: str = ""
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)


def training_row(training: TrainingSet, test: list[LabelledRow], test_emb: np.ndarray, embedder) -> dict:
    """Both classifiers trained on ``training`` and scored on the held-out rows (the majority row: a constant)."""
    truth = [r.label for r in test]
    row = {"corpus": training.name, "kind": training.kind, "method": training.method, "epsilon": training.epsilon,
           "n_train": len(training.texts) if training.kind != "majority" else 0,
           "per_class": dict(sorted(Counter(training.labels).items())), "seconds": round(training.seconds, 1),
           **training.extra}
    if training.kind == "majority":
        majority = Counter(training.labels).most_common(1)[0][0] if training.labels else ""
        constant = score(truth, [majority] * len(truth)).to_dict()
        row.update(tfidf=constant, embedding=constant, majority_label=majority)
        return row
    texts = [r.text for r in test]
    row["tfidf"] = score(truth, tfidf_predictions(training.texts, training.labels, texts)).to_dict()
    emb = embedder.embed(training.texts) if training.texts else np.zeros((0, test_emb.shape[1]))
    row["embedding"] = score(truth, embedding_predictions(emb, training.labels, test_emb)).to_dict()
    return row


# --- the training sets --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelledSettings:
    """How the evaluation's labelled runs keep the labels: ``[data] label_mode`` ("auto": labels by topic for
    DP-SynRAG, per class for the others) and, when not None, DP-SynRAG's ``[dp_synrag] documents``.

    ``seeds_per_class`` (0: all): a method that writes one document per private document (RPSG, whose cost grows
    with every seed) gets at most this many members of each class, evenly spaced within the class (a subset of
    the other methods' members, chosen by position only). ``membership``: run the membership-inference attacks
    on every synthetic corpus too."""

    label_mode: str = "auto"
    documents: int | None = None
    seeds_per_class: int = 0
    membership: bool = False


def one_per_unit(method: str) -> bool:
    """Whether a method writes one document per private document (the catalogue's word, not its name)."""
    key = "dp_synrag" if method == "dp_synrag_l1" else method
    return method_catalogue.facts(key).wizard.documents == "one_per_unit"


def per_class_subset(rows: Sequence[LabelledRow], per_class: int) -> list[LabelledRow]:
    """At most ``per_class`` rows of each label, evenly spaced within the label, in the rows' order (0: all)."""
    if per_class <= 0:
        return list(rows)
    keep: set[int] = set()
    for label in sorted({r.label for r in rows}):
        positions = [i for i, r in enumerate(rows) if r.label == label]
        keep.update(evenly(positions, per_class))
    return [r for i, r in enumerate(rows) if i in keep]


def synthetic_training_set(config: EvaluationConfig, members_csv: Path, labels: list[str], method: str,
                           epsilon: float, work_dir: Path, llm, embedder,
                           reporter: Reporter = NULL_REPORTER,
                           settings: LabelledSettings = LabelledSettings(), n_units: int = 0) -> TrainingSet:
    """Labelled synthesis of the members in ``members_csv`` (``n_units`` of them; typed labels; by topic or per
    class), charged to the evaluation's own ledger."""
    label = runs.label_of(method, epsilon)
    spec = runs.run_spec(config, members_csv, method, epsilon)
    spec.data = replace(spec.data, label_column="label", labels=list(labels), label_mode=settings.label_mode)
    if settings.documents is not None and method_catalogue.facts(spec.method).wizard.documents == "topics":
        spec.dp_synrag = replace(spec.dp_synrag, documents=settings.documents)  # a topic count's [dp_synrag] documents
    spec.check()
    run = runs.run_method(spec, work_dir, runs.run_folder(work_dir, label), llm, embedder, reporter)
    documents = run.documents
    extra = {"rho_planned": run.rho_planned, "rho_charged": run.rho_charged, "n_units": n_units,
             "seconds_per_100_units": round(100 * run.seconds / n_units, 1) if n_units else None,
             "cpu_seconds": round(run.cpu_seconds, 1),
             "cpu_seconds_per_100_units": round(100 * run.cpu_seconds / n_units, 1) if n_units else None,
             "plan": {k: round(v, 6) for k, v in run.derived.items()},
             "samples": [{"label": d.label, "text": d.text} for d in documents[:SAMPLES_PER_CORPUS]]}
    return TrainingSet(label, "synthetic", [d.text for d in documents], [d.label for d in documents], epsilon,
                       method, run.seconds, extra)


def class_sizes(total: int, labels: Sequence[str], like: Sequence[str] = ()) -> dict[str, int]:
    """How many documents each label gets: the class mix of ``like`` (a synthetic corpus's labels, released
    output) when given, else equal shares."""
    from core.methods.class_shares import proportional_quotas

    mix = Counter(like)
    shares = [mix.get(label, 0) for label in labels] if like else [1] * len(labels)
    return dict(zip(labels, proportional_quotas(total, shares)))


def public_only_training_set(config: EvaluationConfig, llm, sizes: dict[str, int], max_new_tokens: int) -> TrainingSet:
    """The public-only writer labelled by prompt: each label's documents from the public task and the label's
    name alone (no private data, ε = 0)."""
    started = time.monotonic()
    texts, labels = [], []
    for label, n in sizes.items():
        task = f"{config.dataset.task} The document belongs to this category: {label}."
        written = public_only_documents(llm, task, n, max_new_tokens, config.dataset.public_example)
        texts += written
        labels += [label] * len(written)
    return TrainingSet(f"{PUBLIC_ONLY_LABEL}, labelled by prompt", "public_only", texts, labels, 0.0,
                       "public_only", time.monotonic() - started)


def like_labels(pool: Sequence[LabelledRow], like: Sequence[LabelledRow]) -> list[LabelledRow]:
    """Rows of ``pool`` in the label mix of ``like``: per label as many as ``like`` holds (evenly spaced within the
    label, fewer where the pool has fewer), so that an attack cannot tell members from non-members by the style
    of their label (one outlet's longer tweets) instead of by membership."""
    want = Counter(r.label for r in like)
    return [r for label in sorted(want) for r in evenly([x for x in pool if x.label == label], want[label])]


def membership_rows(candidates: list[LabelledRow], non_members: list[LabelledRow], synthetic: list[TrainingSet],
                    llm, embedder, mia_tokens: int, context_docs: int) -> list[dict]:
    """The membership attacks of ``core.evaluation.membership`` on every synthetic corpus: ``candidates`` (members
    of every run, i.e. seeds of a one-per-unit method too) against as many held-out ``non_members`` in the same
    label mix (:func:`like_labels`)."""
    non_members = like_labels(non_members, candidates) or non_members
    n = min(len(candidates), len(non_members))
    texts, flags, emb = membership.embed_candidates(embedder, [r.text for r in evenly(candidates, n)],
                                                    [r.text for r in evenly(non_members, n)])
    ref = membership.reference_nll(llm, texts, mia_tokens)
    rows: list[dict] = []
    for corpus in synthetic:
        if not corpus.texts:
            rows.append({"corpus": corpus.name, "method": corpus.method, "attacks": [], "note": "no documents"})
            continue
        index = VectorIndex.build(corpus.texts, embedder)
        attacks = membership.run_attacks(texts, flags, emb, index, llm, ref, context_docs, mia_tokens)
        rows.append({"corpus": corpus.name, "method": corpus.method, "attacks": [a.to_dict() for a in attacks]})
    return rows


def real_sample(members: list[LabelledRow], size: int) -> TrainingSet:
    rng = np.random.default_rng(REAL_SAMPLE_SEED)
    size = min(size, len(members))
    pick = sorted(rng.choice(len(members), size, replace=False).tolist()) if size else []
    return TrainingSet(f"{REAL_SAMPLE}, n = {size}", "real_sample", [members[i].text for i in pick],
                       [members[i].label for i in pick])


def without_links_sample(sample: TrainingSet) -> TrainingSet | None:
    """The same real sample with its links and handles removed (``core.common.links.without_links``), as DP-SynRAG's
    keywords and phrases see the texts (docs/method.md §2.1): the ceiling of what a corpus written from the texts'
    content alone can reach. None when no text of the sample holds a link or a handle (the row would repeat)."""
    texts = [without_links(t) for t in sample.texts]
    if texts == sample.texts:
        return None
    return TrainingSet(f"{sample.name}, {LINKS_REMOVED}", "real_sample_content", texts, sample.labels)


# --- the evaluation -----------------------------------------------------------------------------------------


def _say(reporter: Reporter, message: str) -> None:
    reporter.emit(ProgressEvent("evaluate", "stage_start", message=message))


def run_downstream(config: EvaluationConfig, work_dir: Path, reporter: Reporter = NULL_REPORTER,
                   max_members: int = DEFAULT_MEMBERS, held_out: int = HELD_OUT_SCORED,
                   settings: LabelledSettings = LabelledSettings()) -> dict:
    """Every training set of the comparison, both classifiers, on the held-out non-members (a JSON-ready dict)."""
    t0 = time.monotonic()
    rows = labelled_rows(config.dataset.name)
    members, non_members = split_labelled(rows, max_members)
    test = evenly(non_members, held_out)
    labels = sorted({r.label for r in members})
    members_csv = write_labelled_members(members, work_dir / "members.csv")
    _say(reporter, "Loading the models")
    llm = runs.GreedyCache(load_language_model(config.scale.llm))
    embedder = load_embedder(config.scale.embedder)
    test_emb = embedder.embed([r.text for r in test])
    seeds = per_class_subset(members, settings.seeds_per_class)
    seeds_csv = write_labelled_members(seeds, work_dir / "seeds.csv") if len(seeds) < len(members) else members_csv
    synthetic, notes = [], []
    for method, epsilon in runs.plan_runs(config):
        own = one_per_unit(method)
        entry = method_catalogue.entry(method)
        if entry is not None and not entry.end_to_end_dp:
            notes.append(f"{entry.short_name} keeps each seed's label: its labels are released without DP (no "
                         "end-to-end guarantee).")
        if own and len(seeds) < len(members):
            notes.append(f"{runs.label_of(method, epsilon)} rewrote {len(seeds)} of the {len(members)} members (at most "
                         f"{settings.seeds_per_class} per class, evenly spaced within each class).")
        _say(reporter, f"Generating {runs.label_of(method, epsilon)} with labels")
        synthetic.append(synthetic_training_set(config, seeds_csv if own else members_csv, labels, method, epsilon,
                                                work_dir, llm, embedder, reporter, settings,
                                                len(seeds) if own else len(members)))
    largest = [s for s in synthetic if s.epsilon == config.max_epsilon and s.method == REFERENCE_METHOD and s.texts]
    size = len(largest[0].texts) if largest else (len(synthetic[0].texts) if synthetic else len(labels) * 4)
    sizes = class_sizes(size, labels, largest[0].labels if largest else ())
    _say(reporter, "Writing the public-only baseline, labelled by prompt")
    public = public_only_training_set(config, llm, sizes, config.scale.dp_synrag.realisation_tokens)
    other_sizes = sorted({len(s.texts) for s in synthetic if s.epsilon == config.max_epsilon and s.texts} - {size})
    same_size = real_sample(members, size)
    content_only = without_links_sample(same_size)
    sets = [*synthetic, same_size, *([content_only] if content_only else []),
            *(real_sample(members, n) for n in other_sizes), public,
            TrainingSet(MAJORITY, "majority", [], [r.label for r in members])]
    mia: list[dict] = []
    if settings.membership:
        _say(reporter, "Membership inference on every synthetic corpus")
        scored = set(test)
        mia = membership_rows(seeds, [r for r in non_members if r not in scored] or non_members, synthetic, llm,
                              embedder, config.scale.mia_tokens, config.scale.context_docs)
    _say(reporter, f"Training and testing the classifiers on {len(test)} held-out non-members")
    return {
        "dataset": config.dataset.name,
        "scale": config.scale.name,
        "models": {"llm": llm.name, "embedder": embedder.name},
        "labels": labels,
        "label_mode": settings.label_mode,
        "documents": settings.documents,
        "seeds_per_class": settings.seeds_per_class,
        "split": {"members": len(members), "non_members": len(non_members), "held_out_scored": len(test),
                  "seeds": len(seeds), "seeds_per_class": dict(sorted(Counter(r.label for r in seeds).items())),
                  "members_per_class": dict(sorted(Counter(r.label for r in members).items())),
                  "held_out_per_class": dict(sorted(Counter(r.label for r in test).items()))},
        "classifiers": {"tfidf": "TF-IDF (1-2 grams, sublinear tf) + logistic regression (C = 10)",
                        "embedding": f"{embedder.name} sentence embeddings + logistic regression (C = 10)"},
        "rows": [training_row(s, test, test_emb, embedder) for s in sets],
        "membership": mia,
        "notes": notes,
        "seconds": round(time.monotonic() - t0, 1),
    }


def downstream_markdown(result: dict) -> str:
    """The table a reader compares: accuracy and macro-F1 of both classifiers per training set."""
    lines = [f"# Downstream classification: {result['dataset']} ({result['scale']} scale)", "",
             f"Labels ({len(result['labels'])}): {', '.join(result['labels'])}. Trained on each corpus below, tested "
             f"on {result['split']['held_out_scored']} held-out non-members.", "",
             "| training set | ε | n | TF-IDF acc | TF-IDF macro-F1 | MiniLM acc | MiniLM macro-F1 |",
             "|---|---|---|---|---|---|---|"]
    for row in result["rows"]:
        eps = "" if row["epsilon"] is None else f"{row['epsilon']:g}"
        lines.append(f"| {row['corpus']} | {eps} | {row['n_train']} | {row['tfidf']['accuracy']:.3f} | "
                     f"{row['tfidf']['macro_f1']:.3f} | {row['embedding']['accuracy']:.3f} | "
                     f"{row['embedding']['macro_f1']:.3f} |")
    synthetic = [row for row in result["rows"] if row["kind"] == "synthetic"]
    if synthetic:
        lines += ["", "| synthetic corpus | units given | seconds | s per 100 units (CPU s) | ρ planned / charged | plan |",
                  "|---|---|---|---|---|---|"]
        for row in synthetic:
            plan = ", ".join(f"{k} {v:.4g}" for k, v in sorted(row.get("plan", {}).items()))
            per_100, cpu_100 = row.get("seconds_per_100_units"), row.get("cpu_seconds_per_100_units")
            lines.append(f"| {row['corpus']} | {row.get('n_units', '')} | {row['seconds']:.0f} | "
                         f"{'' if per_100 is None else f'{per_100:.0f} ({cpu_100:.0f})'} | "
                         f"{row.get('rho_planned', 0):.4f} / "
                         f"{row.get('rho_charged', 0):.4f} | {plan} |")
    if result.get("membership"):
        lines += ["", "Membership inference (AUC, 95 % bootstrap CI; 0.5 = chance):", "",
                  "| synthetic corpus | attack | AUC | 95 % CI | members / non-members |", "|---|---|---|---|---|"]
        for entry in result["membership"]:
            for a in entry["attacks"]:
                lines.append(f"| {entry['corpus']} | {a['attack']} | {a['auc']:.3f} | [{a['ci_low']:.3f}, "
                             f"{a['ci_high']:.3f}] | {a['n_members']} / {a['n_non_members']} |")
    if result.get("command"):
        lines += ["", f"Command: `{result['command']}` ({result['seconds']:.0f} s)."]
    lines += [f"- {note}" for note in result.get("notes", [])]
    return "\n".join(lines) + "\n"


def write_downstream(result: dict, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out_dir / "downstream.json", out_dir / "downstream.md"
    json_path.write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    md_path.write_text(downstream_markdown(result), encoding="utf-8")
    return [json_path, md_path, plot_downstream(result, out_dir / "downstream.png")]
