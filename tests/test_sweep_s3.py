"""Stores on object storage: sweeps into s3:// on a real distributed LocalCluster (worker
processes), against a real S3-compatible server on this machine (moto's server mode, started
here on 127.0.0.1): the store equals a local store of the same spec bit for bit, an interrupted
sweep resumes, `tables --from s3://` and `report s3://...` read it, and a store of another spec
is refused with nothing changed. Credentials and the endpoint come from the environment only."""
from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys

import pytest
from stores import address_cluster, assert_same_store, interrupted_sweep
import yaml

from extoll_vec.cli import main
from extoll_vec.sweep import build_sweep, load_sweep
from extoll_vec.sweep.runner import run_sweep
from extoll_vec.sweep.store import read_completed

pytestmark = pytest.mark.slow   # a real cluster: the full suite only

BUCKET = "sweeps"
# 8 points of the tiny alltoall: two protocols, two message sizes, two seeds
SPEC = {
    "name": "s3-test",
    "base": {"example": "tiny", "protocol": {"mailbox_slots": 512, "window": 8,
                                             "threshold": 4}},
    "axes": {"protocol.name": ["backpressure", "window"],
             "workload.message_bytes": [512, 2048]},
    "repeat": 2,
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3():
    """A local S3 server with one bucket; the AWS variables point the client at it."""
    from moto.server import ThreadedMotoServer
    logging.getLogger("werkzeug").setLevel(logging.ERROR)   # no line per request
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    with pytest.MonkeyPatch.context() as mp:
        for k, v in {"AWS_ACCESS_KEY_ID": "test-key", "AWS_SECRET_ACCESS_KEY": "test-secret",
                     "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
                     "AWS_DEFAULT_REGION": "us-east-1"}.items():
            mp.setenv(k, v)
        for k in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_CONFIG_FILE",
                  "AWS_SHARED_CREDENTIALS_FILE"):
            mp.delenv(k, raising=False)
        import s3fs
        fs = s3fs.S3FileSystem(skip_instance_cache=True)
        fs.mkdir(BUCKET)
        yield fs
    server.stop()


@pytest.fixture(scope="module")
def local(tmp_path_factory, client2):
    """The sweep into a local store: what every s3:// store must equal."""
    path = tmp_path_factory.mktemp("local") / "local.zarr"
    res = run_sweep(build_sweep(SPEC), path, client2, quiet=True)
    assert res.complete and res.computed == 8
    return path


@pytest.fixture(scope="module")
def full(s3, client2):
    url = f"s3://{BUCKET}/full.zarr"
    res = run_sweep(build_sweep(SPEC), url, client2, quiet=True)
    assert res.complete and res.computed == 8 and not res.failed
    return url


def _objects(fs, prefix: str) -> dict[str, tuple]:
    fs.invalidate_cache()
    return {k: (v["size"], v.get("ETag"), v.get("LastModified"))
            for k, v in fs.find(prefix, detail=True).items()}


def test_sweep_into_object_storage_equals_a_local_store(full, local, s3):
    assert read_completed(full).all()
    assert_same_store(local, full)
    keys = set(_objects(s3, f"{BUCKET}/full.zarr"))
    assert f"{BUCKET}/full.zarr/zarr.json" in keys
    assert f"{BUCKET}/full.zarr/exec_time_us/c/7" in keys       # one chunk per point
    # nothing left beside it (the store was written locally and uploaded, not staged here)
    assert s3.ls(BUCKET) == [f"{BUCKET}/full.zarr"]


def test_interrupted_sweep_resumes_on_object_storage(local, s3, client2, tmp_path, capsys):
    url = f"s3://{BUCKET}/interrupted.zarr"
    sw = build_sweep(SPEC)
    stored = interrupted_sweep(sw, url, client2)
    assert 3 <= stored < 8
    # resumed through the command line, the user's way, on the running scheduler's workers
    spec = tmp_path / "s3-test.yaml"
    spec.write_text(yaml.safe_dump(SPEC, sort_keys=False))
    assert load_sweep(spec).fingerprint == sw.fingerprint
    cluster = address_cluster(tmp_path / "cluster.yaml", client2)
    capsys.readouterr()
    assert main(["sweep", str(spec), "-o", url, "--cluster", str(cluster),
                 "--batch-size", "1"]) == 0
    err = capsys.readouterr().err
    assert f"computing {8 - stored} of 8 points ({stored} already in the store)" in err, err
    assert read_completed(url).all()
    assert_same_store(local, url)


def test_tables_and_report_from_object_storage(full, local, tmp_path, capsys):
    assert main(["tables", "summary", "--from", full, "-o", str(tmp_path / "s3.csv")]) == 0
    assert main(["tables", "summary", "--from", str(local),
                 "-o", str(tmp_path / "local.csv")]) == 0
    text = capsys.readouterr().out
    assert "summary of s3-test: 8 points" in text
    csv = (tmp_path / "s3.csv").read_text()
    assert len(csv.splitlines()) == 9 and csv == (tmp_path / "local.csv").read_text()
    # the HTML report reads the store through the same call
    assert main(["report", full, "-o", str(tmp_path / "s3.html")]) == 0
    html = (tmp_path / "s3.html").read_text()
    assert "s3-test" in html and "<img" in html


def test_a_foreign_store_on_object_storage_is_refused_untouched(full, s3, tmp_path, capsys):
    before = _objects(s3, f"{BUCKET}/full.zarr")
    other = tmp_path / "other.yaml"
    other.write_text("base: {example: tiny}\naxes: {workload.message_bytes: [256, 1024]}\n")
    capsys.readouterr()
    assert main(["sweep", str(other), "-o", full, "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"extoll-vec: error: {full}: ")
    assert "holds a different sweep" in err and "--overwrite" in err
    # a single run's store is not written over either (refused before it simulates)
    assert main(["run", "--example", "tiny", "-o", full]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "already exists" in err
    assert _objects(s3, f"{BUCKET}/full.zarr") == before


def test_a_store_that_is_not_there_or_unreachable_is_one_line(s3, capsys, tmp_path,
                                                              monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["tables", "summary", "--from", f"s3://{BUCKET}/missing.zarr"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no such result store" in err
    # tables write CSV and PNG files locally: a URL there is refused, not made a local folder
    assert main(["tables", "summary", "--from", f"s3://{BUCKET}/full.zarr",
                 "--out", f"s3://{BUCKET}/tables"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--out: " in err and "is a URL" in err
    assert not (tmp_path / "s3:").exists()
    # a server that does not answer: the endpoint the environment names is a closed port
    env = {**os.environ, "AWS_ENDPOINT_URL": f"http://127.0.0.1:{_free_port()}",
           "AWS_MAX_ATTEMPTS": "1"}
    url = f"s3://{BUCKET}/full.zarr"
    out = subprocess.run([sys.executable, "-m", "extoll_vec.cli", "tables", "summary",
                          "--from", url], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=120)
    assert out.returncode == 2, out.stderr
    err = out.stderr.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"extoll-vec: error: {url}: "), err
