"""Planning a run: the budget split, the dataset it is booked under and the refusal to spend for nothing.

``plan(spec)`` says what a run would spend and derive, without charging anything; ``run_pipeline``
(``core.run.pipeline``) plans the same way before it charges. Nothing here loads a model or writes.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

from core.corpus import Corpus, DatasetIdentity
from core.compute.memory import run_memory_mb
from core.ledger.booking import Booking, book_dataset, load_spec_corpus, record_booking
from core.common.errors import BudgetError, PrivetError
from core.run.estimate import Estimate, estimate
from core.run.machine_speed import busy_factor
from core.ledger import Ledger
from core.ledger.total import COMBINING_WORDS
from core.ledger.view import after_run_words, cumulative_after
from core.specs.method_catalogue import facts
from core.methods.class_conditional import method_for
from core.methods.base import PlanSummary
from core.common.paths import data_dir
from core.privacy.budget import resolve_delta
from core.privacy.planner import delta_warnings
from core.specs.runspec import RunSpec


def register_dataset(
    spec: RunSpec, fingerprint: str, ledger: Ledger, dry_run: bool = False
) -> tuple[DatasetIdentity, list[str]]:
    """The identity the data are budgeted under (``core.ledger.booking``); the view is recorded under it
    (unless ``dry_run``). Returns the booking's warnings. ``fingerprint`` must be the loaded view's."""
    booking = book_dataset(ledger, spec.data, load_spec_corpus(spec))
    if booking.fingerprint != fingerprint:
        raise PrivetError("The data changed while they were being loaded.", "Start again.")
    if not dry_run:
        record_booking(ledger, booking)
    return booking.identity, booking.warnings


def dataset_booking(spec: RunSpec, corpus: Corpus, ledger: Ledger | None = None) -> Booking:
    """The dataset these data are budgeted under: what `privet plan` prints, the wizard shows and the run books.

    Writes nothing (a fresh installation without a ledger is not given one).
    """
    if ledger is not None:
        return book_dataset(ledger, spec.data, corpus)
    if not (data_dir() / "ledger.db").exists():  # nothing budgeted yet: nothing to match
        return book_dataset(None, spec.data, corpus)
    with Ledger() as own:
        return book_dataset(own, spec.data, corpus)


def plan(spec: RunSpec, corpus: Corpus | None = None, ledger: Ledger | None = None,
         busy: float | None = None) -> PlanSummary:
    """The budget split and derived parameters for this spec on this corpus (charges and writes nothing).
    ``busy``: a speed test already taken (``core.run.machine_speed.busy_factor``); None: take one now (0.5 s).

    The loaded view is matched against the datasets the ledger knows (``core.ledger.booking``): the
    plan names the dataset the run will be booked under; the same data under a new chosen name is refused.
    """
    spec.check()  # refuses nonsense before anything is loaded
    spec = facts(spec.method).public_defaults(spec)  # what the method's public rules pick (a copy)
    corpus = corpus or load_spec_corpus(spec)
    facts(spec.method).check_corpus(spec, corpus)  # before any charge
    n = len(corpus.units)
    delta = resolve_delta(spec)
    method = method_for(spec)  # per class when [data] label_column is set
    summary = method.plan_summary(spec, delta, n)
    gate = spending_gate(spec, delta, method)  # public values only: the run's refusal (SPEC §6)
    summary.gate_forecast = None if gate is None else gate.topic_forecast
    screen_forecast_warnings(summary)
    summary.warnings.extend(delta_warnings(delta, spec.privacy.max_units, n))
    booking = dataset_booking(spec, corpus, ledger)
    summary.dataset_name = booking.name
    summary.budget_outlook = budget_outlook(booking, summary, ledger)
    summary.warnings.extend(booking.warnings)
    summary.warnings.extend(spec.warnings())
    summary.busy_factor = busy_factor(spec.llm.device) if busy is None else busy  # this computer's speed now
    summary.estimate_seconds, summary.estimate_memory_mb = run_estimate(spec, summary).total_s, run_memory_mb(spec)
    return summary


def budget_outlook(booking: Booking, summary: PlanSummary, ledger: Ledger | None = None) -> tuple[str, ...]:
    """What the dataset has spent and would have spent after this run (``core.ledger.total``: ρ and δ_p both
    add up), and the cap's refusal if the run would exceed it: the lines `privet plan` prints."""
    if ledger is None and not (data_dir() / "ledger.db").exists():
        return (f"Dataset total after this run: ε = {summary.epsilon:g} at δ = {summary.delta:.2g} "
                "(nothing spent on it before).",)
    own = ledger is None
    ledger = ledger or Ledger()
    try:
        after = cumulative_after(ledger, booking.key, summary.rho_total, summary.delta, summary.delta_spent)
        try:
            ledger.check_plan(booking.key, summary.rho_total, summary.delta, summary.delta_spent)
            refusal = ""
        except BudgetError as exc:
            refusal = booking.explained(exc).user_message()
    finally:
        if own:
            ledger.close()
    cap = f"Cap ε = {after.cap_epsilon:g}." if after.cap_epsilon is not None else "No cap set."
    total = after_run_words(after, "Dataset total after this run:")
    lines = [f"{total} {cap} {COMBINING_WORDS}"]
    if refusal:
        lines.append(f"This run would be refused: {refusal}")
    return tuple(lines)


NOT_A_GATE = ("Privet does not stop the run on this figure, which comes from the number of units loaded: whether "
              "a run goes ahead may depend only on values known in advance, such as a public upper bound on the "
              "units stated in the run's settings. You decide: change the settings, or run it knowing this.")
CONSENT_SENTENCE = "It needs an explicit 'spend anyway'."  # core.methods.dp_synrag.guidance.forecast_warning's last


def public_unit_bound(spec: RunSpec) -> int | None:
    """The custodian's stated public upper bound on the units (``[privacy] max_units``, ``[dp_synrag]
    size_bound``; the smaller when both are stated), or None. Never the loaded count."""
    stated = [bound for bound in (spec.privacy.max_units, facts(spec.method).stated_unit_bound(spec)) if bound > 0]
    return min(stated) if stated else None


def spending_gate(spec: RunSpec, delta: float, method=None) -> PlanSummary | None:
    """The plan the refusal to spend for nothing decides from (SPEC §6): the method planned at the stated public
    bound on the units, or None when no bound is stated (then nothing is refused). It takes no corpus: what it
    decides depends on ε, δ, the settings, the vocabulary, the model and the bound, never on the true count.
    The forecast at the loaded count stays a warning on screen (``PlanSummary.spends_for_nothing``)."""
    bound = public_unit_bound(spec)
    if bound is None:
        return None
    return (method or method_for(spec)).plan_summary(spec, delta, bound)


def screen_forecast_warnings(summary: PlanSummary) -> None:
    """The on-screen forecast's warning says what the run will do: a run not refused by the public gate is not
    said to need 'spend anyway' (the forecast at the loaded count warns, it never decides)."""
    if summary.needs_spend_anyway:
        return
    summary.warnings = [w.replace(CONSENT_SENTENCE, NOT_A_GATE) for w in summary.warnings]


def refuse_spending_for_nothing(spec: RunSpec, gate: PlanSummary | None) -> None:
    """Refuse a plan expected to release about 0 topics even at the custodian's stated public bound on the
    units, unless the spec says spend anyway. ``gate``: ``spending_gate``'s plan (None, no bound stated:
    nothing is refused).

    The non-private test mode (a fixed seed; nothing can be exported) is exempt: its plan warns only."""
    if spec.privacy.spend_anyway or spec.test_mode_seed is not None:
        return
    if gate is None or not gate.spends_for_nothing:
        return
    forecast = gate.topic_forecast
    assert forecast is not None
    raise PrivetError(
        f"Nothing was charged: even with the {public_unit_bound(spec)} units of the public bound stated in the run "
        f"spec, this plan is expected to release about {forecast.expected_topics:.1f} topics (a topic needs about "
        f"{forecast.min_topic_support:.0f} units sharing its word), so ε = {spec.privacy.epsilon:g} would be "
        "spent for text no better than a public model's.",
        " ".join(gate.forecast_advice)
        + " To spend the budget anyway, run with --spend-anyway (or set [privacy] spend_anyway = true).",
    )


def run_estimate(spec: RunSpec, summary: PlanSummary) -> Estimate:
    """The time per stage of the path that will really run (``core.run.estimate``: work over this computer's measured
    speed): the settings the adaptive default is expected to choose for this corpus, and the forecast's likely
    documents (``TopicForecast.likely_documents``: the realised writer is most of the time). With N documents
    asked for (``[dp_synrag] documents``, docs/method.md §6.2) the writer is priced at N calls, even above R."""
    if summary.expected_settings is not None:
        spec = copy.deepcopy(spec)
        setattr(spec, spec.method, summary.expected_settings)
    documents = summary.documents_range
    forecast = summary.topic_forecast
    if forecast is not None and forecast.documents and documents is not None:  # N documents asked for: N writer calls
        spec = facts(spec.method).priced_documents(spec, documents[1])
    priced = None if documents is None or forecast is None else forecast.likely_documents
    return estimate(spec, summary.n_units, topics=priced, busy=summary.busy_factor)


def estimate_cost(spec: RunSpec, n_units: int) -> tuple[float, float]:
    """A rough time (s) and memory (MB) estimate of ``spec`` as written (``run_estimate`` is the plan's):
    memory from the wave size and the packaged model's KV cache (``core.compute.memory``)."""
    return estimate(spec, n_units).total_s, run_memory_mb(spec)


# --- ε chosen from what the release will hold (issue 56 item 2) ------------------------------------------------

EPSILON_TABLE = (1.0, 2.0, 4.0, 8.0, 10.0)  # the ε values the Budget page and `privet plan` forecast side by side
HOLDS_TOPICS = 1.0  # a forecast "holds topics" when at least one topic is expected (the central public prior)


TABLE_BASIS = ("Computed by the same forecast as the expected documents: the plan's public noise at each ε, a public "
               "prior on how topics are shared, and the number of units. It does not look at the documents' words, "
               "so it cannot know how many topics this file really holds.")


@dataclass(frozen=True)
class EpsilonRow:
    """One ε of the table: its policy band (``core.common.wording``) and the planner's own forecast at that ε."""

    epsilon: float
    band: str  # core.common.wording.BANDS: strong, moderate, weak, none
    headline: str  # "Moderate protection"
    expected_topics: float | None = None  # None: the method forecasts no topics (or the ε cannot be planned)
    fewest_topics: float = 0.0
    most_topics: float = 0.0
    documents: tuple[int, int] | None = None  # the range ``TopicForecast.documents_range`` states

    @property
    def holds_topics(self) -> bool:
        """At least ``HOLDS_TOPICS`` topic expected by the central public prior (``core.privacy.forecast``)."""
        return self.expected_topics is not None and self.expected_topics >= HOLDS_TOPICS

    def topics_words(self) -> str:
        if self.expected_topics is None:
            return "not forecast"
        x = self.expected_topics
        about = f"about {x:.1f}" if x < 10 else f"about {x:.0f}"
        low, high = math.floor(self.fewest_topics), math.ceil(self.most_topics)
        return about if low == high else f"{about} ({low} to {high})"

    def documents_words(self) -> str:
        if self.documents is None:
            return "not forecast"
        low, high = self.documents
        return str(high) if low == high else f"{low} to {high}"


@dataclass(frozen=True)
class EpsilonTable:
    """What each ε of ``EPSILON_TABLE`` is expected to release on a corpus of ``units`` units, by the same forecast
    ``privet plan`` and the Task and Confirm pages state (``core.privacy.forecast``: public noise, a public prior on
    topic sizes, and the number of units; never the text). ``public_bound``: ``units`` is the custodian's stated public
    upper bound (``public_unit_bound``); otherwise it is the loaded count, which only the custodian's own screen may
    show: the table is an aid for her to choose ε, and no run decides anything from it (SPEC §6)."""

    rows: tuple[EpsilonRow, ...]
    units: int
    public_bound: bool
    delta: float

    @property
    def suggested(self) -> float | None:
        """The smallest ε whose forecast holds topics (``EpsilonRow.holds_topics``), or None when none does."""
        return next((row.epsilon for row in self.rows if row.holds_topics), None)

    def count_words(self) -> str:
        """Which count of units the table was computed for, in words."""
        if self.public_bound:
            return (f"for the public upper bound of {self.units} units stated in the settings (a figure known in "
                    "advance)")
        return (f"for the {self.units} units loaded (your own count, shown on this screen only; a run decides "
                "nothing from it: state a public upper bound on the units to compute it from that instead)")

    def suggestion_words(self) -> str:
        if self.suggested is None:
            return (f"No ε up to {self.rows[-1].epsilon:g} is expected to find a topic in data of this size: the "
                    "documents would be a public model's, whatever ε is spent.") if self.rows else ""
        return f"The smallest ε expected to find topics in data of this size is ε = {self.suggested:g}."

    def lines(self) -> list[str]:
        """The table as `privet plan` prints it."""
        out = [f"Expected release by epsilon, {self.count_words()}, at delta = {self.delta:.2g}. {TABLE_BASIS}"]
        out.append(f"  {'epsilon':>7}  {'protection':<26} {'topics':<20} documents")
        for row in self.rows:
            mark = "  <- smallest that finds topics" if row.epsilon == self.suggested else ""
            out.append(f"  {row.epsilon:>7g}  {row.headline:<26} {row.topics_words():<20} "
                       f"{row.documents_words()}{mark}")
        out.append(f"  {self.suggestion_words()}")
        return out


def epsilon_table(spec: RunSpec, n_loaded: int, epsilons: tuple[float, ...] = EPSILON_TABLE) -> EpsilonTable:
    """The planner's own forecast (``PlanSummary.topic_forecast``) at each ε of ``epsilons``, every other setting as in
    ``spec``: at the stated public bound on the units when there is one, else at ``n_loaded`` (on screen only).
    Charges, loads and writes nothing."""
    from core.common.wording import guarantee_words

    spec = facts(spec.method).public_defaults(spec)  # a copy, as ``plan`` plans it
    delta = resolve_delta(spec)
    bound = public_unit_bound(spec)
    units = bound if bound is not None else max(int(n_loaded), 0)
    method = method_for(spec)
    rows = []
    for epsilon in epsilons:
        words = guarantee_words(epsilon, delta)
        at = copy.deepcopy(spec)
        at.privacy.epsilon = float(epsilon)
        try:
            forecast = method.plan_summary(at, delta, units).topic_forecast
        except PrivetError:
            forecast = None
        if forecast is None:
            rows.append(EpsilonRow(float(epsilon), words.band, words.headline))
            continue
        rows.append(EpsilonRow(float(epsilon), words.band, words.headline, forecast.expected_topics,
                               forecast.fewest_topics, forecast.most_topics, forecast.documents_range))
    return EpsilonTable(tuple(rows), units, bound is not None, delta)
