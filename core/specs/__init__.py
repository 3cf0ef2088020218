"""What a run is: the method catalogue (``method_catalogue``), the run spec (``runspec`` assembles the sections and
rules of the other modules here into ``RunSpec``) and the stages' plain names (``stage_labels``)."""
