"""This installation: its secret key (``installation``), the desktop bundle's identity (``bundle``) and which
Privet wrote a run (``provenance``)."""
