"""The run spec: everything a run needs, as a TOML file.

``privet run spec.toml`` and the desktop wizard run exactly the same spec.
"""

from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass, field, fields, is_dataclass, replace
from pathlib import Path
from typing import Any

import tomli_w

from core.errors import PrivetError
from core.models.base import ModelChoice


@dataclass
class DataSpec:
    path: str = ""
    text_column: str = ""  # for .csv/.tsv/.jsonl
    id_column: str = ""
    person_column: str = ""  # when set, the privacy unit is the person
    max_unit_chars: int = 4000
    # The name this data is budgeted under in the ledger (every view of it shares one budget).
    # Empty = the file or folder name, which stays on this machine; a name given here is exported.
    dataset_name: str = ""


@dataclass
class PrivacySpec:
    epsilon: float = 10.0
    delta: float = 0.0  # 0 = the public default: 1e-6, or 1/(10 N) when max_units states N
    max_units: int = 0  # a PUBLIC upper bound N on the number of units (0 = not stated); never the loaded count
    conversion: str = "tight"  # "tight" (Canonne-Kamath-Steinke) or "loose" (seed)


@dataclass
class DPSynRAGSpec:
    K: int = 10  # keywords per unit
    R: int = 500  # clusters (top-R words of the noisy histogram)
    L: int = 5  # clusters per unit at most
    k: int = 80  # target retrieved units per cluster
    T: int = 70  # tokens per synthetic document
    tau: float = 1.0  # sampling temperature
    hist_fraction: float = 0.0  # 0 = the seed defaults expressed as fractions of rho
    mu_fraction: float = 0.0
    theta_fraction: float = 0.0
    min_cluster_size: int = 10  # below: reported as low-signal
    refine: bool = True  # step 3 (noisy centre + threshold); False: S_r = C_r, its budget goes to the tokens
    keywords: str = "vocabulary"  # per-unit keywords: "vocabulary" (rarest entries of V in the text) | "llm"
    topic_words: str = "specific"  # W from the noisy histogram: "specific" (significant, rare in English) | "frequent"
    clip: str = "dclip"  # "dclip" (clamped differences to a public row) | "spec" (SPEC §2.4 clip)
    public_prompt: str = "keyword"  # public row: "keyword" (released w_r + task) | "empty" | "none"
    answer_start: str = "keyword"  # every row's answer starts with the released keyword ("keyword") or not ("none")
    public_weight: float = 1.0  # lambda, weight of the public base (a public constant)
    top_k_plus: int = 0  # 0 = sample over the whole vocabulary; k = over V_k+ from public logits
    self_filter: bool = True
    self_filter_mode: str = "score"  # "score" (teacher-forced YES vs NO, publicly calibrated) | "answer"
    max_prompt_tokens: int = 256
    batch_rows: int = 0  # rows per wave of the private-prediction engine; 0 = from the memory budget
    memory_budget_mb: int = 0  # 0 = automatic
    domain_lists: list[str] = field(default_factory=list)  # extra PUBLIC word lists for the vocabulary

    @property
    def public_row(self) -> str:
        """How each group's public row is written: "none", "empty" or "keyword"."""
        return self.public_prompt

    @property
    def public_anchor(self) -> bool:
        """Whether the groups carry a public row at all."""
        return self.public_prompt != "none"


@dataclass
class RPSGSpec:
    m: int = 5  # candidate abstractions per seed
    similarity_threshold: float = 0.9
    nll_percentile: float = 10.0
    temperature: float = 0.8
    max_new_tokens: int = 120
    n_variants: int = 2
    batch_size: int = 8
    pii_patterns: dict[str, list[str]] = field(default_factory=dict)  # extra regexes per kind, e.g. {"ID": ["MRN-\\d+"]}
    pii_names: list[str] = field(default_factory=list)  # the custodian's own names to mask
    pii_places: list[str] = field(default_factory=list)


@dataclass
class OutputSpec:
    folder: str = ""  # where the release goes; empty = keep the run folder only (export later)
    formats: list[str] = field(default_factory=lambda: ["jsonl", "csv"])
    overwrite: bool = False
    custodian: str = ""
    organisation: str = ""
    irb_protocol: str = ""


@dataclass
class RunSpec:
    method: str = "dp_synrag"  # "dp_synrag", "dp_synth", "rpsg"
    task: str = "Answer questions about the documents in this collection."
    data: DataSpec = field(default_factory=DataSpec)
    privacy: PrivacySpec = field(default_factory=PrivacySpec)
    llm: ModelChoice = field(default_factory=ModelChoice)
    embedder: ModelChoice = field(default_factory=ModelChoice)
    dp_synrag: DPSynRAGSpec = field(default_factory=DPSynRAGSpec)
    rpsg: RPSGSpec = field(default_factory=RPSGSpec)
    output: OutputSpec = field(default_factory=OutputSpec)
    test_mode_seed: int | None = None  # NON-PRIVATE test mode: fixed seed, export refused

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if d["test_mode_seed"] is None:
            del d["test_mode_seed"]
        return d

    def to_toml(self) -> str:
        return tomli_w.dumps(self.to_dict())

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_toml(), encoding="utf-8")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RunSpec":
        return _build(cls, _upgrade(data), "")

    @classmethod
    def load(cls, path: str | Path) -> "RunSpec":
        path = Path(path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise PrivetError(f"Run spec {path} does not exist.", "Check the path.") from None
        except tomllib.TOMLDecodeError as exc:
            raise PrivetError(f"Run spec {path} is not valid TOML: {exc}.", "Fix the line named.") from None
        spec = cls.from_dict(data)
        # Relative data/output paths are relative to the spec file.
        base = path.resolve().parent
        if spec.data.path and not Path(spec.data.path).is_absolute():
            spec.data.path = str(base / spec.data.path)
        if spec.output.folder and not Path(spec.output.folder).is_absolute():
            spec.output.folder = str(base / spec.output.folder)
        spec.dp_synrag.domain_lists = [
            p if Path(p).is_absolute() else str(base / p) for p in spec.dp_synrag.domain_lists
        ]
        for choice_name in ("llm", "embedder"):
            choice = getattr(spec, choice_name)
            if choice.path and not Path(choice.path).is_absolute():
                setattr(spec, choice_name, replace(choice, path=str(base / choice.path)))
        return spec


def _upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """Read round-1 run specs: ``[dp_synrag] public_anchor = true|false`` meant the SPEC clip
    with (true) or without (false) a public row holding the empty-document prompt."""
    section = data.get("dp_synrag")
    if not isinstance(section, dict) or "public_anchor" not in section:
        return data
    section = dict(section)
    anchor = section.pop("public_anchor")
    section.setdefault("public_prompt", "empty" if anchor else "none")
    section.setdefault("clip", "spec")
    return {**data, "dp_synrag": section}


def _build(cls: type, data: dict[str, Any], where: str) -> Any:
    known = {f.name: f for f in fields(cls)}
    unknown = set(data) - set(known)
    if unknown:
        raise PrivetError(
            f"Unknown setting(s) {sorted(unknown)} in [{where or 'top level'}] of the run spec.",
            f"Allowed: {sorted(known)}.",
        )
    kwargs = {}
    defaults = cls()
    for name, value in data.items():
        current = getattr(defaults, name)
        if is_dataclass(current) and isinstance(value, dict):
            kwargs[name] = _build(type(current), value, name)
        else:
            kwargs[name] = value
    return cls(**kwargs)
