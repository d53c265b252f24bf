"""What both notebooks of the motion-transfer chapter share: the displacement bins."""

EDGES = (3.0, 6.0)  # the edges between the small, medium and large displacement bins
