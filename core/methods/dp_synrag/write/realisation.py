"""Public realisation (SPEC §2.6, docs/method.md §2.6): a public writer turns each released topic into a document.

Post-processing of released outputs, so it costs nothing and may use any decoding. The writer's prompt
holds only

* the topic's released words: the cluster word w_r and its released co-keywords (steps 1 and 2b),
* the public task description, and
* a **public example of the document form**, invented by the custodian or picked from the shipped
  forms (``resources/examples/*.txt``), never a real document: :func:`check_public_example`
  (``example_check.py``) refuses, before anything is charged, an example that is a near-copy of a loaded
  document (its full text) or shares a name or a rare word with one;
* for a shipped form, one of its invented demonstrations (``<form>.demo.toml``), in rotation: document i
  is shown demonstration i mod n. The writer may not copy it: its 4-token runs and content words are
  banned while it writes, and what still shares a content word or a near-form of a name with the
  demonstration it saw, and not with the topic's released words, is cut: the clause that brings it in, or
  the sentence (:func:`drop_refused`, ``demonstration_guard.py``).

Every released word must appear verbatim in the document: the writer is asked for them and pulled toward
them by constrained decoding (``public_decoding.py``), its draft is
cleaned of meta-text (:func:`clean_draft`), checked (:func:`missing_words`), written again with the
missing words named, and a final structured line guarantees the rest (:func:`guarantee_words`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Mapping, Sequence

import torch

from core.methods.dp_synrag.shape.examples import Demonstration, demonstrations, shown_index
from core.methods.dp_synrag.shape.released_topics import Topic
from core.methods.dp_synrag.write.demonstration_guard import DemonstrationGuard, PublicLists, guard_of
from core.methods.dp_synrag.write.drafts import (
    clean_draft,
    guarantee_words,
    has_own_sentence,
    sentence_limit,
    sentences_of,
    trim_to_form,
)
from core.methods.dp_synrag.write.lead_phrases import JoinScorer, joined, phrases_of
from core.methods.dp_synrag.write.echo import Echo
from core.methods.dp_synrag.write.public_decoding import (
    ECHO_PENALTY,
    CopyGuard,
    WordPull,
    copy_guard,
    missing_words,
    public_greedy,
    stage_echo,
    with_scaffold,
)
from core.methods.dp_synrag.write.roles import RoleSources, assign_roles
from core.methods.dp_synrag.write.sentence_cuts import cut_sentences
from core.methods.dp_synrag.write.slots import PhraseJoiner, Placement, form_slots, lead_pool, place
from core.methods.dp_synrag.write.writer_prompt import example_lead, realisation_lead, realisation_prompt
from core.methods.dp_synrag.write.writing_progress import WRITER_BATCH, DraftWork, stepping
from core.models import threads
from core.models.base import LanguageModel
from core.common.progress import ProgressEvent, Reporter, StageProgress

REALISATION_STAGE = "realisation"
ATTEMPTS = 2  # drafts per topic before the structured line
DEMO_PROMPT_TOKENS = 512  # the writer's prompt with a demonstration is public: it may be longer than a private one


@dataclass(frozen=True)
class Realisation:
    """One realised document; ``attempts`` drafts were written, ``fallback``: the structured line was needed."""

    text: str
    attempts: int
    fallback: bool
    shown: int = -1  # the index of the demonstration the writer saw (-1: none)
    refused: tuple[str, ...] = ()  # words of its drafts the demonstration guard refused (cut from the document)
    written: bool = True  # the writer wrote a sentence of its own beyond the form's opening (else: not kept)


# -- the public example ---------------------------------------------------------------------


# -- the writer's prompt and its cleaning ------------------------------------------------------------


def topic_placements(topics: Sequence[Topic], example: str, roles: RoleSources | None,
                     llm: LanguageModel | None = None) -> list[Placement]:
    """Where each topic's typed words go in the form (``slots.py``); every word untyped without ``roles``
    or for a form without typed slots. With ``llm``, the public model is asked the role of each word no
    other public source types (``roles.asked_roles``), and the words of the lead are joined into phrases
    (``lead_phrases.py``) among all the lead's words of the documents of that topic, so that the two words of a
    phrase are written together even when a document drew only one of them ("metallic" brings "taste")."""
    slots = form_slots(example) if roles is not None else ()
    if not slots or roles is None:
        return [place(t.words, {}, (), realisation_lead(example, t), turn=i) for i, t in enumerate(topics)]
    if llm is not None:
        roles = roles.asking(llm, [w for t in topics for w in t.words])
    typed = [assign_roles(t.words, roles) for t in topics]
    leads = [realisation_lead(example, t) for t in topics]
    joiners: list[PhraseJoiner | None] = [None] * len(topics)
    if llm is not None:
        pools: dict[str, list[str]] = {}
        for t, r, lead in zip(topics, typed, leads):
            pool = pools.setdefault(t.keyword, [])
            pool.extend(w for w in lead_pool(t.words, r, slots, lead) if w not in pool)
        join = cached_joiner(llm)
        joiners = [partial(join, pool=pools[t.keyword]) for t in topics]
    return [place(t.words, typed[i], slots, leads[i], turn=i, joiner=joiners[i]) for i, t in enumerate(topics)]


def cached_joiner(llm: LanguageModel) -> Callable[..., list[str]]:
    """The lead's words joined into phrases (``lead_phrases.py``) among the words of their ``pool`` (the lead's
    words of the topic's documents), scored after the first lead asked: the leads of one form differ only in
    invented initials and ages."""
    scorers: list[JoinScorer] = []

    def join(lead: str, words: Sequence[str], pool: Sequence[str] = ()) -> list[str]:
        if not scorers:
            scorers.append(JoinScorer(llm, lead.rstrip()))
        return joined(words, phrases_of(scorers[0], sorted({*words, *pool})))

    return join


def placed_lead(lead: str, placement: Placement) -> str:
    """The topic's public lead with its slot's words ("… reports nausea and chest pain")."""
    return f"{lead} {placement.lead}" if placement.lead else lead


def drop_refused(text: str, guard: DemonstrationGuard, released: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """``text`` without what takes the demonstration's content (a word the guard refuses, not one of the
    topic's ``released`` words), and the refused words. A sentence that holds one keeps its words before the
    clause that brings it in when they are a sentence of their own (:func:`_head_before`), else it goes; a
    released word lost with it is written again by the next draft or the structured line."""
    words = guard.refused(text, released)
    if not words:
        return text, ()
    kept = []
    for part in sentences_of(text):
        refused = guard.refused(part, released)
        if not refused:
            kept.append(part)
            continue
        head = _head_before(part, refused)
        if head and not guard.refused(head, released):
            kept.append(head)
    return " ".join(kept), tuple(words)


def drop_shown_and_others(
    text: str, guards: Sequence[DemonstrationGuard], shown: int, released: Sequence[str]
) -> tuple[str, tuple[str, ...]]:
    """:func:`drop_refused` for the demonstration the document saw, then for the form's other demonstrations: a
    content word of any of them that is not one of the topic's released words is no content of this topic either."""
    text, words = drop_refused(text, guards[shown], released)
    for j, other in enumerate(guards):
        if j != shown:
            text, more = drop_refused(text, other, released)
            words += more
    return text, words


_CLAUSE = re.compile(r"[,;:(]|\s(?=(?:and|or|but|after|since|with|while|because|due|as|for|which|who|that|to|in|on|"
                     r"of|from|by|at|when|until)\s)", re.IGNORECASE)
MIN_HEAD_WORDS = 5  # a cut sentence keeps at least this many words ("K. M., 47, reports back stiffness.")


def _head_before(sentence: str, refused: Sequence[str]) -> str:
    """The words of ``sentence`` before the clause that holds its first refused word, closed with a full
    stop, when they are at least MIN_HEAD_WORDS and do not end on a function word; else ""."""
    starts = [m.start() for w in refused for m in re.finditer(rf"(?<!\w){re.escape(w)}(?!\w)", sentence, re.IGNORECASE)]
    if not starts:
        return ""
    cuts = [m.start() for m in _CLAUSE.finditer(sentence, 0, min(starts))]
    while cuts and sentence[cuts[-1]] == ":":  # "…; treatment: [refused]": the label goes with its clause
        cuts = [c for c in cuts[:-1] if sentence[c] in ",;(" or sentence[c].isspace()][-1:] if len(cuts) > 1 else []
    if not cuts:
        return ""
    head = sentence[: cuts[-1]].rstrip(" ,;:(-")
    words = head.split()
    while words and words[-1].lower().strip(",.;:") in _DANGLING:
        words.pop()
    head = " ".join(words).rstrip(" ,;:(-")
    return head + "." if len(words) >= MIN_HEAD_WORDS else ""


_DANGLING = frozenset({"a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "with", "for", "his", "her",
                       "their", "is", "was", "has", "had", "been", "be", "reports", "after", "since", "no"})


def _by_demonstration(todo: Sequence[int], shown: Sequence[int]) -> list[list[int]]:
    """The topics to write, grouped by the demonstration they are shown (one decoding guard per batch)."""
    groups: dict[int, list[int]] = {}
    for i in todo:
        groups.setdefault(shown[i], []).append(i)
    return list(groups.values())


def _with_words(tokenizer, guard: CopyGuard, words: Sequence[str]) -> CopyGuard:
    """``guard`` that also bans ``words`` (what a first draft wrote and the demonstration guard refused)."""
    out = {key: set(tokens) for key, tokens in guard.items()}
    for key, tokens in copy_guard(tokenizer, "", "", words).items():
        out.setdefault(key, set()).update(tokens)
    return out


# -- the stage --------------------------------------------------------------------------------


@dataclass(frozen=True)
class WriterSettings:
    """How the public writer writes (public settings). ``echo_penalty``: how strongly a document is kept from
    repeating, word for word, what the stage's other documents wrote (the echo rule, ``logit_shaping.py``; 0: off).
    ``target_words``: the length the documents aim at (``shape/examples.py``, ``corpus_shape.target_words``; 0:
    none), which sets how many sentences a draft keeps (:func:`sentence_limit`). ``generator``: the sampler's
    (``public_decoding.writer_generator``); ``roles``: the public sources of the released words' roles."""

    max_new_tokens: int = 80
    batch: int = WRITER_BATCH
    max_prompt_tokens: int | None = None
    generator: torch.Generator | None = None
    roles: RoleSources | None = None
    echo_penalty: float = ECHO_PENALTY
    target_words: int = 0


def realise(
    topics: Sequence[Topic],
    task: str,
    example: str,
    llm: LanguageModel,
    reporter: Reporter,
    settings: WriterSettings | None = None,
    finished: Mapping[int, Realisation] | None = None,
    on_final: Callable[[int, Realisation], None] | None = None,
) -> list[Realisation]:
    """One document per topic from public inputs only; every released word appears in it. Topic i is shown
    demonstration i mod n of the form (:func:`shown_index`); its drafts keep nothing of that
    demonstration's content (:func:`drop_refused`). With ``settings.roles``, each typed word is written in its slot
    of the form (:func:`topic_placements`, docs/method.md §2.4c).

    A document is final when its draft holds every released word after a pass, or after the last attempt;
    it is then previewed, passed to ``on_final`` (the run checkpoints it) and counted on the stage's bar.
    ``finished``: documents already written by an interrupted run (topic index → document), reused as
    they are; only the others are written. The list is in topic order either way."""
    settings = settings or WriterSettings()
    drafts = _Drafts.start(topics, task, example, llm, reporter, settings, finished or {}, on_final)
    for attempt in range(ATTEMPTS):
        if not drafts.todo:
            break
        for group in _by_demonstration(drafts.todo, drafts.shown):
            for start in range(0, len(group), settings.batch):
                drafts.write_batch(group[start : start + settings.batch], attempt)
        drafts.todo = [i for i in drafts.todo if i not in drafts.out]
    drafts.progress.finish()
    return [drafts.out[i] for i in range(len(topics))]


@dataclass
class _Drafts:
    """The writing stage's state: each topic's best draft so far, its attempts, and the documents made final."""

    topics: Sequence[Topic]
    task: str
    example: str
    llm: LanguageModel
    reporter: Reporter
    settings: WriterSettings
    on_final: Callable[[int, Realisation], None] | None
    demos: tuple[Demonstration, ...]
    shown: list[int]
    out: dict[int, Realisation]
    progress: StageProgress
    guards: list[DemonstrationGuard]
    decoding: list[CopyGuard]
    max_prompt_tokens: int | None
    limits: list[int]
    todo: list[int]
    work: DraftWork
    lead: str
    placements: list[Placement]
    leads_of: list[str]
    echo: Echo
    drafts: list[str] = field(default_factory=list)
    attempts: list[int] = field(default_factory=list)
    refused: list[tuple[str, ...]] = field(default_factory=list)

    @classmethod
    def start(cls, topics: Sequence[Topic], task: str, example: str, llm: LanguageModel, reporter: Reporter,
              settings: WriterSettings, finished: Mapping[int, Realisation],
              on_final: Callable[[int, Realisation], None] | None) -> _Drafts:
        """The stage started: the documents already written kept, each demonstration's guards, each topic's lead."""
        demos = demonstrations(example)
        shown = [shown_index(len(demos), i) for i in range(len(topics))]
        out = {i: d for i, d in finished.items() if 0 <= i < len(topics) and d.shown == shown[i]}
        progress = StageProgress(reporter, REALISATION_STAGE, len(topics), done=len(out))
        progress.start("Writing documents from the released topics")
        tokenizer = llm.chat.tokenizer
        lists = PublicLists.shipped() if demos else None
        guards = [guard_of(demo, f"{example}\n{task}", lists) for demo in demos]
        decoding = [with_scaffold(tokenizer, copy_guard(tokenizer, demo.document, example,
                                                        (*demo.topic.words, *demo.avoid, *guard.banned_words)))
                    for demo, guard in zip(demos, guards)] or [with_scaffold(tokenizer, {})]
        max_prompt_tokens = settings.max_prompt_tokens
        if demos and max_prompt_tokens is not None:  # public prompts: room for the demonstration
            max_prompt_tokens = max(max_prompt_tokens, DEMO_PROMPT_TOKENS)
        limits = [sentence_limit(demos[d].document, settings.target_words) if d >= 0 else 0 for d in shown]
        todo = [i for i in range(len(topics)) if i not in out]
        work = DraftWork(len(todo), ATTEMPTS)
        lead = example_lead(example)
        placements = topic_placements(topics, example, settings.roles, llm)
        leads_of = [placed_lead(realisation_lead(example, t, i), p) for i, (t, p) in enumerate(zip(topics, placements))]
        echo = stage_echo(tokenizer, example, settings.echo_penalty)  # what the documents already written said
        echo.add([tokenizer.encode(d.text, add_special_tokens=False) for d in out.values()])
        return cls(topics, task, example, llm, reporter, settings, on_final, demos, shown, out, progress, guards,
                   decoding, max_prompt_tokens, limits, todo, work, lead, placements, leads_of, echo,
                   [""] * len(topics), [0] * len(topics), [()] * len(topics))

    def final(self, i: int) -> None:
        """Topic i's document made final: its missing words guaranteed, previewed, checkpointed by ``on_final``."""
        drafts, placements, leads_of = self.drafts, self.placements, self.leads_of
        text, fallback = guarantee_words(drafts[i], self.topics[i].words, placements[i])
        own = (has_own_sentence(drafts[i], leads_of[i], 2) if placements[i].lead
               else has_own_sentence(drafts[i], self.lead))
        self.out[i] = Realisation(text=text, attempts=self.attempts[i], fallback=fallback, shown=self.shown[i],
                                  refused=self.refused[i], written=own)
        self.reporter.emit(ProgressEvent(REALISATION_STAGE, "preview", message=text))  # public: the Run page shows it
        if self.on_final is not None:
            self.on_final(i, self.out[i])

    def write_batch(self, chunk: list[int], attempt: int) -> None:
        """One batch of drafts, all shown the same demonstration; those that hold every released word (or are on
        their last attempt) made final."""
        threads.match_free_cores()  # each batch on the cores free now (a neighbour may have come or gone)
        topics, settings, tokenizer = self.topics, self.settings, self.llm.chat.tokenizer
        d = self.shown[chunk[0]]
        demo = self.demos[d] if d >= 0 else None
        prompts = [
            realisation_prompt(topics[i], self.task, self.example,
                               missing_words(self.drafts[i], topics[i].words) if attempt else (), demo)
            for i in chunk
        ]
        pulls = [WordPull.of(tokenizer, self.placements[i].pull_words) for i in chunk]
        leads = [self.leads_of[i] for i in chunk]
        # a retry may not write what was refused; a word of a slot is not written bare outside it
        again = [w for i in chunk for w in (*self.refused[i], *self.placements[i].placed)]
        guard = _with_words(tokenizer, self.decoding[max(d, 0)], again) if again else self.decoding[max(d, 0)]

        def on_step(step: int, rows: int = len(chunk)) -> None:
            self.work.step(rows, step, settings.max_new_tokens)
            self.progress.share(self.work.fraction())  # the time left counts down within the batch

        answers = public_greedy(stepping(self.llm, on_step), prompts, leads, settings.max_new_tokens,
                                max_prompt_tokens=self.max_prompt_tokens, guard=guard, pulls=pulls,
                                generator=settings.generator, echo=self.echo)
        for i, prompt, answer in zip(chunk, prompts, answers):
            self.keep_better(i, self.cleaned(i, answer, prompt, d), attempt)
        last = attempt == ATTEMPTS - 1
        done = [i for i in chunk if last or not missing_words(self.drafts[i], topics[i].words)]
        self.work.batch_done(len(chunk), len(chunk) - len(done), first=attempt == 0)
        for i in done:
            self.final(i)
        self.progress.advance(len(done), fraction=self.work.fraction())

    def cleaned(self, i: int, answer: str, prompt: str, d: int) -> str:
        """Topic i's answer made a draft: cleaned, the demonstrations' content cut, trimmed to the form's length and
        its sentences cut (``sentence_cuts.py``)."""
        words, leads_of = self.topics[i].words, self.leads_of
        draft = clean_draft(answer, prompt, headline=leads_of[i] if not self.lead else "")
        if d >= 0:
            draft, refused = drop_shown_and_others(draft, self.guards, d, words)
            self.refused[i] = tuple(dict.fromkeys((*self.refused[i], *refused)))
        draft = trim_to_form(draft, words, self.limits[i])
        return " ".join(cut_sentences(sentences_of(draft), words, sentences_of(leads_of[i]),
                                      lead_ends_bare=self.placements[i].lead_ends_bare))

    def keep_better(self, i: int, draft: str, attempt: int) -> None:
        """The first draft, or a later one that lacks fewer released words."""
        self.attempts[i] += 1
        words = self.topics[i].words
        if attempt == 0 or len(missing_words(draft, words)) < len(missing_words(self.drafts[i], words)):
            self.drafts[i] = draft
