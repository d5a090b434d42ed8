#!/usr/bin/env bash
# One GPU, as a stranger meets meshscope: the wheel (not this checkout) installed into a fresh
# venv, `meshscope serve` beside `meshscope probe` on CUDA/NCCL, the run read back through the
# JSON API (its measured peak allocated/reserved beside the prediction), a torch.profiler
# trace of the CUDA run, and `meshscope calibrate` of this GPU. No network needed: the wheel
# and its dependencies come from WHEELS (pip download them for the GPU box's Python first).
#
# Usage: bash bench/gpu_stranger.sh WHEELS OUT      (about 4 minutes on one H100)
# WHEELS: the closure, e.g. `pip wheel --no-deps . -w W && pip download -d W W/meshscope-*.whl`
# with the GPU box's --python-version and --platform (fastapi pulls opentelemetry-api).
set -uo pipefail
wheels="$(cd "$1" && pwd)"
out="$(mkdir -p "$2" && cd "$2" && pwd)"
work="$(mktemp -d)"
cd "$work"  # away from any checkout: what runs is the installed wheel
export PYTHONUNBUFFERED=1 MESHSCOPE_INGEST_TOKEN=gpu-stranger-token-0123456789abcdef
step() { echo; echo "== $*"; }

step "device"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version(), torch.cuda.get_device_name(0))'

step "install the wheel into a fresh venv (torch from the system, as a GPU user has it)"
# The box's python3 is itself a venv, so --system-site-packages would not reach its torch:
# a .pth line puts that site-packages behind the new venv's own.
python3 -m venv venv
python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' \
  >"$(venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/gpu-box.pth"
venv/bin/pip install -q --no-index --find-links "$wheels" "$wheels"/meshscope-*.whl || exit 1
venv/bin/meshscope --help | head -3
export PATH="$work/venv/bin:$PATH"

step "serve"
meshscope serve --host 127.0.0.1 --port 8765 --db "$work/runs.sqlite3" >"$out/serve.log" 2>&1 &
server=$!
for _ in $(seq 50); do curl -sf http://127.0.0.1:8765/healthz >/dev/null && break; sleep 0.2; done
curl -sf http://127.0.0.1:8765/healthz && echo

model=(--hidden 1024 --heads 16 --layers 8 --seq-len 1024 --vocab 32000 --dtype bf16 --lr 3e-4)
for sched in 1f1b zb-h1; do
  step "meshscope probe: $sched, ~110M GPT, bf16, CUDA, reporting to the server"
  timeout 240 meshscope probe --device cuda --schedule "$sched" --microbatches 4 \
    --microbatch-size 4 --steps 6 "${model[@]}" --quiet --run-name "h100-$sched" \
    --server ws://127.0.0.1:8765/ws/ingest --out "$work/spool-$sched"
  echo "probe exit $?"
done

step "torchrun, world 1 (NCCL process group), with --profile: a CUDA Kineto trace"
timeout 240 python -m torch.distributed.run --standalone --nproc-per-node 1 -m gpu_probe --device cuda \
  --microbatches 4 --microbatch-size 2 --steps 5 --profile-steps 2 "${model[@]}" --quiet \
  --run-name h100-torchrun --server ws://127.0.0.1:8765/ws/ingest \
  --out "$work/spool-tr" --profile "$work/traces"
echo "torchrun exit $?"
ls -la "$work/traces" && cp "$work/traces/rank0_trace.json.gz" "$out/h100_rank0_trace.json.gz"

step "a larger probe for memory: hidden 2048, seq 2048, micro-batch 4"
timeout 240 meshscope probe --device cuda --microbatches 4 --microbatch-size 4 --steps 4 \
  --hidden 2048 --heads 16 --layers 8 --seq-len 2048 --vocab 32000 --dtype bf16 --quiet \
  --run-name h100-mem --server ws://127.0.0.1:8765/ws/ingest --out "$work/spool-mem"
echo "probe exit $?"

step "the runs as the API serves them"
for run in h100-1f1b h100-zb-h1 h100-torchrun h100-mem; do
  curl -s "http://127.0.0.1:8765/api/runs/$run" >"$out/run-$run.json"
  curl -s "http://127.0.0.1:8765/api/runs/$run/analysis" >"$out/analysis-$run.json"
done
python3 - "$out" <<'PY'
import json, sys
from pathlib import Path
for f in sorted(Path(sys.argv[1]).glob("analysis-*.json")):
    a = json.loads(f.read_text())
    mem = a.get("memory") or {}
    print(f.name, json.dumps(mem)[:1200])
PY

step "calibrate this GPU (one rank: links from the h100-sxm preset)"
timeout 300 meshscope calibrate --local --ranks 1 --links-from h100-sxm --device cuda \
  --name h100-calibrated --out "$out/h100-calibrated.json"
echo "calibrate exit $?"

kill "$server"; wait "$server" 2>/dev/null
cp "$work"/spool-1f1b/rank-*.jsonl "$out/" 2>/dev/null
tail -5 "$out/serve.log"
echo done
