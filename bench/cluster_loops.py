"""The direct loops of soft clustering and co-keyword counting vs the indexed ones (cluster_index.py),
side by side on random Zipf-distributed keyword sets (R = 500 words, 2,000 candidates, L = M = 5).
The direct loops are the reference implementations of tests/methods/dp_synrag/test_cluster_index.py.

    .venv/bin/python bench/cluster_loops.py [--units 10000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import test_cluster_index as reference  # noqa: E402

from core.methods.dp_synrag.release.cluster_index import cluster_keyword_counts_indexed, soft_clusters_indexed  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--units", type=int, default=10_000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    vocab = np.array([f"w{i}" for i in range(30_000)])
    p = 1.0 / np.arange(1, len(vocab) + 1)
    draws = rng.choice(len(vocab), size=(args.units, 10), p=p / p.sum())
    keywords = [sorted(set(vocab[row].tolist())) for row in draws]
    W, candidates = vocab[:500].tolist(), vocab[:2000].tolist()
    start = time.perf_counter()
    loop_clusters = reference.reference_clusters(keywords, W, 5)
    t_loop = time.perf_counter() - start
    start = time.perf_counter()
    clusters = soft_clusters_indexed(keywords, W, 5)
    t_index = time.perf_counter() - start
    assert clusters == loop_clusters
    start = time.perf_counter()
    loop_counts = reference.reference_counts(keywords, clusters, W, candidates, 5)
    c_loop = time.perf_counter() - start
    start = time.perf_counter()
    counts = cluster_keyword_counts_indexed(keywords, clusters, W, candidates, 5, reference.specificity)
    c_index = time.perf_counter() - start
    assert (counts == loop_counts).all()
    print(f"n={args.units}: soft_clusters loop {t_loop:.1f} s, indexed {t_index:.2f} s; "
          f"co-keyword counts loop {c_loop:.1f} s, indexed {c_index:.2f} s")


if __name__ == "__main__":
    main()
