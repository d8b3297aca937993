"""Sweeps on a real distributed LocalCluster (worker processes) into real zarr stores:
1 vs 2 workers bit-identical, Ctrl-C and resume, failing points, and the CLI end to end (a
subprocess interrupted with SIGINT, then rerun). Workers killed mid-sweep:
test_sweep_lost_workers.py."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from stores import TINY_SWEEP, assert_same_store, interrupted_sweep

from extoll_vec.cli import main
from extoll_vec.sweep import build_sweep, open_sweep
from extoll_vec.sweep.cluster import connect, load_cluster_spec
from extoll_vec.warmup import cache_use
from extoll_vec.sweep.runner import run_sweep
from extoll_vec.sweep.store import read_completed

pytestmark = pytest.mark.slow   # real clusters or whole targets: the full suite only

ROOT = Path(__file__).resolve().parents[1]

# every protocol, two message sizes, two seeds: 12 points of the tiny alltoall
SPEC = {"name": "dask-test", **TINY_SWEEP, "repeat": 2}
# About 2 s a point: after the first point is stored, the other seven keep two workers busy for
# several seconds, long enough for an interrupt to land mid-sweep (with 0.3 s points a fresh
# clone once finished all eight before the SIGINT arrived).
SLOW = {
    "name": "slow",
    "base": {"example": "tiny", "protocol": {"mailbox_slots": 512}},
    "axes": {"protocol.name": ["backpressure", "window"],
             "workload.iterations": [300, 350, 400, 450]},
}


@pytest.fixture(scope="module")
def reference(tmp_path_factory, client2):
    """The 12-point sweep on 2 workers (also the reference for later tests)."""
    path = tmp_path_factory.mktemp("ref") / "ref.zarr"
    res = run_sweep(build_sweep(SPEC), path, client2, quiet=True)
    assert res.complete and res.computed == 12 and not res.failed
    return path


def test_sweep_matches_the_engine_in_one_process(reference):
    from extoll_vec.engine import simulate
    sw = build_sweep(SPEC)
    ds = open_sweep(reference).load()
    assert ds.completed.values.all()
    direct = simulate(list(sw.configs))
    for name in direct.data_vars:
        np.testing.assert_array_equal(ds[name].values, direct[name].values, err_msg=name)


def _kernel_loads() -> tuple[int, int]:
    """(compiled signatures, cache loads + compilations) of the main kernel in this process."""
    from extoll_vec.kernels import sim
    d = sim.advance
    return len(d.overloads), sum(d._cache_hits.values()) + sum(d._cache_misses.values())


def test_kernels_load_once_per_worker_not_per_task(reference, client2):
    # the 12-point reference sweep ran several batches on each worker
    for worker, (signatures, loads) in client2.run(_kernel_loads).items():
        assert signatures == 1 and loads == 1, worker


def test_one_worker_gives_a_bit_identical_store(reference, tmp_path):
    path = tmp_path / "one.zarr"
    with connect(load_cluster_spec(workers=1), quiet=True) as client1:
        assert len(client1.scheduler_info()["workers"]) == 1
        res = run_sweep(build_sweep(SPEC), path, client1, quiet=True)
    assert res.complete and res.computed == 12
    assert_same_store(reference, path)


def test_interrupt_then_resume_computes_only_the_missing_points(reference, tmp_path, client2):
    path = tmp_path / "int.zarr"
    sw = build_sweep(SPEC)
    stored = interrupted_sweep(sw, path, client2)
    assert 3 <= stored < 12
    res = run_sweep(sw, path, client2, quiet=True)
    assert (res.already, res.computed) == (stored, 12 - stored)
    assert_same_store(reference, path)
    again = run_sweep(sw, path, client2, quiet=True)
    assert (again.already, again.computed, again.batches) == (12, 0, 0)


def test_failing_point_is_isolated_and_reported(tmp_path, client2):
    # 64 slots deadlock with the 16-packet FIFO of the model variant fifo16
    spec = {"base": {"example": "tiny", "variant": "fifo16", "protocol": {"name": "backpressure"}},
            "axes": {"protocol.mailbox_slots": [512, 64, 1024]}}
    path = tmp_path / "f.zarr"
    res = run_sweep(build_sweep(spec), path, client2, quiet=True, max_batch=8)
    assert [p for p, _ in res.failed] == [1]
    assert "deadlock" in res.failed[0][1]
    assert read_completed(path).tolist() == [True, False, True]
    assert res.computed == 2 and not res.complete


def test_smoke_sweep_through_the_cli(tmp_path, capsys):
    out = tmp_path / "smoke.zarr"
    argv = ["sweep", str(ROOT / "sweeps" / "smoke.yaml"), "-o", str(out), "--workers", "2"]
    assert main(argv + ["--quiet"]) == 0
    text = capsys.readouterr().out
    assert "summary of smoke: 12 points" in text
    assert {"none", "static", "dynamic"} <= set(text.split())
    assert main(["tables", "summary", "--from", str(out), "-o", str(tmp_path / "t.csv")]) == 0
    csv = (tmp_path / "t.csv").read_text().splitlines()
    assert csv[0].startswith("point,protocol_name,slots_per_process,time_us,overhead_pct")
    assert len(csv) == 13
    # flow control with 4 slots per process costs, with 40 it hardly does
    rows = [line.split(",") for line in csv[1:]]
    over = {(r[1], int(r[2])): float(r[4]) for r in rows if r[1] != "none"}
    assert over["static", 4] > 30 and over["dynamic", 4] > 30
    assert over["static", 40] < 10 and over["dynamic", 40] < 10


def _sweep_cmd(spec: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "extoll_vec.cli", "sweep", str(spec), "-o", str(out),
            "--workers", "2", "--batch-size", "1", *extra]


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_cli_ctrl_c_leaves_a_valid_store_and_rerun_finishes_it(tmp_path):
    import yaml
    spec = tmp_path / "slow.yaml"
    spec.write_text(yaml.safe_dump(SLOW, sort_keys=False))
    # The interrupt must land while points remain. A run that ends before the signal is sent
    # tests nothing: try again with a new store. A run still going when the signal is sent must
    # stop with 130.
    tries = []
    for attempt in range(3):
        out = tmp_path / f"slow{attempt}.zarr"
        # SIGINT as a terminal delivers it: a suite started in the background (`cmd &`, nohup)
        # hands its children SIGINT ignored, and Python then installs no KeyboardInterrupt
        # handler: the sweep would finish with exit 0 and nothing on stderr
        proc = subprocess.Popen(_sweep_cmd(spec, out, "--quiet"), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                                preexec_fn=_sigint_default)
        t0 = time.monotonic()
        try:
            while time.monotonic() < t0 + 120 and proc.poll() is None:
                if (out / "completed").exists() and read_completed(out).sum() >= 1:
                    break
                time.sleep(0.05)
            running = proc.poll() is None
            if running:
                proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        tries.append(f"{time.monotonic() - t0:.1f} s, exit {proc.returncode}, "
                     f"{int(read_completed(out).sum()) if out.exists() else 0} stored")
        if running:
            break
    assert running, f"every sweep ended before the interrupt: {tries}"
    assert proc.returncode == 130, (err, tries)
    assert "rerun the same command" in err
    stored = int(read_completed(out).sum())
    assert 1 <= stored < 8, "the interrupt came too late to test anything"
    assert open_sweep(out, completed_only=True).sizes["point"] == stored
    rerun = subprocess.run(_sweep_cmd(spec, out), capture_output=True, text=True, cwd=tmp_path,
                           timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    m = re.search(r"computing (\d+) of 8 points \((\d+) already in the store\)", rerun.stderr)
    assert m and (int(m[1]), int(m[2])) == (8 - stored, stored), rerun.stderr
    assert read_completed(out).all()
    assert "summary of slow: 8 points" in rerun.stdout


def test_points_that_simulate_identically_are_computed_once(tmp_path, client2):
    """The reference protocol ignores credit slots: swept along them, its 3 points are one
    simulation whose results are stored 3 times, and they equal a direct run."""
    from extoll_vec.engine import simulate
    from extoll_vec.sweep.runner import equal_points
    spec = {"name": "twins", "base": {"example": "tiny"},
            "axes": {"protocol.name": ["none", "static"], "protocol.credit_slots": [1, 2, 3]},
            "derived": {"protocol.mailbox_slots":
                        "0 if protocol.name == 'none' else 12 * workload.ranks"}}
    sw = build_sweep(spec)
    twins = equal_points(sw, range(sw.n_points))
    assert twins == {0: [1, 2], 3: [], 4: [], 5: []}
    res = run_sweep(sw, tmp_path / "t.zarr", client2, quiet=True)
    assert res.complete and res.computed == 6 and res.batches <= 4
    ds = open_sweep(tmp_path / "t.zarr").load()
    direct = simulate([sw.configs[0], sw.configs[4]])
    for name in ("exec_time_us", "rank_time_us", "packets_sent", "control_sent"):
        v = ds[name].values
        assert v[0].tobytes() == v[1].tobytes() == v[2].tobytes() == direct[name].values[0].tobytes()
        assert v[4].tobytes() == direct[name].values[1].tobytes()
    assert ds.protocol_credit_slots.values.tolist() == [1, 2, 3, 1, 2, 3]


def test_a_log_gets_progress_lines_while_a_long_batch_runs(client2):
    """On a pipe the progress line comes every log_interval even when no batch finishes in
    between (a batch of 1024-rank points runs for minutes)."""
    import io

    from distributed import as_completed

    from extoll_vec.sweep.progress import Progress
    from extoll_vec.sweep.runner import _completed

    log = io.StringIO()
    progress = Progress(1, stream=log, log_interval=0.2)
    fut = client2.submit(time.sleep, 1.5, pure=False)
    assert list(_completed(as_completed([fut]), progress)) == [fut]
    assert log.getvalue().count("0/1 points") >= 3


def test_workers_compile_nothing_after_extoll_vec_compile(tmp_path):
    """`extoll-vec compile` fills the cache the workers read: their batches only load."""
    family = "shared" if os.environ.get("EXTOLL_VEC_KERNELS") == "shared" else "extoll"
    out = subprocess.run([sys.executable, "-m", "extoll_vec.cli", "compile", "--family", family],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert re.search(r"^(shared|extoll) +\d+\.\d s$", out.stdout, re.M), out.stdout
    with connect(load_cluster_spec(workers=2), quiet=True) as client:
        client.wait_for_workers(2)
        res = run_sweep(build_sweep(SPEC), tmp_path / "s.zarr", client, quiet=True)
        assert res.complete and res.computed == 12
        use = client.run(cache_use)
    compiled = {w: c for w, (_, c) in use.items()}
    assert len(compiled) == 2 and set(compiled.values()) == {0}, compiled
