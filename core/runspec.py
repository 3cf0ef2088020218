"""The run spec: everything a run needs, as a TOML file.

``privet run spec.toml`` and the desktop wizard run exactly the same spec.

Every setting is validated when a spec is loaded (``from_dict``/``load``) and again before a plan
or a run (``RunSpec.check()``), before anything is loaded or charged: each spec dataclass carries
``RULES`` (a ``Rule`` per field: type and range, in plain words). A field without a rule is still
type-checked against its default (a number stays a number, a flag a flag). To add a setting: add
the field and, if it has a range, its rule beside it. The desktop wizard uses the same
``RunSpec.problems()`` / ``RunSpec.warnings()``.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import asdict, dataclass, field, fields, is_dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from core import method_catalogue
from core.errors import PrivetError
from core.wording import MODERATE_MAX, WEAK_MAX, factor_words


@dataclass(frozen=True)
class ModelChoice:
    """Which model to load, as a run spec names it.

    source: "default" (the packaged model), "hf" (a local Hugging Face folder),
            "gguf" (a local GGUF file) or "tiny-random" (a tiny random model for tests only).
    backend: "auto", "transformers" or "llamacpp".
    device: "auto", "cpu" or "cuda" (or "cuda:N").
    """

    source: str = "default"
    path: str = ""
    backend: str = "auto"
    device: str = "auto"


# Size limits (far above any useful setting): the histogram, clusters and token buffers grow with them.
MAX_CLUSTERS = 50_000  # R (the seeds use 500, 1000 for very broad corpora)
MAX_KEYWORDS = 1_000  # K
MAX_UNITS_PER_CLUSTER = 1_000_000  # k
MAX_TOKENS = 4_096  # T
MAX_PROMPT_TOKENS = 32_768

# Above this epsilon the run goes ahead with a loud warning; above the hard limit it is refused.
WEAK_EPSILON = WEAK_MAX  # core.wording: above it, no meaningful protection
MAX_EPSILON = 100.0


@dataclass(frozen=True)
class Rule:
    """What one setting may hold, and what it means (for messages).

    ``kind``: "whole" (an integer), "number" (int or float, finite), "text", "flag" (true/false),
    "texts" (a list of text), "mapping" (text -> list of text). ``low``/``high`` bound numbers
    (``open_low``/``open_high``: the bound itself is excluded); ``zero_default``: 0 also allowed,
    meaning "the default"; ``choices``: allowed values of a text (or of each item of texts);
    ``optional``: may be missing (None).
    """

    kind: str
    meaning: str = ""
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    open_high: bool = False
    zero_default: bool = False
    choices: tuple[str, ...] = ()
    optional: bool = False

    def range_words(self) -> str:
        parts = []
        if self.low is not None:
            parts.append(f"{'>' if self.open_low else '≥'} {self.low:g}")
        if self.high is not None:
            parts.append(f"{'<' if self.open_high else '≤'} {self.high:g}")
        words = " and ".join(parts)
        if self.zero_default:
            words += " (or 0 for the default)"
        return words


def whole(meaning: str, low: int | None = 1, high: int | None = None, zero_default: bool = False) -> Rule:
    return Rule("whole", meaning, low=low, high=high, zero_default=zero_default)


def number(meaning: str, low: float | None = None, high: float | None = None, open_low: bool = False,
           open_high: bool = False, zero_default: bool = False) -> Rule:
    return Rule("number", meaning, low=low, high=high, open_low=open_low, open_high=open_high,
                zero_default=zero_default)


def text(meaning: str = "", choices: tuple[str, ...] = ()) -> Rule:
    return Rule("text", meaning, choices=choices)


text_rule = text  # for sections with a field named "text"


def flag(meaning: str = "") -> Rule:
    return Rule("flag", meaning)


def texts(meaning: str = "", choices: tuple[str, ...] = ()) -> Rule:
    return Rule("texts", meaning, choices=choices)


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return f"true/false ({str(value).lower()})"
    if isinstance(value, str):
        return "text"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__


def check_value(rule: Rule, value: Any) -> tuple[Any, str]:
    """``(normalised value, "")`` when ``value`` obeys ``rule``, else ``(value, what is wrong)``."""
    if value is None:
        return (None, "") if rule.optional else (value, "is missing")
    if rule.kind in ("whole", "number"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return value, f"must be a number, not {_type_name(value)} (write it without quotes)"
        if rule.kind == "whole":
            if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
                return value, f"must be a whole number (got {value!r})"
            value = int(value)
        else:
            if not math.isfinite(value):
                return value, f"must be a finite number (got {value!r})"
            value = float(value)
        if rule.zero_default and value == 0:
            return value, ""
        too_low = rule.low is not None and (value <= rule.low if rule.open_low else value < rule.low)
        too_high = rule.high is not None and (value >= rule.high if rule.open_high else value > rule.high)
        if too_low or too_high:
            return value, f"= {value!r} is out of range: it must be {rule.range_words()}"
        return value, ""
    if rule.kind == "flag":
        if not isinstance(value, bool):
            return value, f"must be true or false, not {_type_name(value)}"
        return value, ""
    if rule.kind == "text":
        if not isinstance(value, str):
            return value, f"must be text in quotes, not {_type_name(value)}"
        if rule.choices and value not in rule.choices:
            return value, f"= {value!r} is not one of: {', '.join(rule.choices)}"
        return value, ""
    if rule.kind == "texts":
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            return value, f"must be a list of texts in quotes, not {_type_name(value)}"
        bad = [v for v in value if rule.choices and v not in rule.choices]
        if bad:
            return value, f"holds {bad!r}; allowed: {', '.join(rule.choices)}"
        return list(value), ""
    if rule.kind == "mapping":
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, list) and all(isinstance(x, str) for x in v) for k, v in value.items()
        ):
            return value, 'must be a table of lists of texts, e.g. ID = ["MRN-[0-9]+"]'
        for kind, patterns in value.items():
            for pattern in patterns:
                try:
                    re.compile(pattern)
                except re.error as exc:
                    return value, f"has a pattern for {kind!r} that is not a valid regular expression ({exc.msg})"
        return {k: list(v) for k, v in value.items()}, ""
    raise ValueError(f"unknown rule kind {rule.kind!r}")


def _inferred_rule(default: Any) -> Rule | None:
    """The type rule of a field without an explicit one, from its default value."""
    if isinstance(default, bool):
        return flag()
    if isinstance(default, int):
        return Rule("whole")
    if isinstance(default, float):
        return Rule("number")
    if isinstance(default, str):
        return text()
    if isinstance(default, list):
        return texts()
    return None


def rules_of(cls: type) -> dict[str, Rule]:
    """Every field's rule: explicit ``RULES`` first, else inferred from the default value."""
    explicit = MODEL_RULES if cls is ModelChoice else getattr(cls, "RULES", {})
    defaults = cls()
    out = {}
    for f in fields(cls):
        rule = explicit.get(f.name) or _inferred_rule(getattr(defaults, f.name))
        if rule is not None:
            out[f.name] = rule
    return out


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

    RULES: ClassVar[dict[str, Rule]] = {
        "path": text("the corpus folder or table file"),
        "max_unit_chars": whole("the longest privacy unit, in characters", low=1),
    }


@dataclass
class PrivacySpec:
    epsilon: float = 10.0
    delta: float = 0.0  # 0 = the public default: 1e-6, or 1/(10 N) when max_units states N
    max_units: int = 0  # a PUBLIC upper bound N on the number of units (0 = not stated); never the loaded count
    conversion: str = "tight"  # "tight" (Canonne-Kamath-Steinke) or "loose" (seed)
    spend_anyway: bool = False  # run even when the planner expects about 0 topics (core.privacy.forecast)
    rationale: str = ""  # why this budget was chosen, in the custodian's words; printed on the certificate

    RULES: ClassVar[dict[str, Rule]] = {
        "epsilon": number("the privacy budget ε", low=0, high=MAX_EPSILON, open_low=True),
        "rationale": text("why this budget was chosen (printed on the certificate)"),
        "delta": number("δ", low=0, high=1, open_low=True, open_high=True, zero_default=True),
        "conversion": text("the zCDP conversion", choices=("tight", "loose")),
        "spend_anyway": flag("run even when about 0 topics are expected"),
    }


TEXT_MODES = ("topic_line", "private", "realised", "realised+private")
DOCUMENT_FORMS = ("clinical_note", "case_file", "review")


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
    cluster_keywords: int = 5  # M: co-keywords released per cluster with their own noise (0 = none)
    cluster_keywords_fraction: float = 0.0  # their share of the budget; 0 = the default (0.2)
    min_cluster_size: int = 10  # below: reported as low-signal
    refine: bool = False  # step 3 (noisy centre + threshold); False: S_r = C_r, its budget goes to the tokens
    keywords: str = "vocabulary"  # per-unit keywords: "vocabulary" (rarest entries of V in the text) | "llm"
    topic_words: str = "specific"  # W from the noisy histogram: "specific" (significant, rare in English) | "frequent"
    clip: str = "dclip"  # "dclip" (clamped differences to a public row) | "spec" (SPEC §2.4 clip)
    public_prompt: str = "keyword"  # public row: "keyword" (released w_r + task) | "empty" | "none"
    answer_start: str = "keywords"  # every answer starts with the released keyword ("keyword"), with it and its
    # released co-keywords ("keywords"), or with nothing ("none")
    public_weight: float = 2.0  # lambda, weight of the public base (a public constant)
    top_k_plus: int = 0  # 0 = sample over the whole vocabulary; k = over V_k+ from public logits
    self_filter: bool = True
    self_filter_mode: str = "similarity"  # "similarity" (embedder, task) | "score" (teacher-forced YES vs NO) | "answer"
    max_prompt_tokens: int = 256
    batch_rows: int = 0  # rows per wave of the private-prediction engine; 0 = from the memory budget
    memory_budget_mb: int = 0  # 0 = automatic
    domain_lists: list[str] = field(default_factory=list)  # extra PUBLIC word lists for the vocabulary
    # Step 0, DP phrase discovery (docs/method.md §2.0): the corpus's own frequent 1-3-word phrases
    # extend V. On by default; with a domain list it may be switched off (a list costs no budget).
    discover_phrases: bool = True
    phrases_per_unit: int = 4  # K_p: phrases each unit proposes at most
    phrases_fraction: float = 0.0  # share of rho for the phrase counts; 0 = the default (0.1)
    phrases_delta_fraction: float = 0.0  # share of delta for releasing a phrase of one unit; 0 = the default (0.5)
    # How each synthetic document is written (docs/method.md §2.6): "topic_line" (the released topic line
    # only, no token stage), "private" (private prediction, the seed's step 4), "realised" (a public writer
    # turns the released topic into a document of the corpus's form; no token stage) or "realised+private"
    # (private prediction whose public row is the realised draft and whose rows rewrite their own documents
    # into the same form). Without a token stage its budget share goes to the topics and co-keywords.
    text: str = "private"
    document_form: str = ""  # the shipped public example of the form: "clinical_note" | "case_file" | "review" | ""
    public_example: str = ""  # the custodian's own INVENTED example of the form (replaces document_form)
    realisation_tokens: int = 80  # tokens of each realised draft (public decoding)
    row_bound: str = "poisson"  # without refinement: each C_r Poisson-subsampled at min(1, k / h'(w_r)) | "none"
    force_length: bool = False  # every group writes exactly T tokens (EOS never sampled); throughput checks only

    RULES: ClassVar[dict[str, Rule]] = {
        "text": text_rule("how the documents are written", choices=TEXT_MODES),
        "document_form": text_rule("the shipped example of the document form", choices=("", *DOCUMENT_FORMS)),
        "public_example": text_rule("the invented example of the document form"),
        "realisation_tokens": whole("tokens of each realised document", low=8),
        # Upper bounds keep a typo (R = 1e9) from being planned, or charged before running out of memory.
        "K": whole("keywords per unit", high=MAX_KEYWORDS),
        "R": whole("the number of clusters", high=MAX_CLUSTERS),
        "L": whole("clusters per unit", high=MAX_CLUSTERS),
        "k": whole("retrieved units per cluster", high=MAX_UNITS_PER_CLUSTER),
        "T": whole("tokens per synthetic document", high=MAX_TOKENS),
        "tau": number("the sampling temperature τ", low=0, open_low=True),
        "hist_fraction": number("the histogram's share of the budget", low=0, high=1, open_low=True,
                                open_high=True, zero_default=True),
        "mu_fraction": number("the cluster means' share of the budget", low=0, high=1, open_low=True,
                              open_high=True, zero_default=True),
        "theta_fraction": number("the thresholds' share of the budget", low=0, high=1, open_low=True,
                                 open_high=True, zero_default=True),
        "cluster_keywords": whole("co-keywords released per cluster", low=0),
        "cluster_keywords_fraction": number("the co-keywords' share of the budget", low=0, high=1, open_low=True,
                                            open_high=True, zero_default=True),
        "min_cluster_size": whole("the smallest cluster reported as useful", low=0),
        "max_prompt_tokens": whole("the longest prompt, in tokens", low=16, high=MAX_PROMPT_TOKENS),
        "batch_rows": whole("rows per wave", low=0),
        "memory_budget_mb": whole("the memory budget in MB", low=0),
        "keywords": text_rule("how keywords are found", choices=("vocabulary", "llm")),
        "topic_words": text_rule("how cluster words are chosen", choices=("specific", "frequent")),
        "clip": text_rule("the clip", choices=("dclip", "spec")),
        "public_prompt": text_rule("the public row", choices=("keyword", "empty", "none")),
        "answer_start": text_rule("the start of each answer", choices=("keyword", "keywords", "none")),
        "public_weight": number("the public base's weight λ", low=0, open_low=True),
        "top_k_plus": whole("candidate tokens (0 = all)", low=0),
        "discover_phrases": flag("whether the corpus's own phrases are discovered with DP (step 0)"),
        "phrases_per_unit": whole("phrases each unit proposes", low=1, high=64),
        "phrases_fraction": number("the phrase discovery's share of the budget", low=0, high=1, open_low=True,
                                   open_high=True, zero_default=True),
        "phrases_delta_fraction": number("the phrase discovery's share of delta", low=0, high=1, open_low=True,
                                         open_high=True, zero_default=True),
        "self_filter_mode": text_rule("the self-filter", choices=("similarity", "score", "answer")),
        "row_bound": text_rule("how each cluster's rows are bounded", choices=("poisson", "none")),
    }

    @property
    def token_stage(self) -> bool:
        """Whether private prediction (step 4) runs and is charged."""
        return self.text in ("private", "realised+private")

    @property
    def realisation(self) -> bool:
        """Whether the public writer realises each released topic (step 6, free)."""
        return self.text in ("realised", "realised+private")

    @property
    def public_row(self) -> str:
        """How each group's public row is written: "none", "empty" or "keyword"."""
        return self.public_prompt

    @property
    def public_anchor(self) -> bool:
        """Whether the groups carry a public row at all."""
        return self.public_prompt != "none"


def _is_list_name(entry: str) -> bool:
    """A shipped word list named without a path or suffix (``"icd10-cm"``; see ``privet vocab``): not a file path."""
    return bool(entry) and not any(ch in entry for ch in "/\\.")


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

    # The one statement of RPSG's ranges (core.methods.rpsg.algorithm.check_params reads these rules).
    RULES: ClassVar[dict[str, Rule]] = {
        "m": whole("candidate abstractions per seed"),
        "similarity_threshold": number("the similarity threshold", low=0, high=1, open_low=True),
        "nll_percentile": number("the NLL percentile", low=0, high=100, open_high=True),
        "temperature": number("the generation temperature; 0 = greedy", low=0),
        "max_new_tokens": whole("tokens per generation"),
        "n_variants": whole("variants per seed before the final text", low=0),
        "batch_size": whole("the batch size"),
        "pii_patterns": Rule("mapping", "extra PII patterns"),
    }


@dataclass
class OutputSpec:
    folder: str = ""  # where the release goes; empty = keep the run folder only (export later)
    formats: list[str] = field(default_factory=lambda: ["jsonl", "csv"])
    overwrite: bool = False
    custodian: str = ""
    organisation: str = ""
    irb_protocol: str = ""
    export_at_end: bool = True  # False: the run only keeps the release in its run folder and the desktop
    # exports it to ``folder`` from its review page (the folder is kept through a resume)

    RULES: ClassVar[dict[str, Rule]] = {
        "formats": texts("the export formats", choices=("jsonl", "csv")),
    }


@dataclass
class AugPESpec:
    """Aug-PE (private evolution, Xie et al. 2024): public model writes, private units vote."""

    iterations: int = 4  # DP vote histograms (the budget is split equally over them)
    population: int = 128  # candidate texts each histogram votes on
    variations: int = 2  # variations the public model writes of each selected winner
    threshold: float = 0.0  # H in votes: noisy counts below it are set to 0; 0 = 2 sigma of the plan
    max_new_tokens: int = 96  # length of each candidate text in tokens
    temperature: float = 1.0  # public generation only (no private text in the prompt)
    top_p: float = 0.95
    batch_size: int = 32  # texts written together over one KV cache

    # The public-sampling settings (core.methods.aug_pe.adapter.check_generation reads these rules).
    RULES: ClassVar[dict[str, Rule]] = {
        "max_new_tokens": whole("tokens of each candidate text"),
        "temperature": number("the public generation temperature; 0 = greedy", low=0),
        "top_p": number("the nucleus of public sampling; 1 = none", low=0, high=1, open_low=True),
        "batch_size": whole("texts written together"),
    }


@dataclass
class ComputeSpec:
    """Where private prediction, LLM keyword extraction and embedding run (see core/compute): this process, or Ray workers."""

    backend: str = "local"  # "local" (one process, no Ray) or "ray"
    address: str = ""  # Ray: "" = start Ray on this machine, "auto" = the running cluster, "ray://host:10001"
    workers: int = 0  # Ray: 0 = one worker per GPU; N = N workers (CPU workers when there is no GPU)


@dataclass
class RunSpec:
    method: str = "dp_synrag"  # "dp_synrag", "dp_synth", "rpsg", "aug_pe"
    task: str = "Answer questions about the documents in this collection."
    data: DataSpec = field(default_factory=DataSpec)
    privacy: PrivacySpec = field(default_factory=PrivacySpec)
    llm: ModelChoice = field(default_factory=ModelChoice)
    embedder: ModelChoice = field(default_factory=ModelChoice)
    dp_synrag: DPSynRAGSpec = field(default_factory=DPSynRAGSpec)
    rpsg: RPSGSpec = field(default_factory=RPSGSpec)
    aug_pe: AugPESpec = field(default_factory=AugPESpec)
    output: OutputSpec = field(default_factory=OutputSpec)
    compute: ComputeSpec = field(default_factory=ComputeSpec)
    test_mode_seed: int | None = None  # NON-PRIVATE test mode: fixed seed, export refused

    RULES: ClassVar[dict[str, Rule]] = {
        "method": text("the method"),
        "task": text("the task description"),
        "test_mode_seed": Rule("whole", "the test-mode seed", low=0, optional=True),
    }

    # ----------------------------------------------------------------- validation
    def problems(self) -> list[str]:
        """Every setting that is out of type or range, as ``[section] name ...`` lines (empty: valid)."""
        found = _problems_of(self, "")
        if not found:
            found += _method_problems(self.method)
        p = self.dp_synrag
        if not found and p.text == "private" and p.public_prompt == "none" and (p.clip == "dclip" or p.top_k_plus):
            found.append(
                "[dp_synrag] clip = \"dclip\" and top_k_plus need a public row, but public_prompt = \"none\" "
                "(use public_prompt = \"keyword\", or clip = \"spec\" with top_k_plus = 0)"
            )
        return found

    def check(self) -> None:
        """Raise ``PrivetError`` listing every invalid setting; nothing has been loaded or charged yet."""
        found = self.problems()
        if found:
            raise PrivetError(
                "The run spec has invalid settings, so nothing was loaded or charged:\n"
                + "\n".join(f"  - {p}" for p in found),
                "Correct these settings in the run spec (or on the wizard's pages) and start again.",
            )

    def warnings(self) -> list[str]:
        """Settings that are valid but unwise, shown before anything is charged."""
        eps = self.privacy.epsilon
        out = []
        if isinstance(eps, (int, float)) and eps > WEAK_EPSILON:
            out.append(
                f"ε = {eps:g} is far above common guidance (weak protection above ε = {MODERATE_MAX:g}, no "
                f"meaningful protection above ε = {WEAK_MAX:g}): each person's or document's presence may change "
                f"the output's probabilities {factor_words(eps)}. Lower ε unless the custodian has recorded why "
                "this is accepted."
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if d["test_mode_seed"] is None:
            del d["test_mode_seed"]
        return d

    def to_toml(self) -> str:
        import tomli_w  # only when writing a spec (not on a bare GPU machine's run path)

        return tomli_w.dumps(self.to_dict())

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_toml(), encoding="utf-8")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RunSpec":
        spec = _build(cls, _upgrade(data), "")
        spec.check()
        return spec

    @classmethod
    def load(cls, path: str | Path) -> "RunSpec":
        path = Path(path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise PrivetError(f"Run spec {path} does not exist.", "Check the path.") from None
        except IsADirectoryError:
            raise PrivetError(f"Run spec {path} is a folder, not a file.", "Give the path of the .toml file.") from None
        except PermissionError:
            raise PrivetError(f"Run spec {path} cannot be read (permission denied).",
                              "Check the file's permissions, or copy it somewhere you can read.") from None
        except UnicodeDecodeError:
            raise PrivetError(f"Run spec {path} is not UTF-8 text.",
                              "Save the run spec as UTF-8 (a plain-text TOML file).") from None
        except OSError as exc:
            raise PrivetError(f"Run spec {path} cannot be read ({exc.strerror or type(exc).__name__}).",
                              "Check the path.") from None
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
            p if Path(p).is_absolute() or _is_list_name(p) else str(base / p) for p in spec.dp_synrag.domain_lists
        ]
        for choice_name in ("llm", "embedder"):
            choice = getattr(spec, choice_name)
            if choice.path and not Path(choice.path).is_absolute():
                setattr(spec, choice_name, replace(choice, path=str(base / choice.path)))
        return spec


def _upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """Read round-1 run specs: ``[dp_synrag] public_anchor = true|false`` meant the SPEC clip
    with (true) or without (false) a public row holding the empty-document prompt."""
    section = data.get("dp_synrag") if isinstance(data, dict) else None
    if not isinstance(section, dict) or "public_anchor" not in section:
        return data
    section = dict(section)
    anchor = section.pop("public_anchor")
    section.setdefault("public_prompt", "empty" if anchor else "none")
    section.setdefault("clip", "spec")
    section.setdefault("cluster_keywords", 0)  # round 1 released no co-keywords
    return {**data, "dp_synrag": section}


MODEL_RULES: dict[str, Rule] = {
    "source": text("the model source", choices=("default", "hf", "gguf", "tiny-random")),
    "path": text("the model path"),
    "backend": text("the model backend", choices=("auto", "transformers", "llamacpp")),
    "device": text("the device"),
}


def _label(where: str, name: str) -> str:
    return f"[{where}] {name}" if where else name


def section_problems(section: Any, where: str) -> list[str]:
    """Rule violations of one spec section, labelled ``[where] name``: the same check ``RunSpec.problems`` runs."""
    return _problems_of(section, where)


def _problems_of(obj: Any, where: str) -> list[str]:
    """Rule violations of one spec section (recursing into sub-sections)."""
    found = []
    rules = rules_of(type(obj))
    for f in fields(obj):
        value = getattr(obj, f.name)
        if is_dataclass(value):
            found += _problems_of(value, f.name)
            continue
        rule = rules.get(f.name)
        if rule is None:
            continue
        _, problem = check_value(rule, value)
        if problem:
            meaning = f" ({rule.meaning})" if rule.meaning else ""
            found.append(f"{_label(where, f.name)}{meaning} {problem}")
    return found


# The methods a run spec can name: those registered in core.method_catalogue (the adapters are loaded by
# core.methods.registry; the run spec validates names without importing the methods).
METHOD_NAMES = method_catalogue.names()


def _method_problems(method: str) -> list[str]:
    if method in METHOD_NAMES:
        return []
    return [f"method: Unknown method {method!r}. Choose one of: {', '.join(METHOD_NAMES)}."]


def _build(cls: type, data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise PrivetError(
            f"[{where or 'top level'}] of the run spec must be a table of settings, not {_type_name(data)}.",
            f"Write it as a [{where}] section with name = value lines.",
        )
    known = {f.name: f for f in fields(cls)}
    unknown = set(data) - set(known)
    if unknown:
        raise PrivetError(
            f"Unknown setting(s) {sorted(unknown)} in [{where or 'top level'}] of the run spec.",
            f"Allowed: {sorted(known)}.",
        )
    kwargs = {}
    defaults = cls()
    rules = rules_of(cls)
    for name, value in data.items():
        current = getattr(defaults, name)
        if is_dataclass(current):
            kwargs[name] = _build(type(current), value, name)
            continue
        rule = rules.get(name)
        if rule is not None:
            normalised, problem = check_value(rule, value)
            value = value if problem else normalised  # RunSpec.check() reports every problem at once
        kwargs[name] = value
    return cls(**kwargs)
