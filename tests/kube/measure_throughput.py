"""Throughput of ``kubesched run`` beside the real kube-scheduler v1.36.2 on one real
kube-apiserver (issue 23, point 5; the figures are in docs/performance.md). Not a test: run
by hand, outside CI::

    PYTHONPATH=src python tests/kube/measure_throughput.py [--nodes 100] [--pods 1000] [--rounds 2]

One control plane (etcd, kube-apiserver); ``--nodes`` Ready nodes (64 cpu, 256 GiB, 110
pods each). Each round, for each scheduler in turn: ``--pods`` pending pods (100m, 64 MiB)
of its schedulerName created first, then the scheduler started as a process with its client
rate limit lifted (kube-scheduler: ``--kube-api-qps/--kube-api-burst`` 100000; kubesched:
``--kube-api-qps 0 --kube-api-burst 0``, no limiter), the clock running until every pod is
bound (the pods' unbound count polled every 0.2 s with a field selector). Reported per run:
seconds from the process start to the last pod bound, from the first pod seen bound to the
last, pods per second over both, and the CPU seconds (``/proc/PID/stat``) of the scheduler
process and of kube-apiserver and etcd meanwhile. The pods are then deleted and the
other scheduler goes.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kube_envtest import ControlPlane, find_assets, stop, temp_dir, track
from kube_real import Cluster, ns_path, pod

SRC = Path(__file__).resolve().parents[2] / "src"


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start(which: str, assets: Path, kubeconfig: Path, log: Path) -> subprocess.Popen[bytes]:
    if which == "kube-scheduler":
        args = [str(assets / "kube-scheduler"), f"--kubeconfig={kubeconfig}",
                "--leader-elect=false", "--secure-port=0", "--kube-api-qps=100000",
                "--kube-api-burst=100000"]
        env = None
    else:
        args = [sys.executable, "-m", "kubesched", "run", "--kubeconfig", str(kubeconfig),
                "--kube-api-qps", "0", "--kube-api-burst", "0", "--no-leader-elect",
                "--address", "", "--kubernetes-version", "1.36"]
        env = {**os.environ, "PYTHONPATH": str(SRC)}
    with log.open("ab") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    track(proc)
    return proc


def unbound(c: Cluster) -> int:
    items = c.request("GET", ns_path(c.namespace) + "?fieldSelector=spec.nodeName%3D")["items"]
    return len(items)


def one_run(c: Cluster, which: str, n_pods: int, assets: Path, work: Path) -> dict[str, Any]:
    scheduler = "default-scheduler" if which == "kube-scheduler" else "kubesched"

    def create(i: int) -> None:
        body = pod(f"p{i:05}", "100m", "64Mi", scheduler=scheduler)
        c.create_pod(body)

    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        list(ex.map(create, range(n_pods)))
    load0 = os.getloadavg()[0]
    server = [p.proc.pid for p in (c.cp.apiserver, c.cp.etcd) if p.proc is not None]
    server0 = sum(map(cpu_seconds, server))
    t0 = time.monotonic()
    proc = start(which, assets, Path(c.kubeconfig), work / f"{which}.log")
    first = None
    try:
        while True:
            left = unbound(c)
            now = time.monotonic()
            if first is None and left < n_pods:
                first = now
            if left == 0:
                break
            if proc.poll() is not None:
                raise RuntimeError(f"{which} exited; see {work / f'{which}.log'}")
            if now - t0 > 600:
                raise TimeoutError(f"{which}: {left} pods still unbound after 600 s")
            time.sleep(0.2)
        end = time.monotonic()
        cpu = cpu_seconds(proc.pid)
        server_cpu = sum(map(cpu_seconds, server)) - server0
    finally:
        stop(proc)
    assert first is not None
    c.request("DELETE", ns_path(c.namespace) + "?gracePeriodSeconds=0")
    while c.pods():
        time.sleep(0.5)
    return {"scheduler": which, "total_s": end - t0, "steady_s": end - first,
            "pods_per_s": n_pods / (end - t0), "steady_pods_per_s": n_pods / (end - first),
            "cpu_s": cpu, "server_cpu_s": server_cpu, "load": load0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--pods", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args(argv)
    assets = find_assets()
    work = temp_dir("kubesched-throughput-")
    with ControlPlane(assets, work / "cp") as cp:
        c = Cluster(cp, work)
        for i in range(args.nodes):
            c.ready_node(f"n{i:03}", cpu="64", memory="256Gi", pods=110)
        for _ in range(args.rounds):
            for which in ("kube-scheduler", "kubesched"):
                r = one_run(c, which, args.pods, assets, work)
                print(f"{r['scheduler']:>14}: {args.pods} pods on {args.nodes} nodes: "
                      f"{r['total_s']:.1f} s from start ({r['pods_per_s']:.0f} pods/s), "
                      f"{r['steady_s']:.1f} s first to last binding "
                      f"({r['steady_pods_per_s']:.0f} pods/s), process CPU "
                      f"{r['cpu_s']:.1f} s, kube-apiserver + etcd CPU {r['server_cpu_s']:.1f} s, "
                      f"load {r['load']:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
