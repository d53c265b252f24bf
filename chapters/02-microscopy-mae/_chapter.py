"""What both notebooks of the microscopy-MAE chapter share: one colour per model."""

from icml25 import book


def model_colours(info):
    """One colour per model, the same in both notebooks.

    Parameters
    ----------
    info : dict
        The ``info`` returned by ``M.load_models``: its ``main_width`` and ``widths``.

    Returns
    -------
    dict
        Colour by model name: the curated MAE of the main width, the uncurated MAE, the
        curated MAEs of the other widths, the random-init ViT and pixel PCA.
    """
    main = info["main_width"]
    colours = {f"curated_{main}": book.PALETTE[0], "uncurated": book.PALETTE[1],
               "random": "0.55", "pca": book.PALETTE[3]}
    colours.update({f"curated_{w}": book.PALETTE[4]
                    for w in info["widths"] if w != main})
    return colours
