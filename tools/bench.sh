#!/usr/bin/env bash
# One command for turnout's headline figures (bench/README.md):
#
#   tools/bench.sh [--quick] [--out DIR]
#
# Builds the benchmarks optimised (--config=opt), installs the optimised
# Python package into a scratch folder, runs the dispatch (with c10 1.13 in
# the same binary), kernels (with ATen 1.13), jit (with TorchScript 1.13),
# registry memory, Python and small-model benchmarks with fixed settings:
# one pinned core (the last one; the thread-scaling benchmark gets the last
# two), BLAS, OpenMP and turnout's pool single-threaded. Then prints one line per
# headline figure with its baseline from the same run and the ratio
# (tools/bench_summary.py). Installs Debian's libtorch-dev (the c10, ATen and
# TorchScript baselines) and python3-torch when missing.
#
#   --quick     shorter runs (0.1 s per benchmark, one repetition): to see a
#               gross regression in a minute, not figures for the README.
#   --out DIR   keep the JSON files in DIR (default: a temporary folder).
#
# Timings gate nothing in CI; run this on an idle machine before and after a
# change to the call path, and put figures in bench/README.md with their
# noise (the mean and sd of the repetitions).
set -euo pipefail

cd "$(dirname "$0")/.."
quick=0
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --out) out="$2"; shift ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "tools/bench.sh: unknown argument '$1' (see tools/bench.sh --help)" >&2; exit 2 ;;
  esac
  shift
done

tools/install_deps.sh bench
if [ -z "$out" ]; then
  out="$(mktemp -d /tmp/turnout-bench.XXXXXX)"
fi
mkdir -p "$out"
python=/usr/bin/python3

if [ "$quick" = 1 ]; then
  gbench=(--benchmark_min_time=0.1)
  pybench=(--number 2000 --repeat 3)
  modelbench=(--rounds 2 --seconds 0.05)
else
  gbench=(--benchmark_min_time=0.5 --benchmark_repetitions=5
          --benchmark_report_aggregates_only=true)
  pybench=()
  modelbench=()
fi

ncpu="$(nproc)"
core=$((ncpu - 1))
pin=(taskset -c "$core")
pin2=(taskset -c "$((ncpu > 1 ? ncpu - 2 : 0)),$core")
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 TURNOUT_NUM_THREADS=1
# OpenBLAS's kernels for this CPU in the C++ benchmarks too (both sides of
# each ratio link the same OpenBLAS): what `import turnout` sets for Python
# (python/turnout/_openblas_env.py); a value already set is kept.
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
  core_type="$("$python" -c 'import sys; sys.path.insert(0, "python/turnout")
import _openblas_env as e; print(e.core_type_for(e.cpu_flags()) or "")')"
  if [ -n "$core_type" ]; then export OPENBLAS_CORETYPE="$core_type"; fi
fi

echo "tools/bench.sh: building (bazel --config=opt)" >&2
bazel build --config=opt //bench:dispatch_c10_bench //bench:kernels_bench \
  //bench:aten_bench //bench:jit_torch_bench //bench:registry_memory_bench
bin="$(bazel info --config=opt bazel-bin)/bench"
pkg="$out/python"
rm -rf "$pkg"
bazel run --config=opt //:install_python -- --target "$pkg" >/dev/null

run() {  # run NAME JSON CMD...: one benchmark binary, its JSON into $out
  local name="$1" json="$2"
  shift 2
  echo "tools/bench.sh: $name" >&2
  if ! "$@" --benchmark_out="$out/$json" --benchmark_out_format=json >"$out/$name.log" 2>&1; then
    echo "tools/bench.sh: $name failed (log: $out/$name.log)" >&2
    rm -f "$out/$json"
  fi
}

run dispatch dispatch.json "${pin[@]}" "$bin/dispatch_c10_bench" "${gbench[@]}" \
  --benchmark_filter='^BM_(C10)?(Direct|Unboxed|Boxed|Include|Find|DefImpl)'
run threads threads.json "${pin2[@]}" "$bin/dispatch_c10_bench" "${gbench[@]}" \
  --benchmark_filter='CallsThreads'
run kernels kernels.json "${pin[@]}" "$bin/kernels_bench" "${gbench[@]}"
run aten aten.json "${pin[@]}" "$bin/aten_bench" "${gbench[@]}"
run jit jit.json "${pin[@]}" "$bin/jit_torch_bench" "${gbench[@]}"
run memory memory.json "${pin[@]}" "$bin/registry_memory_bench"

for b in python jit_python; do
  echo "tools/bench.sh: ${b}_bench.py" >&2
  if ! PYTHONPATH="$pkg" "${pin[@]}" "$python" "bench/${b}_bench.py" "${pybench[@]}" \
      --json "$out/$b.json" >"$out/$b.log" 2>&1; then
    echo "tools/bench.sh: ${b}_bench.py failed (log: $out/$b.log)" >&2
    rm -f "$out/$b.json"
  fi
done

# Issue 20's small models (a transformer block and a CNN block, batch 1 and
# larger) in turnout's GraphExecutor and TorchScript 1.13, same process.
echo "tools/bench.sh: jit_models_bench.py" >&2
if ! PYTHONPATH="$pkg" "${pin[@]}" "$python" bench/jit_models_bench.py "${modelbench[@]}" \
    --json "$out/jit_models.json" >"$out/jit_models.log" 2>&1; then
  echo "tools/bench.sh: jit_models_bench.py failed or skipped a model (log: $out/jit_models.log)" >&2
fi

echo "tools/bench.sh: figures in $out; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$python" tools/bench_summary.py "$out"
