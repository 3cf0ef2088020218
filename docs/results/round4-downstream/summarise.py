"""Build docs/results/round4-downstream/results.json from the runs' own downstream.json (issue 34's targets)."""
import json
import sys
from pathlib import Path

root = Path(sys.argv[1])
runs = {"healthtweets-I": "85fabc5 (main)", "news-J": "18a2474 (branch downstream: labels first)",
        "healthtweets-K": "18a2474 (branch downstream: labels first)",
        "../news/downstream.json": "901cd08 (main, session 3: run H)",
        "../healthtweets/downstream-rpsg.json": "53d4b3e (session 3: RPSG)"}
out = {"issue": 34, "classifier_for_targets": "tfidf", "runs": []}
for name, commit in runs.items():
    f = root / name if name.endswith(".json") else root / name / "downstream.json"
    if not f.exists():
        continue
    d = json.loads(f.read_text())
    rows = {r["kind"] if r["kind"] != "synthetic" else r["corpus"]: r for r in d["rows"]}
    base = {k: rows[k] for k in ("real_sample", "public_only", "majority") if k in rows}
    entry = {"folder": name, "commit": commit, "dataset": d["dataset"], "command": d["command"],
             "seconds": d["seconds"], "baselines": {k: {"n": r["n_train"], "tfidf": r["tfidf"]["accuracy"],
                                                       "embedding": r["embedding"]["accuracy"]} for k, r in base.items()},
             "synthetic": []}
    for r in d["rows"]:
        if r["kind"] != "synthetic":
            continue
        acc = r["tfidf"]["accuracy"]
        real = base["real_sample"]["tfidf"]["accuracy"]
        entry["synthetic"].append({
            "corpus": r["corpus"], "method": r["method"], "epsilon": r["epsilon"], "n": r["n_train"],
            "tfidf": r["tfidf"], "embedding": r["embedding"], "rho_planned": r.get("rho_planned"),
            "rho_charged": r.get("rho_charged"),
            "targets_tfidf": {"above_public_only": acc > base["public_only"]["tfidf"]["accuracy"],
                              "above_majority": acc > base["majority"]["tfidf"]["accuracy"],
                              "ratio_to_real_sample": round(acc / real, 3),
                              "at_least_0.7x_real": acc >= 0.7 * real},
            **({"membership": r["membership"]} if "membership" in r else {}),
        })
    if "membership" in d:
        entry["membership"] = [{"corpus": m["corpus"], "attacks": [
            {**a, "ci_covers_0.5": a["ci_low"] <= 0.5 <= a["ci_high"]} for a in m["attacks"]]} for m in d["membership"]]
    out["runs"].append(entry)
(root / "results.json").write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
print(json.dumps(out, indent=1)[:3000])
