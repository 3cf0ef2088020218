"""The run wizard (one page class per step)."""

from desktop.wizard.wizard import RunWizard

__all__ = ["RunWizard"]
