"""The adaptive default (docs/method.md §2.7, issue 32): settings chosen by public rules and a DP size count.

The demo spec holds no tuned number; R (and k) come from a DP count of the corpus's size that is charged before
it is drawn and stated on the certificate; the forecast of documents is a range the run lands in.
"""

from __future__ import annotations

import math
import tomllib

import numpy as np
import pytest
from tests.helpers import TINY, statistical, tiny_spec

from core.common.checkpoints import Checkpoints
from core.corpus import Unit
from core.ledger import Ledger
from core.methods.base import MethodContext
from core.methods.dp_synrag.release.budget import plan_dp_synrag
from core.methods.dp_synrag.release.size import release_size
from core.methods.dp_synrag.shape.adaptive import (
    MAX_TOPICS,
    MIN_TOPICS,
    topic_cap,
    units_per_topic,
    with_public_defaults,
    with_size,
)
from core.methods.dp_synrag.method import DPSynRAGMethod
from core.common.paths import resources_dir
from core.common.progress import NULL_REPORTER
from core.run.pipeline import plan, run_pipeline
from core.privacy.forecast import significance_threshold
from core.privacy.planner import STAGE_SIZE
from core.specs.document_forms import shipped_example
from core.specs.runspec import DPSynRAGSpec, RunSpec

DEMO_SPEC = resources_dir() / "demo" / "demo_run.toml"
PUBLIC_CHOICES = {"document_form", "public_example", "domain_lists"}  # what a spec may say of its corpus


def test_the_demo_spec_holds_no_tuned_number():
    section = tomllib.loads(DEMO_SPEC.read_text(encoding="utf-8"))["dp_synrag"]
    assert set(section) <= PUBLIC_CHOICES, f"tuned settings in the demo spec: {set(section) - PUBLIC_CHOICES}"
    assert not any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in section.values())


def test_the_public_rules_fill_the_form_and_l_and_keep_what_the_spec_states():
    spec = RunSpec()
    spec.task = "Answer patients' questions"
    chosen = with_public_defaults(spec)
    assert chosen.dp_synrag.L == 1 and chosen.document.document_form == "clinical_note"
    assert spec.dp_synrag.L == 0 and spec.document.document_form == ""  # the caller's spec is not changed
    spec.dp_synrag.L = 4
    assert with_public_defaults(spec).dp_synrag.L == 4
    assert with_public_defaults(RunSpec.from_dict({"dp_synrag": {"text": "private"}})).dp_synrag.L == 5  # the seed's


def test_the_size_count_runs_only_when_a_setting_waits_for_it():
    assert DPSynRAGSpec().size_count and plan_dp_synrag(DPSynRAGSpec(), 10, 1e-6).counts_size
    assert not DPSynRAGSpec(R=40, documents=0).size_count  # realised: k plays no part
    assert DPSynRAGSpec(R=40).size_count  # the automatic number of documents waits for it
    assert not DPSynRAGSpec(R=40, documents=120).size_count
    assert DPSynRAGSpec(R=40, text="private").size_count  # k of the token stage waits for it
    assert not DPSynRAGSpec(R=40, k=20, text="private").size_count  # with a token stage, automatic is one per topic
    assert not DPSynRAGSpec(size_bound=1000).size_count  # a public bound costs nothing
    stated = plan_dp_synrag(DPSynRAGSpec(size_bound=1000), 10, 1e-6)
    assert STAGE_SIZE not in stated.per_stage() and sum(stated.per_stage().values()) == pytest.approx(stated.rho_total)


def test_r_is_the_most_topics_of_full_support_the_size_allows():
    sigma_h, vocab = 2.9, 30_000
    support = significance_threshold(sigma_h, vocab)
    assert topic_cap(200, sigma_h, vocab, 3) == math.ceil(3 * 200 / support)
    assert topic_cap(10, sigma_h, vocab, 3) == MIN_TOPICS and topic_cap(10**7, sigma_h, vocab, 3) == MAX_TOPICS
    sizes = [topic_cap(n, sigma_h, vocab, 3) for n in (100, 200, 400, 800, 1600)]
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]
    assert topic_cap(400, 3 * sigma_h, vocab, 3) < topic_cap(400, sigma_h, vocab, 3)  # more noise: fewer topics
    assert (units_per_topic(50), units_per_topic(400), units_per_topic(10**6)) == (10, 40, 80)


def test_with_size_keeps_stated_settings_and_refuses_to_guess_without_a_size():
    p = with_size(DPSynRAGSpec(), 240.0, 2.9, 30_000)
    assert topic_cap(240, 2.9, 30_000, 1) == p.R and p.k == 0  # realised: k plays no part
    assert with_size(DPSynRAGSpec(R=12), None, 2.9, 30_000).R == 12
    assert topic_cap(5000, 2.9, 30_000, 1) == with_size(DPSynRAGSpec(size_bound=5000), 10.0, 2.9, 30_000).R
    with pytest.raises(ValueError):
        with_size(DPSynRAGSpec(), None, 2.9, 30_000)


@statistical
def test_the_size_count_is_gaussian_around_the_true_size(tmp_path):
    spec = DPSynRAGSpec()
    p = plan_dp_synrag(spec, 10.0, 1e-6)
    units = [Unit(uid=f"u{i}", text="x") for i in range(123)]
    charges: list[tuple[str, float]] = []
    draws = []
    for i in range(600):
        ctx = MethodContext(llm=None, embedder=None, task="",  # type: ignore[arg-type]
                            charge=lambda s, r, d, delta_part=0.0: charges.append((s, r)),
                            reporter=NULL_REPORTER, checkpoints=Checkpoints(tmp_path / f"c{i}"))
        draws.append(release_size(units, p, ctx))
    draws_a = np.asarray(draws)
    assert all(stage == STAGE_SIZE and rho == pytest.approx(p.rho_size) for stage, rho in charges)
    assert len(charges) == 600
    se = p.sigma_size / math.sqrt(len(draws_a))
    assert abs(draws_a.mean() - 123) < 4.5 * se
    assert draws_a.std(ddof=1) == pytest.approx(p.sigma_size, rel=0.15)
    assert len(set(draws)) > 500  # OS entropy: no two runs alike


def test_a_resume_reuses_the_released_size(tmp_path):
    checkpoints = Checkpoints(tmp_path / "c")
    assert STAGE_SIZE not in DPSynRAGMethod.finished_stages(checkpoints)
    checkpoints.save("size", [101.5])
    assert STAGE_SIZE in DPSynRAGMethod.finished_stages(checkpoints)


def test_the_size_count_is_charged_first_and_stated_on_the_certificate(tmp_path, privet_home):
    spec = tiny_spec(tmp_path, R=0, k=0)  # R and k left to the adaptive default
    result = run_pipeline(spec)
    charges = [e for e in Ledger().entries(result.record.dataset_id) if e["kind"] == "charge"]
    assert charges[0]["stage"] == STAGE_SIZE
    planned = plan(spec)
    assert dict(planned.stages)[STAGE_SIZE] == pytest.approx(charges[0]["rho"])
    assert math.fsum(e["rho"] for e in charges) == pytest.approx(result.record.rho_total, rel=1e-9)
    assert any(s["stage"] == STAGE_SIZE for s in result.record.stages)
    note = next(n for n in result.record.scope_notes if "adaptive default" in n)
    assert "released DP size count" in note and "R = " in note


def test_the_forecast_range_holds_the_topics_a_run_of_the_demo_clinic_finds(tmp_path, privet_home):
    """The demo clinic corpus with the library's defaults at ε = 10 (tiny models; the topics, not the writer,
    decide how many documents there are, so the bare topic line stands in for the writer)."""
    spec = RunSpec.load(str(DEMO_SPEC))
    spec.llm = spec.embedder = TINY
    spec.dp_synrag.text, spec.dp_synrag.self_filter = "topic_line", False
    spec.output.folder = ""
    low, high = plan(spec).documents_range  # type: ignore[misc]
    result = run_pipeline(spec)
    assert low <= result.n_synthetic <= high, (low, result.n_synthetic, high)
    assert result.n_synthetic >= 10


def test_the_forms_own_words_and_what_most_units_say_are_no_topics():
    from core.methods.dp_synrag.release.histogram import topic_words
    from core.methods.dp_synrag.shape.examples import form_words
    from core.methods.dp_synrag.vocab.vocabulary import Vocabulary

    words = ["consultation", "examination", "tusfosemia", "wheeze", "patient"]
    vocab = Vocabulary(tuple(words), {w: i for i, w in enumerate(words)})
    noisy = np.array([150.0, 90.0, 40.0, 35.0, 120.0])
    form = form_words(shipped_example("clinical_note"))
    assert {"consultation", "examination", "patient"} <= form and not {"tusfosemia", "wheeze"} & form
    # least specific first: the clusters are visited from the end
    assert topic_words(noisy, vocab, 10, 1.0, "specific", form, 200.0) == ["wheeze", "tusfosemia"]
    assert "consultation" in topic_words(noisy, vocab, 10, 1.0, "specific")  # the rules need the form and n'
    assert topic_words(noisy, vocab, 10, 1.0, "specific", frozenset(), 200.0)[0] == "examination"  # 150 > 100
