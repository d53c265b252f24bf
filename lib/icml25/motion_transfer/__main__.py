"""``python -m icml25.motion_transfer train data/motion_transfer/models.pt [--jobs 2]``."""

from .training import main

if __name__ == "__main__":  # pragma: no cover
    main()
