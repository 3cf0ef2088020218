"""Labels by topic (docs/method.md §6.3, ``[data] label_mode = "topic_labels"``, DP-SynRAG's default): the spec's
option, the budget (class counts + topic label counts + DP-SynRAG = one ρ, cross-checked with dp-accounting),
the topic label counts' sensitivity and Gaussian noise, the documents' labels (post-processing), and a resume
that neither redraws nor charges the stage again."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from tests.helpers import statistical, tiny_spec
from scipy import stats
from tests.corpus.test_label_column import DEPARTMENTS, write_labelled

from core.common.checkpoints import Checkpoints
from core.common.errors import Cancelled
from core.ledger import Ledger
from core.methods.base import SyntheticDoc
from core.methods.class_conditional import ClassConditional, TopicLabelled, method_for
from core.methods.dp_synrag.release.clusters import soft_clusters
from core.methods.dp_synrag.release.topic_labels import ClusterLabels, check_memberships, cluster_label_counts
from core.methods.dp_synrag.shape.corpus_shape import CorpusShape
from core.methods.dp_synrag.shape.labels import label_documents, systematic_labels
from core.methods.dp_synrag.shape.released_topics import ReleasedTopic
from core.run.pipeline import plan, run_pipeline
from core.privacy.class_counts import (
    LABEL_SHARE,
    STAGE_CLASS_COUNTS,
    STAGE_TOPIC_LABELS,
    TOPIC_LABEL_SHARE,
    plan_topic_labels,
)
from core.privacy.conversion import approx_eps_to_rho
from core.common.progress import CallbackReporter
from core.corpus import Unit


def _spec(tmp_path, labels=DEPARTMENTS, mode="auto", n=60):
    spec = tiny_spec(tmp_path, write_labelled(tmp_path, n), release=None)
    spec.data.label_column = "department"
    spec.data.labels = list(labels or [])
    spec.data.label_mode = mode
    return spec


# --- the option ----------------------------------------------------------------------------------------------


def test_label_mode_defaults_to_topic_labels_for_dp_synrag_and_is_validated(tmp_path):
    spec = _spec(tmp_path)
    assert isinstance(method_for(spec), TopicLabelled)
    spec.data.label_mode = "per_class"
    method = method_for(spec)
    assert isinstance(method, ClassConditional) and not isinstance(method, TopicLabelled)
    assert spec.problems() == []
    spec.data.label_mode = "by_magic"
    assert any("label_mode" in p for p in spec.problems())
    spec.data.label_mode = "topic_labels"
    spec.method = "dp_synth"
    assert any("topic_labels" in p and "per_class" in p for p in spec.problems())
    spec.data.label_mode = "auto"  # the other methods keep labels per class
    assert spec.problems() == [] and not isinstance(method_for(spec), TopicLabelled)
    spec.method = "dp_synrag"
    spec.data.label_column, spec.data.labels, spec.data.label_mode = "", [], "per_class"
    assert any("no label_column" in p for p in spec.problems())


# --- the budget --------------------------------------------------------------------------------------------


def _independent_epsilon(events: list[tuple[str, float]], delta: float, delta_spent: float) -> float:
    """dp-accounting's ε of the stages composed sequentially; the topic label stage as its own Gaussian mechanism
    (noise multiplier σ/√L: dp-accounting derives its RDP from σ and the sensitivity, not from Privet's ρ)."""
    dp_accounting = pytest.importorskip("dp_accounting")
    acc = dp_accounting.rdp.RdpAccountant(orders=[1 + x / 20 for x in range(1, 4000)])
    for kind, value in events:
        acc.compose(dp_accounting.GaussianDpEvent(value) if kind == "gaussian" else dp_accounting.ZCDpEvent(value))
    return float(acc.get_epsilon(delta - delta_spent)) - math.log1p(-delta_spent)


@pytest.mark.parametrize("typed", [True, False])
@pytest.mark.parametrize(("epsilon", "delta"), [(10.0, 1e-6), (4.0, 1e-6), (1.0, 1e-5)])
def test_the_topic_label_counts_take_their_share_and_the_total_stays_one_rho(tmp_path, typed, epsilon, delta):
    spec = _spec(tmp_path, DEPARTMENTS if typed else None)
    spec.privacy.epsilon = epsilon
    method = method_for(spec)
    assert isinstance(method, TopicLabelled)
    summary = method.plan_summary(spec, delta, 500)
    split = method.split(spec, delta, 500)
    rho_all = approx_eps_to_rho(epsilon, delta, summary.delta_spent)
    stages = dict(summary.stages)
    assert stages[STAGE_TOPIC_LABELS] == pytest.approx(TOPIC_LABEL_SHARE * rho_all, rel=1e-9)
    assert stages[STAGE_CLASS_COUNTS] == pytest.approx(LABEL_SHARE * rho_all, rel=1e-9)
    assert math.fsum(stages.values()) == pytest.approx(summary.rho_total, rel=1e-12)
    assert summary.rho_total <= rho_all * (1 + 1e-9) and summary.rho_total == pytest.approx(rho_all, rel=1e-6)
    names = [s for s, _ in summary.stages]  # in the order the run charges them: after the co-keywords
    assert names.index(STAGE_TOPIC_LABELS) == names.index("cluster_keywords") + 1
    topic = method.topic_plan(split)
    L = split.inner_spec.dp_synrag.clusters_per_unit
    assert topic.L == L and topic.sigma == pytest.approx(math.sqrt(L / (2 * topic.rho)))
    assert summary.derived["sigma_topic_labels"] == pytest.approx(topic.sigma)
    record = method.record_stages(spec, delta)
    assert [r["stage"] for r in record] == names
    assert math.fsum(r["rho"] for r in record) == pytest.approx(summary.rho_total, rel=1e-9)
    # an independent library: every stage once, the topic label counts as a Gaussian of sensitivity √L
    events = [("gaussian", topic.sigma / math.sqrt(L)) if r["stage"] == STAGE_TOPIC_LABELS else ("zcdp", r["rho"])
              for r in record]
    theirs = _independent_epsilon(events, delta, summary.delta_spent)
    assert theirs <= epsilon * 1.01
    params = method.parameters(spec, summary)
    assert params["label_mode"] == "topic_labels" and params["topic_label_share"] == TOPIC_LABEL_SHARE


def test_every_parameter_and_stage_of_labels_by_topic_has_plain_words(tmp_path):
    from core.certificate.render import PARAMETER_MEANINGS
    from core.specs.stage_labels import stage_label

    spec = _spec(tmp_path)
    method = method_for(spec)
    params = method.parameters(spec, method.plan_summary(spec, 1e-6, 500))
    for key in ("label_mode", "topic_label_share", "sigma_topic_labels", "label_share", "sigma_labels"):
        assert PARAMETER_MEANINGS.get(key), key
    assert "label_mode" in params
    assert stage_label(STAGE_TOPIC_LABELS) != STAGE_TOPIC_LABELS.replace("_", " ")


# --- the sensitivity and the noise ---------------------------------------------------------------------------


def test_one_unit_moves_at_most_L_label_counts_by_one():
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(12)]
    labels = ("a", "b", "c")
    keywords = [list(rng.choice(words, 5, replace=False)) for _ in range(80)]
    units = [Unit(f"u{i}", "t", label=labels[i % 3]) for i in range(80)]
    L = 3
    full = cluster_label_counts(units, soft_clusters(keywords, words, L), labels)
    for gone in range(80):  # remove each unit in turn: the clusters are rebuilt without it
        rest = [k for i, k in enumerate(keywords) if i != gone]
        less = cluster_label_counts([u for i, u in enumerate(units) if i != gone], soft_clusters(rest, words, L), labels)
        diff = full - less
        assert set(np.unique(diff)) <= {0.0, 1.0} and diff.sum() <= L
        assert math.sqrt(float((diff**2).sum())) <= math.sqrt(L) + 1e-12
    check_memberships(soft_clusters(keywords, words, L), L)
    with pytest.raises(ValueError, match="more than the L"):
        check_memberships([[0], [0], [0]], 2)


class _Fresh:
    """A stage context with nothing released yet: it records charges, and that the draw comes after them."""

    def __init__(self, stage):
        self.charged: list = []
        self.saved: dict = {}
        self.label_stage = stage
        ctx = self

        class Store:
            has = staticmethod(lambda name: name in ctx.saved)
            load = staticmethod(lambda name: ctx.saved[name])

            @staticmethod
            def save(name, value):
                assert ctx.charged, "released before it was charged"
                ctx.saved[name] = value

        self.checkpoints = Store

    def charge(self, stage, rho, description, delta_part=0.0):
        self.charged.append((stage, rho, delta_part))

    def test_rng(self):
        return None


@statistical
def test_the_topic_label_counts_carry_the_planned_gaussian_noise_charged_first_and_never_redrawn():
    from core.methods.dp_synrag.release.topic_labels import release_cluster_labels
    from core.privacy.class_counts import ClassCounts, TopicLabelStage

    labels = tuple(f"label {i}" for i in range(20))
    units = [Unit(f"u{i}", "t", label=labels[i % 20]) for i in range(400)]
    clusters = [[(r * 4 + j) % 400 for j in range(30)] for r in range(100)]  # each unit in at most 8 of them
    topic = plan_topic_labels(0.01, 8)
    stage = TopicLabelStage(topic, ClassCounts(labels, tuple(20.0 for _ in labels)))
    ctx = _Fresh(stage)
    released = release_cluster_labels(units, clusters, ctx)  # type: ignore[arg-type]
    assert released is not None and ctx.charged == [(STAGE_TOPIC_LABELS, pytest.approx(0.01), 0.0)]
    residual = (released.noisy - cluster_label_counts(units, clusters, labels)).ravel()
    assert residual.size == 2000
    assert stats.kstest(residual / topic.sigma, "norm").pvalue > 1e-3
    assert stats.kstest(residual / (1.3 * topic.sigma), "norm").pvalue < 1e-3  # a wrong σ is caught
    again = release_cluster_labels(units, clusters, ctx)  # type: ignore[arg-type]
    assert again is not None and np.array_equal(again.noisy, released.noisy)  # the checkpoint, not a new draw
    assert len(ctx.charged) == 1  # and nothing more charged


# --- the documents' labels (post-processing) ----------------------------------------------------------------


def test_systematic_split_gives_each_label_the_floor_or_ceiling_of_its_share():
    probs = np.asarray([0.5, 0.3, 0.2])
    for u in np.linspace(0, 0.999, 37):
        got = np.bincount(systematic_labels(probs, 7, float(u)), minlength=3)
        assert got.sum() == 7 and all(math.floor(7 * p) <= g <= math.ceil(7 * p) for g, p in zip(got, probs))
    one = [systematic_labels(probs, 1, float(u))[0] for u in np.linspace(0, 0.999, 1000)]
    assert np.bincount(one, minlength=3) / 1000 == pytest.approx(probs, abs=0.01)  # one document: p in expectation


def test_a_merged_topic_sums_its_clusters_counts_less_their_noise_and_clips_at_zero():
    sigma = 2.0
    noisy = np.asarray([[15.0, -3.0], [0.0, 6.0], [3.0, 1.0]])
    released = ClusterLabels(("a", "b"), noisy, (0.5, 0.5), sigma)
    shape = CorpusShape((ReleasedTopic("x", 1.0, clusters=(0, 1)), ReleasedTopic("y", 1.0, clusters=(2,))),
                        (200, 1), (), ())
    from core.methods.dp_synrag.shape.labels import NOISE_SIGMAS, label_probabilities, topic_weights

    less = NOISE_SIGMAS * sigma * math.sqrt(2)  # two clusters: the sum's noise is σ·√2
    assert topic_weights(shape, released) == pytest.approx(np.asarray([[15.0 - less, max(0.0, 3.0 - less)],
                                                                       [0.0, 0.0]]))
    probs = label_probabilities(topic_weights(shape, released), (0.75, 0.25))
    assert probs[1] == pytest.approx([0.75, 0.25])  # nothing above the noise: the class shares
    docs = [SyntheticDoc(f"d{i}", "t", 0) for i in range(200)] + [SyntheticDoc("e", "t", 1)]

    class Ctx:
        rng = staticmethod(lambda: np.random.default_rng(0))

    labelled = label_documents(docs, shape, released, Ctx())  # type: ignore[arg-type]
    assert all(d.label == "a" for d in labelled[:200])  # b's 3 of topic x are within its noise
    assert labelled[200].label in ("a", "b")
    assert label_documents(docs, shape, None, Ctx()) == docs  # no stage: unlabelled, unchanged


def test_labels_by_topic_keep_documents_per_label_in_proportion_to_the_released_counts():
    from core.methods.class_shares import keep_class_shares
    from core.privacy.class_counts import ClassCounts

    docs = [SyntheticDoc(f"d{i}", "t", i // 10, "a" if i < 60 else "b" if i < 90 else "c") for i in range(100)]
    released = ClassCounts(("a", "b", "c"), (30.0, 50.0, 20.0))
    kept = keep_class_shares(docs, released, np.random.default_rng(0))
    per = {label: sum(d.label == label for d in kept) for label in "abc"}
    assert per == {"a": 30, "b": 30, "c": 10}  # a cut to its share of 100; b and c keep all they wrote
    assert [d.id for d in kept] == sorted((d.id for d in kept), key=lambda i: int(i[1:]))  # writing order
    assert len({d.group for d in kept if d.label == "a"}) == 6  # a's cut spares documents of all its topics
    assert keep_class_shares(docs, ClassCounts((), ()), np.random.default_rng(0)) == docs


def test_labels_first_follow_the_class_counts_and_put_each_label_where_its_units_are():
    from core.methods.dp_synrag.shape.corpus_shape import labelled_shape
    from core.methods.dp_synrag.shape.labels import label_allocation, topic_label_estimates

    sigma = 1.0
    # topic x: 40 units, all of label a; topic y: 40 units, labels lost in the noise; topic z: 20 units of b
    noisy = np.asarray([[40.0, 0.5, -0.3], [1.5, 1.0, 0.5], [0.2, 20.0, 0.1]])
    topics = (ReleasedTopic("x", 40.0, ("p", "q"), (20.0, 40.0), (0,)), ReleasedTopic("y", 40.0, clusters=(1,)),
              ReleasedTopic("z", 20.0, clusters=(2,)))
    released = ClusterLabels(("a", "b", "c"), noisy, (0.5, 0.3, 0.2), sigma)
    est = topic_label_estimates(topics, released)
    assert est[0] == pytest.approx([38.0 + 2.0 * 0.5, 2.0 * 0.3, 2.0 * 0.2])  # 40 less 2σ, the rest by class shares
    assert est[1] == pytest.approx([20.0, 12.0, 8.0])  # nothing clears the noise: h' by the class shares
    per = label_allocation(topics, released, 60)
    assert per.sum(axis=0).tolist() == [30, 18, 12]  # the labels follow the released class counts exactly
    assert per[0, 0] > per[1, 0] and per[2, 1] > per[0, 1]  # a mostly from x, b mostly from z
    assert per[1, 2] >= 10  # c, nowhere above the noise: where the counts leave units unexplained (y)

    class Ctx:
        rng = staticmethod(lambda: np.random.default_rng(0))

    shape = labelled_shape(topics, 60, released, Ctx())  # type: ignore[arg-type]
    assert len(shape.documents) == 60 and list(shape.allocation) == per.sum(axis=1).tolist()
    for g, j in ((0, 0), (2, 1)):
        assert sum(1 for d, h in zip(shape.documents, shape.groups) if h == g and d.label == "abc"[j]) == per[g, j]
    assert all(d.keyword == topics[h].word for d, h in zip(shape.documents, shape.groups))
    assert CorpusShape.from_dict(json.loads(json.dumps(shape.to_dict()))) == shape  # the checkpoint keeps the labels
    docs = [SyntheticDoc(f"syn-{i:04d}", "t", g, shape.documents[i].label) for i, g in enumerate(shape.groups)]
    assert label_documents(docs, shape, released, Ctx()) == docs  # labelled before writing: kept as they are


def test_a_document_written_for_a_label_says_the_label_in_its_prompt_and_is_reused_only_for_it():
    from core.methods.dp_synrag.shape.released_topics import Topic
    from core.methods.dp_synrag.write.realisation import Realisation
    from core.methods.dp_synrag.write.writer_prompt import labelled_task, realisation_prompt
    from core.methods.dp_synrag.write.written_documents import load_written, save_written

    task = "Write a short news article."
    assert labelled_task(task, "") == task
    with_label = realisation_prompt(Topic("brexit", ("vote",), "bbc.co.uk"), task, "")
    assert "The document belongs to this category: bbc.co.uk." in with_label
    assert "category" not in realisation_prompt(Topic("brexit", ("vote",)), task, "")

    saved: dict = {}

    class Store:
        has = staticmethod(lambda name: name in saved)
        load = staticmethod(lambda name: saved[name])
        save = staticmethod(lambda name, value: saved.__setitem__(name, value))

    doc = Realisation(text="A vote.", attempts=1, fallback=False)
    save_written(Store, 0, Topic("brexit", ("vote",), "bbc.co.uk"), "k", doc)  # type: ignore[arg-type]
    assert load_written(Store, [Topic("brexit", ("vote",), "bbc.co.uk")], "k") == {0: doc}  # type: ignore[arg-type]
    assert load_written(Store, [Topic("brexit", ("vote",), "rte.ie")], "k") == {}  # type: ignore[arg-type]
    assert load_written(Store, [Topic("brexit", ("vote",))], "k") == {}  # type: ignore[arg-type]


# --- end to end: charges = plan = record; a resume ---------------------------------------------------------


def test_a_run_labels_every_document_by_topic_and_charges_equal_the_plan(tmp_path, privet_home):
    spec = _spec(tmp_path)
    planned = plan(spec)
    result = run_pipeline(spec)
    with Ledger() as ledger:
        charges = [e for e in ledger.entries() if e["kind"] == "charge" and e["run_id"] == result.run_id]
    stages = [e["stage"] for e in charges]
    assert stages == [s for s, _ in planned.stages] and stages.count(STAGE_TOPIC_LABELS) == 1
    assert stages[0] == STAGE_CLASS_COUNTS  # first: it makes the label set public
    charged = math.fsum(e["rho"] for e in charges)
    assert charged == pytest.approx(planned.rho_total, rel=1e-9) == result.record.rho_total
    unlabelled = tiny_spec(tmp_path, write_labelled(tmp_path, 60), release=None)
    assert charged == pytest.approx(plan(unlabelled).rho_total, rel=1e-6)  # one budget, as without labels
    lines = [json.loads(line) for line in open(result.run_dir / "synthetic.jsonl", encoding="utf-8")]
    assert lines and all(line["label"] in DEPARTMENTS for line in lines)
    assert any("Labels (by topic)" in note for note in result.record.scope_notes)
    saved = json.loads((result.run_dir / "checkpoints" / "dp_synrag" / "topic_labels.json").read_text())
    assert np.asarray(saved).shape[1] == len(DEPARTMENTS)


def test_a_resumed_run_reuses_the_topic_label_counts_and_charges_nothing_more_for_them(tmp_path, privet_home):
    spec = _spec(tmp_path)
    state = {"cancel": False, "seen": False}

    def on_event(event):
        if event.stage == STAGE_TOPIC_LABELS:
            state["seen"] = True
        elif state["seen"] and event.stage in ("embedding", "retrieval_mean", "retrieval", "private_prediction"):
            state["cancel"] = True

    run_dir = tmp_path / "run"
    with pytest.raises(Cancelled):
        run_pipeline(spec, CallbackReporter(on_event, lambda: state["cancel"]), run_dir=run_dir)
    folder = run_dir / "checkpoints" / "dp_synrag"
    saved = (folder / "topic_labels.json").read_text()
    method = method_for(spec)
    assert {STAGE_CLASS_COUNTS, STAGE_TOPIC_LABELS} <= method.finished_stages(Checkpoints(folder))  # type: ignore[attr-defined]
    with Ledger() as ledger:
        before = [e["stage"] for e in ledger.entries() if e["kind"] == "charge"]
    assert before.count(STAGE_TOPIC_LABELS) == 1
    result = run_pipeline(spec, run_dir=run_dir, resume=True, consent=lambda quote: True)
    with Ledger() as ledger:
        charges = [e for e in ledger.entries() if e["kind"] == "charge" and e["run_id"] == result.run_id]
    after = [e["stage"] for e in charges][len(before):]
    assert STAGE_TOPIC_LABELS not in after and STAGE_CLASS_COUNTS not in after  # reused, never redrawn
    assert (folder / "topic_labels.json").read_text() == saved
    assert math.fsum(e["rho"] for e in charges) == pytest.approx(result.record.rho_total, rel=1e-9)
    assert result.n_synthetic > 0
