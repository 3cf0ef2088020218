"""The public writer's decoding on the device (issue 33 items 2 and 6, docs/method.md §2.4b).

The batched, tensor-only shaping must choose exactly the tokens the per-row Python code it replaced chose,
in greedy mode (that code is kept below, only here, as the reference: ``reference_greedy``); sampling is
the writer's default, draws from the generator it is given (a seeded one reproduces itself), and keeps every
rule (bans, forced words, no end while a word is missing).
"""

from __future__ import annotations

import re
from typing import Sequence

import pytest
import torch

from core.methods.dp_synrag.shape import examples as ex
from core.methods.dp_synrag.shape import released_topics as rt
from core.methods.dp_synrag.write import public_decoding as pd
from core.methods.dp_synrag.write import writer_prompt as wp
from core.methods.dp_synrag.write.logit_shaping import GuardTable, guard_bans, ngram_bans
from tests.helpers import TINY
from core.privacy.randomness import test_mode_torch_generator

TASK = "Answer patients' questions about which disease matches their symptoms."


# -- the per-row code of round 4 (public_decoding.py before issue 33), the reference -------------------------


class ReferencePull:
    def __init__(self, pull: pd.WordPull) -> None:
        self.words, self.variants, self.queue = pull.words, pull.variants, []

    def missing(self, text: str) -> set[str]:
        return set(pd.missing_words(text, self.words))

    def first_tokens(self, missing: set[str]) -> set[int]:
        return {ids[0] for w, ids in self.variants if w in missing}

    def chosen(self, token: int, missing: set[str]) -> None:
        if self.queue:
            self.queue.pop(0)
            return
        for word, ids in self.variants:
            if word in missing and ids[0] == token and len(ids) > 1:
                self.queue = list(ids[1:])
                return


def reference_shape_row(logits, written, guard, eos, max_new_tokens, pull, step, decode) -> set[str]:
    if pull is not None and pull.queue:
        forced = pull.queue[0]
        logits[:] = float("-inf")
        logits[forced] = 0.0
        return set()
    seen = torch.tensor(sorted(set(written)), dtype=torch.long)
    if len(seen):
        values = logits[seen]
        logits[seen] = torch.where(values > 0, values / pd.REPETITION_PENALTY, values * pd.REPETITION_PENALTY)
    banned = pd._banned_by_ngrams(written, pd.NO_REPEAT_NGRAM) | pd._banned_by_guard(written, guard)
    missing: set[str] = set()
    if pull is not None:
        missing = pull.missing(decode(written))
        wanted = pull.first_tokens(missing)
        banned -= wanted
        if missing:
            logits[sorted(wanted)] += pd.PULL_START + (pd.PULL_END - pd.PULL_START) * step / max(1, max_new_tokens - 1)
            banned |= {t for t in eos if t < logits.shape[0]}
    if banned:
        logits[sorted(banned)] = float("-inf")
    return missing


def reference_greedy(llm, messages, answer_starts, max_new_tokens, max_prompt_tokens=None, guard=None, pulls=None):
    tokenizer = llm.chat.tokenizer
    starts = [list(tokenizer.encode(s, add_special_tokens=False)) if s else [] for s in answer_starts]
    prompts = [p + s for p, s in zip(llm.chat_prompt_ids(messages, max_prompt_tokens), starts)]
    session = llm.start_logits(prompts)
    written = [list(s) for s in starts]
    active = list(range(len(messages)))
    refs = [ReferencePull(p) for p in pulls] if pulls else None
    eos = frozenset(llm.eos_token_ids)
    for step in range(max_new_tokens):
        logits = session.logits().float().cpu().clone()
        missing = {row: reference_shape_row(logits[pos], written[row], guard or {}, eos, max_new_tokens,
                                            refs[row] if refs else None, step, llm.decode)
                   for pos, row in enumerate(active)}
        tokens = torch.argmax(logits, dim=-1)
        keep = []
        for pos, row in enumerate(active):
            token = int(tokens[pos])
            if token in eos:
                continue
            if refs:
                refs[row].chosen(token, missing[row])
            written[row].append(token)
            keep.append(pos)
        if not keep or step == max_new_tokens - 1:
            break
        if len(keep) < len(active):
            index = torch.tensor(keep, dtype=torch.long)
            session.keep(index)
            tokens = tokens[index]
            active = [active[pos] for pos in keep]
        session.append(tokens)
    return [llm.decode(ids) for ids in written]


# -- fixtures -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def llm():
    from core.models.registry import load_language_model

    return load_language_model(TINY)


TOPICS = [
    rt.Topic("tusfosemia", ("insomnia", "skin rash")),
    rt.Topic("fever"),
    rt.Topic("back stiffness", ("rash", "wheezing")),
    rt.Topic("migraine", ("nausea", "light sensitivity", "blurred vision")),
]


def writer_batch(llm, example: str, topics: Sequence[rt.Topic] = TOPICS):
    """The prompts, leads, guard and pulls ``realise`` gives one batch (first attempt)."""
    tokenizer = llm.chat.tokenizer
    demos = ex.demonstrations(example)
    demo = demos[0] if demos else None
    guard = pd.with_scaffold(tokenizer, pd.copy_guard(tokenizer, demo.document, example,
                                                      (*demo.topic.words, *demo.avoid)) if demo else {})
    prompts = [wp.realisation_prompt(t, TASK, example, (), demo) for t in topics]
    leads = [wp.realisation_lead(example, t) for t in topics]
    return prompts, leads, guard, [pd.WordPull.of(tokenizer, t.words) for t in topics]


FORMS = ["clinical_note", "news_article", "review"]


# -- greedy: exactly the reference's tokens --------------------------------------------------------------


@pytest.mark.parametrize("form", FORMS)
def test_greedy_chooses_exactly_the_tokens_of_the_per_row_code(llm, form):
    example = ex.shipped_example(form)
    prompts, leads, guard, pulls = writer_batch(llm, example)
    tokenizer = llm.chat.tokenizer
    assert guard and any(len(key) == 3 for key in guard) and () in guard  # runs, one-token words, labels
    free = reference_greedy(llm, prompts, leads, 24, 512, guard, pulls)
    # A guard that bites: it also bans every 4-token run the writer wrote under the first one, and one word.
    bites = pd.copy_guard(tokenizer, " ".join(t[len(lead):] for t, lead in zip(free, leads)), "",
                          (free[0][len(leads[0]):].split() or ["x"])[-1:])
    for key, tokens in guard.items():
        bites.setdefault(key, set()).update(tokens)
    expected = reference_greedy(llm, prompts, leads, 24, 512, bites, [pd.WordPull.of(tokenizer, t.words) for t in TOPICS])
    assert expected != free  # the guard acted
    shared = pd.public_decode(llm, prompts, leads, 24, max_prompt_tokens=512, guard=bites,
                              pulls=[pd.WordPull.of(tokenizer, t.words) for t in TOPICS], decoding=pd.GREEDY)
    unshared = pd.public_decode(llm, prompts, leads, 24, max_prompt_tokens=512, guard=bites,
                                pulls=[pd.WordPull.of(tokenizer, t.words) for t in TOPICS], decoding=pd.GREEDY,
                                shared_prefix=0)
    assert unshared == expected
    assert shared == expected  # the prompts' common prefix computed once changes no choice here
    assert any(pd.missing_words(text, t.words) != list(t.words) for text, t in zip(expected, TOPICS))  # pulls acted


def test_greedy_matches_without_pulls_or_guard_and_with_rows_that_end(llm):
    messages = ["Say something long.", "Name a colour.", "Write one word.", "Count to three."]
    expected = reference_greedy(llm, messages, ["", "Red", "", "One, two"], 30)
    assert pd.public_greedy(llm, messages, ["", "Red", "", "One, two"], 30, decoding=pd.GREEDY) == expected


def test_greedy_matches_when_the_lead_already_holds_a_released_word(llm):
    example = ex.shipped_example("news_article")  # its lead is the topic's word, written without a space
    topics = [rt.Topic("flood", ("river",)), rt.Topic("election results", ("turnout",))]
    prompts, leads, guard, pulls = writer_batch(llm, example, topics)
    assert leads[0] in ("Flood", "River")  # one of the released words, capitalised
    expected = reference_greedy(llm, prompts, leads, 20, 512, guard, pulls)
    got = pd.public_decode(llm, prompts, leads, 20, max_prompt_tokens=512, guard=guard,
                           pulls=[pd.WordPull.of(llm.chat.tokenizer, t.words) for t in topics], decoding=pd.GREEDY)
    assert got == expected


# -- the tensor rules against the per-row definitions --------------------------------------------------------


def test_ngram_and_guard_bans_match_the_per_row_definitions():
    gen = torch.Generator().manual_seed(5)
    rows = [torch.randint(0, 6, (n,), generator=gen).tolist() for n in (0, 1, 2, 3, 7, 12, 12)]
    guard = {(): {9}, (1,): {4, 5}, (2, 3): {7}, (1, 2, 3): {8}, (0, 0, 0): {1}}
    width = max(len(r) for r in rows)
    written = torch.full((len(rows), width), -1, dtype=torch.long)
    for i, r in enumerate(rows):
        written[i, : len(r)] = torch.tensor(r, dtype=torch.long)
    length = torch.tensor([len(r) for r in rows])
    vocab = 10
    grams = ngram_bans(written, length, 3, vocab)
    bans = guard_bans(GuardTable.of(guard, 3, "cpu"), written, length, vocab)
    for i, r in enumerate(rows):
        got_grams = {int(t) for t in grams[i] if t < vocab} if grams is not None else set()
        assert got_grams == pd._banned_by_ngrams(r, 3), r
        got_guard = {int(t) for b in bans for t in b[i] if t < vocab}
        assert got_guard == pd._banned_by_guard(r, guard), r


# -- sampling ----------------------------------------------------------------------------------------------


def test_sampling_is_the_default_and_a_seeded_generator_reproduces_it(llm):
    prompts, leads, guard, _ = writer_batch(llm, ex.shipped_example("clinical_note"), TOPICS[:2])

    def run(generator=None, decoding=pd.SAMPLED):
        pulls = [pd.WordPull.of(llm.chat.tokenizer, t.words) for t in TOPICS[:2]]
        return pd.public_decode(llm, prompts, leads, 12, max_prompt_tokens=512, guard=guard, pulls=pulls,
                                decoding=decoding, generator=generator)

    seeded = run(test_mode_torch_generator(7))
    assert seeded == run(test_mode_torch_generator(7))
    assert run(pd.writer_generator("cpu", 7)) == seeded  # the test mode's generator
    assert seeded != run(decoding=pd.GREEDY)
    assert run(test_mode_torch_generator(8)) != seeded
    assert pd.SAMPLED == pd.Decoding(pd.WRITER_TEMPERATURE, pd.WRITER_TOP_P) == pd.Decoding(0.5, 0.9)
    pulls = [pd.WordPull.of(llm.chat.tokenizer, t.words) for t in TOPICS[:2]]
    unsaid = pd.public_greedy(llm, prompts, leads, 12, max_prompt_tokens=512, guard=guard, pulls=pulls,
                              generator=test_mode_torch_generator(7))
    assert unsaid == seeded  # realise samples: decoding left unsaid is SAMPLED


class EagerToEnd:
    """The tiny model with its end-of-text tokens made overwhelmingly likely (+30 on their logits)."""

    def __init__(self, llm) -> None:
        self._llm = llm

    def __getattr__(self, name: str):
        return getattr(self._llm, name)

    def start_logits(self, prompts, shared_prefix: int = 0):
        return EagerSession(self._llm.start_logits(prompts, shared_prefix=shared_prefix), sorted(self._llm.eos_token_ids))


class EagerSession:
    def __init__(self, inner, eos) -> None:
        self._inner, self._eos = inner, eos

    @property
    def n_rows(self) -> int:
        return self._inner.n_rows

    def logits(self):
        z = self._inner.logits().clone()
        z[:, self._eos] += 30.0
        return z

    def append(self, tokens) -> None:
        self._inner.append(tokens)

    def keep(self, rows) -> None:
        self._inner.keep(rows)


def test_sampled_rows_end_only_once_every_released_word_is_written(llm):
    topics = [rt.Topic("fever", ("cough",)), rt.Topic("migraine", ("nausea",)), rt.Topic("back stiffness")]
    leads = ["Fever and a dry cough.", "Consultation note.", "Back stiffness"]  # the last may still go on
    prompts = [wp.realisation_prompt(t, TASK, "") for t in topics]
    guard = pd.with_scaffold(llm.chat.tokenizer, {})
    for seed in range(2):
        pulls = [pd.WordPull.of(llm.chat.tokenizer, t.words) for t in topics]
        texts = pd.public_decode(EagerToEnd(llm), prompts, leads, 12, guard=guard, pulls=pulls,
                                 generator=test_mode_torch_generator(seed))
        assert texts[0] == leads[0]  # its words were in its start: it ended at once
        assert texts[2] == leads[2]  # "Back stiffness" ends the text: the word is written unless continued
        assert texts[1].startswith(leads[1]) and len(texts[1]) > len(leads[1])  # it could not end
        assert not re.search(r"\b(Topic|Related|Key terms)\b", texts[1][len(leads[1]):]), texts[1]


def test_written_words_are_read_from_tokens_as_the_text_check_reads_text(llm):
    from core.methods.dp_synrag.write.logit_shaping import TokenEdges, advance, start_rows, word_forms

    tokenizer = llm.chat.tokenizer
    words = ("fever", "back pain", "rash")
    pieces = [[" The", " fever"], [" fever", "ish", " and", " back", " pain"], ["(", "fever", ")"],
              ["Fever", ","], [" BACK", " PAIN", " rash", "es"], [" Back", " Pain", "."], [" rash"], ["\n", "Rash"],
              [" frash"], [" back", " painful"]]
    rows = [[t for piece in row for t in tokenizer.encode(piece, add_special_tokens=False)] for row in pieces]
    pull = pd.WordPull.of(tokenizer, words)
    forms = word_forms(tokenizer, [(pull.words, pull.variants)] * len(rows), "cpu")
    state = start_rows([[]] * len(rows), [""] * len(rows), [words] * len(rows), forms, 16, "cpu")
    edges = TokenEdges(tokenizer, llm.vocab_size, "cpu")
    nothing = torch.zeros(state.pull_len.shape, dtype=torch.bool)
    checked = 0
    for step in range(max(len(r) for r in rows)):
        tokens = torch.tensor([r[step] if step < len(r) else tokenizer.encode(".")[0] for r in rows])
        advance(state, tokens, nothing, edges)
        for i, row in enumerate(rows):
            if step < len(row):
                text = tokenizer.decode(row[: step + 1])
                missing = [w for j, w in enumerate(words) if bool(state.missing[i, j])]
                assert missing == pd.missing_words(text, words), (text, missing)
                checked += 1
    assert checked == sum(len(r) for r in rows)


def test_writer_generator_draws_from_os_entropy_outside_the_test_mode():
    a, b = pd.writer_generator("cpu"), pd.writer_generator("cpu")
    assert torch.rand(4, generator=a).tolist() != torch.rand(4, generator=b).tolist()
    assert torch.equal(torch.rand(4, generator=pd.writer_generator("cpu", 3)),
                       torch.rand(4, generator=pd.writer_generator("cpu", 3)))


def test_common_prefix_leaves_every_row_a_token():
    assert pd.common_prefix([[1, 2, 3, 4], [1, 2, 3, 5]]) == 3
    assert pd.common_prefix([[1, 2, 3], [1, 2, 3, 4]]) == 2
    assert pd.common_prefix([[1, 2], [3, 2]]) == 0
    assert pd.common_prefix([[1, 2, 3]]) == 0
