"""DP-SynRAG behind the pipeline's method interface (plan, run, record, samplers)."""

from __future__ import annotations

from dataclasses import asdict

from core.common.checkpoints import Checkpoints
from core.corpus import Corpus
from core.methods.base import (
    COMMON_NOTES,
    MethodContext,
    PlanSummary,
    sampler_descriptions,
    stages_from_events,
)
from core.methods.dp_synrag.algorithm import run_dp_synrag
from core.methods.dp_synrag.guidance import guide
from core.methods.dp_synrag.release.budget import plan_dp_synrag
from core.methods.dp_synrag.release.length import MAX_WORDS, MIN_WORDS
from core.methods.dp_synrag.release.plan import WHOLE_STAGES, DPSynRAGPlan
from core.methods.dp_synrag.release.structure import ReleasedForms, followable
from core.methods.dp_synrag.shape.adaptive import with_size
from core.methods.dp_synrag.shape.examples import demonstrations, form_length, public_example
from core.methods.dp_synrag.shape.merge import MERGE_JACCARD, MERGE_SHARED
from core.methods.dp_synrag.vocab.vocabulary import load_vocabulary, word_list_info
from core.methods.dp_synrag.write.dedup import NEAR_DUPLICATE_JACCARD
from core.methods.dp_synrag.write.example_check import check_spec_example
from core.methods.dp_synrag.write.slots import form_slots
from core.privacy.mechanisms import GAUSSIAN_OPENDP, THRESHOLD_EM, TOKEN_SAMPLER
from core.specs.runspec import DPSynRAGSpec, RunSpec
from core.specs.dp_synrag import AUTOMATIC_DOCUMENTS, AUTOMATIC_MOST_DOCUMENTS


class DPSynRAGMethod:
    name = "dp_synrag"

    def _plan(self, spec: RunSpec, delta: float):
        return plan_dp_synrag(spec.dp_synrag, spec.privacy.epsilon, delta, spec.privacy.conversion, spec.document)

    def plan_summary(self, spec: RunSpec, delta: float, n_units: int):
        p = spec.dp_synrag
        plan = self._plan(spec, delta)
        stages = list(plan.per_stage().items())
        derived = {"rho_total": plan.rho_total}
        if plan.counts_size:
            derived["sigma_n"] = plan.sigma_size
        if plan.discovers_phrases:
            derived.update(sigma_p=plan.sigma_p, tau_p=plan.tau_p, delta_p=plan.delta_phrases,
                           delta_conversion=plan.delta_conversion)
        if plan.discovers_forms:
            derived.update(sigma_o=plan.sigma_o, tau_o=plan.tau_o, sigma_s=plan.sigma_s, tau_s=plan.tau_s,
                           delta_forms=plan.delta_forms,
                           delta_conversion=plan.delta_conversion)
        derived["sigma_h"] = plan.sigma_h
        if plan.M:
            derived["sigma_c"] = plan.sigma_c
        if plan.refine:
            derived.update(sigma_mu=plan.sigma_mu, eps_theta=plan.eps_theta)
        if plan.token_stage:
            derived.update(c_over_tau=plan.c_over_tau, c=plan.c)
        guidance = dp_synrag_guidance(spec, delta, n_units)
        derived["min_topic_units"] = guidance.min_topic_support  # public: from σ_h and the public vocabulary
        warnings = list(guidance.warnings)  # the token-stage note is information, not a warning: text_stage_notes
        if p.k > n_units:
            warnings.append(
                f"Each synthetic document is set to draw on {p.k} private documents ('Private documents per "
                f"topic', under Advanced on the Task page), more than the {n_units} units of this corpus: topics "
                "will be small and their synthetic text mostly noise."
            )
        return PlanSummary(
            method=self.name,
            epsilon=spec.privacy.epsilon,
            delta=delta,
            rho_total=plan.rho_total,
            stages=stages,
            derived=derived,
            warnings=warnings,
            n_units=n_units,
            delta_spent=plan.delta_spent,
            topic_forecast=guidance.forecast,
            expected_settings=settings_for_screen(spec, delta, n_units),
            forecast_advice=guidance.advice,
        )

    def run(self, corpus: Corpus, spec: RunSpec, delta: float, ctx: MethodContext):
        check_spec_example(spec, corpus)  # before the first charge
        vocab = load_vocabulary(spec.dp_synrag.domain_lists)
        plan = self._plan(spec, delta)
        example = public_example(spec.document.document_form, spec.document.public_example)
        result = run_dp_synrag(corpus.units, vocab, spec.dp_synrag, example, plan, ctx)
        lists = [word_list_info(entry) for entry in spec.dp_synrag.domain_lists]
        notes = list(COMMON_NOTES) + [
            f"Keyword vocabulary: a fixed public English word list ({len(vocab.words)} entries)"
            + (
                ", with the public domain list(s) "
                + "; ".join(f"{i.file} ({i.entries} entries, SHA-256 {i.sha256})" for i in lists)
                + " (a published list, not read from the data: it cost no privacy budget)"
                if lists
                else ""
            )
            + (", extended by the phrases released by DP phrase discovery" if plan.discovers_phrases
               else "; no word list was derived from the private data")
            + ".",
            *phrase_notes(plan),
            *form_notes(plan, result.forms, result.followed_forms),
            "Keyword extraction, clustering membership and the self-filter are deterministic or post-processing "
            "steps; every step that looks at the private data through a released value is charged above.",
            *generation_notes(spec.dp_synrag, example, in_forms=result.followed_forms),
        ]
        if result.settings_note:
            notes.insert(len(COMMON_NOTES), result.settings_note)
        return result.documents, result.private_diagnostics, notes

    def record_stages(self, spec: RunSpec, delta: float) -> list[dict]:
        return stages_from_events(self._plan(spec, delta).accountant().events)

    def parameters(self, spec: RunSpec, summary) -> dict:
        params = {**_section_settings(spec), **{k: float(v) for k, v in summary.derived.items()}}
        # A list is recorded by its file name and SHA-256, never by a path (which could name the custodian's folders).
        params["domain_lists"] = [f"{i.file} (sha256 {i.sha256})" for i in map(word_list_info, spec.dp_synrag.domain_lists)]
        return params

    @staticmethod
    def finished_stages(checkpoints: Checkpoints) -> set[str]:
        """Charged stages whose released output is checkpointed: a resume reuses it and charges nothing.

        The writing stage is never listed: it checkpoints as it goes, and its unfinished groups are drawn
        (and charged) again; a resume quote counts it at its planned cost, an upper bound.
        """
        return {stage for stage, key in WHOLE_STAGES.items() if checkpoints.has(key)}  # each Release's key

    def samplers(self) -> list[str]:
        return sampler_descriptions(GAUSSIAN_OPENDP, THRESHOLD_EM, TOKEN_SAMPLER)


def dp_synrag_guidance(spec: RunSpec, delta: float, n_units: int):
    """Consensus strength and topic support of this plan, with suggested parameters (on screen only)."""
    p = spec.dp_synrag

    vocab_size = len(load_vocabulary(p.domain_lists))
    sized = settings_for_screen(spec, delta, n_units)
    return guide(sized, spec.privacy.epsilon, delta, n_units, vocab_size, spec.privacy.conversion, spec.document)


def settings_for_screen(spec: RunSpec, delta: float, n_units: int) -> DPSynRAGSpec:
    """The settings the adaptive default is expected to choose for this corpus, from the custodian's own count
    of units (on screen only: the run chooses from the released DP size count, within a few units of it)."""
    p = spec.dp_synrag
    plan = plan_dp_synrag(p, spec.privacy.epsilon, delta, spec.privacy.conversion, spec.document)
    return with_size(p, n_units, plan.sigma_h, len(load_vocabulary(p.domain_lists)))


def phrase_notes(plan: DPSynRAGPlan) -> list[str]:
    """DP phrase discovery in plain words: its two parts (a zCDP part and a δ part) for the certificate."""
    if not plan.discovers_phrases:
        return ["Phrase discovery was off: topics could only be words of the public lists above (no budget spent on it)."]
    return [
        f"Phrase discovery (first stage): each document proposed at most {plan.K_p} short phrases of its own text "
        "(its rarest 1-3-word phrases in general English, never a phrase holding a number or a common given name or "
        f"surname written as a name). Gaussian noise (sigma {plan.sigma_p:.3g}) was added to how many documents "
        f"proposed each phrase, and only phrases whose noisy count exceeded {plan.tau_p:.3g} were released; they "
        "extended the keyword vocabulary. Its privacy cost has two parts: "
        f"rho = {plan.rho_phrases:.4g} (zCDP, included in the total rho above), and delta_p = {plan.delta_phrases:.3g}, "
        "the largest chance that a phrase used by one document alone is released. delta_p is part of the stated "
        f"delta: epsilon is computed at delta - delta_p = {plan.delta_conversion:.3g} (docs/method.md, section 2.0).",
    ]


def form_notes(plan: DPSynRAGPlan, forms: ReleasedForms, followed: bool) -> list[str]:
    """Structure discovery in plain words for the certificate: the corpus's own forms, released under DP."""
    if not plan.discovers_forms:
        return []
    what = (
        "The corpus's own forms, released under DP (docs/method.md, section 2.0b): each document was reduced to a "
        "skeleton, its fixed wording in order with a slot wherever a name, a number, a month or a content word "
        f"stood. First each unit proposed at most {plan.m_o} clause openers of its own text (Gaussian noise sigma "
        f"{plan.sigma_o:.3g}, released above {plan.tau_o:.3g}); then each unit proposed at most {plan.m_s} skeletons "
        f"made of released openers and slots only (noise sigma {plan.sigma_s:.3g}, released above {plan.tau_s:.3g})"
        + (f"; then each unit proposed at most {plan.m_v} short values of its own documents' slots in a released "
           f"skeleton, of at most three words with no digit and no name (noise sigma {plan.sigma_v:.3g}, released "
           f"above {plan.tau_v:.3g}), so that a value many units wrote, such as a category, is written as it stands"
           if plan.m_v else "") + ". "
        f"Its privacy cost: rho = {plan.rho_forms:.4g} (included in the total rho above) and "
        f"delta = {plan.delta_forms:.3g}, the largest chance that a skeleton, an opener or a value used "
        "by one unit alone is released; it is part of the stated delta. A released skeleton holds no slot's filler."
    )
    usable = followable(forms).skeletons
    unfollowed = len(forms.skeletons) - len(usable)
    not_followed = (f" {unfollowed} of them held a slot where a label stands whose wording was not released, and "
                    "were not followed." if unfollowed else "")
    if followed:
        outcome = (f" {len(forms.skeletons)} forms were released and the documents were written in "
                   f"{'those that could be followed' if unfollowed else 'them'}, each form in proportion to its noisy "
                   "count: " + "; ".join(f"\"{s}\"" for s in usable[:8]) + ("; …" if len(usable) > 8 else "") + "."
                   + not_followed)
    elif forms.skeletons:
        outcome = (f" {len(forms.skeletons)} forms were released but those that could be followed stood for too "
                   "little of the corpus, so the documents follow the shipped form described below." + not_followed)
    else:
        outcome = " No form cleared the threshold (free text), so the documents follow the shipped form described below."
    return [what + outcome]


FORM_WRITER_NOTES = [
    "Documents (text = \"realised\"): a public writer (the run's language model) wrote each document in one of the "
    "released forms, drawn in proportion to the forms' noisy counts: the form's fixed wording verbatim, invented "
    "initials for a name, a month drawn at random (a document's dates in one year and in order by month), and its own "
    "words and numbers for the other slots (a misspelt copy of a released word written as the word), from a prompt "
    "holding only the public task, the topic's released words and the released form. Its sampling randomness "
    "(temperature 0.8, top-p 0.95) only varies the wording and is not part of the privacy guarantee; no private "
    "document is read (post-processing, no privacy cost)."
]


TEXT_WORDS = {
    "topic_line": "each document is its topic's released words only (no private prediction)",
    "private": "each document was written by private prediction from its cluster's documents",
    "realised": "a public writer turned each released topic into a document (no private prediction)",
    "realised+private": "private prediction rewrote a public writer's draft of each topic toward its cluster's documents",
}


def text_stage_notes(p) -> list[str]:
    """What ``privet plan`` notes about the token stage (public settings only): information about the
    configuration, printed as a note, never as a warning (the default configuration has no token stage)."""
    if p.token_stage:
        return []
    return [
        f"No token stage (text = \"{p.text}\"): {TEXT_WORDS[p.text]}. Its budget share went to finding topics "
        "and their co-keywords (the shares of the other stages were scaled up in proportion), so T, c and τ "
        "play no part in this plan."
    ]


JUNK_NOTE = (
    "Junk rule: a written document that a reader would discard was dropped by a fixed public rule on its "
    "text alone (it talks about the document instead of being one, such as 'I'm ready to help'; it repeats "
    "the instructions or the task; it loops; or it holds next to no prose, such as a bare 'Key terms' line): "
    "post-processing, no cost."
)


def generation_notes(p, example: str = "", in_forms: bool = False) -> list[str]:
    """How the synthetic text was written, in plain words for the certificate (all public settings). ``example``:
    the example of the document form the run showed (``public_example``; "" none); ``in_forms``: the documents
    were written in the corpus's released forms (the form writer), not the shipped form."""
    notes = list(FORM_WRITER_NOTES) if in_forms else [f"Documents (text = \"{p.text}\"): {TEXT_WORDS[p.text]}."]
    if p.realisation and not in_forms:
        notes.extend(realisation_notes(example))
    if p.realisation:  # the junk rule reads every written document, in the corpus's forms or the shipped one
        notes.append(JUNK_NOTE)
    if p.topic_words == "specific":
        notes.append(
            "Topics: the cluster words were chosen from the released noisy keyword counts only, keeping words "
            "whose noisy count is well above what noise alone reaches and preferring words that are rare in "
            "general English (public word frequencies); this is post-processing of a released value."
            + (" A name released by DP phrase discovery that no public list holds was kept when its noisy count "
               "clears what noise alone reaches among the released names (a lower bar than among all words, since "
               "phrase discovery released it only because many documents use it); also post-processing."
               if p.name_topics and p.discover_phrases else "")
        )
    if p.cluster_keywords:
        notes.append(
            f"Topic descriptions (co-keywords): in each cluster every document voted for at most {p.cluster_keywords} "
            "of its own keywords among the most frequent released words; Gaussian noise was added to every cluster's "
            "vote counts at once (charged above), and a cluster's words were released only where the noisy count "
            "clears the noise level. Only these released words describe a cluster to the public row."
        )
    notes.extend(shape_notes(p, example, in_forms))
    if p.token_stage:
        notes.extend(token_notes(p))
    if p.self_filter and in_forms:
        notes.append("Self-filter: not applied to documents written in the corpus's released forms (the filter judges "
                     "texts against the shipped form's example, which these documents do not follow).")
    elif p.self_filter:
        notes.append(
            f"Self-filter ({p.self_filter_mode}): synthetic texts were kept or dropped by reading only synthetic "
            "and public text (threshold calibrated on shipped public sentences): post-processing, no cost. When the "
            "form's own public example does not pass the filter, it cannot judge this task and keeps every text."
        )
    return notes


def realisation_notes(example: str) -> list[str]:
    """The certificate's words on the public writer in the shipped form, whose example is ``example``: its prompt,
    example and demonstrations, the junk rule and the roles' slots (all public settings)."""
    notes: list[str] = []
    demos = demonstrations(example)
    notes.append(
        "Public realisation: a public writer (the run's language model, choosing each word at random among its "
        "likeliest next words, at temperature 0.8 and top-p 0.95, after a repetition penalty; this randomness "
        "only varies the wording and is not part of the privacy guarantee) wrote each document from a prompt "
        "holding only the topic's released words, the public task "
        "and this invented example of the document form, checked against the loaded corpus so that it is not a "
        "real document: " + (f"\"{example}\"" if example else "(none; a form-free prompt was used)")
        + (f". The prompt also showed one of Privet's {len(demos)} shipped, invented demonstrations of this "
           f"form, in rotation (document i saw demonstration i mod {len(demos)}); what shared a content word "
           "or a name with the demonstration it saw, or with any other demonstration of the form, and not with its "
           "topic's released words, was cut from the document (the clause, or the sentence): "
           + "; ".join(f"\"{d.document}\"" for d in demos)
           if demos else "")
        + ". A sentence holding a misspelt copy of a released word (a rare word much like it), or talking about "
        "a text ('The above are the examples'), was cut; in the form's opening such a word was written as "
        "released. Every released word of a topic appears in its "
        "document. This reads no private data: no cost."
    )
    if form_slots(example):
        notes.append(
            "Roles: a released word that a public source names as a condition, a drug or a symptom (a typed "
            "public list the run names, such as ICD-10-CM; a dosage form such as 'ointment'; a WHO INN drug stem "
            "such as '-cillin' or a condition suffix such as '-itis' on a word that is no common English word; else "
            "the public model's clear answer to a fixed few-shot prompt naming the word) was "
            "written in the form's slot of that role (" + ", ".join(f"'{s.label}'" for s in form_slots(example))
            + "); other words as before. The words the opening reports were joined into the phrases the public "
            "model reads them as (such as 'metallic taste' for 'metallic' and 'taste'). Post-processing of "
            "released words: no cost."
        )
    return notes



def shape_notes(p, example: str = "", in_forms: bool = False) -> list[str]:
    """The corpus's shape, its length and the near-duplicate filter in plain words (docs/method.md §6.2; public
    settings). ``example``: the form's example (its demonstrations' length); ``in_forms``: the documents took the
    released forms' own length."""
    notes = []
    if not p.token_stage:
        size = ("the public upper bound stated by the custodian" if p.size_bound
                else "the released DP size count (never the true number)")
        how_many = {0: "one document per topic",
                    -1: "about as many documents as the corpus holds people or documents, read from " + size,
                    AUTOMATIC_DOCUMENTS: "about as many documents as the corpus holds people or documents, read from "
                    f"{size}, at most {AUTOMATIC_MOST_DOCUMENTS}, at most as many as the topics' released counts add up to, "
                    "and at least one per topic (the automatic default)"}
        total = how_many.get(p.documents_setting, f"{p.documents} documents")
        notes.append(
            f"Corpus shape: {total}"
            + ("" if p.documents_setting == 0 else ", allocated across the topics in proportion to their released (noisy) "
               "counts; each document names a sample of its topic's released co-keywords, each drawn with its noisy "
               "count over the topic's (randomness from the operating system's entropy), so that combinations vary "
               "as the released counts say")
            + (". Topics whose released co-keywords overlap strongly (Jaccard at least "
               f"{MERGE_JACCARD:g} with at least {MERGE_SHARED} words shared, or one topic's word among the other's "
               "co-keywords and half of the rest shared) "
               "were merged into one, their released counts summed" if p.merge_topics else "")
            + ". This reads only released values: post-processing, no cost."
        )
    if in_forms:
        if p.length_setting == "dp":
            notes.append("Length: the corpus's median words per document was released (charged above as the length "
                         "statistic); documents written in the corpus's released forms take those forms' own length, "
                         "so it shaped nothing further.")
    elif p.text == "realised" and p.length_setting == "dp":
        notes.append(
            "Length: the documents were written toward the corpus's median words per document, released by the "
            f"exponential mechanism over the public range {MIN_WORDS} to {MAX_WORDS} words (charged above as the length "
            "statistic): the writer kept as many sentences as that length takes, and longer documents were shortened by "
            "whole sentences, never losing a released word. This reads only the released length and synthetic text: "
            "no further cost."
        )
    elif p.text == "realised" and p.length_setting == "form" and form_length(example):
        notes.append(
            "Length: the documents were shortened, by whole sentences and never losing a released word, toward the "
            f"median length of the form's shipped demonstrations ({form_length(example)} words; public): no cost."
        )
    notes.append(
        f"Near-duplicates: a document whose word 3-gram Jaccard similarity with a document already kept was at least "
        f"{NEAR_DUPLICATE_JACCARD:g} was dropped. This reads only synthetic text: post-processing, no cost."
    )
    return notes


def token_notes(p) -> list[str]:
    """How private prediction (step 4) wrote, in plain words (all public settings)."""
    notes = []
    if p.text == "realised+private":
        notes.append(
            "The public row of each cluster is the public writer's draft of its topic (public text only); each "
            "document of the cluster is asked to rewrite itself in the same form, so the private rows pull the "
            "public draft toward what the cluster's documents share."
        )
    if p.clip == "dclip":
        notes.append(
            "Token aggregation (DClip): each document of a cluster adds its log-probability difference to a public "
            f"row, clamped to [-c, c], on top of the public row's log-probabilities weighted by {p.public_weight:g} "
            "(a fixed public constant). One document moves every token's score by at most c, the same bound "
            "as the standard clip, so the cost per token is unchanged."
        )
    own_row = p.text == "private"  # realised+private: the public row is the draft (above)
    if own_row and p.public_prompt == "keyword":
        notes.append(
            "The public row of each cluster contains only public text: the rephrase instruction around the "
            "cluster's released keyword and released co-keywords (and the public task); never a private document."
        )
    elif own_row and p.public_prompt == "empty":
        notes.append("The public row of each cluster is the rephrase instruction around an empty document.")
    if p.top_k_plus:
        notes.append(
            f"Candidate tokens (Top-k+): each token was drawn exactly among the {p.top_k_plus} tokens the public "
            "row ranks highest plus those within a margin of them computed from public settings (c, the public "
            "weight, the temperature and the target cluster size k); the set depends on public text only, so "
            "the cost per token is unchanged."
        )
    return notes


def _section_settings(spec: RunSpec) -> dict:
    """The certificate's settings of ``[dp_synrag]``, with the shared ``[writing]`` and ``[document]`` ones where
    ``[dp_synrag]`` stated them before those sections existed (before ``domain_lists`` and before
    ``realisation_tokens``): the certificate's table reads as it did."""
    own, settings = asdict(spec.dp_synrag), {}
    for name, value in own.items():
        if name == "domain_lists":
            settings.update(asdict(spec.writing))
        if name == "realisation_tokens":
            settings.update(asdict(spec.document))
        settings[name] = value
    return settings
