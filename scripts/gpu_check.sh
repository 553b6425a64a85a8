#!/usr/bin/env bash
# GPU check of the vllm and hf backends with tiny random models built on the spot
# (no downloads: the GPU machine may have no internet). Prints PASS/FAIL per check
# and exits non-zero if any failed. About 4-8 minutes on one H200. The last check,
# `throughput`, measures mmtasks+vLLM against raw vLLM on the same prompts (goal:
# at least 0.9x raw throughput; figures in $WORK/throughput.json).
#
#   scripts/gpu_check.sh                 # all checks
#   CHECKS="env build vllm-images" scripts/gpu_check.sh
#   PYTHON=/path/to/python scripts/gpu_check.sh
#
# Python: the first of $PYTHON, .venv-gpu/bin/python, python3, python that imports
# vllm with a CUDA torch. If none does, it tries to make .venv-gpu (system
# site-packages visible, then `pip install vllm -e .[hf]`), which needs PyPI;
# offline it stops and prints what each candidate lacks. mmtasks itself is
# imported from this checkout (PYTHONPATH), so it needs no install.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="${WORK:-${TMPDIR:-/tmp}/mmtasks-gpu-check}"
CHECKS="${CHECKS:-env build vllm-text vllm-images hf-images compare throughput}"
PROBE='import torch, vllm; assert torch.cuda.is_available(), "torch sees no CUDA device"'

describe() {  # what a python has and lacks
    "$1" - <<'PY' 2>&1 | sed 's/^/    /'
import importlib
for name in ("torch", "vllm", "transformers", "pydantic", "yaml", "jinja2", "PIL", "accelerate"):
    try:
        m = importlib.import_module(name)
        extra = ""
        if name == "torch":
            extra = f" (cuda available: {m.cuda.is_available()})"
        print(f"{name:13s} {getattr(m, '__version__', 'ok')}{extra}")
    except Exception as exc:  # report anything that stops the import
        print(f"{name:13s} MISSING ({type(exc).__name__}: {exc})")
PY
}

pick_python() {
    local c
    for c in ${PYTHON:-} "$ROOT/.venv-gpu/bin/python" python3 python; do
        command -v "$c" >/dev/null 2>&1 || [[ -x "$c" ]] || continue
        if "$c" -c "$PROBE" >/dev/null 2>&1; then
            echo "$c"
            return 0
        fi
    done
    return 1
}

if ! PY="$(pick_python)"; then
    echo "gpu_check: no python with vllm and a CUDA torch; trying to create $ROOT/.venv-gpu (needs PyPI)"
    if python3 -m venv --system-site-packages "$ROOT/.venv-gpu" \
        && "$ROOT/.venv-gpu/bin/pip" install vllm -e "$ROOT[hf]"; then
        PY="$(pick_python)" || true
    fi
    if [[ -z "${PY:-}" ]]; then
        echo "FAIL env: no usable python. What each candidate has:"
        for c in ${PYTHON:-} "$ROOT/.venv-gpu/bin/python" python3; do
            command -v "$c" >/dev/null 2>&1 || [[ -x "$c" ]] || continue
            echo "  $c:"
            describe "$c"
        done
        echo "Install vllm (with its CUDA torch) into one of them, or set PYTHON=/path/to/python."
        exit 1
    fi
fi

echo "gpu_check: python $PY, work dir $WORK"
describe "$PY"
mkdir -p "$WORK"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
    VLLM_LOGGING_LEVEL="${VLLM_LOGGING_LEVEL:-WARNING}" TOKENIZERS_PARALLELISM=false

declare -A LIMIT=([env]=90 [build]=120 [vllm-text]=240 [vllm-images]=240 [hf-images]=180 [compare]=30 [throughput]=300 [dry-run]=180)
status=0
start=$(date +%s)
: >"$WORK/summary.log"
for check in $CHECKS; do
    echo "== $check"
    timeout "${LIMIT[$check]:-240}" "$PY" "$ROOT/scripts/gpu_check.py" "$check" "$WORK" 2>"$WORK/$check.stderr" \
        | tee -a "$WORK/summary.log"
    rc=$?
    if [[ $rc -ne 0 ]]; then
        status=1
        [[ $rc -eq 124 ]] && echo "FAIL $check: timed out after ${LIMIT[$check]:-240} s" | tee -a "$WORK/summary.log"
        echo "---- last lines of $WORK/$check.stderr"
        tail -n 25 "$WORK/$check.stderr"
    fi
done
echo "== done in $(( $(date +%s) - start )) s: $(grep -c '^PASS' "$WORK/summary.log") PASS, $(grep -c '^FAIL' "$WORK/summary.log") FAIL"
exit $status
