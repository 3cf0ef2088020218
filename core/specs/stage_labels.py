"""The plain names of the stages a run reports: for the CLI's progress lines, the desktop app and the certificate.

The shared stages' names are here; each method's own are in its package (``MethodFacts.stage_labels`` and
``round_labels`` in the method catalogue). The progress events themselves are ``core.common.progress``'s.
"""

from __future__ import annotations

from collections.abc import Mapping

from core.specs import method_catalogue


# Plain names of the stages every method shares (the pipeline's, private prediction's, the label counts');
# each method's own are in its package (``core.specs.method_catalogue.MethodFacts.stage_labels``).
SHARED_STAGE_LABELS: dict[str, str] = {
    "models": "loading the models",
    "embedding": "reading the documents",
    "class_counts": "counting the units per label (with noise)",
    "topic_labels": "counting each topic's units per label (with noise)",
    "private_prediction": "writing synthetic documents",
    "self_filter": "checking the synthetic documents",
    "export": "writing the release and its certificate",
    "fidelity": "comparing the synthetic documents with yours (on screen only)",
    "run": "the run",
}
# Plain names of every stage a run reports, for the CLI's progress lines and the desktop app: the shared ones
# and every registered method's (read when asked).
STAGE_LABELS: Mapping[str, str] = method_catalogue.RegisteredWords(SHARED_STAGE_LABELS, "stage_labels")


def stage_label(stage: str) -> str:
    """The plain name of a stage (its key with spaces when no name is known)."""
    head, _, round_no = stage.rpartition("_")
    if round_no.isdigit():
        for method in method_catalogue.METHODS:
            words = method_catalogue.facts(method.key).round_labels.get(head)
            if words:
                return words.format(round=round_no)
    return STAGE_LABELS.get(stage, stage.replace("_", " "))
