"""DP-SynRAG's facts for the rest of Privet (``core.specs.method_catalogue.MethodFacts``): its stages' plain names,
the certificate's words for its settings, its work estimate, what the wizard and ``privet plan`` show for
it, and why a run of it writes few documents. Public settings only; nothing heavy is imported at the top
(the catalogue imports this module to read a label), so the helpers import their modules when called."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.specs.method_catalogue import MethodFacts, ReleasedFormsView, WizardOptions, WorkSpeeds
from core.methods.dp_synrag.parameter_words import PARAMETER_MEANINGS, STAGE_LABELS, parameters_not_used

if TYPE_CHECKING:  # an annotation only
    from core.specs.runspec import RunSpec

FORMS_CHECKPOINT = "form_skeletons"  # the released skeletons: {"items": [skeleton, ...], "counts": [noisy count, ...]}
SIZE_CHECKPOINT = "size"  # the released size count: [n̂]


class DPSynRAGFacts(MethodFacts):
    """DP-SynRAG's facts: its settings are ``[dp_synrag]`` (``core.specs.dp_synrag``)."""

    stage_labels = STAGE_LABELS
    parameter_meanings = PARAMETER_MEANINGS
    wizard = WizardOptions(documents="topics", cluster_size=True, self_filter=True, document_form=True, topic_names=True)

    def work(self, spec: RunSpec, n_units: int, speeds: WorkSpeeds,
             topics: float | None = None) -> list[tuple[str, float]]:
        """Seconds per stage at the built-in ``speeds`` (``core.run.estimate``); ``topics``: the groups (documents)
        the run is expected to write; R, its most, when not given."""
        p, prompt, s, n = spec.dp_synrag, speeds.prompt, speeds, n_units
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

    def work_groups(self, spec: RunSpec, topics: float | None) -> float:
        """One group per topic: at most R, fewer when few topics clear the noise."""
        return float(spec.dp_synrag.R if topics is None else min(topics, spec.dp_synrag.R))

    def few_documents_reason(self, record: Any) -> str:
        """Why a run wrote few documents, from public facts of its record only."""
        topic_units = record.method_parameters.get("min_topic_units")
        need = f"about {float(topic_units):.0f}" if isinstance(topic_units, (int, float)) else "many"
        return (f"DP-SynRAG writes one document per topic, and at ε = {record.epsilon_target:g} a topic "
                f"must be mentioned by {need} units to rise above the noise; few topics did")

    def parameters_not_used(self, params: dict[str, Any]) -> list[str]:
        return parameters_not_used(params)

    def plan_header(self, spec: RunSpec) -> list[str]:
        """The form the public writer follows and why (``privet plan``), when it writes."""
        from core.methods.dp_synrag.shape.forms import form_choice_words

        words = form_choice_words(spec)
        return [words] if words else []

    def plan_lines(self, spec: RunSpec, corpus: Any, delta: float) -> list[str]:
        """DP phrase and structure discovery (step 0) in ``privet plan``: their ρ and δ, and what they are expected
        to release on these data (on screen only)."""
        return _phrase_lines(spec, corpus, delta) + _structure_lines(spec, corpus, delta)

    def plan_notes(self, spec: RunSpec) -> list[str]:
        """Information about the configuration itself (not warnings): e.g. that no token stage runs."""
        from core.methods.dp_synrag.method import text_stage_notes

        return text_stage_notes(spec.dp_synrag)

    def expected_settings_lines(self, spec: RunSpec, expected: Any) -> list[str]:
        """``privet plan``: R, L (and k with a token stage) as the adaptive default is expected to choose them for
        about this many units, when the spec leaves R (or k with a token stage) to it."""
        p = spec.dp_synrag
        if expected is None or (p.R and (p.k or not p.token_stage)):
            return []
        words = f"at most R = {expected.R} topics, each unit in at most L = {expected.L} of them"
        words += (f", k = {expected.k} private documents per topic" if expected.token_stage else "") + "."
        return ["Settings chosen by the adaptive default for about this many units (the run chooses them from its "
                "DP size count): " + words]

    def priced_documents(self, spec: RunSpec, documents: int) -> RunSpec:
        """The spec the estimate prices when N documents are asked for ([dp_synrag] documents): R raised to N on a
        copy, since the estimate prices min(documents, R) writer calls."""
        priced = copy.deepcopy(spec)
        priced.dp_synrag.R = max(priced.dp_synrag.R, documents)
        return priced

    def spec_problems(self, spec: RunSpec) -> list[str]:
        """The shape settings' checks (docs/method.md §6.2)."""
        return list(spec.dp_synrag.shape_problems())

    def public_defaults(self, spec: RunSpec) -> RunSpec:
        """The spec with the document form and L chosen by the public rules (the adaptive default, a copy)."""
        from core.methods.dp_synrag.shape.adaptive import with_public_defaults

        return with_public_defaults(spec)

    def check_corpus(self, spec: RunSpec, corpus: Any) -> None:
        """A pasted real document as the example of the form: refused before any charge."""
        from core.methods.dp_synrag.write.example_check import check_spec_example

        check_spec_example(spec, corpus)

    def example_problem(self, document_form: str, example: str, corpus: Any) -> str:
        """Whether the public example of the document form looks like a real document of ``corpus`` ("" if not)."""
        from core.methods.dp_synrag.shape.examples import public_example
        from core.methods.dp_synrag.write.example_check import example_problem as problem

        return problem(public_example(document_form, example), corpus)  # full texts, not truncated units

    def released_allocation(self, run_dir: Path | str) -> list[tuple[str, float, int]]:
        """A finished run's topics: word, released count and documents (released values only)."""
        from core.methods.dp_synrag.shape.corpus_shape import released_allocation as allocation

        return allocation(run_dir)

    def released_forms(self, run_dir: Path | str) -> list[ReleasedFormsView]:
        """A finished run's own forms for the Review page: ``[ReleasedFormsView]`` (the released skeletons with their
        noisy counts, largest first, whether the documents were written in them, and the shipped form followed
        otherwise), or [] when the run looked for no forms. Read from the run's checkpoints (DP outputs) and its
        spec; whether they were followed is decided as the run decided it (``structure.follows_forms`` on the
        released size count, or the public size bound). With a label column, every class's forms together."""
        return _released_forms(Path(run_dir))

    def stated_unit_bound(self, spec: RunSpec) -> int:
        """The public upper bound on the units ``[dp_synrag] size_bound`` states (0: none)."""
        return int(spec.dp_synrag.size_bound)


FACTS = DPSynRAGFacts()


def writer_batches(spec: Any, documents: float) -> list[float]:
    """The rows of each batch the public writer is expected to decode for ``documents`` documents of the form
    the run will follow (its demonstrations are written in separate batches)."""
    from core.methods.dp_synrag.shape.examples import demonstrations, public_example
    from core.methods.dp_synrag.shape.forms import with_chosen_form
    from core.methods.dp_synrag.write.realisation import ATTEMPTS
    from core.methods.dp_synrag.write.writing_progress import planned_batches

    form = with_chosen_form(spec).document
    shown = len(demonstrations(public_example(form.document_form, form.public_example)))
    return planned_batches(documents, max(shown, 1), ATTEMPTS)


def _structure_lines(spec: Any, corpus: Any, delta: float) -> list[str]:
    from core.methods.dp_synrag.release.budget import plan_dp_synrag
    from core.methods.dp_synrag.release.structure import form_outlook

    plan = plan_dp_synrag(spec.dp_synrag, spec.privacy.epsilon, delta, spec.privacy.conversion, spec.document)
    if not plan.discovers_forms:
        return []
    o = form_outlook(corpus.units, plan)
    return [
        f"Structure discovery (the corpus's own forms): rho = {plan.rho_forms:.5f} and delta = "
        f"{plan.delta_forms:.3g}; a form's wording is released when about {plan.tau_o:.0f} "
        f"units share it, a whole form when about {plan.tau_s:.0f} do.",
        f"  Expected on these data (shown here only; never exported): about {o.expected_forms:.0f} forms, standing for "
        f"about {100 * o.expected_share:.0f}% of the units; "
        + ("the documents will be written in them." if o.followed else
           "too few: the documents will follow the shipped form."),
    ]


def _phrase_lines(spec: Any, corpus: Any, delta: float) -> list[str]:
    if not spec.dp_synrag.discover_phrases:
        return []
    from core.methods.dp_synrag.release.budget import plan_dp_synrag
    from core.methods.dp_synrag.release.phrases import phrase_outlook
    from core.methods.dp_synrag.vocab.vocabulary import load_vocabulary

    if spec.data.label_column:  # per class: the method's own ε and δ (the class counts take their share)
        from core.methods.class_conditional import ClassConditional, method_for

        method = method_for(spec)
        assert isinstance(method, ClassConditional)
        split = method.split(spec, delta, len(corpus.units))
        spec, delta = split.inner_spec, split.inner_delta
    plan = plan_dp_synrag(spec.dp_synrag, spec.privacy.epsilon, delta, spec.privacy.conversion, spec.document)
    o = phrase_outlook(corpus.units, load_vocabulary(spec.dp_synrag.domain_lists), plan)
    return [
        f"Phrase discovery (first stage): rho = {o.rho:.5f} and delta_p = {o.delta:.3g} (the chance that a phrase of "
        f"one unit alone is released); epsilon is converted at delta - delta_p = {delta - o.delta:.3g}.",
        f"  A phrase is released half the time when about {o.units_for_even_odds:.0f} units use it, 95% of the time "
        f"at about {o.units_for_95:.0f} (noise sigma_p = {o.sigma:.3g}, threshold {o.threshold:.3g}).",
        f"  Expected phrases released on these data: about {o.expected_released:.0f} (shown here only; never exported).",
    ]


def _released_forms(run_dir: Path) -> list[ReleasedFormsView]:
    """``DPSynRAGFacts.released_forms``."""
    import json

    from core.common.checkpoints import Checkpoints
    from core.methods.dp_synrag.release.structure import ReleasedForms, follows_forms

    root = run_dir / "checkpoints" / "dp_synrag"
    if not root.is_dir():
        return []
    spec = _run_spec(run_dir)
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


def _run_spec(run_dir: Path) -> RunSpec | None:
    """The spec a run ran under (its run.json), or None."""
    import json

    from core.specs.runspec import RunSpec

    try:
        return RunSpec.from_dict(json.loads((run_dir / "run.json").read_text(encoding="utf-8"))["spec"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _fallback_form(spec: RunSpec | None) -> str:
    """The plain name of the shipped form a run follows when no form of its corpus is followed ("Case file")."""
    from core.specs.document_forms import FORM_LABELS, reference_form

    if spec is None:
        return ""
    form = spec.document
    label = FORM_LABELS.get(reference_form(form.document_form, form.public_example, spec.task, spec.data.column_names()), "")
    return label.replace(" (shipped example)", "")
