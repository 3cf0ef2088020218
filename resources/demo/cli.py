"""Placeholder: sub-commands are added here by the module's owner."""


def register(subparsers) -> None:
    return None
