"""The echo's lookup per decoding step: the counted, sorted index (``EchoIndex``) against the direct
comparison of every row with every remembered n-gram (the rule as first built, round 4 session 13), side by
side in one run, on the CPU, with random token ids (SmolLM2's vocabulary size) and the batch's own windows.

    PYTHONPATH=. .venv/bin/python bench/echo_lookup.py [--documents 500,2000,8000] [--rows 16,64] [--tokens 80]
"""

from __future__ import annotations

import argparse
import time

import torch

from core.methods.dp_synrag.write.echo import EchoIndex, echo_counts, last_tokens

VOCAB = 49152


def direct_counts(remembered: torch.Tensor, written: torch.Tensor, length: torch.Tensor, vocab: int) -> torch.Tensor:
    """The first version: every row against every remembered and batch-written n-gram (``[rows, G]``)."""
    n = remembered.shape[1]
    k = n - 1
    windows = written.unfold(1, n, 1)
    place = torch.arange(windows.shape[1])
    table = torch.cat([remembered, windows[place[None, :] + n <= length[:, None]]])
    counts = torch.zeros((written.shape[0], vocab + 1), dtype=torch.float32)
    suffix = last_tokens(written, length, k)
    hit = (table[None, :, :k] == suffix[:, None, :]).all(-1) & (length >= k)[:, None]
    after = torch.where(hit, table[None, :, k].clamp(max=vocab), vocab)
    return counts.scatter_add_(1, after, hit.float())


def timed(fn, repeats: int) -> float:
    fn()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", default="500,2000,8000")
    parser.add_argument("--rows", default="16,64")
    parser.add_argument("--tokens", type=int, default=80, help="tokens per remembered document")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    torch.manual_seed(0)  # benchmark inputs only; no noise is drawn here
    print("| documents remembered | n-grams | rows | direct ms/step | indexed ms/step | speed-up | equal |")
    print("|---|---|---|---|---|---|---|")
    for documents in (int(x) for x in args.documents.split(",")):
        # a Zipf-like token mix, so common prefixes have many continuations as in prose
        ids = torch.multinomial(1.0 / torch.arange(1, VOCAB + 1).float(), documents * args.tokens, replacement=True)
        docs = ids.reshape(documents, args.tokens)
        remembered = docs.unfold(1, 3, 1).reshape(-1, 3)
        index = EchoIndex.of(remembered)
        for rows in (int(x) for x in args.rows.split(",")):
            written = docs[:rows, :40].clone()
            length = torch.full((rows,), 40)
            def old(w=written, m=length, r=remembered) -> torch.Tensor:
                return direct_counts(r, w, m, VOCAB)

            def new(w=written, m=length, i=index) -> torch.Tensor:
                return echo_counts(i, w, m, VOCAB)

            direct, indexed, same = timed(old, args.repeats), timed(new, args.repeats), torch.equal(old(), new())
            print(f"| {documents} | {remembered.shape[0]} | {rows} | {direct * 1e3:.1f} | {indexed * 1e3:.1f} | "
                  f"{direct / indexed:.1f}× | {same} |")


if __name__ == "__main__":
    main()
