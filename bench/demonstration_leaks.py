"""How often does a document take a demonstration's content? (docs/results/history.md, issue 32 item 3)

Runs a spec end to end (``core.run.pipeline.run_pipeline`` in test mode: a throw-away ledger, nothing
exported), records every released topic and the document the public writer made of it, and counts the
documents that hold a **demonstration-only content word**:

* ``guard``: a word the demonstration guard refuses for the demonstration the document was shown
  (``core/methods/dp_synrag/write/demonstration_guard.py``; a content word or a near-form of a name shared
  with that demonstration and not with the topic's released words);
* ``any_demo``: the same against every demonstration of the form (a stricter count);
* ``absent``: a word of any demonstration of the form (its content words, names and phrases) that the
  document holds, its topic did not release, and **no private document contains** ("big toe" in a note of
  a corpus that never says it). This reads the private corpus: an evaluation figure, never exported;
* ``strict``: any word of the demonstration it was shown that is no stop word, form word or task word
  (everyday words included: "worse", "given"), not released; ``strict_absent``: such a word that no
  private document contains either.

``--catalogue diseases.json`` (written by ``privet demo-data``; public, like its generator and seed) also
writes the public topics of the demo's disease catalogue (each disease with three of its symptoms, and its
first symptom with the disease) with the same writer, for more documents than one run releases.

With ``--baseline`` the same topics are written again by round 3's writer (the committed
``realisation.py`` of ``--baseline-commit``, one demonstration, no content guard), so the figures can be
compared on the same released topics.

    PRIVET_HOME=/tmp/privet-bench python bench/demonstration_leaks.py SPEC --baseline --json-out leaks.json
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's core/, not an installed one

from core.methods.dp_synrag.shape import examples as ex
from core.methods.dp_synrag.shape import released_topics as rt
from core.methods.dp_synrag.write import written_documents as drafts_stage
from core.methods.dp_synrag.write.realisation import WriterSettings
from core.methods.dp_synrag.write.demonstration_guard import DemonstrationGuard, PublicLists, guard_of, same_word
from core.methods.dp_synrag.vocab.vocabulary import split_words
from core.specs.runspec import RunSpec

REPO = Path(__file__).resolve().parents[1]


def record_run(spec: RunSpec) -> dict[str, Any]:
    """Run ``spec`` in test mode and return the writer's inputs and outputs (public text only)."""
    from core.run.pipeline import run_pipeline

    seen: dict[str, Any] = {}
    real = drafts_stage.realise

    def recording(topics, task, example, llm, *args, **kwargs):
        out = real(topics, task, example, llm, *args, **kwargs)
        kept = {k: v for k, v in kwargs.items() if k not in ("finished", "on_final")}  # the run's checkpoints: not reused
        seen.update(task=task, example=example, llm=llm, args=args, kwargs=kept,
                    topics=[[t.keyword, list(t.related)] for t in topics],
                    documents=[d.text for d in out], shown=[d.shown for d in out],
                    refused=[list(d.refused) for d in out])
        return out

    drafts_stage.realise = recording
    try:
        with tempfile.TemporaryDirectory() as out:
            run_pipeline(replace(spec, test_mode_seed=spec.test_mode_seed or 0,
                                 output=replace(spec.output, folder=out)))
    finally:
        drafts_stage.realise = real
    return seen


def baseline_writer(commit: str):
    """Round 3's ``realise`` (the committed file at ``commit``: one demonstration, the 4-token copy guard)
    and its demonstration of each form (``<form>.demo.toml`` at ``commit``)."""
    def show(path: str) -> str:
        return subprocess.run(["git", "show", f"{commit}:{path}"], cwd=REPO, check=True, capture_output=True,
                              text=True).stdout

    path = Path(tempfile.mkdtemp()) / "realisation_round3.py"
    path.write_text(show("core/methods/dp_synrag/realisation.py"), encoding="utf-8")  # its place at round 3
    spec = importlib.util.spec_from_file_location("realisation_round3", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module, lambda example: round3_demonstrations(example, show)


def round3_realise(old, topics: Sequence[Any], record: dict[str, Any]) -> list[Any]:
    """Round 3's ``realise`` on the recorded call: its positional settings read from today's ``WriterSettings``."""
    args, kwargs = record["args"], record["kwargs"]
    reporter = args[0] if args else kwargs["reporter"]
    settings = (args[1] if len(args) > 1 else kwargs.get("settings")) or WriterSettings()
    return old.realise(topics, record["task"], record["example"], record["llm"], reporter, settings.max_new_tokens,
                       settings.batch, settings.max_prompt_tokens)


def round3_demonstrations(example: str, show) -> tuple[ex.Demonstration, ...]:
    """The one demonstration round 3 showed for the shipped form whose example is ``example``."""
    for form in ex.FORMS:
        if ex.shipped_example(form) == example.strip():
            return ex.parse_demonstrations(show(f"resources/examples/{form}.demo.toml"))[:1]
    return ()


def strict_words(demo: ex.Demonstration, guard: DemonstrationGuard) -> set[str]:
    """Every word of a demonstration that is no stop, form or task word (no everyday-word exemption)."""
    words = split_words(" ".join([demo.document, *demo.topic.words, *demo.avoid]))
    return {w for w in words if len(w) >= 3 and w not in guard.allowed}


def _absent(words: Sequence[str], vocab: set[str], private_words: set[str], own: set[str]) -> list[str]:
    """The document's words of ``vocab`` that no private document holds and its topic did not release."""
    return sorted({w for w in words if w in vocab and w not in private_words and not any(same_word(w, r) for r in own)})


def corpus_text(path: Path, column: str) -> str:
    """The private documents' words, each document's joined by spaces and framed by them (evaluation only)."""
    with open(path, newline="", encoding="utf-8") as fh:
        return " " + "  ".join(" ".join(split_words(row[column])) for row in csv.DictReader(fh)) + " "


def measure(record: dict[str, Any], private_text: str, demos: Sequence[ex.Demonstration]) -> dict[str, Any]:
    """The counts above for one writer's documents; document i was shown ``demos[i mod n]``.
    ``private_text``: the private documents' words, joined by spaces (:func:`corpus_text`)."""
    private_words = set(private_text.split())
    lists = PublicLists.shipped()
    guards = [guard_of(d, f"{record['example']}\n{record['task']}", lists) for d in demos]
    demo_vocab = set().union(*(g.content | {n.lower() for n in g.names} for g in guards))
    phrases = {p for g in guards for p in g.phrases if f" {p} " not in private_text}
    strict = [strict_words(d, g) for d, g in zip(demos, guards)]
    rows = []
    for i, ((keyword, related), text) in enumerate(zip(record["topics"], record["documents"])):
        released = (keyword, *related)
        own = {w for entry in released for w in split_words(entry)}
        shown = i % len(demos)
        words = split_words(text)
        rows.append({
            "guard": guards[shown].refused(text, released),
            "any_demo": sorted({w for g in guards for w in g.refused(text, released)}),
            "absent": _absent(words, demo_vocab, private_words, own)
            + [p for p in phrases if f" {p} " in f" {' '.join(words)} " and not set(p.split()) <= own],
            "strict": sorted({w for w in words if w in strict[shown] and not any(same_word(w, r) for r in own)}),
            "strict_absent": _absent(words, strict[shown], private_words, own),
        })
    n = len(rows)
    share = {key: sum(1 for r in rows if r[key]) / n if n else 0.0 for key in rows[0]} if rows else {}
    return {"documents": n, "share": share, "rows": rows}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("spec", help="a run spec (TOML) with text = \"realised\" and a shipped document_form")
    parser.add_argument("--baseline", action="store_true", help="also write the same topics with round 3's writer")
    parser.add_argument("--baseline-commit", default="b3f1489", help="the commit whose realisation.py is round 3's")
    parser.add_argument("--catalogue", type=Path, help="also write the topics of this public disease catalogue")
    parser.add_argument("--json-out", type=Path, help="write every figure and document here")
    args = parser.parse_args(argv)
    spec = RunSpec.load(args.spec)
    old, old_demos = baseline_writer(args.baseline_commit) if args.baseline else (None, None)
    record = record_run(spec)
    private = corpus_text(Path(spec.data.path), spec.data.text_column)
    today = ex.demonstrations(record["example"])
    result: dict[str, Any] = {"spec": str(args.spec), "round4": {**measure(record, private, today), **_public(record)}}
    if old is not None and old_demos is not None:
        demo = old_demos(record["example"])
        old.demonstration = lambda example: old.Demonstration(  # round 3's file, read by today's parser
            old.Topic(demo[0].topic.keyword, demo[0].topic.related), demo[0].document, demo[0].avoid) if demo else None
        topics = [old.Topic(k, tuple(r)) for k, r in record["topics"]]
        done = round3_realise(old, topics, record)
        base = {**record, "documents": [d.text for d in done]}
        result["round3"] = {**measure(base, private, demo), "documents_text": base["documents"],
                            "against_round4_demonstrations": measure(base, private, today)["share"]}
    if args.catalogue:
        topics = catalogue_topics(args.catalogue)
        done = drafts_stage.realise(topics, record["task"], record["example"], record["llm"], *record["args"],
                                  **record["kwargs"])
        extra = {**record, "topics": [[t.keyword, list(t.related)] for t in topics],
                 "documents": [d.text for d in done], "shown": [d.shown for d in done],
                 "refused": [list(d.refused) for d in done]}
        result["round4_catalogue"] = {**measure(extra, private, today), **_public(extra)}
        if old is not None and old_demos is not None:
            base = round3_realise(old, [old.Topic(t.keyword, t.related) for t in topics], record)
            texts = [d.text for d in base]
            result["round3_catalogue"] = {**measure({**extra, "documents": texts}, private,
                                                    old_demos(record["example"])), "documents_text": texts}
    for name in ("round3", "round4", "round3_catalogue", "round4_catalogue"):
        if name in result:
            print(name, result[name]["documents"], "documents;", {k: f"{100 * v:.1f}%" for k, v in result[name]["share"].items()})
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


def catalogue_topics(path: Path) -> list[rt.Topic]:
    """Two public topics per disease of a ``privet demo-data`` catalogue (public: its generator and seed are)."""
    diseases = json.loads(path.read_text(encoding="utf-8"))["diseases"]
    return [topic for d in diseases
            for topic in (rt.Topic(d["name"], tuple(d["symptoms"][:3])), rt.Topic(d["symptoms"][0], (d["name"],)))]


def _public(record: dict[str, Any]) -> dict[str, Any]:
    return {"example": record["example"], "task": record["task"], "topics": record["topics"],
            "documents_text": record["documents"], "shown": record["shown"],
            "refused": record["refused"]}


if __name__ == "__main__":
    raise SystemExit(main())
