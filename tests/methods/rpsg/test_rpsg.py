"""RPSG (core/methods/rpsg/algorithm.py) on fake models: stages, accounting order, filters, stats, cancel."""

from __future__ import annotations

import math
import re
from dataclasses import replace

import numpy as np
import pytest
import torch

from core.corpus import Unit
from core.common.errors import Cancelled, PrivetError
from core.methods.rpsg import algorithm as rpsg
from core.methods.rpsg.algorithm import (
    mean_token_nll,
    nll_keep_mask,
    run_rpsg,
    select_candidates,
    utilities,
)
from core.models.tiny import HashingEmbedder
from core.methods.rpsg.plan import RPSG_SCOPE, plan_rpsg
from core.privacy.randomness import test_mode_rng
from core.common.progress import CallbackReporter
from core.specs.runspec import RPSGSpec, RunSpec

PLANTED = "zebracopy"  # seeds with this word get a near-verbatim "abstraction" from the fake LLM


class FakeLLM:
    """Canned completions keyed on the shipped prompts; records every message it was sent."""

    name, device, vocab_size, eos_token_ids = "fake", "cpu", 8, frozenset({0})

    def __init__(self, empty_for: str = "", name_in_output: str = "") -> None:
        self.sent: list[str] = []
        self.empty_for = empty_for
        self.name_in_output = name_in_output
        self.calls = 0

    def generate(self, messages, max_new_tokens, temperature=0.7):
        self.sent.extend(messages)
        self.calls += 1
        return [self._reply(m, k) for k, m in enumerate(messages)]

    def _reply(self, message: str, k: int) -> str:
        if message.startswith("Write a short, general summary"):
            seed = message.split("Text: ", 1)[1]
            if PLANTED in seed:
                return seed  # the "abstraction" copies the seed
            marker = " silentcase" if "tremors" in seed else ""
            return f"A person describes a health worry number {k}{marker} and feels uneasy about it."
        abstraction = re.search(r"(?:Description: |text:\n\n)(.*?)\n", message, re.S).group(1)
        if PLANTED in abstraction:
            return abstraction  # the final text copies it too: a near-copy of the seed
        if self.empty_for and self.empty_for in abstraction:
            return "   "
        extra = f" {self.name_in_output} helped." if self.name_in_output else ""
        return f"Yesterday a gardener planted tulips by the river and sang loudly.{extra}"


def _units(texts):
    return [Unit(f"u{i}", t) for i, t in enumerate(texts)]


SEEDS = [
    "Jennifer Smith, 44, reports joint pain and night sweats. Email jennifer.smith@example.com.",
    f"Robert Jones called 555-123-4567 about {PLANTED} persistent cough and chronic fatigue symptoms.",
    "Patient Maria Garcia (age 61) reports dizziness and blurred vision since 2024-03-05.",
    "Follow-up note for David Brown, aged 70. Complains of tremors. MRN: 00123456.",
]
FAST = RPSGSpec(m=3, similarity_threshold=0.9, nll_percentile=0.0, temperature=0.8, max_new_tokens=32, n_variants=2)


def _ordered_scorer(texts):
    """A stand-in surrogate: NLL = position, so the percentile filter is predictable."""
    return np.arange(len(texts), dtype=np.float64)


def _into(charged):
    """A ledger's charge(stage, rho, words, delta_part) that keeps each charge."""
    return lambda stage, rho, words, delta_part=0.0: charged.append((stage, rho, words, delta_part))


def _run(llm=None, params=FAST, seeds=SEEDS, **kwargs):
    llm = llm or FakeLLM()
    charged = []
    kwargs.setdefault("rng", test_mode_rng(0))
    kwargs.setdefault("scorer", _ordered_scorer)
    result = run_rpsg(_units(seeds), llm, HashingEmbedder(), params, 5.0, 1e-5, _into(charged), **kwargs)
    return result, charged, llm


# -- masking reaches nothing downstream -------------------------------------------------------


def test_llm_never_sees_unmasked_pii():
    _, _, llm = _run()
    sent = "\n".join(llm.sent)
    for secret in ("Jennifer", "Smith", "jennifer.smith@example.com", "555-123-4567", "Garcia", "2024-03-05",
                   "00123456", "David Brown"):
        assert secret not in sent


def test_stats_count_masked_pii_by_kind():
    result, _, _ = _run()
    s = result.stats
    assert s["seed_pii_name"] == 4 and s["seed_pii_email"] == 1 and s["seed_pii_phone"] == 1
    assert s["seed_pii_date"] == 1 and s["seed_pii_id"] == 1


# -- selection and its accounting ---------------------------------------------------------------


class RecordingRng:
    """Wraps a test-mode generator and logs each noise draw into a shared journal."""

    def __init__(self, journal):
        self._rng, self._journal = test_mode_rng(1), journal

    def normal(self, *args, **kwargs):
        self._journal.append("noise")
        return self._rng.normal(*args, **kwargs)


def test_budget_is_charged_once_before_any_noise():
    journal = []
    llm = FakeLLM()
    run_rpsg(_units(SEEDS), llm, HashingEmbedder(), FAST, 5.0, 1e-5,
             lambda *charge, **_: journal.append(("charge", charge)), rng=RecordingRng(journal), scorer=_ordered_scorer)
    assert [j if isinstance(j, str) else j[0] for j in journal] == ["charge", "noise"]
    stage, rho, _words = journal[0][1]
    plan = plan_rpsg(5.0, 1e-5, FAST.m)
    (release,) = plan.releases()  # what was charged: the plan's selection Release
    assert stage == "rpsg_selection" and release.mechanism == "gaussian"
    assert release.count == 1 and release.parallel == 1  # disjoint seeds: charged once in total
    assert math.isclose(rho, FAST.m / (2 * plan.sigma**2)) and rho == release.rho
    assert math.isclose(release.sensitivity, math.sqrt(FAST.m))


def test_the_charge_is_reported_by_the_ledgers_charge_not_again_by_rpsg():
    events = []
    _, charged, _ = _run(reporter=CallbackReporter(events.append))
    assert not [e for e in events if e.kind == "charged"]  # the pipeline's charge reports it: once, not twice
    assert len(charged) == 1 and charged[0][0] == "rpsg_selection" and charged[0][1] > 0


def _selection_inputs(n=60, m=4):
    """Candidate 0 repeats the seed (utility 1); the others are unrelated (utility ≈ 0.5)."""
    seeds = [f"seed text number {i} about topic{i} and word{i}" for i in range(n)]
    candidates = [[s] + [f"unrelated filler {j} alpha{i}{j}" for j in range(1, m)] for i, s in enumerate(seeds)]
    emb = HashingEmbedder(dim=256)
    return emb.embed(seeds).astype(np.float64), candidates, emb


def test_selection_is_the_argmax_when_noise_is_tiny():
    seed_emb, candidates, emb = _selection_inputs()
    plan = plan_rpsg(1e6, 1e-5, 4)
    chosen = select_candidates(seed_emb, candidates, emb, plan, _into([]), CallbackReporter(), test_mode_rng(2))
    assert chosen == [0] * len(candidates)


def test_selection_is_random_when_noise_is_large():
    seed_emb, candidates, emb = _selection_inputs()
    plan = plan_rpsg(0.01, 1e-5, 4)
    chosen = select_candidates(seed_emb, candidates, emb, plan, _into([]), CallbackReporter(), test_mode_rng(3))
    counts = np.bincount(chosen, minlength=4)
    assert counts[0] < 0.6 * len(candidates) and (counts[1:] > 0).all()


def test_private_path_uses_the_exact_sampler_and_still_finds_the_argmax():
    seed_emb, candidates, emb = _selection_inputs(n=10)
    plan = plan_rpsg(1e6, 1e-5, 4)
    assert select_candidates(seed_emb, candidates, emb, plan, _into([]), CallbackReporter(), None) == [0] * 10


def test_utilities_are_normalised_cosines():
    seed = np.array([[1.0, 0.0]])
    cands = np.array([[[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]]])
    assert np.allclose(utilities(seed, cands), [[1.0, 0.0, 0.5]])


# -- refinement ---------------------------------------------------------------------------------


def test_similarity_filter_removes_the_planted_near_copy():
    result, _, _ = _run()
    assert result.stats["removed_similarity"] == 1
    assert not any(PLANTED in t for t in result.texts)
    assert len(result.texts) == 3


def test_a_seed_copied_in_one_sentence_is_caught_though_a_comment_dilutes_the_whole():
    from core.methods.rpsg.algorithm import max_piece_similarity, max_similarity, pieces

    embedder = HashingEmbedder()
    seed = "Avoid workout boredom with these 5 new classes that are backed by celebrities."
    comment = ("To create this new sentence, I have added the square brackets around the words and changed the "
               "order of the clauses so that the meaning stays while the wording is new and fresh for readers.")
    output = f"A: {seed}\n{comment}"
    assert pieces(output) == [output, f"A: {seed}", "To create this new sentence, I have added the square brackets "
                              "around the words and changed the order of the clauses so that the meaning stays while "
                              "the wording is new and fresh for readers."]
    seeds = np.asarray(embedder.embed([seed]), dtype=np.float64)
    whole = max_similarity(np.asarray(embedder.embed([output]), dtype=np.float64), seeds)[0]
    (best,) = max_piece_similarity([output], seeds, embedder)
    assert whole < FAST.similarity_threshold < best


def test_nll_percentile_drops_the_lowest_scores():
    params = replace(FAST, nll_percentile=50.0)
    result, _, _ = _run(params=params)
    # 3 outputs pass the similarity filter; scores 0, 1, 2; the 50th percentile is 1.
    assert result.stats["removed_nll"] == 1 and result.stats["kept"] == 2


def test_nll_keep_mask():
    nll = np.array([3.0, 1.0, 2.0, 4.0, 5.0, 0.5, 6.0, 7.0, 8.0, 9.0])
    assert nll_keep_mask(nll, 10.0).tolist() == [True, True, True, True, True, False, True, True, True, True]
    assert nll_keep_mask(nll, 0.0).all()


def test_final_scan_masks_names_in_outputs():
    result, _, _ = _run(llm=FakeLLM(name_in_output="Jennifer Smith"))
    assert result.texts and all("[NAME] helped." in t for t in result.texts)
    assert not any("Jennifer" in t for t in result.texts)
    assert result.stats["output_pii_name"] == len(result.texts)


def test_stats_add_up():
    llm = FakeLLM(empty_for="silentcase")  # the seed about tremors gets an empty output
    result, _, _ = _run(llm=llm, params=replace(FAST, nll_percentile=40.0), rng=test_mode_rng(5))
    s = result.stats
    assert s["removed_empty"] == 1 and s["removed_similarity"] == 1 and s["removed_nll"] == 1
    assert s["seeds"] == 4 and s["generated"] == 4 and s["candidates"] == 4 * FAST.m
    assert s["seeds"] == s["kept"] + s["removed_empty"] + s["removed_similarity"] + s["removed_nll"]
    assert s["kept"] == len(result.texts)


def test_progress_never_carries_seed_text():
    events = []
    _run(reporter=CallbackReporter(events.append))
    blob = " ".join(e.message for e in events)
    assert "Jennifer" not in blob and "joint pain" not in blob and PLANTED not in blob
    stages = {e.stage for e in events if e.kind == "stage_start"}
    assert stages == {"rpsg_mask", "rpsg_abstract", "rpsg_selection", "rpsg_generate", "rpsg_refine"}


# -- cancellation -------------------------------------------------------------------------------


def test_cancel_during_generation_stops_the_run_and_keeps_the_charge():
    state = {"cancel": False}

    def on_event(event):
        if event.stage == "rpsg_generate" and event.kind == "stage_start":
            state["cancel"] = True

    llm = FakeLLM()
    with pytest.raises(Cancelled):
        _run(llm=llm, reporter=CallbackReporter(on_event, lambda: state["cancel"]))
    assert not any(m.startswith("Here is a short description") for m in llm.sent)  # no generation happened


def test_cancel_before_selection_charges_nothing():
    state = {"cancel": False}

    def on_event(event):
        if event.stage == "rpsg_abstract" and event.kind == "stage_end":
            state["cancel"] = True

    charged = []
    with pytest.raises(Cancelled):
        run_rpsg(_units(SEEDS), FakeLLM(), HashingEmbedder(), FAST, 5.0, 1e-5, _into(charged),
                 CallbackReporter(on_event, lambda: state["cancel"]), test_mode_rng(0), scorer=_ordered_scorer)
    assert charged == []


def test_bad_settings_are_user_errors():
    with pytest.raises(PrivetError, match="nll_percentile"):
        _run(params=replace(FAST, nll_percentile=100.0))
    with pytest.raises(PrivetError, match=r"\[rpsg\] m .*out of range"):
        _run(params=replace(FAST, m=0))
    assert charged_nothing_for(replace(FAST, temperature=-0.1))


def charged_nothing_for(params: RPSGSpec) -> bool:
    """A refused setting stops run_rpsg before any charge."""
    charged: list = []
    with pytest.raises(PrivetError):
        run_rpsg(_units(SEEDS), FakeLLM(), HashingEmbedder(), params, 5.0, 1e-5, _into(charged), rng=test_mode_rng(0))
    return charged == []


# The four ranges on which check_params and RPSGSpec.RULES used to disagree, at and beyond their bounds.
@pytest.mark.parametrize(
    "name, value, valid",
    [
        ("similarity_threshold", -0.5, False),
        ("similarity_threshold", 0.0, False),
        ("similarity_threshold", 1.0, True),
        ("similarity_threshold", 1.01, False),
        ("nll_percentile", 0.0, True),
        ("nll_percentile", 99.9, True),
        ("nll_percentile", 100.0, False),
        ("temperature", 0.0, True),
        ("temperature", -0.1, False),
        ("n_variants", 0, True),
        ("n_variants", -1, False),
        ("m", 0, False),
        ("max_new_tokens", 0, False),
    ],
)
def test_the_run_and_the_spec_loader_agree_on_every_range(name, value, valid):
    loaded_ok = True
    try:
        RunSpec.from_dict({"method": "rpsg", "data": {"path": "notes.csv"}, "rpsg": {name: value}})
    except PrivetError:
        loaded_ok = False
    run_ok = True
    try:
        rpsg.check_params(replace(RPSGSpec(), **{name: value}))
    except PrivetError as exc:
        run_ok = False
        assert f"[rpsg] {name}" in str(exc)
    assert loaded_ok == run_ok == valid


def test_scope_statement_says_no_end_to_end_guarantee():
    assert "no differential-privacy guarantee" in RPSG_SCOPE
    assert "no end-to-end differential-privacy guarantee" in rpsg.__doc__


# -- surrogate NLL through the LogitsSession ----------------------------------------------------


class _CharSession:
    """Logits favour (last token + 1): a predictable 'model' for teacher-forcing checks."""

    def __init__(self, prompts, vocab):
        self.vocab = vocab
        self.last = torch.tensor([p[-1] for p in prompts])

    @property
    def n_rows(self):
        return len(self.last)

    def logits(self):
        out = torch.zeros((len(self.last), self.vocab))
        out[torch.arange(len(self.last)), (self.last + 1) % self.vocab] = 4.0
        return out

    def append(self, tokens):
        self.last = tokens.clone()

    def keep(self, rows):
        self.last = self.last[rows]


class CharLM:
    """Template [1, 2] + message chars + [3, 4]; chars map to ids 10 + (ord % 40)."""

    name, device, vocab_size, eos_token_ids = "char", "cpu", 50, frozenset({4})

    def chat_prompt_ids(self, messages, max_prompt_tokens=None):
        return [[1, 2] + [10 + ord(c) % 40 for c in m] + [3, 4] for m in messages]

    def start_logits(self, prompt_ids):
        return _CharSession(prompt_ids, self.vocab_size)


def _expected_nll(ids, prev=2, vocab=50):
    high, low = -math.log(math.exp(4.0) + vocab - 1) + 4.0, -math.log(math.exp(4.0) + vocab - 1)
    total = 0.0
    for t in ids:
        total -= high if t == (prev + 1) % vocab else low
        prev = t
    return total / len(ids)


def test_mean_token_nll_teacher_forces_the_message_tokens_only():
    texts = ["()*+,-", "zq!a", ""]  # the first is a run of consecutive ids: the predictable one
    nll = mean_token_nll(CharLM(), texts, batch_size=2)
    ids = CharLM().chat_prompt_ids(texts)
    assert math.isclose(nll[0], _expected_nll(ids[0][2:-2]), rel_tol=1e-9)
    assert math.isclose(nll[1], _expected_nll(ids[1][2:-2]), rel_tol=1e-9)
    assert nll[2] == 0.0
    assert nll[0] < nll[1]


def test_mean_token_nll_matches_one_full_forward_on_the_tiny_model():
    from core.models.registry import load_language_model
    from core.models.scoring import split_message as _message_split
    from core.specs.runspec import ModelChoice

    llm = load_language_model(ModelChoice(source="tiny-random", device="cpu"))
    texts = ["The patient reports joint pain.", "Ünïcode ✓ text\nwith a newline", "short"]
    empty = llm.chat_prompt_ids([""])[0]
    got = mean_token_nll(llm, texts, batch_size=2)
    for text, value in zip(texts, got):
        prefix, tokens = _message_split(empty, llm.chat_prompt_ids([text])[0])
        assert llm.decode(tokens) == text
        ids = torch.tensor([list(prefix) + tokens])
        with torch.inference_mode():
            logp = torch.log_softmax(llm.model(input_ids=ids).logits[0].double(), dim=-1)
        targets = torch.tensor(tokens)
        expected = -logp[len(prefix) - 1 : -1].gather(1, targets[:, None]).mean().item()
        assert math.isclose(value, expected, rel_tol=1e-4)


# -- integration on the packaged models ---------------------------------------------------------


@pytest.mark.slow
def test_integration_on_packaged_models():
    from core.demo.clinic import make_clinic_corpus
    from core.models.registry import load_embedder, load_language_model
    from core.specs.runspec import ModelChoice

    notes = make_clinic_corpus(n_patients=30, n_questions=5).notes[:5]
    llm = load_language_model(ModelChoice(source="default", device="cpu"))
    embedder = load_embedder(ModelChoice(source="default", device="cpu"))
    params = RPSGSpec(m=3, max_new_tokens=60, n_variants=1, nll_percentile=10.0)
    charged = []
    result = run_rpsg(_units([n["note"] for n in notes]), llm, embedder, params, 10.0, 1e-3, _into(charged))
    assert len(charged) == 1
    s = result.stats
    assert s["seeds"] == 5 and s["seed_pii_name"] >= 5
    assert s["seeds"] == s["kept"] + s["removed_empty"] + s["removed_similarity"] + s["removed_nll"]
    # No full name, and no name part rarer than an everyday word: the packaged model invents "Dr. Smith" or "Kevin"
    # with no private data at all (it did, once in a full suite), which is no leak of these patients' names.
    from core.methods.dp_synrag.vocab.vocabulary import english_zipf

    full = {n["patient"] for n in notes}
    rare = {part for n in notes for part in n["patient"].split() if english_zipf(part.lower()) < 4.0}
    assert rare and not any(re.search(rf"\b{re.escape(p)}\b", t) for t in result.texts for p in full | rare)
