"""The messages of private prediction (docs/method.md §2.4): each private row's, and the public row's.

A private row's message holds its own unit's document and nothing else private; the public row's holds
only released or public text (a cluster's released words, the public task). The synthetic text of a
group may begin with a public *answer start* that every row already has.
"""

from __future__ import annotations

from typing import Callable, Sequence

from core.models.base import LanguageModel
from core.common.prompts import render


def rephrase_message(document: str) -> str:
    """A private row's message: the seed's rephrase instruction around the unit's own document."""
    return render("rephrase", document=document)


def answer_start(mode: str, keyword: str, related: Sequence[str] = ()) -> str:
    """The public start of cluster r's synthetic text: its released keyword w_r (``"keyword"``),
    w_r with its released co-keywords (``"keywords"``), or nothing."""
    if mode == "none" or not keyword:
        return ""
    if mode == "keyword" or (mode == "keywords" and not related):
        return render("answer_start", keyword=keyword).rstrip("\n")
    if mode == "keywords":
        return render("answer_start_keywords", keyword=keyword, related=", ".join(related)).rstrip("\n")
    raise ValueError(f"unknown answer start mode {mode!r}")


def stand_in_document(keyword: str, related: Sequence[str], task: str) -> str:
    """The public row's stand-in document: released words and the public task only."""
    if related:
        return render("public_document_keywords", keyword=keyword, related=", ".join(related), task=task).rstrip("\n")
    return render("public_document", keyword=keyword, task=task).rstrip("\n")


def public_message(mode: str, task: str, keyword: str = "", related: Sequence[str] = ()) -> str | None:
    """The public row's message (docs/method.md §2.4): no private text, ever.

    ``"empty"``: the rephrase instruction around an empty document. ``"keyword"``: the same
    instruction around a public *stand-in* document built from the cluster's released keyword
    w_r, its released co-keywords (step 2b) and the public task description, so that the public
    row mirrors the private rows' prompt and differs from them only where the documents do.
    ``"none"``: no public row.
    """
    if mode == "none":
        return None
    if mode == "empty" or not keyword:
        return render("rephrase", document="")
    if mode == "keyword":
        return render("rephrase", document=stand_in_document(keyword, related, task))
    raise ValueError(f"unknown public prompt mode {mode!r}")


PREFIX_PROBES = ("a", "Z", "0", "(", "-", "\n", " x", "É", "#")  # public documents of every kind of first character


def template_prefix_length(llm: LanguageModel, private_message: Callable[[str], str] = rephrase_message) -> int:
    """How many first tokens every rephrase prompt takes from the public template (chat template and
    instruction before the document), found from public probe documents only, minus one token in
    case a document's first characters merge with the template's last token. Never computed from
    the private prompts, so sharing these tokens makes no row's computation depend on another row."""
    prompts = llm.chat_prompt_ids([private_message(p) for p in PREFIX_PROBES])
    common = 0
    while all(len(p) > common for p in prompts) and len({p[common] for p in prompts}) == 1:
        common += 1
    return max(0, common - 1)
