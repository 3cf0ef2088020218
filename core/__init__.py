"""Privet core engine: corpus, privacy, models, methods, certificate, ledger and CLI.

The core never imports Qt; the desktop application drives it through run specs.
"""

__version__ = "0.1.0"
