"""How the public role rule (core/methods/dp_synrag/write/roles.py) types words whose role is known.

* the demo clinic's catalogue (core/demo/clinic.py: invented disease and drug names, real symptom
  phrases), with morphology alone and with the ICD-10-CM list on; the generator's invented words use
  endings that are real medical suffixes and INN stems (and a few that are not: -ora, -ectia, -xane, -afen),
  so this check is favourable to the rule;
* real words: the ICD-10-CM condition names (chapters A-Q) and symptom names (chapter R only) of the shipped
  list, with morphology alone; and real drug names, the ``REAL_DRUGS`` below (generic names from the WHO
  Model List of Essential Medicines, 23rd list, 2023, taken by hand across its sections), none of them
  tuned to the rule.

With ``--ask``, the same words that the lists and morphology leave untyped are then given to the packaged
model (source 4): its clear answers (``roles.clear_answers``), of which the product takes the drug and symptom
ones (``roles.ASK_TRUSTED``), are tallied by true role (a stride sample of
``--conditions`` ICD-10-CM condition names, to keep it to a few CPU-minutes).

    PYTHONPATH=. .venv/bin/python bench/roles.py [--ask] [--conditions 400]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from core.evaluation.roles import clinic_truth
from core.methods.dp_synrag.write import roles
from core.common.paths import resources_dir

REAL_DRUGS = (
    "amoxicillin", "ampicillin", "benzylpenicillin", "cefalexin", "ceftriaxone", "ciprofloxacin", "clarithromycin",
    "azithromycin", "doxycycline", "gentamicin", "metronidazole", "nitrofurantoin", "fluconazole", "aciclovir",
    "oseltamivir", "tenofovir", "lamivudine", "zidovudine", "isoniazid", "rifampicin", "ibuprofen", "paracetamol",
    "morphine", "lidocaine", "bupivacaine", "enalapril", "lisinopril", "losartan", "amlodipine", "bisoprolol",
    "atenolol", "hydrochlorothiazide", "furosemide", "simvastatin", "atorvastatin", "heparin", "enoxaparin",
    "warfarin", "metformin", "gliclazide", "insulin", "levothyroxine", "omeprazole", "ranitidine", "ondansetron",
    "salbutamol", "budesonide", "beclometasone", "prednisolone", "dexamethasone", "hydrocortisone", "fluoxetine",
    "amitriptyline", "diazepam", "lorazepam", "haloperidol", "risperidone", "carbamazepine", "valproic acid",
    "levodopa", "methotrexate", "imatinib", "trastuzumab", "rituximab", "tamoxifen", "allopurinol", "sumatriptan",
)


def tally(words, sources: roles.RoleSources) -> Counter:
    return Counter(roles.role_of(w, sources) or "none" for w in words)


def asked_tally(label: str, words, sources: roles.RoleSources, llm) -> None:
    """The packaged model's clear answers for the ``words`` the other sources leave untyped."""
    untyped = [w for w in words if roles.role_of(w, sources) is None]
    start = time.perf_counter()
    asked = roles.clear_answers(llm, untyped)
    took = time.perf_counter() - start
    print(f"  {label:32s} untyped {len(untyped):4d} of {len(words):4d}; asked: "
          f"{dict(Counter(asked.get(w, 'none') for w in untyped))} ({took:.0f} s)")
    print("    e.g.", ", ".join(f"{w}={asked.get(w, 'none')}" for w in untyped[:8]))


def ask(conditions_sample: int) -> None:
    from core.models.registry import load_language_model
    from core.specs.runspec import ModelChoice

    llm = load_language_model(ModelChoice())
    public, icd = roles.RoleSources.of(()), roles.RoleSources.of(["icd10-cm"])
    truth = clinic_truth(resources_dir() / "demo" / "clinic" / "diseases.json")
    print("the packaged model's clear answers (source 4; drug and symptom ones taken), on words the other sources "
          "leave untyped")
    for role in roles.ROLES:
        asked_tally(f"demo {role}s (with ICD-10-CM)", [w for w, r in truth.items() if r == role], icd, llm)
    vocab = resources_dir() / "vocab"
    symptoms = sorted(set(roles._lines(vocab / "icd10-cm.symptoms.txt")))
    conditions = [w for w in roles._lines(vocab / "icd10-cm.txt") if w not in set(symptoms)]
    stride = max(1, len(conditions) // conditions_sample)
    asked_tally("ICD-10-CM conditions (sample)", conditions[::stride][:conditions_sample], public, llm)
    asked_tally("ICD-10-CM chapter R symptoms", symptoms, public, llm)
    asked_tally("WHO essential medicines", list(REAL_DRUGS), public, llm)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ask", action="store_true", help="also ask the packaged model (source 4)")
    parser.add_argument("--conditions", type=int, default=400, help="ICD-10-CM condition names asked (stride sample)")
    args = parser.parse_args()
    public, icd = roles.RoleSources.of(()), roles.RoleSources.of(["icd10-cm"])
    truth = clinic_truth(resources_dir() / "demo" / "clinic" / "diseases.json")
    print("demo catalogue (true role: assigned role counts)")
    for name, sources in (("morphology", public), ("morphology + ICD-10-CM", icd)):
        for role in roles.ROLES:
            words = [w for w, r in truth.items() if r == role]
            print(f"  {name:24s} {role:9s} n={len(words):3d} {dict(tally(words, sources))}")
    vocab = resources_dir() / "vocab"
    symptoms = set(roles._lines(vocab / "icd10-cm.symptoms.txt"))
    conditions = [w for w in roles._lines(vocab / "icd10-cm.txt") if w not in symptoms]
    print("real words, morphology alone")
    print(f"  ICD-10-CM conditions     n={len(conditions)} {dict(tally(conditions, public))}")
    print(f"  ICD-10-CM chapter R      n={len(symptoms)} {dict(tally(sorted(symptoms), public))}")
    drugs = tally(REAL_DRUGS, public)
    print(f"  WHO essential medicines  n={len(REAL_DRUGS)} {dict(drugs)}")
    print("    untyped:", ", ".join(w for w in REAL_DRUGS if roles.role_of(w, public) is None))
    print("    mistyped:", ", ".join(w for w in REAL_DRUGS if roles.role_of(w, public) not in (None, roles.DRUG)))
    wrong = [w for w in conditions if roles.role_of(w, public) == roles.DRUG]
    print("  ICD conditions typed drug:", ", ".join(wrong[:20]))
    if args.ask:
        ask(args.conditions)


if __name__ == "__main__":
    main()
