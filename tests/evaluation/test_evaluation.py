"""Evaluation metrics on known inputs, and `privet evaluate --scale tiny` end to end."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from core.cli import main as privet
from core.common.errors import PrivetError
from core.evaluation.config import make_config
from core.evaluation.data import Row, plant_canaries, read_rows, split_members
from core.evaluation.config import DATASET_CONFIGS
from core.evaluation.dp_rag import per_query_clip
from core.evaluation.leakage import NameMatcher, attack_success, count_leakage
from core.evaluation.membership import bootstrap_auc_ci, roc_auc
from core.evaluation.public_only import PUBLIC_ONLY_LABEL, public_only_documents, public_only_prompt
from core.evaluation.quality import distinct_n, frechet_distance, mmd_rbf, self_bleu, sentence_bleu, tokenize
from core.evaluation.retrieval import VectorIndex
from core.evaluation.runs import GreedyCache, plan_runs, run_spec
from core.evaluation.utility import contains_any, hit_rate, retrieval_hits
from core.models.tiny import HashingEmbedder


# -- membership ---------------------------------------------------------------------------


def test_auc_of_perfect_inverted_and_random_scores():
    labels = [1, 1, 1, 0, 0, 0]
    assert roc_auc(labels, [0.9, 0.8, 0.7, 0.3, 0.2, 0.1]) == 1.0
    assert roc_auc(labels, [0.1, 0.2, 0.3, 0.7, 0.8, 0.9]) == 0.0
    rng = np.random.default_rng(1)
    y = np.array([1] * 500 + [0] * 500)
    auc = roc_auc(y, rng.random(1000))
    assert abs(auc - 0.5) < 0.06
    lo, hi = bootstrap_auc_ci(y, rng.random(1000), n_boot=200, rng=np.random.default_rng(2))
    assert 0.4 < lo < 0.5 < hi < 0.6


def test_bootstrap_ci_of_a_perfect_attack_is_degenerate_at_one():
    lo, hi = bootstrap_auc_ci([1, 1, 0, 0] * 5, [1.0, 0.9, 0.1, 0.0] * 5, n_boot=100, rng=np.random.default_rng(0))
    assert lo == hi == 1.0


# -- quality ------------------------------------------------------------------------------


def test_distinct_n_on_a_known_text():
    assert distinct_n(["a b a b"], 1) == 0.5
    assert distinct_n(["a b a b"], 2) == pytest.approx(2 / 3)
    assert distinct_n([], 1) == 0.0


def test_self_bleu_identical_vs_different_texts():
    same = ["the patient reports a mild fever and a dry cough since monday"] * 4
    different = [
        "the patient reports a mild fever and a dry cough since monday",
        "blue whales migrate across cold oceans every single winter season",
        "quarterly revenue grew because new stores opened in three cities",
        "a violin concerto premiered yesterday to an enthusiastic audience",
    ]
    assert self_bleu(same) == pytest.approx(1.0)
    assert self_bleu(different) < 0.2
    assert sentence_bleu(tokenize(same[0]), [tokenize(same[0])]) == pytest.approx(1.0)
    assert sentence_bleu([], [tokenize(same[0])]) == 0.0


def test_embedding_distances_are_zero_for_the_same_sample_and_grow_with_a_shift():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(200, 4))
    b = rng.normal(size=(200, 4))
    assert frechet_distance(a, a) == pytest.approx(0.0, abs=1e-6)
    assert mmd_rbf(a, a) == pytest.approx(0.0, abs=1e-9)
    assert frechet_distance(a, b + 3.0) > frechet_distance(a, b) + 10
    assert mmd_rbf(a, b + 3.0) > mmd_rbf(a, b) + 0.1


# -- utility ------------------------------------------------------------------------------


def test_retrieval_hit_counting():
    retrieved = [["Diagnosed with TUSFOSEMIA today."], ["nothing relevant"], []]
    golds = [("tusfosemia",), ("pelnamitis",), ("pelnamitis",)]
    assert retrieval_hits(retrieved, golds) == [True, False, False]
    assert hit_rate([True, False, False, True]) == 0.5
    assert contains_any("It is Pelnamitis.", ["x", "pelnamitis"])
    assert not contains_any("", ["pelnamitis"])


def test_vector_index_retrieves_the_document_sharing_the_words():
    embedder = HashingEmbedder()
    docs = ["fever cough tusfosemia", "rash itching pelnamitis", "sore throat drimkitopathy"]
    index = VectorIndex.build(docs, embedder)
    top = index.retrieve(embedder.embed(["itching rash"]), 1)
    assert top == [["rash itching pelnamitis"]]
    assert VectorIndex.build([], embedder).retrieve(embedder.embed(["x"]), 3) == [[]]


# -- leakage ------------------------------------------------------------------------------


def test_leakage_counts_a_planted_name_and_ignores_partial_matches():
    members = NameMatcher(["Ann Lee", "Victor Smith"])
    canaries = NameMatcher(["Zorvath Quellington"])
    control = NameMatcher(["Mary Price"])
    texts = [
        "Patient ANN LEE reported a rash.",
        "Joann Leeming came in; Victor Smithson too.",  # no whole-name match
        "Zorvath Quellington and Victor Smith, seen twice by Victor Smith.",
        "Mary Price was mentioned.",
    ]
    leak = count_leakage(texts, members, canaries, control)
    assert leak.texts_with_member_name == 2
    assert leak.distinct_member_names == 2
    assert leak.canaries_reproduced == 1
    assert leak.texts_with_non_member_name == 1
    assert leak.member_rate == 0.5 and leak.control_rate == 0.25


def test_attack_success_needs_the_right_member():
    members = NameMatcher(["Ann Lee", "Victor Smith"])
    golds = [("Ann Lee", "Not A Member"), ("Victor Smith",)]
    assert attack_success(["It was Ann Lee.", "It was Ann Lee."], golds, members) == 0.5
    assert attack_success(["Not A Member", "nobody"], golds, members) == 0.0


# -- data, budget split, caching ------------------------------------------------------------


def test_member_split_is_disjoint_and_canaries_replace_the_identity():
    rows = read_rows(DATASET_CONFIGS["clinic"])
    members, non_members = split_members(rows, max_members=100)
    assert len(members) == 100 and len(non_members) == len(rows) // 3
    assert not {r.id for r in members} & {r.id for r in non_members}
    planted, names = plant_canaries(members, 2)
    assert len(names) == 2
    for name in names:
        row = next(r for r in planted if r.person == name)
        assert name in row.text
        original = next(r for r in members if r.id == row.id)
        assert original.person not in row.text


def test_dp_rag_clip_shrinks_with_more_queries():
    one = per_query_clip(2.0, 1, 10)
    assert one == pytest.approx(math.sqrt(2.0 / 10 / 2))
    assert per_query_clip(2.0, 100, 10) == pytest.approx(one / 10)
    with pytest.raises(ValueError):
        per_query_clip(2.0, 0, 10)


def test_greedy_cache_serves_repeats_and_never_caches_sampling():
    class Fake:
        name = "fake"
        calls = 0

        def generate(self, messages, max_new_tokens, temperature=0.7):
            Fake.calls += len(messages)
            return [m.upper() for m in messages]

    llm = GreedyCache(Fake())
    assert llm.generate(["a", "b", "a"], 4, 0.0) == ["A", "B", "A"]
    assert llm.generate(["b"], 4, 0.0) == ["B"]
    assert Fake.calls == 2
    llm.generate(["a"], 4, 0.7)
    assert Fake.calls == 3
    assert llm.name == "fake"


def test_baselines_are_swept_only_when_the_scale_says_so():
    demo = make_config("clinic", "out", "demo", (1.0, 4.0, 10.0), ("dp_synrag", "dp_synth", "dp_synrag_l1"))
    assert plan_runs(demo) == [("dp_synrag", 1.0), ("dp_synrag", 4.0), ("dp_synrag", 10.0),
                               ("dp_synth", 10.0), ("dp_synrag_l1", 10.0)]
    seed = make_config("clinic", "out", "seed", (1.0, 10.0), ("dp_synth",))
    assert plan_runs(seed) == [("dp_synth", 1.0), ("dp_synth", 10.0)]
    spec = run_spec(demo, Path("members.csv"), "dp_synrag_l1", 4.0)
    assert spec.method == "dp_synrag" and spec.dp_synrag.L == 1 and spec.privacy.epsilon == 4.0
    assert spec.output.folder == ""  # evaluation runs never export
    # the spec `privet run` runs: the public rules pick the form (the task says "patients": the clinical note), whose
    # words are then no topic ("complains" was one in the clinic evaluation at ε = 4, written as a plain document)
    clinic = run_spec(demo, Path("members.csv"), "dp_synrag", 4.0)
    assert clinic.document.document_form == "clinical_note" and clinic.dp_synrag.form_by_rule
    assert clinic.dp_synrag.clusters_per_unit == clinic.dp_synrag.L  # L chosen, as `privet run` chooses it


def test_config_rejects_unknown_choices():
    with pytest.raises(PrivetError):
        make_config("nope", "out")
    with pytest.raises(PrivetError):
        make_config("clinic", "out", methods=("magic",))
    with pytest.raises(PrivetError):
        make_config("clinic", "out", epsilons=(0.0,))


# -- end to end ---------------------------------------------------------------------------


def test_privet_evaluate_tiny_writes_json_and_plots_without_private_text(tmp_path, privet_home):
    out = tmp_path / "results"
    code = privet(["evaluate", "--dataset", "clinic", "--scale", "tiny", "--methods", "dp_synrag",
                   "--epsilons", "1,10", "--out", str(out), "--quiet"])
    assert code == 0
    result = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert {r["label"] for r in result["runs"]} == {"dp_synrag ε=1", "dp_synrag ε=10", PUBLIC_ONLY_LABEL}
    assert result["runs"][0]["rho_total"] < result["runs"][1]["rho_total"]
    # the public-only baseline (ε = 0, no private data) is a row of every results table
    public = next(r for r in result["runs"] if r["label"] == PUBLIC_ONLY_LABEL)
    assert public["rho_total"] == 0.0 and public["epsilon"] == 0.0 and public["n_synthetic"] > 0
    for table in ("utility", "leakage", "quality", "membership", "coverage"):
        assert PUBLIC_ONLY_LABEL in {r["corpus"] for r in result[table]}, table
    assert result["dp_rag"]["public_only_accuracy"] is not None
    kinds = [r["kind"] for r in result["coverage"]]
    assert kinds.count("real_sample") == 1 and kinds.count("public_only") == 1
    assert all(("samples" in r) == (r["kind"] != "real_sample") for r in result["coverage"])  # never real text
    assert all(0.0 <= r["junk_rate"] <= 1.0 for r in result["coverage"] if r["n_documents"])
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "Coverage of held-out non-members" in summary and summary.count(PUBLIC_ONLY_LABEL) >= 5
    # role accuracy (core/evaluation/roles.py): every corpus, and the members' own notes, which place every word
    roles = {r["corpus"]: r for r in result["roles"]}
    assert PUBLIC_ONLY_LABEL in roles and "### Role accuracy" in summary
    assert roles["non-private (members)"]["role_accuracy"] == 1.0 and roles["non-private (members)"]["pairs"] > 0
    # grounding (core/evaluation/grounding.py): every synthetic corpus's shares, read against its own release
    assert all(0.0 <= r["unsupported_share"] <= 1.0 and 0.0 <= r["mix_share"] <= 1.0
               for r in result["roles"] if r["corpus"] != "non-private (members)" and r["pairs"] is not None)
    # … where grounding reads a run's release: the pipeline's layout (checkpoints/<method>); in a flat folder every
    # released topic went unread and the demo clinic's evaluation counted 98 % of its documents unsupported
    from core.evaluation.grounding import read_release

    for label in ("dp_synrag_eps1", "dp_synrag_eps10"):
        (run_dir,) = Path(privet_home).glob(f"evaluations/*/runs/{label}")
        assert (run_dir / "checkpoints" / "dp_synrag" / "corpus-shape.json").is_file()
        shape = json.loads((run_dir / "checkpoints" / "dp_synrag" / "corpus-shape.json").read_text(encoding="utf-8"))
        assert len(read_release(run_dir).topics) == len(shape["shape"]["topics"])
    # fidelity (core/evaluation/fidelity.py): the classifier test and the own-form share of every corpus and ε,
    # against the demo clinic's own templates; figures only (no side-by-side real text)
    fidelity = {(r["corpus"], r["epsilon"]): r for r in result["fidelity"]}
    assert {(r["label"], r["epsilon"]) for r in result["runs"]} == set(fidelity)
    for row in fidelity.values():
        assert "pairs" not in row and row["own_form_method"] == "templates"
        assert {"c2st_auc", "c2st_auc_real", "own_form_share", "own_form_share_real", "mmd2", "mmd2_real"} <= set(row)
        assert row["own_form_share_real"] == 1.0  # the held-out real notes are all in the clinic's own templates
    assert "### Fidelity" in summary
    corpora = {u["corpus"] for u in result["utility"]}
    assert {"non-private (members)", "no retrieval"} <= corpora
    private = next(u for u in result["utility"] if u["method"] == "private")
    assert private["retrieval_hit_rate"] >= 0.5  # the member notes name the diseases
    leak = next(r for r in result["leakage"] if r["method"] == "private")
    assert leak["in_corpus"]["canaries_reproduced"] == result["split"]["canaries"] > 0
    mia = next(r for r in result["membership"] if r["method"] == "private")
    sim = next(a for a in mia["attacks"] if a["attack"] == "nearest_similarity")
    assert sim["auc"] == 1.0  # the members themselves are "released": a perfect attack
    assert [p["queries"] for p in result["dp_rag"]["points"]] == [1, 10]
    for name in ("utility_vs_epsilon.png", "dp_rag_queries.png", "membership_auc.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Only figures reach the results folder: no member's note or name.
    written = (out / "results.json").read_text(encoding="utf-8")
    for row in read_rows(DATASET_CONFIGS["clinic"])[:30]:
        assert row.text not in written and row.person not in written
    assert not any(p.suffix in (".csv", ".jsonl") for p in out.rglob("*"))


# -- public-only baseline -------------------------------------------------------------------


class RecordingLLM:
    def __init__(self) -> None:
        self.prompts: list[str] = []

    def generate(self, messages, max_new_tokens, temperature=0.7):
        self.prompts += list(messages)
        return [f"Note {i}: a patient reports a mild fever." for i in range(len(messages))]


def test_the_public_only_writer_sees_only_the_task_and_the_public_example():
    task = "Answer patients' questions about which disease matches their symptoms."
    example = "Consultation note. [name], [age], reports [symptoms]. Impression: [condition]."
    llm = RecordingLLM()
    docs = public_only_documents(llm, task, 3, 20, example)
    assert len(docs) == 3 and llm.prompts == [public_only_prompt(task, example)] * 3
    assert task in llm.prompts[0] and example in llm.prompts[0]
    # nothing else: the prompt is the shipped template around exactly these two public strings
    from core.common.prompts import template

    assert llm.prompts[0] == template("public_only_example").format(task=task, example=example)
    assert public_only_prompt(task) == template("public_only").format(task=task)
    # it takes no member data at all: planted canaries of the evaluation can never reach it
    members = plant_canaries([Row("1", "Ann Lee", "Ann Lee has tusfosemia.")], 1)[0]
    assert not any(members[0].person in p or members[0].text in p for p in llm.prompts)
    assert public_only_documents(llm, task, 0, 20) == []
