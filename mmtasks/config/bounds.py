"""The upper bounds of the numbers a user gives (command-line flags, ``evaluate()`` options and the
task YAML's video keys), all ours: each is far above any real setting and far below what would
exhaust a machine, so a typo (``--num-frames 1000000000``, ``--fps inf``) is one line naming the
flag, exit 2, before anything is built, like the ``--gen-kwargs`` bounds."""

from __future__ import annotations

#: the most frames one video may be sampled to (``num_frames``, ``max_frames``, ``--num-frames``,
#: ``--max-frames``): an hour at 1 fps is 3,600; no video model takes more than a few hundred
MAX_VIDEO_FRAMES = 4096
#: the highest sampling rate (``fps``, ``frames_fps``, ``--fps``): above any video's frame rate
MAX_FPS = 1000.0
#: the most demonstrations per question (``--num-fewshot``, ``fewshot.k``)
MAX_FEWSHOT = 64
#: the most dialogues in flight at once (``--max-live``)
MAX_LIVE = 1_000_000
#: the most requests per forward pass of a local backend (``--batch-size``)
MAX_BATCH_SIZE = 65_536
#: the largest seed (``--seed`` of a run and of ``compare``): seeds are 64-bit (numpy's generators
#: take non-negative ones, results.json's checked reader refuses integers past 64 bits)
MAX_SEED = 2**63 - 1
#: an API backend's requests in flight at once (``concurrency``)
MAX_CONCURRENCY = 4096
#: an API backend's ``timeout`` and ``deadline``, in seconds (a day), finite
MAX_TIMEOUT_S = 86_400.0
#: an API backend's retries after the first attempt (``max_retries``)
MAX_RETRIES = 100
#: the largest answer an API backend may be told to accept (``max_response_bytes``): 1 GiB
MAX_RESPONSE_BYTES = 1 << 30
#: the largest ``max_image_side`` (past any image the pixel budget lets through)
MAX_IMAGE_SIDE = 100_000
#: the largest ``image_max_bytes`` (the most bytes an image file is read at)
MAX_IMAGE_BYTES = 512 * 1024 * 1024
