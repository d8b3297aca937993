"""A one-node SLURM cluster on localhost for the tests: Debian's munge and slurm-wlm daemons
(munged, slurmctld, slurmd) in the foreground, every file of theirs in a temporary folder.

The configuration is the smallest that runs batch jobs without root's system setup: this
machine's cores and memory (`slurmd -C`), one partition `debug`, no cgroups (process tracking by
/proc, no task plugin, no accounting), its own munge key and socket, free ports. Clients
(sbatch, squeue, scancel, and so dask-jobqueue) find it through SLURM_CONF.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scancel", "sinfo")
NODE = "localhost"


def missing() -> str | None:
    """Why no cluster can start here (None if it can)."""
    absent = [p for p in DAEMONS + CLIENTS if shutil.which(p) is None]
    if absent:
        return (f"{', '.join(absent)} not installed: the SLURM test needs Debian's slurm-wlm and "
                "munge (.ci/run installs them with apt-get when run as root)")
    if os.geteuid() != 0:
        return "the one-node SLURM cluster runs its daemons as root (SlurmUser=root)"
    return None


@dataclass
class SlurmCluster:
    root: Path
    conf: Path
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def env(self) -> dict[str, str]:
        return dict(os.environ, SLURM_CONF=str(self.conf))

    def run(self, *cmd: str) -> str:
        out = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=30)
        if out.returncode:
            raise RuntimeError(f"{' '.join(cmd)} failed: {out.stderr.strip()}\n{self.logs()}")
        return out.stdout

    def jobs(self) -> dict[str, str]:
        """squeue now: job id -> state (R, PD, CG, ...)."""
        rows = (line.split() for line in self.run("squeue", "-h", "-o", "%i %t").splitlines())
        return {r[0]: r[1] for r in rows if r}

    def node_state(self) -> str:
        return self.run("sinfo", "-h", "-n", NODE, "-o", "%T").strip()

    def wait_until_no_jobs(self, timeout: float = 60) -> float:
        """Seconds until squeue is empty; raises after `timeout`."""
        t0 = time.monotonic()
        while self.jobs():
            if time.monotonic() - t0 > timeout:
                raise TimeoutError(f"jobs still queued after {timeout} s: {self.jobs()}")
            time.sleep(0.2)
        return time.monotonic() - t0

    def logs(self, lines: int = 15) -> str:
        out = []
        for name in DAEMONS:
            p = self.root / f"{name}.log"
            if p.exists():
                tail = p.read_text(errors="replace").splitlines()[-lines:]
                out.append(f"--- {name}.log\n" + "\n".join(tail))
        return "\n".join(out)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _node_resources() -> tuple[int, int]:
    """(CPUs, RealMemory in MiB) of this machine as slurmd sees it."""
    text = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, check=True).stdout
    fields = dict(tok.split("=", 1) for tok in text.split() if "=" in tok)
    return int(fields["CPUs"]), int(fields["RealMemory"])


def _slurm_conf(root: Path, socket_path: Path, cpus: int, memory_mib: int) -> str:
    return f"""\
ClusterName=test
SlurmctldHost={NODE}(127.0.0.1)
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={socket_path}
CredType=cred/munge
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
MailProg=/bin/true
PlugStackConfig={root}/plugstack.conf
ReturnToService=2
KillWait=5
NodeName={NODE} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory_mib} State=UNKNOWN
PartitionName=debug Nodes={NODE} Default=YES MaxTime=INFINITE State=UP
"""


@contextlib.contextmanager
def one_node_cluster(start_timeout: float = 30) -> Iterator[SlurmCluster]:
    """Start munged, slurmctld and slurmd; yield once the node is idle; at the end cancel every
    job, stop the daemons and remove their folder."""
    # munged refuses a socket whose parent folders are not searchable by everyone (pytest's
    # temporary folders are 0700), so the folder is made here
    root = Path(tempfile.mkdtemp(prefix="extoll-vec-slurm-"))
    root.chmod(0o755)
    for sub in ("state", "spool", "munge"):
        (root / sub).mkdir()
    (root / "munge").chmod(0o755)
    key = root / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    sock = root / "munge" / "munge.socket"
    (root / "plugstack.conf").write_text("")   # not the system's /etc/slurm/plugstack.conf
    cpus, memory = _node_resources()
    conf = root / "slurm.conf"
    conf.write_text(_slurm_conf(root, sock, cpus, memory))
    cluster = SlurmCluster(root, conf)
    commands = {
        "munged": ["munged", "-F", f"--key-file={key}", f"--socket={sock}",
                   f"--pid-file={root}/munge/munged.pid", f"--seed-file={root}/munge/seed",
                   f"--log-file={root}/munge/munged.log"],
        "slurmctld": ["slurmctld", "-D", "-i", "-f", str(conf)],
        "slurmd": ["slurmd", "-D", "-N", NODE, "-f", str(conf)],
    }
    try:
        for name, cmd in commands.items():
            log = open(root / f"{name}.log", "w")
            cluster.procs[name] = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                                   env=cluster.env)
            log.close()
            if name == "munged":
                _wait(lambda: sock.exists(), start_timeout, "munged's socket", cluster)
        _wait(lambda: cluster.node_state() == "idle", start_timeout, "the node idle in sinfo",
              cluster)
        yield cluster
    finally:
        _stop(cluster)
        shutil.rmtree(root, ignore_errors=True)


def _wait(ready, timeout: float, what: str, cluster: SlurmCluster) -> None:
    t0 = time.monotonic()
    while True:
        for name, p in cluster.procs.items():
            if p.poll() is not None:
                raise RuntimeError(f"{name} exited with {p.returncode}\n{cluster.logs()}")
        try:
            if ready():
                return
        except RuntimeError:     # slurmctld not answering yet
            pass
        if time.monotonic() - t0 > timeout:
            raise TimeoutError(f"no {what} after {timeout} s\n{cluster.logs()}")
        time.sleep(0.2)


def _stop(cluster: SlurmCluster) -> None:
    ctld = cluster.procs.get("slurmctld")
    if ctld is not None and ctld.poll() is None and cluster.procs.get("slurmd") is not None:
        with contextlib.suppress(Exception):
            ids = list(cluster.jobs())
            if ids:
                cluster.run("scancel", *ids)
                cluster.wait_until_no_jobs(timeout=30)
    for name in reversed(DAEMONS):          # slurmd first: it kills what its jobs left
        p = cluster.procs.get(name)
        if p is None or p.poll() is not None:
            continue
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
