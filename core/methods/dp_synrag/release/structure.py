"""Structure discovery (SPEC §7, docs/method.md §2.0b): the corpus's own document forms, released under DP.

A form is a *skeleton*: a document's fixed wording in order ("Seen today:", "Presenting symptoms were", "The
findings are consistent with") with a slot wherever a name, a number, a month or a content word stands
("Seen today: [name], [number]. Presenting symptoms were [text]. …"). Which wording is fixed is itself learnt under
DP, in three releases, all DP set unions (the Gaussian sparse histogram, ``core.privacy.mechanisms``, as phrase
discovery, §2.0):

1. **Openers** (stage ``form_openers``). Each unit proposes at most m_o distinct *openers*: the first 1 to
   ``MAX_OPENER_WORDS`` words of each of its clauses (at a document's start, after a clause's end, after a name or a
   number, after a comma), never past a number, a name, a month, a word that is no English word (public list) or
   a punctuation mark, and in the same cap its clauses' inner wordings ("we … and", ``form_inner.py``). A template's
   wording is held by every unit written in it; a filler ("insomnia", "skin rash") by few. Released: the openers whose
   noisy unit count clears τ_o.
2. **Skeletons** (stage ``form_skeletons``). Each unit writes each of its documents (at most m_s) as a skeleton
   from its own text and the released openers only (:func:`skeleton_of`): at each clause start the longest
   released opener is kept verbatim; names, numbers and months become typed slots; every other run of words
   becomes one ``[text]`` slot. Released: the skeletons whose noisy unit count clears τ_s, with their counts.
3. **Slot values** (stage ``form_values``). Each unit proposes at most m_v (label, value) items: the filler of each
   ``[text]`` slot of its documents' own skeletons (of released openers), keyed by the slot's label (the wording
   before it: "Product:"), when it is a short value (at most three words, no digit, no capitalised name of the public
   list), shortest first (``form_values.py``). Released:
   the values whose noisy unit count clears τ_v ("yes", a product's name, a category), which the writer then writes
   as they stand.

All proposals are functions of the unit's own text, public lists and already-released outputs, so adding or
removing one unit changes at most m counts by one each (L2 sensitivity √m): ρ = m/(2σ²) per release, and a
skeleton (or opener, or value) that only one unit holds is released with probability at most δ = m·Φ̄((τ − 1)/σ) (the
union bound of ``core.privacy.set_union``). A released skeleton holds only released openers, punctuation and
slot markers, never a slot's filler; a released value is a filler many units wrote.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from core.corpus import Unit
from core.methods.base import MethodContext
from core.methods.dp_synrag.release.plan import DPSynRAGPlan
from core.privacy.mechanisms import gaussian_sparse_histogram
from core.privacy.planner import STAGE_FORM_OPENERS
from core.privacy.release import Release, run_release
from core.privacy.set_union import expected_releases, item_counts
from core.common.progress import ProgressEvent, StageProgress
from core.methods.dp_synrag.release.form_proposals import FormLists, propose_skeletons, skeleton_words
from core.methods.dp_synrag.release.opener_proposals import propose_openers
from core.methods.dp_synrag.release.form_values import propose_values, slot_labels, split_value_item


@dataclass(frozen=True)
class ReleasedForms:
    """The skeletons released by structure discovery with their noisy counts (DP outputs: public)."""

    skeletons: tuple[str, ...] = ()
    counts: tuple[float, ...] = ()
    openers: int = 0  # how many openers were released (the first release)
    values: tuple[tuple[str, str, float], ...] = ()  # (a text slot's label, value, noisy count): form_values.py

    def slot_values(self, skeleton: str) -> dict[int, list[tuple[str, float]]]:
        """The released values of each ``[text]`` slot of ``skeleton`` by its label (slot index -> [(value, count)])."""
        out: dict[int, list[tuple[str, float]]] = {}
        for slot, label in enumerate(slot_labels(skeleton)):
            found = [(value, count) for key, value, count in self.values if label and key == label]
            if found:
                out[slot] = found
        return out

    def fixed_words(self) -> frozenset[str]:
        """The words the released skeletons write around their slots ("review" and "wk" in "Review in [number] wk."):
        how the corpus's documents are written, not what one is about (public: DP outputs)."""
        return frozenset(w.lower() for s in self.skeletons for w in skeleton_words(s))

    def count(self, skeleton: str) -> float:
        return next((c for s, c in zip(self.skeletons, self.counts) if s == skeleton), 0.0)

    def coverage(self, size: float) -> float:
        """The released skeletons' noisy counts over the released size: the share of units they stand for."""
        return sum(self.counts) / size if size > 0 else 0.0


MIN_COVERAGE = 0.1  # the released forms are followed when their noisy counts stand for this share of the released size

# A ``[text]`` slot standing where a label stands ("[text]: [name], [number]."): the label's own wording was not
# released (each unit wrote its own, or too few wrote it), so a writer would have to invent the label.
_LABEL_SLOT = re.compile(r"\[text\]\s*:")


def unreleased_label(skeleton: str) -> bool:
    """Whether ``skeleton`` holds a ``[text]`` slot where a label stands (its slot is followed by a colon): a form
    whose labels were not released, which a writer cannot follow without inventing them ("Thet: …")."""
    return _LABEL_SLOT.search(skeleton) is not None


def followable(forms: ReleasedForms) -> ReleasedForms:
    """The released forms a writer can follow: every released skeleton but those with an unreleased label
    (:func:`unreleased_label`), with their counts and the released values. Post-processing of released values."""
    kept = [j for j, s in enumerate(forms.skeletons) if not unreleased_label(s)]
    return ReleasedForms(tuple(forms.skeletons[j] for j in kept), tuple(forms.counts[j] for j in kept),
                         forms.openers, forms.values)


def follows_forms(forms: ReleasedForms, size: float | None) -> bool:
    """Whether the writer follows the released forms: some can be followed (:func:`followable`) and, with a
    released size (or a public bound), those stand for at least ``MIN_COVERAGE`` of it. Post-processing of
    released values."""
    usable = followable(forms)
    if not usable.skeletons:
        return False
    return size is None or usable.coverage(float(size)) >= MIN_COVERAGE


def discover_forms(units: Sequence[Unit], plan: DPSynRAGPlan, ctx: MethodContext) -> ReleasedForms:
    """Step 0b: the released forms (none when structure discovery is off)."""
    if not plan.discovers_forms:
        return ReleasedForms()
    return release_forms(units, plan.form_releases(), ctx, STAGE_FORM_OPENERS)


def release_forms(
    units: Sequence[Unit], stages: tuple[Release, ...], ctx: MethodContext, reporter_stage: str
) -> ReleasedForms:
    """The releases of structure discovery (each checkpointed, or charged before it draws)."""
    lists = FormLists.shipped()
    opener_stage, skeleton_stage = stages[:2]
    progress = StageProgress(ctx.reporter, reporter_stage, len(stages) * len(units))
    started: list[bool] = []

    def counting(stage: Release, propose: Callable[[Unit], list[str]]) -> Callable[[], Counter[str]]:
        def count() -> Counter[str]:  # run only when the stage is not checkpointed: it starts the bar
            if not started:
                started.append(True)
                progress.start("Finding the corpus's own forms")
            proposals = []
            for unit in units:
                proposals.append(propose(unit))
                progress.advance()
            return item_counts(proposals, stage.items_per_unit)
        return count

    def noisy(stage: Release):
        def draw(counts: Counter[str]):
            hist = gaussian_sparse_histogram(counts, stage.sigma, stage.threshold, stage.items_per_unit, rng=ctx.test_rng())
            return {"items": list(hist.items), "counts": list(hist.noisy_counts)}
        return draw

    def release(stage: Release, propose: Callable[[Unit], list[str]]) -> dict:
        return run_release(stage, ctx, counting(stage, propose), noisy(stage))

    openers = release(opener_stage, lambda u: propose_openers(u, lists, opener_stage.items_per_unit))
    released_openers = {str(o): float(c) for o, c in zip(openers["items"], openers["counts"])}
    skeletons = release(skeleton_stage,
                        lambda u: propose_skeletons(u, released_openers, lists, skeleton_stage.items_per_unit))
    order = sorted(range(len(skeletons["items"])), key=lambda j: -skeletons["counts"][j])
    released_skeletons = tuple(str(skeletons["items"][j]) for j in order)
    values: tuple[tuple[str, str, float], ...] = ()
    if len(stages) > 2:  # drawn (and charged, as the plan says) even when no skeleton was released
        m_v = stages[2].items_per_unit
        drawn = release(stages[2], lambda u: propose_values(u, released_openers, lists, m_v))
        values = tuple((*split_value_item(str(item)), float(c)) for item, c in zip(drawn["items"], drawn["counts"]))
    forms = ReleasedForms(released_skeletons, tuple(float(skeletons["counts"][j]) for j in order),
                          len(released_openers), values)
    if started:
        ctx.reporter.emit(ProgressEvent(reporter_stage, "log",
                                        message=f"{len(forms.skeletons)} forms released ({forms.openers} openers, "
                                                f"{len(forms.values)} slot values)"))
        progress.finish()
    return forms


@dataclass(frozen=True)
class FormOutlook:
    """What ``privet plan`` says structure discovery will likely release on these data: computed from the private
    proposals without noise, for the custodian's screen only, never exported or recorded."""

    expected_forms: float
    expected_share: float  # of the units, standing behind an expected released form
    followed: bool


def form_outlook(units: Sequence[Unit], plan: DPSynRAGPlan) -> FormOutlook:
    """The expected released forms a writer can follow: openers whose exact count clears τ_o taken as released, then
    each skeleton without an unreleased label released with probability P(count + N(0, σ_s²) > τ_s)."""
    _, skeletons = exact_form_counts(units, plan, plan.tau_o)
    chance = {s: expected_releases(c, plan.sigma_s, plan.tau_s) for s, c in skeletons.items() if not unreleased_label(s)}
    share = sum(skeletons[s] * p for s, p in chance.items()) / max(len(units), 1)
    return FormOutlook(sum(chance.values()), share, share >= MIN_COVERAGE)


def exact_form_counts(units: Sequence[Unit], plan: DPSynRAGPlan, tau_o: float) -> tuple[dict[str, float], Counter[str]]:
    """Structure discovery's openers and skeletons counted exactly, with no noise (for a screen, never released): the
    openers whose exact unit count clears ``tau_o`` taken as released (opener -> count), and each skeleton's exact
    unit count over them. The one home of this count: ``form_outlook`` and ``bench/form_coverage.py`` read it."""
    lists = FormLists.shipped()
    openers = item_counts([propose_openers(u, lists, plan.m_o) for u in units], plan.m_o)
    released = {o: float(c) for o, c in openers.items() if c > tau_o}
    return released, item_counts([propose_skeletons(u, released, lists, plan.m_s) for u in units], plan.m_s)
