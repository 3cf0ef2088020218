"""DP-SynRAG's facts for the rest of Privet (``core.specs.method_catalogue.MethodFacts``): its stages' plain names,
the certificate's words for its settings, its work estimate, what the wizard and ``privet plan`` show for
it, and why a run of it writes few documents. Public settings only; nothing heavy is imported at the top
(the catalogue imports this module to read a label), so the helpers import their modules when called."""

from __future__ import annotations

import copy
from typing import Any

from core.specs.method_catalogue import MethodFacts, WizardOptions
from core.methods.dp_synrag.plan import (
    DEFAULT_CLUSTER_KEYWORDS_FRACTION,
    DEFAULT_LENGTH_FRACTION,
    DEFAULT_PHRASES_DELTA_FRACTION,
    DEFAULT_PHRASES_FRACTION,
    DEFAULT_SIZE_FRACTION,
    REALISED_FRACTIONS,
)
from core.specs.dp_synrag import AUTOMATIC_MOST_DOCUMENTS

# The default shares as the plan takes them (read from its constants, never restated): without a token stage
# (text = "realised", the default, or "topic_line") the topic stages share what the counts leave in proportion
# 0.4 : 0.4 : 0.2; with one, the co-keywords and the phrases take fixed shares of the whole budget.
_SHARES = (
    f"{REALISED_FRACTIONS['hist']:g} : {REALISED_FRACTIONS['cluster_keywords']:g} : "
    f"{REALISED_FRACTIONS['phrases']:g} for topics, their descriptions and phrases, and {REALISED_FRACTIONS['forms']:g} "
    "for the corpus's own forms when they are looked for, rescaled to what the counts leave"
)

STAGE_LABELS = {
    "size": "counting the people or documents (a noisy count)",
    "length": "measuring how long the documents are (a noisy median)",
    "keywords": "finding keywords in each document",
    "phrases": "finding the corpus's own phrases (topic names)",
    "form_openers": "finding the corpus's own forms (their wording)",
    "form_skeletons": "finding the corpus's own forms (whole documents)",
    "histogram": "finding topics",
    "cluster_keywords": "describing each topic",
    "retrieval": "choosing documents per topic",
    "retrieval_mean": "choosing documents per topic (topic centres)",
    "retrieval_threshold": "choosing documents per topic (how many)",
    "realisation": "writing documents from the released topics (public, no budget)",
}

PARAMETER_MEANINGS = {  # DP-SynRAG (and DP-Synth, which shares R, T, tau and the clip)
    "K": "keywords taken from each private unit",
    "R": "topics (clusters) at most; one synthetic document each unless 'documents' asks for more (0: chosen "
         "by the adaptive default from the released size; the chosen value is in the notes)",
    "L": "topics a unit can belong to at most (0: 1 without a token stage, 5 with one)",
    "k": "private units used to write each synthetic document (0: chosen from the released size)",
    "size_bound": "a public upper bound on the number of units stated by the custodian (0: none; a DP count was "
                  "released instead)",
    "size_fraction": f"share of the budget for the noisy count of units (0 = the default, {DEFAULT_SIZE_FRACTION:g})",
    "T": "tokens (word pieces) written per synthetic document",
    "tau": "sampling temperature (higher: more varied wording)",
    "hist_fraction": f"share of the budget spent on finding topics (0 = the plan's default share: without a token "
                     f"stage {_SHARES}; privet plan shows the share used)",
    "mu_fraction": "share of the budget spent on topic centres (0 = the default share)",
    "theta_fraction": "share of the budget spent on choosing how many units per topic (0 = the default share)",
    "cluster_keywords": "words released to describe each topic, at most (each document votes for this many)",
    "cluster_keywords_fraction": f"share of the budget spent on describing each topic (0 = the plan's default "
                                 f"share: without a token stage {_SHARES}; with one "
                                 f"{DEFAULT_CLUSTER_KEYWORDS_FRACTION:g}; privet plan shows the share used)",
    "min_cluster_size": "topics supported by fewer units are reported as weak",
    "refine": "whether topic centres and a threshold re-choose the documents of each topic (costs budget)",
    "keywords": "how each unit's keywords are found: 'vocabulary' = the words of a public list the text uses most, "
                "weighed by their rarity in English",
    "topic_words": "how topic words are chosen from the noisy counts: 'specific' = significant and rare in English",
    "clip": "how each document's say on the next word is limited: 'dclip' = clamped difference to a public row",
    "public_prompt": "what the public row of each topic holds: 'keyword' = the released topic words and the task",
    "public_row": "what the public row holds: 'empty' = an instruction around an empty document; 'none' = none",
    "answer_start": "how each synthetic document starts: with its released topic word(s), or with nothing",
    "public_weight": "weight of the public model's own prediction (a public constant)",
    "top_k_plus": "candidate next words per step, chosen from public text only (0 = all words)",
    "public_anchor": "public (non-private) text steers each token",
    "self_filter": "the model drops synthetic documents it judges off-task (no budget)",
    "self_filter_mode": "how the self-filter judges a document (reads synthetic and public text only)",
    "max_prompt_tokens": "longest prompt, in tokens",
    "batch_rows": "rows per batch of the model (0 = automatic; speed only)",
    "memory_budget_mb": "memory allowed for a batch, MB (0 = automatic; speed only)",
    "domain_lists": "public word lists added to the keyword vocabulary (file name and SHA-256)",
    "discover_phrases": "the corpus's own frequent phrases were found with differential privacy (first stage)",
    "phrases_per_unit": "phrases each document could propose, at most",
    "phrases_fraction": f"share of the budget spent on finding phrases (0 = the plan's default share: without a "
                        f"token stage {_SHARES}; with one {DEFAULT_PHRASES_FRACTION:g}; privet plan shows the share "
                        f"used)",
    "phrases_delta_fraction": f"share of delta for a phrase of one document being released (0 = default "
                              f"{DEFAULT_PHRASES_DELTA_FRACTION:g})",
    "sigma_p": "noise added to each phrase count",
    "tau_p": "noisy count a phrase had to exceed to be released",
    "delta_p": "largest chance that a phrase used by one document alone is released (part of delta)",
    "delta_conversion": "delta at which the zCDP total is converted to epsilon (delta minus the parts spent by phrase "
                        "and structure discovery)",
    "discover_forms": "whether the corpus's own document forms were released with DP and followed (structure "
                      "discovery; off when a form is chosen by hand)",
    "form_by_rule": "whether the fallback document form was chosen from the task's words (not by the custodian)",
    "openers_per_unit": "clause openers (a form's wording) each unit proposed at most",
    "skeletons_per_unit": "skeletons (whole forms) each unit proposed at most",
    "forms_fraction": "share of the budget spent on finding the corpus's own forms (0 = the plan's default share, "
                      "0.35 beside the topic stages' 0.4 : 0.4 : 0.2)",
    "forms_delta_fraction": "share of delta for a form or a form's wording of one unit being released (0 = default "
                            "0.25)",
    "sigma_o": "noise added to each count of a form's wording (clause openers)",
    "tau_o": "noisy count a form's wording had to exceed to be released",
    "sigma_s": "noise added to each count of a whole form (skeleton)",
    "tau_s": "noisy count a whole form had to exceed to be released",
    "delta_forms": "largest chance that a form or a form's wording used by one unit alone is released (part of delta)",
    "text": "how each document was written: topic line only, private prediction, public realisation, or both",
    "document_form": "the shipped invented example of the document form given to the public writer",
    "public_example": "the custodian's invented example of the document form (checked: not a real document)",
    "realisation_tokens": "longest document the public writer wrote, in tokens (no budget)",
    "row_bound": "each topic writes with about k of its units, drawn at random (poisson) or with all (none); no budget",
    "force_length": "every document runs the full T tokens (speed checks only; no budget)",
    "documents": "synthetic documents asked for, shared among the topics by their noisy counts (0 = one per topic, "
                 "-1 = about the corpus's noisy size, -2 = automatic: about the noisy size, at most "
                 f"{AUTOMATIC_MOST_DOCUMENTS}, at most the topics' noisy counts added up, at least one per topic); "
                 "no budget",
    "merge_topics": "topics whose released words overlap strongly are merged into one; no budget",
    "name_topics": "a name released by phrase discovery becomes a topic at the lower bar of a name; no budget",
    "length": "how long each document is: the form's public length (form), a noisy median of the corpus's (dp), "
              "as written (none), or auto: dp with the public writer (the default)",
    "length_fraction": f"share of the budget spent on the noisy median length (0 = default {DEFAULT_LENGTH_FRACTION:g}; "
                       f"only with dp or auto)",
    # derived by the planner
    "sigma_h": "noise added to each keyword count (standard deviation)",
    "sigma_n": "noise added to the count of units (standard deviation)",
    "sigma_c": "noise added to each topic's word counts (standard deviation)",
    "sigma_mu": "noise added to each coordinate of a topic centre (standard deviation)",
    "eps_theta": "privacy parameter of choosing how many units per topic",
    "c_over_tau": "most one document can move the score of a next word, over the temperature",
    "c": "most one document can move the score of a next word (clipping bound)",
    "min_topic_units": "units that must mention a topic for it to be found, about (from the noise level)",
}

# Parameters that play no part in a run, by the switch that leaves their stage out (method_parameters holds
# every setting of [dp_synrag]; the certificate lists these under "not used in this run").
TOKEN_STAGE_PARAMETERS = ("T", "tau", "clip", "public_prompt", "public_row", "answer_start", "public_weight",
                          "top_k_plus", "public_anchor", "row_bound", "force_length", "c_over_tau", "c")
REALISATION_PARAMETERS = ("document_form", "public_example", "realisation_tokens")
PHRASE_PARAMETERS = ("phrases_per_unit", "phrases_fraction", "phrases_delta_fraction")
FORM_PARAMETERS = ("openers_per_unit", "skeletons_per_unit", "forms_fraction", "forms_delta_fraction")
REFINE_PARAMETERS = ("mu_fraction", "theta_fraction")


def parameters_not_used(params: dict[str, Any]) -> list[str]:
    """The parameters whose stage did not run: no token stage when ``text`` is 'topic_line' or 'realised', no
    public writer, no phrase discovery, no refinement, no co-keywords, no self-filter."""
    if "text" not in params:
        return []
    text = str(params.get("text"))
    unused: list[str] = []
    if text not in ("private", "realised+private"):
        unused += TOKEN_STAGE_PARAMETERS
        if not params.get("refine"):
            unused.append("k")  # retrieves each topic's units for refinement or for private prediction only
    if text not in ("realised", "realised+private"):
        unused += REALISATION_PARAMETERS
    if params.get("discover_phrases") is False:
        unused += PHRASE_PARAMETERS
    if params.get("discover_forms") is False or text != "realised":
        unused += FORM_PARAMETERS
    if params.get("refine") is False:
        unused += REFINE_PARAMETERS
    if params.get("cluster_keywords") == 0:
        unused.append("cluster_keywords_fraction")
    if params.get("self_filter") is False:
        unused.append("self_filter_mode")
    return [name for name in params if name in unused]


def work(spec: Any, n: int, s: Any, topics: float | None = None) -> list[tuple[str, float]]:
    """Seconds per stage at the built-in speeds ``s`` (``core.run.estimate``); ``topics``: the groups (documents)
    the run is expected to write; R, its most, when not given."""
    p, prompt = spec.dp_synrag, s.prompt
    groups = p.R if topics is None else min(float(topics), p.R)
    rows = min(n * p.L, groups * min(p.k, n)) + (groups if p.public_anchor else 0)  # k: typical cluster size
    keywords = s.cpu(n * 0.002) if p.keywords == "vocabulary" else s.llm(n * prompt, n * (6 * p.K + 4))
    stages: list[tuple[str, float]] = []
    if p.discover_phrases:  # step 0: n-grams of each unit ranked by public word frequencies (no model)
        stages += [("phrases", s.cpu(n * 0.006))]  # measured 6 ms per demo note on a loaded 2-core machine
    stages += [("keywords", keywords)]
    if p.refine:
        stages += [("embedding", n / s.embed), ("retrieval", s.cpu(1.0 + groups * 0.02 + n * groups * 2e-6))]
    if p.realisation:  # public writer: batches of drafts, a second draft for some (realisation.ATTEMPTS)
        stages += [("realisation", s.batches(writer_batches(spec, groups), p.realisation_tokens))]
    if p.token_stage:
        stages += [("private_prediction", s.llm(rows * prompt, rows * p.T))]
    length = p.realisation_tokens if p.text == "realised" else p.T
    if p.self_filter and p.self_filter_mode == "similarity":  # the embedder reads each document and the task
        from core.methods.private_prediction.self_filter import offtopic_sentences

        stages.append(("self_filter", (groups + len(offtopic_sentences())) / s.embed))
    elif p.self_filter:
        stages.append(("self_filter", s.llm(groups * (prompt + length), groups * 4)))
    return stages


def writer_batches(spec: Any, documents: float) -> list[float]:
    """The rows of each batch the public writer is expected to decode for ``documents`` documents of the form
    the run will follow (its demonstrations are written in separate batches)."""
    from core.methods.dp_synrag.forms import with_chosen_form
    from core.methods.dp_synrag.realisation import ATTEMPTS, demonstrations, public_example
    from core.methods.dp_synrag.writing_progress import planned_batches

    p = with_chosen_form(spec).dp_synrag
    shown = len(demonstrations(public_example(p.document_form, p.public_example)))
    return planned_batches(documents, max(shown, 1), ATTEMPTS)


def work_groups(spec: Any, topics: float | None) -> float:
    """One group per topic: at most R, fewer when few topics clear the noise."""
    return float(spec.dp_synrag.R if topics is None else min(topics, spec.dp_synrag.R))


def few_documents_reason(record: Any) -> str:
    """Why a run wrote few documents, from public facts of its record only."""
    topic_units = record.method_parameters.get("min_topic_units")
    need = f"about {float(topic_units):.0f}" if isinstance(topic_units, (int, float)) else "many"
    return (f"DP-SynRAG writes one document per topic, and at ε = {record.epsilon_target:g} a topic "
            f"must be mentioned by {need} units to rise above the noise; few topics did")


def form_lines(spec: Any) -> list[str]:
    """The form the public writer follows and why (``privet plan``), when it writes."""
    from core.methods.dp_synrag.forms import form_choice_words

    words = form_choice_words(spec)
    return [words] if words else []


def plan_notes(spec: Any) -> list[str]:
    """Information about the configuration itself (not warnings): e.g. that no token stage runs."""
    from core.methods.dp_synrag.method import text_stage_notes

    return text_stage_notes(spec.dp_synrag)


def expected_settings_lines(spec: Any, expected: Any) -> list[str]:
    """``privet plan``: R, L (and k with a token stage) as the adaptive default is expected to choose them for
    about this many units, when the spec leaves R (or k with a token stage) to it."""
    p = spec.dp_synrag
    if expected is None or (p.R and (p.k or not p.token_stage)):
        return []
    words = f"at most R = {expected.R} topics, each unit in at most L = {expected.L} of them"
    words += (f", k = {expected.k} private documents per topic" if expected.token_stage else "") + "."
    return ["Settings chosen by the adaptive default for about this many units (the run chooses them from its DP "
            "size count): " + words]


def priced_documents(spec: Any, documents: int) -> Any:
    """The spec the estimate prices when N documents are asked for ([dp_synrag] documents): R raised to N on a
    copy, since the estimate prices min(documents, R) writer calls."""
    priced = copy.deepcopy(spec)
    priced.dp_synrag.R = max(priced.dp_synrag.R, documents)
    return priced


def phrase_lines(spec: Any, corpus: Any, delta: float) -> list[str]:
    """DP phrase and structure discovery (step 0) in ``privet plan``: their ρ and δ, and what they are expected to
    release on these data (on screen only)."""
    return _phrase_lines(spec, corpus, delta) + _structure_lines(spec, corpus, delta)


def _structure_lines(spec: Any, corpus: Any, delta: float) -> list[str]:
    from core.methods.dp_synrag.plan import plan_dp_synrag
    from core.methods.dp_synrag.structure import form_outlook

    plan = plan_dp_synrag(spec.dp_synrag, spec.privacy.epsilon, delta, spec.privacy.conversion)
    if not plan.discovers_forms:
        return []
    o = form_outlook(corpus.units, plan)
    return [
        f"Structure discovery (the corpus's own forms): rho = {plan.rho_openers + plan.rho_skeletons:.5f} and delta = "
        f"{plan.delta_openers + plan.delta_skeletons:.3g}; a form's wording is released when about {plan.tau_o:.0f} "
        f"units share it, a whole form when about {plan.tau_s:.0f} do.",
        f"  Expected on these data (shown here only; never exported): about {o.expected_forms:.0f} forms, standing for "
        f"about {100 * o.expected_share:.0f}% of the units; "
        + ("the documents will be written in them." if o.followed else
           "too few: the documents will follow the shipped form."),
    ]


def _phrase_lines(spec: Any, corpus: Any, delta: float) -> list[str]:
    if not spec.dp_synrag.discover_phrases:
        return []
    from core.methods.dp_synrag.phrases import phrase_outlook
    from core.methods.dp_synrag.vocabulary import load_vocabulary
    from core.methods.dp_synrag.plan import plan_dp_synrag

    if spec.data.label_column:  # per class: the method's own ε and δ (the class counts take their share)
        from core.methods.class_conditional import ClassConditional, method_for

        method = method_for(spec)
        assert isinstance(method, ClassConditional)
        split = method.split(spec, delta, len(corpus.units))
        spec, delta = split.inner_spec, split.inner_delta
    plan = plan_dp_synrag(spec.dp_synrag, spec.privacy.epsilon, delta, spec.privacy.conversion)
    o = phrase_outlook(corpus.units, load_vocabulary(spec.dp_synrag.domain_lists), plan)
    return [
        f"Phrase discovery (first stage): rho = {o.rho:.5f} and delta_p = {o.delta:.3g} (the chance that a phrase of "
        f"one unit alone is released); epsilon is converted at delta - delta_p = {delta - o.delta:.3g}.",
        f"  A phrase is released half the time when about {o.units_for_even_odds:.0f} units use it, 95% of the time "
        f"at about {o.units_for_95:.0f} (noise sigma_p = {o.sigma:.3g}, threshold {o.threshold:.3g}).",
        f"  Expected phrases released on these data: about {o.expected_released:.0f} (shown here only; never exported).",
    ]


def spec_problems(spec: Any) -> list[str]:
    """The shape settings' checks (docs/method.md §6.2)."""
    return list(spec.dp_synrag.shape_problems())


def public_defaults(spec: Any) -> Any:
    """The spec with the document form and L chosen by the public rules (the adaptive default, a copy)."""
    from core.methods.dp_synrag.adaptive import with_public_defaults

    return with_public_defaults(spec)


def check_corpus(spec: Any, corpus: Any) -> None:
    """A pasted real document as the example of the form: refused before any charge."""
    from core.methods.dp_synrag.realisation import check_spec_example

    check_spec_example(spec, corpus)


def example_problem(document_form: str, example: str, corpus: Any) -> str:
    """Whether the public example of the document form looks like a real document of ``corpus`` ("" if not)."""
    from core.methods.dp_synrag.realisation import example_problem as problem, public_example

    return problem(public_example(document_form, example), corpus)  # full texts, not truncated units


def released_allocation(run_dir: Any) -> list:
    """A finished run's topics: word, released count and documents (released values only)."""
    from core.methods.dp_synrag.shape import released_allocation as allocation

    return allocation(run_dir)


FORMS_CHECKPOINT = "form_skeletons"  # the released skeletons: {"items": [skeleton, ...], "counts": [noisy count, ...]}
SIZE_CHECKPOINT = "size"  # the released size count: [n̂]


def released_forms(run_dir: Any) -> list:
    """A finished run's own forms for the Review page: ``[ReleasedFormsView]`` (the released skeletons with their
    noisy counts, largest first, whether the documents were written in them, and the shipped form followed
    otherwise), or [] when the run looked for no forms. Read from the run's checkpoints (DP outputs) and its
    spec; whether they were followed is decided as the run decided it (``structure.follows_forms`` on the released
    size count, or the public size bound). With a label column, every class's forms together."""
    import json
    from pathlib import Path

    from core.common.checkpoints import Checkpoints
    from core.specs.method_catalogue import ReleasedFormsView
    from core.methods.dp_synrag.structure import ReleasedForms, follows_forms

    root = Path(run_dir) / "checkpoints" / "dp_synrag"
    if not root.is_dir():
        return []
    spec = _run_spec(Path(run_dir))
    bound = float(spec.dp_synrag.size_bound) if spec is not None and spec.dp_synrag.size_bound else None
    forms: list[tuple[str, float]] = []
    followed = searched = False
    for folder in [root, *sorted(p for p in root.glob("class-*") if p.is_dir())]:
        store = Checkpoints(folder)
        if not store.has(FORMS_CHECKPOINT):
            continue
        try:
            saved = store.load(FORMS_CHECKPOINT)
            released = ReleasedForms(tuple(str(s) for s in saved["items"]), tuple(float(c) for c in saved["counts"]))
            size = float(store.load(SIZE_CHECKPOINT)[0]) if store.has(SIZE_CHECKPOINT) else None
        except (OSError, ValueError, KeyError, TypeError, IndexError, json.JSONDecodeError):
            continue
        searched = True
        forms += zip(released.skeletons, released.counts)
        followed = followed or follows_forms(released, bound or size)
    if not searched:
        return []
    forms.sort(key=lambda form: -form[1])
    return [ReleasedFormsView(tuple(forms), followed, _fallback_form(spec))]


def _run_spec(run_dir: Any) -> Any:
    """The spec a run ran under (its run.json), or None."""
    import json

    from core.specs.runspec import RunSpec

    try:
        return RunSpec.from_dict(json.loads((run_dir / "run.json").read_text(encoding="utf-8"))["spec"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _fallback_form(spec: Any) -> str:
    """The plain name of the shipped form a run follows when no form of its corpus is followed ("Case file")."""
    from core.methods.document_forms import FORM_LABELS, reference_form

    if spec is None:
        return ""
    p = spec.dp_synrag
    label = FORM_LABELS.get(reference_form(p.document_form, p.public_example, spec.task), "")
    return label.replace(" (shipped example)", "")


def stated_unit_bound(spec: Any) -> int:
    """The public upper bound on the units ``[dp_synrag] size_bound`` states (0: none)."""
    return int(spec.dp_synrag.size_bound)


FACTS = MethodFacts(
    stage_labels=STAGE_LABELS,
    parameter_meanings=PARAMETER_MEANINGS,
    work=work,
    work_groups=work_groups,
    few_documents_reason=few_documents_reason,
    parameters_not_used=parameters_not_used,
    plan_header=form_lines,
    plan_lines=phrase_lines,
    stated_unit_bound=stated_unit_bound,
    plan_notes=plan_notes,
    expected_settings_lines=expected_settings_lines,
    priced_documents=priced_documents,
    spec_problems=spec_problems,
    public_defaults=public_defaults,
    check_corpus=check_corpus,
    example_problem=example_problem,
    released_allocation=released_allocation,
    released_forms=released_forms,
    wizard=WizardOptions(documents="topics", cluster_size=True, self_filter=True, document_form=True, topic_names=True),
)
