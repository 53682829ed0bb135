"""tools/bench_summary.py (tools/bench.sh's last step): the headline lines it
forms from benchmark JSON, the ratios against the same run's baselines, and
what it says when a benchmark did not run."""

import json
import os
import subprocess
import sys

import pytest

SUMMARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                       "tools", "bench_summary.py")


def gbench(*rows):
    """Google Benchmark's JSON: one mean aggregate per (name, counters)."""
    benchmarks = []
    for name, counters in rows:
        benchmarks.append(dict(name=name + "_mean", run_name=name, run_type="aggregate",
                               aggregate_name="mean", **counters))
        # The other aggregates are ignored: a stddev row must not win.
        benchmarks.append(dict(name=name + "_stddev", run_name=name, run_type="aggregate",
                               aggregate_name="stddev", **{k: 0.5 for k in counters}))
    return {"context": {}, "benchmarks": benchmarks}


def summarize(folder):
    done = subprocess.run([sys.executable, SUMMARY, str(folder)], capture_output=True,
                          text=True, check=True)
    return done.stdout.splitlines()


def line(lines, figure):
    found = [l for l in lines if l.startswith(figure)]
    assert len(found) == 1, (figure, lines)
    return found[0]


def test_ratios_against_the_same_run(tmp_path):
    (tmp_path / "dispatch.json").write_text(json.dumps(gbench(
        ("BM_DirectCallTensor", {"ns": 10.0}),
        ("BM_UnboxedCallTensor/off", {"ns": 12.0}),
        ("BM_C10UnboxedCallTensor", {"ns": 24.0}),
        ("BM_BoxedCallTensor/off", {"ns": 16.0}),
        ("BM_C10BoxedCallTensor", {"ns": 40.0}),
    )))
    (tmp_path / "python.json").write_text(json.dumps(
        {"a + b, 1-element tensors": {"turnout": 300.0, "torch": 1000.0}}))
    lines = summarize(tmp_path)
    assert "c10 24.00 ns  ratio 0.50" in line(lines, "unboxed call, 1 Tensor arg")
    assert "ratio 0.40" in line(lines, "boxed call, 1 Tensor arg")
    assert "6.00 ns" in line(lines, "boxed call over the direct call")
    assert "torch 1000.00 ns  ratio 0.30" in line(lines, "Python a + b, 1 element")
    # Figures whose benchmark is not in the file are said to be missing.
    assert "(not measured)" in line(lines, "findSchemaOrThrow")


def test_thread_scaling_and_memory(tmp_path):
    (tmp_path / "threads.json").write_text(json.dumps(gbench(
        ("BM_CallsThreads/same/real_time/threads:1", {"items_per_second": 50e6}),
        ("BM_CallsThreads/same/real_time/threads:2", {"items_per_second": 95e6}),
    )))
    memory = {"benchmarks": [
        {"name": "BM_RemovedOperatorBytes/iterations:1", "run_type": "iteration",
         "left_bytes_per_op": 176.0},
        {"name": "BM_ChurnWithParkedReader/parked:1/cycles:100000/iterations:1",
         "run_type": "iteration", "peak_growth_MB": 0.25, "left_after_leave_MB": 0.0},
    ]}
    (tmp_path / "memory.json").write_text(json.dumps(memory))
    lines = summarize(tmp_path)
    assert "1.90 x" in line(lines, "2 threads / 1, same, turnout")
    assert "(not measured)" in line(lines, "2 threads / 1, different, turnout")
    assert "176.00 B" in line(lines, "bytes left per removed operator")
    assert "0.25 MB" in line(lines, "100k define/remove cycles, parked reader")


def test_small_models_against_torchscript(tmp_path):
    (tmp_path / "jit_models.json").write_text(json.dumps({
        "transformer small scripted": {"turnout_us": 60.0, "turnout_us_sd": 2.0,
                                       "torch_us": 200.0, "torch_us_sd": 5.0,
                                       "ratio": 0.3, "ratio_sd": 0.01, "target": 0.5},
        "cnn large traced": {"turnout_us": 9000.0, "turnout_us_sd": 100.0,
                             "torch_us": 7500.0, "torch_us_sd": 90.0,
                             "ratio": 1.2, "ratio_sd": 0.02, "target": 1.0},
        "cnn small scripted": {"error": "ValueError: no operator aten::foo\nmore"},
    }))
    lines = summarize(tmp_path)
    small = line(lines, "transformer block, batch 1, scripted")
    assert "60.00 us" in small and "TorchScript 200.00 us  ratio 0.30" in small
    assert "[target <= 0.5 of TorchScript]" in small
    large = line(lines, "CNN block, large, traced")
    assert "ratio 1.20" in large and "[target <= 1.0 of TorchScript]" in large
    # A form that did not run says why, and invents no figure.
    assert "(not measured)" in line(lines, "CNN block, batch 1, scripted")
    assert "  (ValueError: no operator aten::foo)" in lines
    # Forms absent from the file print nothing.
    assert not any(l.startswith("transformer block, large") for l in lines)


def test_missing_and_broken_files_are_reported_not_invented(tmp_path):
    (tmp_path / "kernels.json").write_text("{ not json")
    lines = summarize(tmp_path)
    assert "  (dispatch.json missing: its benchmark did not run)" in lines
    assert any(l.startswith("  (kernels.json unreadable:") for l in lines)
    assert not any("ratio" in l for l in lines)


def test_usage_error():
    done = subprocess.run([sys.executable, SUMMARY], capture_output=True, text=True)
    assert done.returncode != 0
    assert "usage: bench_summary.py DIR" in done.stderr


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
