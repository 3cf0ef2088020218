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

import stat
import tomllib
from dataclasses import asdict, dataclass, field, fields, is_dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from core.specs import method_catalogue
from core.common.errors import PrivetError
from core.specs.aug_pe import AugPESpec
from core.specs.common import (
    MAX_EPSILON,
    MODEL_RULES,
    WEAK_EPSILON,
    ComputeSpec,
    DataSpec,
    ModelChoice,
    OutputSpec,
    PrivacySpec,
    label_problems,
)
from core.specs.document import DocumentSpec, move_document_settings
from core.specs.dp_synth import DPSynthSpec
from core.specs.dp_synrag import (
    DOCUMENT_FORMS,
    MAX_CLUSTERS,
    MAX_KEYWORDS,
    MAX_PROMPT_TOKENS,
    MAX_TOKENS,
    MAX_UNITS_PER_CLUSTER,
    TEXT_MODES,
    DPSynRAGSpec,
    _is_list_name,
)
from core.specs.rpsg import RPSGSpec
from core.specs.writing import WritingSpec, move_shared_settings
from core.specs.rules import (
    Rule,
    _problems_of,
    _type_name,
    check_value,
    flag,
    number,
    rules_of,
    section_problems,
    text,
    text_rule,
    texts,
    whole,
)
from core.common.wording import MODERATE_MAX, WEAK_MAX, factor_words

# The public names of the run spec (callers import them from here; each section lives in core/specs/).
__all__ = [
    "DOCUMENT_FORMS", "MAX_CLUSTERS", "MAX_EPSILON", "MAX_KEYWORDS", "MAX_PROMPT_TOKENS", "MAX_TOKENS",
    "MAX_UNITS_PER_CLUSTER", "METHOD_NAMES", "MODEL_RULES", "TEXT_MODES", "WEAK_EPSILON", "AugPESpec", "ComputeSpec",
    "DPSynRAGSpec", "DPSynthSpec", "DataSpec", "DocumentSpec", "ModelChoice", "OutputSpec", "PrivacySpec", "RPSGSpec",
    "Rule", "RunSpec", "WritingSpec",
    "check_value", "flag", "number", "rules_of", "section_problems", "text", "text_rule", "texts", "whole",
]


@dataclass
class RunSpec:
    method: str = "dp_synrag"  # "dp_synrag", "dp_synth", "rpsg", "aug_pe"
    task: str = "Answer questions about the documents in this collection."
    data: DataSpec = field(default_factory=DataSpec)
    privacy: PrivacySpec = field(default_factory=PrivacySpec)
    llm: ModelChoice = field(default_factory=ModelChoice)
    embedder: ModelChoice = field(default_factory=ModelChoice)
    # how every method drives the model: the longest prompt, rows per wave, the memory budget (speed only)
    writing: WritingSpec = field(default_factory=WritingSpec)
    # the form of the documents every method writes: the shipped form, or the custodian's invented example
    document: DocumentSpec = field(default_factory=DocumentSpec)
    dp_synrag: DPSynRAGSpec = field(default_factory=DPSynRAGSpec)
    # None: a spec without [dp_synth] (written before it existed); DP-Synth then reads its settings from
    # [dp_synrag] as it always did (core.specs.dp_synth.settings_of).
    dp_synth: DPSynthSpec | None = None
    rpsg: RPSGSpec = field(default_factory=RPSGSpec)
    aug_pe: AugPESpec = field(default_factory=AugPESpec)
    output: OutputSpec = field(default_factory=OutputSpec)
    compute: ComputeSpec = field(default_factory=ComputeSpec)
    test_mode_seed: int | None = None  # NON-PRIVATE test mode: fixed seed, export refused

    RULES: ClassVar[dict[str, Rule]] = {
        "method": text("the method"),
        "task": text("the task description", pattern=r".*\S.*",
                     form="a description of the public task (it is empty; the self-filter and the public prompts "
                          "read it)"),
        "test_mode_seed": Rule("whole", "the test-mode seed", low=0, optional=True),
    }
    # Sections that may be missing (None): their type, to read them when present.
    OPTIONAL_SECTIONS: ClassVar[dict[str, type]] = {"dp_synth": DPSynthSpec}

    # ----------------------------------------------------------------- validation
    def problems(self) -> list[str]:
        """Every setting that is out of type or range, as ``[section] name ...`` lines (empty: valid)."""
        found = _problems_of(self, "")
        if not found:
            found += _method_problems(self.method)
        if not found:
            found += label_problems(self.data, self.method)
        p = self.dp_synrag
        if not found and p.text == "private" and p.public_prompt == "none" and (p.clip == "dclip" or p.top_k_plus):
            found.append(
                "[dp_synrag] clip = \"dclip\" and top_k_plus need a public row, but public_prompt = \"none\" "
                "(use public_prompt = \"keyword\", or clip = \"spec\" with top_k_plus = 0)"
            )
        if not found:  # the method's own checks (DP-SynRAG: the shape settings, docs/method.md §6.2)
            found += method_catalogue.facts(self.method).spec_problems(self)
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
        for optional in ("test_mode_seed", *self.OPTIONAL_SECTIONS):
            if d[optional] is None:
                del d[optional]
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
            data = tomllib.loads(read_spec_text(path))
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
        except RecursionError:
            raise _too_deep(path) from None
        if _depth(data) > MAX_SPEC_DEPTH:
            raise _too_deep(path)
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


MAX_SPEC_DEPTH = 16  # tables and lists nested deeper than this: no run spec has more than 3 levels


def _depth(value: Any, limit: int = MAX_SPEC_DEPTH + 1) -> int:
    """How deeply ``value`` nests tables and lists (counted up to ``limit``, without recursion)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth >= limit:
            continue
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return deepest


def _too_deep(path: Path) -> PrivetError:
    return PrivetError(
        f"Run spec {path} nests tables or lists more than {MAX_SPEC_DEPTH} levels deep; a run spec has a few "
        "sections of plain settings, so nothing was loaded or charged.",
        "Write the run spec as sections of settings (see docs/using.md), or start from one the wizard saved.")


MAX_SPEC_BYTES = 1 << 20  # 1 MiB: the demo spec is under 1 KiB; a spec holding a long public example a few KiB


def read_spec_text(path: Path) -> str:
    """The text of a run-spec file, refused (``PrivetError``) before it is read unless it is a regular file
    of at most ``MAX_SPEC_BYTES``: ``/dev/zero``, a pipe or a huge file would otherwise be read until memory
    runs out (or for ever). Other failures raise the ``OSError``/``UnicodeDecodeError`` of reading it."""
    info = path.stat()  # FileNotFoundError, PermissionError: worded by RunSpec.load
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(path)
    if not stat.S_ISREG(info.st_mode):
        raise PrivetError(f"Run spec {path} is not a regular file (it is a device, pipe or socket).",
                          "Give the path of the .toml file.")
    too_big = PrivetError(
        f"Run spec {path} is larger than {MAX_SPEC_BYTES >> 20} MiB, far more than any run spec holds, so it "
        "was not read.", "Give the path of the .toml run spec (a few lines of settings).")
    if info.st_size > MAX_SPEC_BYTES:
        raise too_big
    with open(path, "rb") as handle:
        data = handle.read(MAX_SPEC_BYTES + 1)  # the file may have grown since stat
    if len(data) > MAX_SPEC_BYTES:
        raise too_big
    # A byte-order mark (Windows Notepad saves one) is accepted and dropped: it is not part of the settings.
    return data.decode("utf-8-sig")


def _upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """Read older run specs: the settings every method shares, once in ``[dp_synrag]``, are ``[writing]``'s
    (``core.specs.writing.move_shared_settings``); the document form, once in the method's section, is
    ``[document]``'s (``core.specs.document.move_document_settings``); and in the first run specs
    ``[dp_synrag] public_anchor = true|false`` meant the SPEC clip with (true) or without (false) a public row
    holding the empty-document prompt."""
    if isinstance(data, dict):
        data = move_document_settings(move_shared_settings(data))
    section = data.get("dp_synrag") if isinstance(data, dict) else None
    if not isinstance(section, dict) or "public_anchor" not in section:
        return data
    section = dict(section)
    anchor = section.pop("public_anchor")
    section.setdefault("public_prompt", "empty" if anchor else "none")
    section.setdefault("clip", "spec")
    section.setdefault("cluster_keywords", 0)  # those specs released no co-keywords (docs/method.md §2.2b)
    return {**data, "dp_synrag": section}


# The methods a run spec can name: those registered in core.specs.method_catalogue (the adapters are loaded by
# core.methods.registry; the run spec validates names without importing the methods).
METHOD_NAMES = method_catalogue.names()


def _method_problems(method: str) -> list[str]:
    known = method_catalogue.names()  # read when asked: a method registered later is known
    if method in known:
        return []
    return [f"method: Unknown method {method!r}. Choose one of: {', '.join(known)}."]


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
    optional = getattr(cls, "OPTIONAL_SECTIONS", {})
    for name, value in data.items():
        current = getattr(defaults, name)
        if is_dataclass(current) or name in optional:
            kwargs[name] = _build(optional.get(name) or type(current), value, name)
            continue
        rule = rules.get(name)
        if rule is not None:
            normalised, problem = check_value(rule, value)
            value = value if problem else normalised  # RunSpec.check() reports every problem at once
        kwargs[name] = value
    return cls(**kwargs)
