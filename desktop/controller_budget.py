"""The method and budget part of the wizard's controller: the methods offered and their settings, the plan and
its estimate, the ε table, the dataset the run is booked under, the ledger's spend and cap, and a resume's quote.

A part of ``WizardController`` (desktop/controller.py), which inherits ``BudgetSection`` and holds the state these
methods read: ``spec``, ``summary``, ``_corpus`` and ``_speed`` (the estimate's last speed test). Qt-free, like the
controller; what imports the models (torch) is imported on first use, not at window start.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.common.errors import BudgetError, PrivetError
from core.ledger import Ledger
from core.ledger.total import COMBINING_PLAIN, COMBINING_WORDS
from core.ledger.view import cumulative_after, run_spend
from core.privacy.budget import epsilon_of, resolve_delta
from core.specs import method_catalogue
from core.specs.method_catalogue import MethodEntry, ReleasedFormsView, WizardOptions, WizardValues

SPEED_TEST_REUSE_S = 60.0  # how long the wizard reuses one speed test of the estimate (core.run.machine_speed)


# A refusal from core names the command line for raising a cap; in the app the cap is raised in Settings.
CLI_CAP_ADVICE = re.compile(r"raise the cap with `privet ledger[^`]*`")
IN_APP_CAP_ADVICE = ("raise the cap in Settings → Budgets (in the main window: Budgets and caps…); a raise needs a "
                     "reason, which every later certificate of the dataset prints")
IN_APP_DELTA_ADVICE = "raise the cap's δ in Settings → Budgets"


def in_app_words(message: str) -> str:
    """A core message as the app shows it: what the officer can do in the app, not on the command line, and
    the plain combining sentence (``core.ledger.total.COMBINING_PLAIN``)."""
    message = CLI_CAP_ADVICE.sub(IN_APP_CAP_ADVICE, message)
    return message.replace("raise the cap's δ.", IN_APP_DELTA_ADVICE + ".").replace(COMBINING_WORDS, COMBINING_PLAIN)


@dataclass(frozen=True)
class LedgerStatus:
    """Budget already spent on this dataset and its cap (``None`` when no cap is set)."""

    spent_rho: float
    spent_epsilon: float
    cap_epsilon: float | None
    cap_delta: float | None
    n_entries: int
    dataset_name: str = ""  # the name the run will be booked under
    delta: float = 0.0  # the δ the spent ε is stated at (the cap's, else the runs' summed)
    n_runs: int = 0  # the runs charged (``n_entries`` counts their charges, one per stage)


class BudgetSection:
    """The method and budget methods of ``WizardController``."""

    def available_methods(self) -> list[MethodEntry]:
        """The methods a run spec can name (``core.specs.method_catalogue``), in the wizard's order."""
        return list(method_catalogue.METHODS)  # read when asked: a method registered later is offered too

    def wizard_options(self) -> WizardOptions:
        """What the wizard asks for the chosen method (its package's facts, read through ``core.specs.method_catalogue``)."""
        return method_catalogue.facts(self.spec.method).wizard

    def wizard_section(self) -> Any:
        """The run-spec section the task page stores the count, the tokens and the self-filter in (the method's
        facts: ``[dp_synrag]``, DP-Synth's ``[dp_synth]``)."""
        return method_catalogue.facts(self.spec.method).wizard_section(self.spec)

    def wizard_values(self) -> WizardValues:
        """The shape settings the task page shows for the chosen method (how many documents, k, the document form
        and its example, topic names), as its facts read them from the spec."""
        return method_catalogue.facts(self.spec.method).wizard_values(self.spec)

    def store_wizard_values(self, values: WizardValues) -> None:
        """Store the task page's shape settings where the chosen method's facts keep them."""
        method_catalogue.facts(self.spec.method).store_wizard_values(self.spec, values)

    def plan(self) -> Any:
        """``core.run.pipeline.plan``: the budget split, derived parameters and estimates, for the corpus already
        loaded (a slider move does not read the private file again)."""
        from core.run.pipeline import plan  # imports the models (torch): on first use, not at window start

        return plan(self.spec, corpus=self._corpus, busy=self._speed_test())

    def _speed_test(self) -> float:
        """``core.run.machine_speed.busy_factor``, taken again at most once a minute: a slider move re-plans, and
        must not wait half a second for it."""
        from core.run.machine_speed import busy_factor

        device, now = self.spec.llm.device, time.monotonic()
        if self._speed is None or self._speed[0] != device or now - self._speed[2] > SPEED_TEST_REUSE_S:
            self._speed = (device, busy_factor(device), now)
        return self._speed[1]

    def effective_delta(self) -> float:
        """The run's δ (``core.privacy.budget.resolve_delta``): the spec's, else the public default."""
        return resolve_delta(self.spec)

    def _plan_or_none(self) -> Any:
        """The plan, or None before data is loaded or when the spec cannot be planned."""
        if self.summary is None:
            return None
        try:
            return self.plan()
        except PrivetError:
            return None

    def documents_range(self) -> tuple[int, int] | None:
        """How many documents the run is expected to write (core's forecast), or None when unknown."""
        plan = self._plan_or_none()
        return None if plan is None else plan.documents_range

    def documents_words(self) -> str | None:
        """Core's forecast of the documents in words (the same as ``privet plan``'s), or None when unknown."""
        plan = self._plan_or_none()
        return None if plan is None else plan.documents_words

    def epsilon_table(self) -> Any:
        """``core.run.planning.epsilon_table``: what each ε of the Budget page's table is expected to release, at the stated
        public bound on the units, else at the loaded count (this screen only); ``None`` before data is loaded or
        when the spec cannot be planned."""
        if self.summary is None:
            return None
        from core.run.planning import epsilon_table  # imports the methods (torch): on first use, not at window start

        try:
            return epsilon_table(self.spec, self.summary.n_units)
        except PrivetError:
            return None

    def estimate(self) -> Any:
        """``core.run.planning.run_estimate`` for this spec and corpus: the time of the path that will really run
        (``None`` before data is loaded)."""
        if self.summary is None:
            return None
        from core.run.planning import run_estimate  # imports the methods (torch): on first use, not at window start

        return run_estimate(self.spec, self.plan())

    def booking(self) -> Any:
        """``core.run.pipeline.dataset_booking``: the dataset the run will be booked under (the same function the
        run books with), or ``None`` before data is loaded. Raises ``PrivetError`` for the same data under a
        new chosen name."""
        if self._corpus is None:
            return None
        from core.run.pipeline import dataset_booking  # imports the models (torch): on first use, not at window start

        return dataset_booking(self.spec, self._corpus)

    def _booked_key(self) -> str | None:
        try:
            booking = self.booking()
        except PrivetError:
            return None
        return booking.key if booking is not None else None

    def cumulative(self, planned_rho: float, delta: float, planned_delta_part: float = 0.0) -> Any:
        """``core.ledger.view.cumulative_after``: the booked dataset's ε before and after this run."""
        key = self._booked_key()
        if key is None:
            return None
        with Ledger() as ledger:
            return cumulative_after(ledger, key, planned_rho, delta, planned_delta_part)

    @staticmethod
    def run_spend(run_id: str) -> Any:
        """``core.privacy.budget.run_spend``: what the ledger charged to one run."""
        with Ledger() as ledger:
            return run_spend(ledger, run_id)

    def example_problem(self, document_form: str, example: str) -> str:
        """``core`` says whether the public example of the document form looks like a real document of the
        loaded corpus ("" when it does not, or before data is loaded); shown on the Task page."""
        if self._corpus is None:
            return ""
        return method_catalogue.facts(self.spec.method).example_problem(document_form, example, self._corpus)

    def released_allocation(self, run_dir: str | Path) -> list:
        """A finished run's topics (word, released count, documents), as its method's facts read them; [] if none."""
        return method_catalogue.facts(self.spec.method).released_allocation(run_dir)

    def released_forms(self, run_dir: str | Path) -> ReleasedFormsView | None:
        """A finished run's own forms released under DP and whether its documents follow them, as its method's facts
        read them (released values); None when the run looked for no forms of its corpus."""
        found = method_catalogue.facts(self.spec.method).released_forms(run_dir)
        return found[0] if found else None

    @staticmethod
    def fidelity(run_dir: str | Path) -> dict[str, Any] | None:
        """The run's fidelity report (``core.evaluation.run_fidelity``), computed on the private corpus without noise
        at the end of the run and kept in the private run folder: for this screen only, never exported."""
        from core.evaluation.run_fidelity import load_fidelity

        return load_fidelity(run_dir)

    def resume_quote(self, run_dir: str | Path) -> Any:
        """``core.run.pipeline.resume_quote``: what resuming ``run_dir`` may charge again (the consent dialog's text)."""
        from core.run.pipeline import resume_quote

        return resume_quote(self.spec, Path(run_dir), corpus=self._corpus)

    def ledger_status(self) -> LedgerStatus | None:
        """Spent budget and cap of the dataset the run will be booked under (``Ledger.summary``); ``None``
        without data (or when the booking is refused: the plan shows why)."""
        key = self._booked_key()
        if key is None:
            return None
        with Ledger() as ledger:
            spend = ledger.summary(key)  # the ledger's one total (core.ledger.total), as `privet ledger` shows it
        return LedgerStatus(spend.spent_rho, spend.spent_epsilon, spend.cap_epsilon, spend.cap_delta,
                            spend.n_charges, self.booking().name, spend.delta, spend.n_runs)

    def budget_problem(self, rho: float, delta: float, delta_part: float = 0.0) -> str:
        """Why this run would exceed the booked dataset's cap (empty when allowed), in ε and words: what is
        spent of the cap, and what the officer can do in the app (``in_app_words``)."""
        try:
            booking = self.booking()
            if booking is None:
                return ""
            with Ledger() as ledger:
                ledger.check_plan(booking.key, rho, delta, delta_part)
                ledger.check_plan(booking.fingerprint, rho, delta, delta_part)
        except BudgetError as exc:
            return in_app_words(exc.user_message()) + self._left_words()
        except PrivetError as exc:
            return exc.user_message()
        return ""

    def _left_words(self) -> str:
        """What the booked dataset has spent of its cap, on a line of its own ('' without a cap)."""
        status = self.ledger_status()
        if status is None or status.cap_epsilon is None:
            return ""
        return (f"\nSpent so far: ε = {status.spent_epsilon:.3g} of this dataset's cap ε = {status.cap_epsilon:g} "
                f"(at δ = {status.cap_delta:.2g}).")

    def booked_key(self) -> str | None:
        """The ledger key of the dataset the run will be booked under (``None`` before data is loaded)."""
        return self._booked_key()

    def set_cap(self, epsilon: float, delta: float, reason: str = "") -> None:
        key = self._booked_key()
        if key is None:
            raise PrivetError("Load a dataset first.", "Go back to the Data page.")
        with Ledger() as ledger:
            ledger.set_cap(key, epsilon, delta, reason=reason)

    @staticmethod
    def rho_to_eps(rho: float, delta: float) -> float:
        """``core.privacy.budget.epsilon_of`` (tight conversion; 0 when nothing was spent)."""
        return epsilon_of(rho, delta)
