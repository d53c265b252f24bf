"""A committed model, retrained by its command under the pins, gives the committed bytes.

Chapter 18's training seed 0 (three models, about 6 CPU-minutes) is retrained in a fresh
process by the command of ``data/MANIFEST``, and every tensor of its checkpoint, and every
loss curve, must equal the committed file's bit for bit, on an Intel and an AMD CPU alike. It
took two things: ``MKL_CBWR=COMPATIBLE`` (under the pins of before, 16 of 162 tensors of seed 0
were equal on an AMD EPYC, the largest relative difference 0.44), an Adam whose square root
is correctly rounded (``icml25.common.optim``): torch's Adam divides by MKL's float32 root,
which rounds by vendor under every branch; and the same root in the noising
(``cell_diff.add_noise``): diffusers' ``add_noise`` takes ``alphas_cumprod[t] ** 0.5``, MKL's
root again (the AMD-made file of before gave 100 of 162 tensors different on an Intel Xeon,
while the regression model, which noises nothing, was equal).
"""

import subprocess
import sys

import numpy as np
import pytest
import torch

from icml25 import cell_diff as C
from icml25.common import checkpoints, numerics
from icml25.common import data as book_data

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not numerics.is_x86(), reason="the pins are for x86 CPUs")]


def test_chapter_18_seed_0_retrains_to_the_committed_bytes(tmp_path):
    out = tmp_path / "models.pt"
    env = numerics.pinned()
    env.pop(numerics.PERTURB, None)
    subprocess.run([sys.executable, "-m", "icml25.cell_diff", "train", str(out), "--seeds", "1"],
                   env=env, check=True, capture_output=True, text=True)
    mine = checkpoints.load(out)
    committed = checkpoints.load(book_data.path(C.CHECKPOINT))
    assert mine.config == committed.config
    assert set(mine.seeds[0]) == set(committed.seeds[0]) == set(C.MODELS)
    differ = [f"{name}.{key}"
              for name, weights in committed.seeds[0].items()
              for key, tensor in weights.items()
              if not torch.equal(tensor, mine.seeds[0][name][key])]
    assert not differ, f"{len(differ)} tensors differ from the committed file: {differ[:5]}"
    for name, record in committed.records[0].items():
        for key, curve in record.items():
            # equal_nan: a model without a sequence loss records NaN for it at every step
            assert np.array_equal(np.asarray(curve), np.asarray(mine.records[0][name][key]),
                                  equal_nan=True), f"{name} {key} curve"
