"""The run spec's sections and their rules (``core.runspec`` assembles them into ``RunSpec``)."""
