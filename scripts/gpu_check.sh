#!/usr/bin/env bash
# Every GPU-only check in one short run, for a machine with CUDA (target: under 5 minutes on one H200).
#   bash scripts/gpu_check.sh [OUT_DIR]
# 1. the test suite's gpu-marked tests (AMP, sync-free logging steps, CUDA memory readings...);
# 2. every scenario on CUDA, broken and fixed, with the real CUDA OOM and fp16 without a GradScaler;
# 3. a timing of each, printed by clinic reproduce itself.
set -euo pipefail
out=${1:-runs/gpu_check}
mkdir -p "$out"
python -c "import torch; assert torch.cuda.is_available(), 'no CUDA device'; print(torch.cuda.get_device_name())"
python -m pytest -q -m gpu -p no:cacheprovider 2>&1 | tee "$out/pytest_gpu.log"
python -m chapters.cli reproduce all --device cuda --out "$out/reproduce" --json > "$out/reproduce.json"
python -m chapters.cli reproduce nan --cause all --device cuda --out "$out/reproduce" --json > "$out/nan_causes.json"
cat "$out/reproduce.json" "$out/nan_causes.json"
