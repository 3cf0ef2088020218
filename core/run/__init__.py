"""The run: plan it (``planning``, ``estimate``, ``machine_speed``), run or resume it (``pipeline``, ``resume``),
export and verify its release (``export``), and the command lines for them (``pipeline_cli``, ``export_cli``)."""
