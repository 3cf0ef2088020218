# ruff: noqa  (a measurement script kept with its results, run once; not part of Privet)
"""Offline (issue 34): relabel a finished downstream run's written documents from its RELEASED values only (class counts,
topic label counts, corpus shape; the realised texts are synthetic) under several label rules and score TF-IDF + LR
on the same 600 held-out non-members. Usage (from a worktree of bb4e9a0, PYTHONPATH set to it):
  python relabel_offline.py "$PRIVET_HOME/evaluations/*/runs/dp_synrag_eps10" 4.50   # 4.50 = sigma_t at eps 10
Its draws are seeded (evaluation only, not a DP draw)."""

import json
import glob
import sys
import numpy as np

sys.path.insert(0, ".")
from collections import Counter
from core.evaluation.downstream import labelled_rows, split_labelled, evenly, tfidf_predictions, score, real_sample
from core.methods.dp_synrag.shape import CorpusShape
from core.methods.dp_synrag import topic_labels as tl
from core.methods.class_conditional import proportional_quotas

ck = glob.glob(sys.argv[1] + "/checkpoints")[0]
shape = CorpusShape.from_dict(json.load(open(ck + "/corpus-shape.json"))["shape"])
cc = json.load(open(ck + "/class_counts.json"))
labels = cc["labels"]
noisy_cc = np.array(cc["noisy"])
M = np.array(json.load(open(ck + "/topic_labels.json")))
texts = {}
for f in glob.glob(ck + "/realised-*.json"):
    i = int(f.rsplit("-", 1)[1].split(".")[0])
    texts[i] = json.load(open(f))["text"]
idx = sorted(texts)
groups = [shape.groups[i] for i in idx]
rows = labelled_rows("news")
members, non = split_labelled(rows, 1000)
test = evenly(non, 600)
truth = [r.label for r in test]
ttexts = [r.text for r in test]
shares = np.clip(noisy_cc, 0, None)
shares = shares / shares.sum()
rel = tl.ClusterLabels(tuple(labels), M, tuple(shares))
W = tl.topic_weights(shape, rel)
sizes = np.array([groups.count(g) for g in range(len(shape.topics))], float)
rng = np.random.default_rng(0)


def assign(probs):
    out = [None] * len(idx)
    by = {}
    for k, g in enumerate(groups):
        by.setdefault(g, []).append(k)
    for g, ks in by.items():
        for k, j in zip(ks, tl.systematic_labels(probs[g], len(ks), float(rng.random()))):
            out[k] = labels[j]
    return out


def cut(lab):
    q = proportional_quotas(len(lab), list(shares))
    keep = []
    seen = Counter()
    for k in rng.permutation(len(lab)):
        j = labels.index(lab[k])
        if seen[j] < q[j]:
            seen[j] += 1
            keep.append(k)
    return sorted(keep)


def run(name, lab, keep=None):
    keep = list(range(len(lab))) if keep is None else keep
    tr = [texts[idx[k]] for k in keep]
    ty = [lab[k] for k in keep]
    s = score(truth, tfidf_predictions(tr, ty, ttexts))
    print(f"{name:40s} n={len(tr)} acc={s.accuracy:.3f} f1={s.macro_f1:.3f} mix={dict(sorted(Counter(ty).items()))}")


for rep in range(2):
    run("raked [0.5,2] (current)", assign(tl.raked(W, sizes, shares)))
    run("no raking", assign(tl._rows(W, shares)))
    run("full raking [1e-3,1e3]", assign(tl.raked(W, sizes, shares, (1e-3, 1e3))))
    lab = assign(tl.raked(W, sizes, shares))
    run("raked + cut to class quotas", lab, cut(lab))
    lab = [labels[int(np.argmax(W[g]))] for g in groups]
    run("argmax", lab)
    run("argmax + cut", lab, cut(lab))
rs = real_sample(members, len(idx))
s = score(truth, tfidf_predictions(rs.texts, rs.labels, ttexts))
print("real", s)
print("---- sharpen")
from core.methods.class_conditional import allocate
from core.methods.base import SyntheticDoc


def alloc_cut(lab):
    by = {l: [] for l in labels}
    for k, l in enumerate(lab):
        by[l].append(SyntheticDoc(str(k), "", 0, l))
    kept = allocate(by, dict(zip(labels, shares)))
    return sorted(int(d.id) for d in kept)


for rep in range(3):
    for gamma in (1, 2, 4):
        P = tl._rows(W**gamma, shares)
        lab = assign(P)
        run(f"gamma {gamma} + allocate", lab, alloc_cut(lab))
        lab = assign(tl.raked(W**gamma, sizes, shares))
        run(f"gamma {gamma} raked + allocate", lab, alloc_cut(lab))
    lab = [labels[int(np.argmax(W[g]))] for g in groups]
    run("argmax + allocate", lab, alloc_cut(lab))
print("---- threshold")
sig = float(sys.argv[2])
raw = np.asarray([M[list(t.clusters)].sum(axis=0) for t in shape.topics])
ks = np.asarray([[np.sqrt(len(t.clusters))] for t in shape.topics])
for rep in range(3):
    for c in (1.0, 2.0):
        Wt = np.clip(raw - c * sig * ks, 0, None)
        lab = assign(tl._rows(Wt, shares))
        run(f"thr {c} + allocate", lab, alloc_cut(lab))
        lab = assign(tl.raked(Wt, sizes, shares))
        run(f"thr {c} raked + allocate", lab, alloc_cut(lab))
        lab = assign(tl.raked(Wt, sizes, shares))
        run(f"thr {c} raked", lab)
