"""The junk rule in the product (``core.common.junk``, docs/method.md §2.5b): a realised document a reader would discard is
dropped before the self-filter, by the same rule ``privet evaluate`` reports, on public text only."""

from __future__ import annotations

import json

from tests.helpers import tiny_spec

import core.methods.dp_synrag.algorithm as algorithm
from core.common.junk import junk_reasons, without_junk
from core.run.pipeline import run_pipeline

GOOD = "Consultation note. K. M., 47, reports fever and a dry cough for three days. Plan: rest and fluids."
PLANTED_JUNK = (
    "I'm ready to help. What's your question? Available options: 1. Yes 2. No",  # talks instead of being one
    "Key terms: sweats.",  # a bare key-terms line: next to no prose
    "Documents like these are used for this purpose: answer questions about the notes.",  # an echoed prompt
)


def test_without_junk_keeps_clean_texts_in_order_and_drops_each_kind_of_junk():
    texts = {0: GOOD, 3: PLANTED_JUNK[0], 5: PLANTED_JUNK[1], 7: PLANTED_JUNK[2], 9: GOOD.replace("fever", "a rash")}
    assert list(without_junk(texts)) == [0, 9]
    assert all(junk_reasons(t) for t in PLANTED_JUNK) and not junk_reasons(GOOD)
    task = "Share short health news and tips with readers."
    echo = {1: f"{task} Today: walk more.", 2: GOOD}
    assert list(without_junk(echo, [task])) == [2]  # the custodian's task echoed is junk too


def test_a_writer_refusing_or_grading_its_own_answer_is_junk_but_clinical_wording_of_the_same_words_is_not():
    """Round 5 session 7: what the shipped form's writer wrote on the demo clinic at ε = 4 with one weak topic."""
    refusing = (
        "The list of questions is too long, and I will not be able to fulfill them. Please refer to the documents "
        "that were sent from the server for this task: Stiffness",
        "This new sentence meets all the given conditions: it contains only the required information; it uses only "
        "the requested words and format; and no other sentences.",
        "\"What is the diagnosis of 'stiffening'?\" The answer must be a medical condition that matches their symptoms.",
    )
    clinical = (
        "She meets the criteria for major depressive disorder and cannot complete a full sentence when short of breath.",
        "Unable to complete the walking task; the answer to treatment should be reviewed in two weeks.",
        "Conditions given at discharge: rest, fluids and the following instructions from the ward.",
    )
    assert all(junk_reasons(text) for text in refusing), [junk_reasons(t) for t in refusing]
    assert not any(junk_reasons(text) for text in clinical), [junk_reasons(t) for t in clinical]


def test_a_realised_run_drops_planted_junk_and_counts_it(tmp_path, privet_home, monkeypatch):
    written = algorithm.write_texts

    def planted(*args, **kwargs):
        texts = written(*args, **kwargs)
        return {i: (GOOD.replace("three", str(i + 2)) if n % 2 else PLANTED_JUNK[n // 2 % 3])
                for n, i in enumerate(sorted(texts))}

    monkeypatch.setattr(algorithm, "write_texts", planted)
    spec = tiny_spec(tmp_path, text="realised", refine=False, self_filter=False, release=None,
                     realisation_tokens=8)  # the drafts are replaced by the planted texts: short ones will do
    result = run_pipeline(spec)
    kept = [json.loads(line)["text"] for line in open(result.run_dir / "synthetic.jsonl", encoding="utf-8")]
    assert kept and all(text.startswith("Consultation note.") for text in kept)
    assert result.private_diagnostics["dropped_as_junk"] >= 1
    assert result.private_diagnostics["dropped_as_junk"] + len(kept) == result.private_diagnostics["generated"]
    assert any("Junk rule" in note for note in result.record.scope_notes)
