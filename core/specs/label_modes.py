"""``[data] label_mode`` (docs/method.md §6.3) in a privacy officer's words: the choices the wizard offers where
the label column is chosen, and what a run of the chosen method will do with the labels.

The words are the core's, so the desktop shows them without naming a method: which methods label by topic is
``core.specs.method_catalogue.topic_label_methods()``; whether a method rewrites each private document (and so keeps each
document's own label, released without differential privacy) is its catalogue entry's ``wizard.documents``.
Public wording only: nothing here reads data.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.specs import method_catalogue
from core.specs.common import LABEL_MODES, DataSpec, label_mode_of


@dataclass(frozen=True)
class LabelModeChoice:
    """One entry of the wizard's "How labels are kept" list: the spec value, its title and its explanation."""

    mode: str  # a value of LABEL_MODES
    title: str
    explanation: str


def _topic_methods() -> str:
    names = method_catalogue.short_names()
    return " and ".join(names.get(key, key) for key in method_catalogue.topic_label_methods())


BY_TOPIC = ("One run over all documents. For each topic, how many of its documents carry each label is released "
            "with noise (a small part of the budget), and each synthetic document takes its label from its topic. "
            "Works when the categories share the corpus's topics.")
PER_CATEGORY = ("Each category is written from its own documents only, for the same privacy budget (the categories "
                "do not overlap). A category needs many documents of its own: a small one yields few documents or "
                "none.")


def label_mode_choices() -> list[LabelModeChoice]:
    """The choices in the order the wizard lists them (the first is the default)."""
    topic = _topic_methods()
    choices = {
        "auto": LabelModeChoice("auto", "Automatic (recommended)",
                                f"By topic with {topic}, per category with the other methods."),
        "topic_labels": LabelModeChoice("topic_labels", f"By topic ({topic} only)", BY_TOPIC),
        "per_class": LabelModeChoice("per_class", "Per category", PER_CATEGORY),
    }
    return [choices[mode] for mode in LABEL_MODES]


def label_mode_words(mode: str, method: str) -> str:
    """What a run of ``method`` does with a label column under ``mode``, in plain words ("" for a mode the method
    cannot use: the run spec's check says why, ``core.specs.common.label_problems``)."""
    resolved = label_mode_of(DataSpec(label_column="label", label_mode=mode), method)
    if resolved == "topic_labels" and method not in method_catalogue.topic_label_methods():
        return ""
    name = method_catalogue.short_names().get(method, method)
    if resolved == "topic_labels":
        return f"With {name}, labels are kept by topic. {BY_TOPIC}"
    words = f"With {name}, labels are kept per category. {PER_CATEGORY}"
    if method_catalogue.facts(method).wizard.documents == "one_per_unit":
        words += (f" {name} rewrites each private document, and each rewrite keeps that document's own label: "
                  "these labels are shown as they are, without differential privacy (the certificate says so).")
    return words + " How many documents carry each label is released with noise."
