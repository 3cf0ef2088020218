"""How the public role rule (core/methods/dp_synrag/roles.py) types words whose role is known.

* the demo clinic's catalogue (core/demo/generate.py: invented disease and drug names, real symptom
  phrases), with morphology alone and with the ICD-10-CM list on; the generator's invented words use
  endings that are real medical suffixes and INN stems (and a few that are not: -ora, -ectia, -xane, -afen),
  so this check is favourable to the rule;
* real words: the ICD-10-CM condition names (chapters A-Q) and symptom names (chapter R only) of the shipped
  list, with morphology alone; and real drug names, the ``REAL_DRUGS`` below (generic names from the WHO
  Model List of Essential Medicines, 23rd list, 2023, taken by hand across its sections), none of them
  tuned to the rule.

    PYTHONPATH=. .venv/bin/python bench/roles.py
"""

from __future__ import annotations

from collections import Counter

from core.evaluation.roles import clinic_truth
from core.methods.dp_synrag import roles
from core.paths import resources_dir

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


def main() -> None:
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


if __name__ == "__main__":
    main()
