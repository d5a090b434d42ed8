#!/usr/bin/env bash
# GPU check: one world-size-1 probe run on CUDA with CUDA-event timing, then the event table
# of its last step. Needs a CUDA build of torch and one GPU; about a minute on an H100-class
# card. Usage: bash bench/gpu_check.sh [extra gpu_probe flags]
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

python -c 'import torch; assert torch.cuda.is_available(), "no CUDA device"; print(torch.__version__, torch.cuda.get_device_name(0))'

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for schedule in 1f1b zb-h1; do
  # A ~110M-parameter GPT: big enough that kernels, not Python, dominate each action.
  timeout 300 python -m gpu_probe --device cuda --dp 1 --tp 1 --pp 1 --schedule "$schedule" \
    --microbatches 4 --microbatch-size 4 --steps 5 --hidden 1024 --heads 16 --layers 8 \
    --seq-len 1024 --vocab 32000 --dtype bf16 --lr 3e-4 --quiet --run-name "gpu-$schedule" \
    --out "$out/$schedule" "$@"
  python - "$out/$schedule/rank-00000.jsonl" "$schedule" <<'PY'
import json
import sys
from collections import defaultdict

lines = open(sys.argv[1]).read().splitlines()
records = [json.loads(line) for line in lines]
losses = " ".join(f"{r['loss']:.3f}" for r in records)
last = records[-1]
print(f"\n== {sys.argv[2]}: losses {losses}; step {last['step']}, peak {last['mem'] / 2**30:.2f} GiB")
print(f"{'kind':8} {'mb':>3} {'chunk':>5} {'start ms':>9} {'end ms':>9} {'dur ms':>8}")
totals = defaultdict(float)
for e in sorted(last["events"], key=lambda e: e["start"]):
    ms = (e["end"] - e["start"]) * 1e3
    totals[e["kind"]] += ms
    mb = "" if e.get("microbatch") is None else e["microbatch"]
    chunk = "" if e.get("chunk") is None else e["chunk"]
    print(f"{e['kind']:8} {mb:>3} {chunk:>5} {e['start'] * 1e3:9.3f} {e['end'] * 1e3:9.3f} {ms:8.3f}")
step_ms = max(e["end"] for e in last["events"]) * 1e3
print("totals ms: " + ", ".join(f"{k} {v:.2f}" for k, v in totals.items()) + f"; step {step_ms:.2f}")
PY
done
