"""The public-only baseline: a public writer with no private data at all (ε = 0).

The packaged model writes ``n`` documents from the public task description alone (and, when the
dataset gives one, a public *invented* example of the document form), with ordinary sampling. Its
prompts hold nothing else: no member text, no released DP output. A DP corpus that does not beat
this row carries nothing a public model did not already know, and has no reason to exist.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.common.prompts import render

PUBLIC_ONLY_LABEL = "public-only (ε = 0, no private data)"
PUBLIC_ONLY_METHOD = "public_only"
PUBLIC_ONLY_TEMPERATURE = 0.8  # sampled, so that n prompts give n different documents


def public_only_prompt(task: str, example: str = "") -> str:
    """The one prompt of the baseline: the public task, and the public example of the form if given."""
    if example.strip():
        return render("public_only_example", task=task, example=example.strip())
    return render("public_only", task=task)


def public_only_documents(llm, task: str, n: int, max_new_tokens: int, example: str = "") -> list[str]:
    """``n`` documents sampled from the public prompt (empty completions dropped)."""
    if n < 1:
        return []
    prompts: Sequence[str] = [public_only_prompt(task, example)] * n
    texts = llm.generate(list(prompts), max_new_tokens, PUBLIC_ONLY_TEMPERATURE)
    return [t.strip() for t in texts if t.strip()]
