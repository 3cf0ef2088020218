"""Issue 35: a run interrupted while the public writer writes resumes from where it stopped.

Every finished realised document is checkpointed as soon as it is final; a resume reuses those and writes
only the rest, charges nothing (the writing is post-processing of released topics) and says so, and its
documents are the uninterrupted run's, in the same order.
"""

from __future__ import annotations

import io
import json

import pytest
from tests.helpers import CANARY, tiny_spec

from core.common.errors import Cancelled
from core.ledger import Ledger
from core.methods.dp_synrag.shape import examples as ex
from core.methods.dp_synrag.shape.adaptive import with_public_defaults
from core.methods.dp_synrag.shape.corpus_shape import target_words
from core.methods.dp_synrag.shape.released_topics import Topic
from core.methods.dp_synrag.write import realisation as rl
from core.methods.dp_synrag.write import writer_prompt as wp
from core.methods.dp_synrag.write.content_terms import invented_terms
from core.methods.dp_synrag.write.drafts import fit_length
from core.methods.dp_synrag.write.realisation import Realisation
from core.methods.dp_synrag.write.written_documents import load_written, save_written, writing_key
from core.run.pipeline import resume_quote, run_pipeline
from core.run.pipeline_cli import resume_consent
from core.common.progress import CallbackReporter, ProgressEvent

WRITING = rl.REALISATION_STAGE


class Writer:
    """Counts the writer's work: every topic a draft is asked for, and every row the writer decodes."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.topics: list[tuple[str, ...]] = []
        self.rows = 0
        prompt, greedy = wp.realisation_prompt, rl.public_greedy

        def counted_prompt(topic, *args, **kwargs):
            self.topics.append(topic.words)
            return prompt(topic, *args, **kwargs)

        def counted_greedy(llm, messages, *args, **kwargs):
            self.rows += len(messages)
            return greedy(llm, messages, *args, **kwargs)

        monkeypatch.setattr(rl, "realisation_prompt", counted_prompt)
        monkeypatch.setattr(rl, "public_greedy", counted_greedy)

    def reset(self) -> None:
        self.topics.clear()
        self.rows = 0


def realised_spec(tmp_path, release: str | None = None):
    spec = tiny_spec(tmp_path, release=release, text="realised", refine=False)
    spec.privacy.spend_anyway = True  # 40 notes: about 0 topics expected; the tiny runs write R anyway
    # the shipped form's writer, whose documents are checkpointed one by one (the writer in the corpus's released
    # forms writes a resumed run's documents again, free); with discovery on, a draw of the forms decided which
    spec.dp_synrag.discover_forms = False
    return spec


def interrupt_while_writing(spec, run_dir, ledger=None, after: int = 1) -> list[str]:
    """Run ``spec`` and cancel it once ``after`` documents are written; the documents previewed by then."""
    written: list[str] = []
    stages: list[str] = []

    def on_event(event: ProgressEvent) -> None:
        stages.append(event.stage)
        if event.stage == WRITING and event.kind == "preview":
            written.append(event.message)

    with pytest.raises(Cancelled):
        run_pipeline(spec, CallbackReporter(on_event, lambda: len(written) >= after), run_dir=run_dir, ledger=ledger)
    assert WRITING in stages and "self_filter" not in stages, "interrupted in the writing stage"
    return written


def charges(ledger: Ledger) -> list[tuple[str, str, float]]:
    return [(r["run_id"], r["stage"], r["rho"]) for r in ledger.entries() if r["kind"] == "charge"]


def test_a_resume_in_the_writing_stage_writes_only_the_rest_charges_nothing_and_keeps_the_order(
        tmp_path, monkeypatch):
    # one thread whatever the load: with two, sums run in another order and the tiny model samples other tokens,
    # so the run before the interruption and the resumed one would not agree on what is written
    monkeypatch.setenv("PRIVET_THREADS", "1")
    writer = Writer(monkeypatch)
    spec = realised_spec(tmp_path)
    run_dir = tmp_path / "run"
    ledger = Ledger()
    # Cancelled once the first document is final: with two or more demonstrations (so two or more batches
    # per pass), that leaves at least one topic to write whatever the writer drew.
    written = interrupt_while_writing(spec, run_dir, ledger)
    checkpoint = run_dir / "checkpoints" / spec.method
    saved = {int(p.stem.split("-")[1]): json.loads(p.read_text()) for p in checkpoint.glob("realised-*.json")}
    assert len(saved) >= 1 and sorted(e["text"] for e in saved.values()) == sorted(written), \
        "every finished document is checkpointed as soon as it is final"
    assert writer.topics
    assert not any(CANARY.encode() in p.read_bytes() for p in checkpoint.glob("realised-*.json")), \
        "a checkpointed document is public text: no private name"
    before = charges(ledger)

    quote = resume_quote(spec, run_dir, ledger=ledger)
    assert not quote.charges_anything and quote.resume_rho == 0
    assert "Nothing more will be charged" in quote.words()
    said = io.StringIO()
    assert resume_consent(False, io.StringIO(), said)(quote)  # the CLI: says so and asks nothing (no terminal)
    assert "Nothing more will be charged" in said.getvalue()

    writer.reset()
    result = run_pipeline(spec, run_dir=run_dir, resume=True, ledger=ledger, consent=lambda q: True)
    reused = {tuple(e["topic"]) for e in saved.values()}
    assert writer.topics, "the rest was written"
    assert not reused & set(writer.topics), "no document already written is written again"
    assert writer.rows == len(writer.topics)  # every decoded row is a draft of a topic not yet written
    assert charges(ledger) == before, "resuming the writing charges nothing"

    # The writer samples, so a document written again may read differently; one finished before the
    # interruption is released as it was written, at its topic's place, and the list stays in topic order.
    lines = [json.loads(line) for line in (run_dir / "synthetic.jsonl").read_text().splitlines() if line.strip()]
    ids = [line["id"] for line in lines]
    assert result.n_synthetic == len(lines) > 0 and ids == sorted(ids)
    by_id = {line["id"]: line["text"] for line in lines}
    length = checkpoint / "length.json"  # the run's DP length statistic, when it drew one: the length it aims at
    released = json.loads(length.read_text())[0] if length.exists() else None
    chosen = with_public_defaults(spec)
    example = ex.public_example(chosen.document.document_form, chosen.document.public_example)
    target = target_words(chosen.dp_synrag, released, ex.form_length(example))
    lead = wp.example_lead(example)
    for index, entry in saved.items():
        if entry["written"]:  # the same length fitting and the same drop as in an uninterrupted run (post-processing)
            text = fit_length(entry["text"], entry["topic"], target)
            if invented_terms([text], (*entry["topic"], lead)):
                assert f"syn-{index:04d}" not in by_id, "a document stating an unreleased fact is dropped, resumed or not"
            else:
                assert by_id[f"syn-{index:04d}"] == text, "released as written before the interruption"


def test_a_checkpoint_of_another_topic_or_other_settings_is_never_reused(tmp_path):
    from core.common.checkpoints import Checkpoints

    store = Checkpoints(tmp_path / "cp")
    topics = [Topic("fever", ("cough",)), Topic("rash")]
    key = writing_key("Write notes.", "Consultation note. [what]", 80)
    doc = Realisation("Consultation note. Fever and cough.", 1, False, shown=0)
    save_written(store, 0, topics[0], key, doc)
    save_written(store, 1, topics[1], key, Realisation("Consultation note. A rash.", 2, True, shown=1))
    assert load_written(store, topics, key) == {0: doc, 1: Realisation("Consultation note. A rash.", 2, True, shown=1)}
    other = [Topic("fever", ("sweats",)), Topic("gout")]  # other released topics at the same indices
    assert load_written(store, other, key) == {}
    assert load_written(store, topics, writing_key("Write notes.", "Consultation note. [what]", 40)) == {}
    store.save("realised-0", {"topic": ["fever", "cough"], "key": key})  # a damaged checkpoint
    assert 0 not in load_written(store, topics, key)


def test_the_writer_reuses_finished_documents_and_rotates_demonstrations_by_topic_index(monkeypatch):
    from core.models.registry import load_language_model
    from core.common.progress import NULL_REPORTER
    from core.specs.runspec import ModelChoice

    writer = Writer(monkeypatch)
    example = ex.shipped_example("clinical_note")
    n = len(ex.demonstrations(example))
    topics = [Topic(f"topic{i}", ("cough",)) for i in range(n + 2)]
    llm = load_language_model(ModelChoice(source="tiny-random"))
    kept: dict[int, Realisation] = {}
    whole = rl.realise(topics, "Write notes.", example, llm, NULL_REPORTER, rl.WriterSettings(6), on_final=kept.__setitem__)
    assert kept == dict(enumerate(whole)), "every document is handed on as it becomes final"
    finished = {i: whole[i] for i in (0, n + 1)}
    writer.reset()
    again = rl.realise(topics, "Write notes.", example, llm, NULL_REPORTER, rl.WriterSettings(6), finished=finished)
    assert [again[i] for i in finished] == list(finished.values())
    assert {t[0] for t in writer.topics} == {f"topic{i}" for i in range(1, n + 1)}, "only the others are written"
    assert [d.shown for d in again] == [i % n for i in range(len(topics))]


def test_a_test_mode_run_writes_the_same_realised_documents_again(tmp_path):
    """The writer samples (post-processing randomness): from OS entropy in a real run, from the test mode's seed
    in a test-mode run, so that one writes the same documents again."""
    from core.run.pipeline import run_pipeline

    def texts(folder: str) -> list[str]:
        spec = tiny_spec(tmp_path / folder, text="realised", refine=False, release=None)
        spec.test_mode_seed = 11
        result = run_pipeline(spec)
        return result.synthetic_path.read_text(encoding="utf-8").splitlines()

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert texts("a") == texts("b")
