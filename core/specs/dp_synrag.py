"""DP-SynRAG's run-spec section ``[dp_synrag]`` and its rules (docs/method.md §2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from core.specs.document import DocumentSpec
from core.specs.document_forms import DOCUMENT_FORMS
from core.specs.rules import (
    MAX_CLUSTERS,
    MAX_KEYWORDS,
    MAX_PHRASES_PER_UNIT,
    MAX_PROMPT_TOKENS,
    MAX_TOKENS,
    MAX_UNITS_PER_CLUSTER,
    MAX_VOCABULARY,
    Rule,
    flag,
    number,
    text_rule,
    whole,
)

# The size limits live in core.specs.rules (one table, each with why); these names stay importable here.
__all__ = [
    "DOCUMENT_COUNT_CHOICES", "DOCUMENT_FORMS", "MAX_CLUSTERS", "MAX_KEYWORDS", "MAX_PROMPT_TOKENS", "MAX_TOKENS",
    "MAX_UNITS_PER_CLUSTER", "TEXT_MODES", "DPSynRAGSpec", "documents_setting_words",
]

TEXT_MODES = ("topic_line", "private", "realised", "realised+private")
MAX_DOCUMENTS = 20_000  # the most documents a run writes (each is one call of the writer): a public cap
CORPUS_SIZE = -1  # ``documents = -1``: about as many documents as the corpus's released size
# ``documents = -2`` (the default): about as many as the corpus's released size, at least one per topic and at most
# AUTOMATIC_MOST_DOCUMENTS (each document is one writer call: a public bound on the time of a run nobody tuned)
AUTOMATIC_DOCUMENTS = -2
AUTOMATIC_MOST_DOCUMENTS = 200
# the choices of ``documents`` other than a number, in the words the Task page shows
DOCUMENT_COUNT_CHOICES = (
    (f"Automatic: about as many as the data hold, at most {AUTOMATIC_MOST_DOCUMENTS} and at least one per topic",
     AUTOMATIC_DOCUMENTS),
    ("One per topic found", 0),
    ("About as many as the data hold", CORPUS_SIZE),
)


def documents_setting_words(documents: int) -> str:
    """How many documents ``documents`` asks for, in words (the Task page's note)."""
    if documents > 0:
        return f"{documents} documents"
    if documents == 0:
        return "one document per topic"
    words = "about as many documents as the data hold people or documents (read from a noisy count)"
    if documents == AUTOMATIC_DOCUMENTS:
        words += f", at most {AUTOMATIC_MOST_DOCUMENTS} and at least one per topic"
    return words
LENGTHS = ("auto", "form", "dp", "none")


@dataclass
class DPSynRAGSpec:
    K: int = 10  # keywords per unit
    # R, L and k: 0 = chosen by the adaptive default (core/methods/dp_synrag/shape/adaptive.py, docs/method.md §2.7):
    # L from the way of writing (public), R and k from the released DP size count (or ``size_bound``).
    R: int = 0  # clusters (at most R topic words of the noisy histogram)
    L: int = 0  # clusters per unit at most
    k: int = 0  # target retrieved units per cluster
    size_bound: int = 0  # a PUBLIC upper bound on the units (people) the custodian states; 0 = a DP size count
    size_fraction: float = 0.0  # the DP size count's share; 0 = the plan's default (privet plan shows it)
    T: int = 70  # tokens per synthetic document
    tau: float = 1.0  # sampling temperature
    hist_fraction: float = 0.0  # 0 = the plan's default (privet plan shows it)
    mu_fraction: float = 0.0
    theta_fraction: float = 0.0
    cluster_keywords: int = 5  # M: co-keywords released per cluster with their own noise (0 = none)
    cluster_keywords_fraction: float = 0.0  # their share of the budget; 0 = the plan's default (privet plan shows it)
    min_cluster_size: int = 10  # below: reported as low-signal
    refine: bool = False  # step 3 (noisy centre + threshold); False: S_r = C_r, its budget goes to the tokens
    keywords: str = "vocabulary"  # per-unit keywords: "vocabulary" (entries of V by TF-IDF, public IDF) | "llm"
    topic_words: str = "specific"  # W from the noisy histogram: "specific" (significant, rare in English) | "frequent"
    clip: str = "dclip"  # "dclip" (clamped differences to a public row) | "spec" (SPEC §2.4 clip)
    public_prompt: str = "keyword"  # public row: "keyword" (released w_r + task) | "empty" | "none"
    answer_start: str = "keywords"  # every answer starts with the released keyword ("keyword"), with it and its
    # released co-keywords ("keywords"), or with nothing ("none")
    public_weight: float = 2.0  # lambda, weight of the public base (a public constant)
    top_k_plus: int = 0  # 0 = sample over the whole vocabulary; k = over V_k+ from public logits
    self_filter: bool = True
    self_filter_mode: str = "similarity"  # "similarity" (embedder, task) | "score" (teacher-forced YES vs NO) | "answer"
    # The longest prompt, rows per wave and the memory budget are every method's: [writing] (core.specs.writing).
    domain_lists: list[str] = field(default_factory=list)  # extra PUBLIC word lists for the vocabulary
    # Step 0, DP phrase discovery (docs/method.md §2.0): the corpus's own frequent 1-3-word phrases
    # extend V. On by default; with a domain list it may be switched off (a list costs no budget).
    discover_phrases: bool = True
    phrases_per_unit: int = 4  # K_p: phrases each unit proposes at most
    phrases_fraction: float = 0.0  # the phrase counts' share; 0 = the plan's default (privet plan shows it)
    phrases_delta_fraction: float = 0.0  # delta's share for a phrase of one unit; 0 = the plan's default (privet plan shows it)
    # Structure discovery (docs/method.md §2.0b, SPEC §7): the corpus's own document forms (skeletons) released by two
    # DP set unions and followed by the public writer. Runs with text = "realised" when no form is chosen by hand
    # (document_form automatic, no public_example); a shipped form is then only the fallback when none is released.
    discover_forms: bool = True
    openers_per_unit: int = 32  # m_o: clause openers each unit proposes at most
    skeletons_per_unit: int = 2  # m_s: skeletons each unit proposes at most (one per document)
    forms_fraction: float = 0.0  # both releases' share of rho; 0 = the plan's default (privet plan shows it)
    forms_delta_fraction: float = 0.0  # their share of delta; 0 = the plan's default (privet plan shows it)
    form_by_rule: bool = False  # set by the public rule: document_form is the task's pick, the fallback of the forms
    # How each synthetic document is written (docs/method.md §2.6): "topic_line" (the released topic line
    # only, no token stage), "private" (private prediction, the seed's step 4), "realised" (a public writer
    # turns the released topic into a document of the corpus's form; no token stage) or "realised+private"
    # (private prediction whose public row is the realised draft and whose rows rewrite their own documents
    # into the same form). Without a token stage its budget share goes to the topics and co-keywords.
    text: str = "realised"  # the one default of library, CLI, wizard and demo (docs/method.md §2.4b)
    # The form of the documents (document_form, public_example) is every method's: [document] (core.specs.document).
    realisation_tokens: int = 80  # tokens of each realised draft (public decoding)
    row_bound: str = "poisson"  # without refinement: each C_r Poisson-subsampled at min(1, k / h'(w_r)) | "none"
    force_length: bool = False  # every group writes exactly T tokens (EOS never sampled); throughput checks only
    # The corpus's shape (docs/method.md §6.2; public ways of writing only; post-processing, no cost): how many
    # documents, allocated across topics by their released counts, each with co-keywords sampled from its
    # topic's released co-keyword counts. -2 (automatic, the default) = about the corpus's size, at least one per
    # topic and at most AUTOMATIC_MOST_DOCUMENTS; 0 = one per topic; N = N documents; -1 = about the corpus's size
    # (the released DP size count, or size_bound), never the true one.
    documents: int = AUTOMATIC_DOCUMENTS
    merge_topics: bool = True  # topics whose released co-keywords overlap strongly become one (docs/method.md §6.2)
    name_topics: bool = True  # a released corpus name is a topic at a lower bar (docs/method.md §2.2)
    # How long each realised document is (docs/method.md §6.2): "form" (the shipped demonstrations' median length,
    # public), "dp" (a noisy median of the units' words per document: a charged stage, length_fraction of ρ),
    # "none" (as the writer wrote it), or "auto" (the default: "dp" with the public writer, text = "realised").
    length: str = "auto"
    length_fraction: float = 0.0  # the DP length statistic's share; 0 = the plan's default (privet plan shows it)

    RULES: ClassVar[dict[str, Rule]] = {
        "text": text_rule("how the documents are written", choices=TEXT_MODES),
        "realisation_tokens": whole("tokens of each realised document", low=8, high=MAX_TOKENS),
        # Upper bounds keep a typo (R = 1e9) from being planned, or charged before running out of memory.
        "K": whole("keywords per unit", high=MAX_KEYWORDS),
        "R": whole("the number of clusters", low=0, high=MAX_CLUSTERS, zero_default=True),
        "L": whole("clusters per unit", low=0, high=MAX_CLUSTERS, zero_default=True),
        "k": whole("retrieved units per cluster", low=0, high=MAX_UNITS_PER_CLUSTER, zero_default=True),
        "size_bound": whole("the public upper bound on the number of people or documents", low=0,
                            high=10**9, zero_default=True),
        "size_fraction": number("the size count's share of the budget", low=0, high=1, open_low=True,
                                open_high=True, zero_default=True),
        "T": whole("tokens per synthetic document", high=MAX_TOKENS),
        "tau": number("the sampling temperature τ", low=0, open_low=True),
        "hist_fraction": number("the histogram's share of the budget", low=0, high=1, open_low=True,
                                open_high=True, zero_default=True),
        "mu_fraction": number("the cluster means' share of the budget", low=0, high=1, open_low=True,
                              open_high=True, zero_default=True),
        "theta_fraction": number("the thresholds' share of the budget", low=0, high=1, open_low=True,
                                 open_high=True, zero_default=True),
        "cluster_keywords": whole("co-keywords released per cluster", low=0, high=MAX_KEYWORDS),
        "cluster_keywords_fraction": number("the co-keywords' share of the budget", low=0, high=1, open_low=True,
                                            open_high=True, zero_default=True),
        "min_cluster_size": whole("the smallest cluster reported as useful", low=0, high=MAX_UNITS_PER_CLUSTER),
        "keywords": text_rule("how keywords are found", choices=("vocabulary", "llm")),
        "topic_words": text_rule("how cluster words are chosen", choices=("specific", "frequent")),
        "clip": text_rule("the clip", choices=("dclip", "spec")),
        "public_prompt": text_rule("the public row", choices=("keyword", "empty", "none")),
        "answer_start": text_rule("the start of each answer", choices=("keyword", "keywords", "none")),
        "public_weight": number("the public base's weight λ", low=0, open_low=True),
        "top_k_plus": whole("candidate tokens (0 = all)", low=0, high=MAX_VOCABULARY),
        "discover_phrases": flag("whether the corpus's own phrases are discovered with DP (step 0)"),
        "phrases_per_unit": whole("phrases each unit proposes", low=1, high=MAX_PHRASES_PER_UNIT),
        "phrases_fraction": number("the phrase discovery's share of the budget", low=0, high=1, open_low=True,
                                   open_high=True, zero_default=True),
        "phrases_delta_fraction": number("the phrase discovery's share of delta", low=0, high=1, open_low=True,
                                         open_high=True, zero_default=True),
        "discover_forms": flag("whether the corpus's own document forms are released with DP and followed"),
        "openers_per_unit": whole("clause openers each unit proposes", low=1, high=MAX_PHRASES_PER_UNIT),
        "skeletons_per_unit": whole("skeletons each unit proposes", low=1, high=MAX_PHRASES_PER_UNIT),
        "forms_fraction": number("the structure discovery's share of the budget", low=0, high=1, open_low=True,
                                 open_high=True, zero_default=True),
        "form_by_rule": flag("whether the document form was chosen by the task's rule (set by Privet)"),
        "forms_delta_fraction": number("the structure discovery's share of delta", low=0, high=1, open_low=True,
                                       open_high=True, zero_default=True),
        "self_filter_mode": text_rule("the self-filter", choices=("similarity", "score", "answer")),
        "row_bound": text_rule("how each cluster's rows are bounded", choices=("poisson", "none")),
        "documents": whole("the number of synthetic documents (-2: automatic, about the size of the corpus up to "
                           f"{AUTOMATIC_MOST_DOCUMENTS}; -1: about the size of the corpus; 0: one per topic)",
                           low=AUTOMATIC_DOCUMENTS, high=MAX_DOCUMENTS),
        "merge_topics": flag("whether topics that describe the same thing are merged"),
        "name_topics": flag("whether the corpus's own released names become topics at the lower bar of a name"),
        "length": text_rule("how long each document is", choices=LENGTHS),
        "length_fraction": number("the length statistic's share of the budget", low=0, high=1, open_low=True,
                                  open_high=True, zero_default=True),
    }

    @property
    def clusters_per_unit(self) -> int:
        """L: as the spec says, else 1 without a token stage and the seed's 5 with one (docs/method.md §2.7)."""
        return int(self.L) if self.L else (5 if self.token_stage else 1)

    @property
    def documents_setting(self) -> int:
        """``documents`` as it applies: automatic (-2) is one per topic (0) unless the public writer realises
        each document (``text = "realised"``): a bare topic line or a charged token stage writes one per topic."""
        if self.documents == AUTOMATIC_DOCUMENTS and self.text != "realised":
            return 0
        return self.documents

    @property
    def length_setting(self) -> str:
        """``length`` as it applies: automatic is the corpus's own length ("dp") when the public writer realises each
        document (``text = "realised"``), else nothing to shape ("none": no stage is charged)."""
        if self.length == "auto":
            return "dp" if self.text == "realised" else "none"
        return self.length

    @property
    def size_count(self) -> bool:
        """Whether the run releases a DP count of its units first: some size-dependent setting (R, or k
        with a token stage) is left to the adaptive default and no public bound was stated."""
        sized = self.documents_setting in (CORPUS_SIZE, AUTOMATIC_DOCUMENTS)
        left = not self.R or (not self.k and (self.token_stage or self.refine)) or sized
        return left and not self.size_bound

    def shape_problems(self) -> list[str]:
        """Settings of the corpus's shape that contradict the way of writing (before anything is charged)."""
        found = []
        if self.documents not in (0, AUTOMATIC_DOCUMENTS) and self.token_stage:
            found.append(f"[dp_synrag] documents = {self.documents} needs a public way of writing (text = \"realised\" "
                         f"or \"topic_line\"): with text = \"{self.text}\" each topic's one document is charged (use "
                         "documents = 0)")
        if self.length == "dp" and self.text != "realised":
            found.append(f"[dp_synrag] length = \"dp\" shapes the public writer's documents (text = \"realised\"); with "
                         f"text = \"{self.text}\" it would be charged for nothing (use length = \"form\")")
        return found

    def discovers_forms_with(self, document: DocumentSpec) -> bool:
        """Whether structure discovery runs under the spec's ``[document]``: on, the public writer alone (``text =
        "realised"``), and no form chosen by hand (no example typed; ``document_form`` automatic, or the task's pick
        as the fallback: ``form_by_rule``)."""
        return (self.discover_forms and self.text == "realised" and not document.public_example.strip()
                and (document.document_form == "" or self.form_by_rule))

    @property
    def token_stage(self) -> bool:
        """Whether private prediction (step 4) runs and is charged."""
        return self.text in ("private", "realised+private")

    @property
    def realisation(self) -> bool:
        """Whether the public writer realises each released topic (step 6, free)."""
        return self.text in ("realised", "realised+private")

    @property
    def public_row(self) -> str:
        """How each group's public row is written: "none", "empty" or "keyword"."""
        return self.public_prompt

    @property
    def public_anchor(self) -> bool:
        """Whether the groups carry a public row at all."""
        return self.public_prompt != "none"

    @property
    def prediction_anchor(self) -> bool:
        """Whether the private-prediction engine reads a public row: the groups' own, or the realised draft
        (``text = "realised+private"``, where the draft is the public row)."""
        return self.public_row != "none" or self.text == "realised+private"


def _is_list_name(entry: str) -> bool:
    """A shipped word list named without a path or suffix (``"icd10-cm"``; see ``privet vocab``): not a file path."""
    return bool(entry) and not any(ch in entry for ch in "/\\.")
