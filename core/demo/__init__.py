"""The public demo corpora: generator and `privet demo-data` (data in resources/demo)."""
