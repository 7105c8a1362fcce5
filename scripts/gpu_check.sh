#!/usr/bin/env bash
# Every GPU-only check in one prepared run, for a machine with CUDA (target: under 8 minutes on one H200).
#   bash scripts/gpu_check.sh [OUT_DIR]
# It PRINTS figures and exit codes; it asserts nothing it has not seen. Each part runs even if one before it
# failed, and the summary at the end lists the exit code of each.
#   1. the test suite's gpu-marked tests (AMP, sync-free logging steps, CUDA memory readings...);
#   2. scripts/gpu_figures.py: NVML utilisation, CUDA-event step timing, host syncs on non-logging steps;
#   3. the fp16-without-GradScaler NaN, and the real CUDA OOM under a memory cap;
#   4. every scenario on CUDA, broken and fixed (`clinic reproduce all --device cuda`), with its wall time.
set -uo pipefail
out=${1:-runs/gpu_check}
mkdir -p "$out"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}
declare -A code

python -c "import torch; print('torch', torch.__version__, '| cuda', torch.version.cuda, '| device',
torch.cuda.get_device_name() if torch.cuda.is_available() else 'NONE')"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,utilization.gpu --format=csv

echo "== 1. pytest -m gpu"
# Only the modules that hold gpu tests: a GPU image need not carry the grading stack (nbgrader) that other
# test modules import.
python -m pytest -q -m gpu -p no:cacheprovider $(grep -l "mark.gpu" tests/test_*.py) 2>&1 | tee "$out/pytest_gpu.log" | tail -15
code[pytest_gpu]=${PIPESTATUS[0]}

echo "== 2. utilisation, event timing, host syncs"
python scripts/gpu_figures.py 2>&1 | tee "$out/figures.log"
code[figures]=${PIPESTATUS[0]}

echo "== 3. fp16 without a GradScaler; a real CUDA OOM under a cap"
python -m chapters.cli reproduce nan --cause fp16_no_scaler --device cuda --out "$out/reproduce" --json \
    > "$out/fp16_no_scaler.json" 2> "$out/fp16_no_scaler.err"
code[fp16_no_scaler]=$?
cat "$out/fp16_no_scaler.json"; tail -3 "$out/fp16_no_scaler.err"
python -m chapters.cli reproduce oom --device cuda --out "$out/reproduce" --json > "$out/oom.json" 2> "$out/oom.err"
code[oom]=$?
cat "$out/oom.json"; tail -3 "$out/oom.err"
echo "the broken run's own error line:"
grep -rh "out of memory" "$out/reproduce/oom" 2>/dev/null | head -1 | cut -c1-400

echo "== 4. clinic reproduce all --device cuda (wall time; goal <= 60 s on one H200)"
start=$(date +%s)
python -m chapters.cli reproduce all --device cuda --out "$out/reproduce_all" --json > "$out/reproduce_all.json" \
    2> "$out/reproduce_all.err"
code[reproduce_all]=$?
end=$(date +%s)
python - "$out/reproduce_all.json" <<'PY'
import json, sys
try:
    document = json.load(open(sys.argv[1]))
except (OSError, ValueError) as err:
    sys.exit(f"no JSON document from reproduce all: {err}")
for scenario in document.get("scenarios", []):
    print({key: value for key, value in scenario.items() if not isinstance(value, (dict, list))})
PY
tail -3 "$out/reproduce_all.err"
echo "reproduce all --device cuda: $((end - start)) s wall (whole seconds; per scenario above)"

echo "== summary: exit code of each part (0 = it ran to the end; read the figures above for the rest)"
for part in pytest_gpu figures fp16_no_scaler oom reproduce_all; do echo "  $part: ${code[$part]}"; done
