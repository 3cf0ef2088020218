"""The fidelity report at the end of a run, for the custodian's own screen (issue 55 item 4, SPEC §7).

``privet run`` and the desktop's run process pass :func:`custodian_fidelity` to ``core.run.pipeline.run_pipeline``
(its ``fidelity`` hook): once the synthetic corpus is written, it computes the report of
:mod:`core.evaluation.fidelity` — the real-vs-synthetic classifier AUC, the own-form share, MMD² beside a
same-size real sample's and a few synthetic documents beside their nearest real ones — from the private
corpus the run loaded and the synthetic documents, with the embedder the run already loaded (no model is
loaded for it; without an embedder MMD² is left out and the report says so).

**Never exported.** The figures are computed on the private corpus without noise and the side-by-side pairs
quote real documents, so the report is written to the private run folder only (``fidelity.json``, mode 0600)
and shown on the custodian's screen: the Review page, and the figures (no real text) at the end of
``privet run``. ``core.run.export`` copies a run folder's files by an allow-list that does not name it, and the
certificate never reads it.

Computing it never fails a run: an error leaves a report that says why it is missing.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from core.common.private_files import write_private
from core.common.progress import NULL_REPORTER, Reporter, StageProgress

log = logging.getLogger(__name__)

FIDELITY_FILE = "fidelity.json"  # in the private run folder only; never in core.run.export's allow-list
STAGE_FIDELITY = "fidelity"
MAX_REAL = 1000  # real documents compared at most (a seeded sample beyond): bounds the time at the end of a run
N_PAIRS = 3
SEED = 0
NO_EMBEDDER = "not computed: the run had no embedder loaded"
SCREEN_ONLY = "shown here only; never exported"


def real_documents(corpus: Any) -> list[str]:
    """The private corpus's documents as loaded (before grouping into units), else its units' texts."""
    texts = list(getattr(corpus, "document_texts", None) or [u.text for u in corpus.units])
    return [t for t in texts if t.strip()]


def _sample(texts: Sequence[str], n: int, seed: int) -> list[str]:
    if len(texts) <= n:
        return list(texts)
    picks = np.random.default_rng(seed).choice(len(texts), n, replace=False)
    return [texts[i] for i in sorted(picks.tolist())]


def _embed_with(embedder: Any) -> Callable[[list[str]], np.ndarray] | None:
    if embedder is None or not callable(getattr(embedder, "embed", None)):
        return None
    return lambda texts: np.asarray(embedder.embed(list(texts)), dtype=np.float64)


def fidelity_figures(corpus: Any, synthetic: Sequence[str], embedder: Any = None,
                     templates: Sequence[str] | None = None) -> dict[str, Any]:
    """The report as a JSON-ready dict (pairs included: real text, screen only), with ``mmd2_note`` saying why
    MMD² is missing when it is."""
    from core.evaluation.fidelity import fidelity_report

    real = _sample(real_documents(corpus), MAX_REAL, SEED)
    texts = [t for t in synthetic if t.strip()]
    embed = _embed_with(embedder)
    report = fidelity_report(real, texts, templates=templates, embed=embed, n_pairs=N_PAIRS, seed=SEED)
    out = report.to_dict(pairs=True)
    out["mmd2_note"] = "" if report.mmd2 is not None else (
        NO_EMBEDDER if embed is None else "not computed: too few documents")
    out["real_compared"] = len(real)
    return out


def custodian_fidelity(run_dir: Path, corpus: Any, documents: Sequence[Any], embedder: Any = None,
                       reporter: Reporter = NULL_REPORTER) -> dict[str, Any] | None:
    """The run's fidelity report, written to ``run_dir/fidelity.json`` (private) and returned (on screen only).

    ``documents``: the run's synthetic documents (``SyntheticDoc``, or plain strings). None when the run wrote
    no document. Never raises, and a cancel asked meanwhile does not stop it (the run is written by then): a
    failure is written as a report holding only ``error``."""
    synthetic = [d if isinstance(d, str) else d.text for d in documents]
    if not any(t.strip() for t in synthetic):
        return None
    progress = StageProgress(reporter, STAGE_FIDELITY, 1).start(
        "Comparing the synthetic documents with yours (shown on your screen only, never exported)")
    try:
        out = fidelity_figures(corpus, synthetic, embedder)
    except Exception as exc:  # a report that could not be made never fails the run
        log.warning("The fidelity report could not be computed: %s", exc)
        out = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    write_private(Path(run_dir) / FIDELITY_FILE, json.dumps(out, ensure_ascii=False))
    progress.finish()  # no cancel check: the corpus and its record are written; the report is short
    return out


def load_fidelity(run_dir: str | Path) -> dict[str, Any] | None:
    """A finished run's fidelity report (None when it has none or it cannot be read)."""
    path = Path(run_dir) / FIDELITY_FILE
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return loaded if isinstance(loaded, dict) else None


# -- words -----------------------------------------------------------------------------------------------------


def _percent(value: Any) -> str:
    return f"{100 * float(value):.0f}%"


def auc_words(report: dict[str, Any]) -> str:
    auc = report.get("c2st_auc")
    if auc is None:
        return "Real-vs-synthetic classifier: not computed (fewer than 5 documents on a side)."
    floor = report.get("c2st_auc_real")
    against = f"; two samples of your own documents: {floor:.2f}" if floor is not None else ""
    return (f"Real-vs-synthetic classifier AUC: {auc:.2f} (0.5 = indistinguishable, 1.0 = always told apart"
            f"{against}).")


def own_form_words(report: dict[str, Any]) -> str:
    share = report.get("own_form_share")
    if share is None:
        return "Own-form share: not computed."
    ceiling = report.get("own_form_share_real")
    real = f" (your own held-out documents: {_percent(ceiling)})" if ceiling is not None else ""
    how = "by your templates" if report.get("own_form_method") == "templates" else "by their skeletons"
    return f"In the corpus's own forms: {_percent(share)} of the synthetic documents{real}, judged {how}."


def mmd_words(report: dict[str, Any]) -> str:
    mmd2 = report.get("mmd2")
    if mmd2 is None:
        return f"MMD²: {report.get('mmd2_note') or 'not computed'}."
    real = report.get("mmd2_real")
    if real is None:
        return f"MMD² (distance of meaning, embeddings): {mmd2:.4f}; no same-size real sample to set beside it."
    ratio = report.get("mmd2_ratio")
    times = f" ({ratio:.1f}×; about 1× is as close as real text of that size gets)" if ratio is not None else ""
    return (f"MMD² (distance of meaning, embeddings): {mmd2:.4f}, beside {real:.4f} for a same-size sample of your "
            f"own documents{times}.")


def figure_lines(report: dict[str, Any]) -> list[str]:
    """The figures in plain words, one a line (no real text): the Review page's and the terminal's."""
    if report.get("error"):
        return [f"The fidelity report could not be computed ({report['error']})."]
    return [auc_words(report), own_form_words(report), mmd_words(report)]


def terminal_lines(report: dict[str, Any] | None) -> list[str]:
    """What ``privet run`` prints at its end: the figures, marked as shown on this screen only. The side-by-side
    documents quote real text, so they are left to the Review page (and ``privet fidelity``)."""
    if not report:
        return []
    lines = [f"Fidelity against your corpus ({SCREEN_ONLY}; computed on your data without noise):"]
    lines += [f"  {line}" for line in figure_lines(report)]
    if report.get("pairs"):
        lines.append("  Real and synthetic documents side by side: the desktop app's Review page, or "
                     "privet fidelity REAL SYNTHETIC (not printed here: terminal output is often logged).")
    return lines
