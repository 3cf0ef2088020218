"""Errors a user can act on. Every one says what was wrong and what to do."""

from __future__ import annotations


class PrivetError(Exception):
    """An error with a message written for a privacy officer, not a traceback.

    ``what`` says what went wrong, ``fix`` says what to do about it.
    """

    def __init__(self, what: str, fix: str = "") -> None:
        self.what = what
        self.fix = fix
        super().__init__(f"{what} {fix}".strip())

    def user_message(self) -> str:
        return f"{self.what}\nWhat to do: {self.fix}" if self.fix else self.what


class CorpusError(PrivetError):
    """The private corpus could not be loaded."""


class ModelError(PrivetError):
    """A model could not be found or loaded."""


class BudgetError(PrivetError):
    """A run would exceed a privacy budget cap or is otherwise not allowed."""


class LedgerError(BudgetError):
    """The privacy-budget ledger is damaged or was tampered with: nothing may be charged."""


class Cancelled(PrivetError):
    """The user cancelled the run (budget already charged stays charged)."""

    def __init__(self) -> None:
        super().__init__("The run was cancelled.", "Stages that had started stay charged in the ledger.")
