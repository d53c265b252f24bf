"""``python -m icml25.microscopy_mae train data/microscopy_mae/models.pt [--seeds 5]``."""

from .training import main

if __name__ == "__main__":  # pragma: no cover
    main()
