"""Small custom widgets (they paint; they compute nothing)."""
