"""Evaluation and audit (docs/method.md §4–§5): utility, leakage, quality and membership inference.

Modules, one idea each: ``config`` (scales, datasets), ``data`` (member/non-member split,
canaries, questions), ``runs`` (synthetic corpora through the real pipeline), ``retrieval``,
``utility``, ``leakage``, ``scoring`` (teacher-forced NLL), ``membership``, ``quality``,
``dp_rag`` (query-time baseline), ``evaluate`` (orchestration), ``report`` (JSON + plots),
``cli`` (``privet evaluate``). Results are for the custodian; never exported.
"""
