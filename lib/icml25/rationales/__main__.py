"""``python -m icml25.rationales embed data/rationales/concepts.npz`` and
``python -m icml25.rationales train data/rationales/models.pt [--jobs 2]``."""

from icml25.common.checkpoints import train_command

from .concepts import embed_concepts
from .training import save_checkpoint


def main(argv=None) -> None:  # pragma: no cover
    """Embed the concept phrases, or train and save the models of seeds 0-4."""
    train_command("python -m icml25.rationales", save_checkpoint, seeds=5, argv=argv,
                  extra={"embed": embed_concepts})


if __name__ == "__main__":  # pragma: no cover
    main()
