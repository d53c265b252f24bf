r"""Large-displacement motion transfer by anytime interpolation (Wang & Li, ICML 2025), small.

Image animation moves the object of a source image $S$ into the pose of a driving frame $D$.
Keypoint methods (FOMM, TPSMM) detect keypoints $k_S$ and $k_D$ without supervision, turn the
pairs into a dense backward flow and warp $S$. When $k_S$ and $k_D$ are far apart the flow is
hard to estimate. The paper generates *anytime* interpolated images $I_t$ between $S$ and $D$
(keypoints $k_t=(1-t)k_S+tk_D$), picks the best one with a selector and transfers from $I_{t^*}$,
a smaller displacement; it trains with a bidirectional strategy because no real $I_t$ exists.

Only the abstract and lay summary are public; the interpolation, the selector and the
bidirectional losses here are reconstructions, and the backbone is a small FOMM-like model
(zeroth-order keypoint motions, soft masks, an occlusion map and a feature-warping generator).

Parts: a generator of articulated sprites with exact keypoints (:func:`make_videos`,
:func:`render`, :func:`test_pairs`); the backbone (:class:`KeypointDetector`,
:class:`DenseMotion`, :class:`Generator`, :class:`Animator`); the paper's inference
(:func:`transfer_direct`, :func:`transfer_anytime`) and training (:func:`train_animator`,
:func:`bidirectional_loss`); the evaluation (:func:`akd_mkr`, :class:`PoseDetector`); the
classical-flow peer (:func:`farneback_direct`, :func:`farneback_chain`); the committed models
(:func:`save_checkpoint`, :func:`load_models`; ``python -m icml25.motion_transfer train``).

Modules: ``data`` (sprites), ``model`` (the backbone and its training), ``transfer``
(inference and evaluation), ``flow`` (the classical peer), ``training`` (the committed models).
"""

from .data import (
                   BACKGROUND,
                   N_JOINTS,
                   POSE_NAMES,
                   SIZE,
                   bin_displacement,
                   displacement,
                   joints,
                   make_identities,
                   make_videos,
                   random_poses,
                   render,
                   test_pairs,
                   video_poses,
)
from .flow import (
                   FARNEBACK,
                   farneback_chain,
                   farneback_chain_pairs,
                   farneback_direct,
                   farneback_flow,
)
from .model import (
                   Animator,
                   DenseMotion,
                   Generator,
                   Hourglass,
                   KeypointDetector,
                   PoseDetector,
                   bidirectional_loss,
                   equivariance_loss,
                   gaussian_maps,
                   grid,
                   pyramid_l1,
                   random_affine,
                   separation_loss,
                   soft_argmax,
                   to_pixels,
                   to_unit,
                   train_animator,
                   train_pose_detector,
)
from .training import CHECKPOINT, TRAINING, load_models, main, save_checkpoint, train_evaluator
from .transfer import (
                   SELECTORS,
                   akd_mkr,
                   detect,
                   gain_by_bin,
                   l1,
                   scores,
                   transfer_anytime,
                   transfer_direct,
)

__all__ = [
    "BACKGROUND", "CHECKPOINT", "FARNEBACK", "N_JOINTS", "POSE_NAMES", "SELECTORS", "SIZE",
    "TRAINING", "Animator", "DenseMotion", "Generator", "Hourglass", "KeypointDetector",
    "PoseDetector", "akd_mkr", "bidirectional_loss", "bin_displacement", "detect",
    "displacement", "equivariance_loss", "farneback_chain", "farneback_chain_pairs",
    "farneback_direct",
    "farneback_flow", "gain_by_bin", "gaussian_maps", "grid", "joints", "l1", "load_models",
    "main", "make_identities", "make_videos", "pyramid_l1", "random_affine", "random_poses",
    "render", "save_checkpoint", "scores", "separation_loss", "soft_argmax", "test_pairs",
    "to_pixels", "to_unit", "train_animator", "train_evaluator", "train_pose_detector",
    "transfer_anytime", "transfer_direct", "video_poses",
]
