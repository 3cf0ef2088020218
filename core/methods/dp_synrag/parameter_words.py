"""DP-SynRAG's words for the certificate, the wizard and ``privet plan``: its stages' plain names, what each of its
settings means, and which settings play no part in a run (public settings only; read by ``facts.py``)."""

from __future__ import annotations

from typing import Any

from core.methods.dp_synrag.release.budget import (
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
    "form_values": "finding the corpus's own forms (their short values)",
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
