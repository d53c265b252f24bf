"""``python -m icml25.cell_diff train data/cell_diff/models.pt [--seeds 5] [--jobs 2]``."""

from .training import main

if __name__ == "__main__":  # pragma: no cover
    main()
