"""What a filter extender on loopback adds per pod (issue 10's Speed: < 5 ms per pod at
1000 nodes with nodeCacheCapable). A measurement, not a test.

    PYTHONPATH=src python bench/extender_overhead.py [--nodes 1000] [--pods 500] [--repeat 3]

Runs the same simulation (1000 nodes, pods of 100m) without and with a filter extender
that passes every node it is sent (an http.server in another process, keep-alive, answering
``NodeNames``), for percentageOfNodesToScore 0 (adaptive: 420 of 1000 nodes sent) and 100
(all 1000 sent). Reports the best wall time of each, the difference per pod, and the time
per pod spent inside the extender client's filter call (request, the server's work, the
answer decoded).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import platform
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from kubesched.api.scenario import load_scenario_text
from kubesched.backends.sim.cluster import SimCluster
from kubesched.config import load_config
from kubesched.extender.http import HTTPExtender


class PassAll(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body go out in two writes: without this, Nagle's algorithm and the
    # client's delayed ACK add ~40 ms per answer (Go's servers set TCP_NODELAY too)
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        args = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        data = json.dumps({"NodeNames": args["NodeNames"]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def scenario(nodes: int, pods: int) -> str:
    parts = [f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i:04d}}}\n"
             "status: {capacity: {cpu: '4', memory: 32Gi, pods: '110'}}\n"
             for i in range(nodes)]
    parts += [f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i:05d}}}\n"
              "spec: {containers: [{name: c, resources: {requests: {cpu: 100m, "
              "memory: 500Mi}}}]}\n" for i in range(pods)]
    return "".join(parts)


def run(text: str, pct: int, url: str | None) -> tuple[float, float, int]:
    cfg: dict[str, Any] = {"apiVersion": "kubescheduler.config.k8s.io/v1",
                           "kind": "KubeSchedulerConfiguration",
                           "percentageOfNodesToScore": pct}
    if url:
        cfg["extenders"] = [{"urlPrefix": url, "filterVerb": "filter",
                             "nodeCacheCapable": True}]
    scen = load_scenario_text(text, "bench.yaml")
    sim = SimCluster(scen, load_config(cfg))
    in_filter = 0.0
    for ext in sim.scheduler.extenders:
        assert isinstance(ext, HTTPExtender)
        inner = ext.filter

        def timed(pod: Any, nodes: Any, inner: Any = inner) -> Any:
            nonlocal in_filter
            t = time.perf_counter()
            try:
                return inner(pod, nodes)
            finally:
                in_filter += time.perf_counter() - t

        ext.filter = timed  # type: ignore[method-assign]
    t0 = time.perf_counter()
    result = sim.run()
    wall = time.perf_counter() - t0
    return wall, in_filter, result.scheduled


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    # the extender is its own process, as a real one is (no GIL shared with the scheduler)
    ports: multiprocessing.Queue[int] = multiprocessing.Queue()
    server = multiprocessing.Process(target=serve, args=(ports,), daemon=True)
    server.start()
    url = f"http://127.0.0.1:{ports.get(timeout=30)}/ext"
    text = scenario(a.nodes, a.pods)
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"{a.nodes} nodes, {a.pods} pods, best of {a.repeat}")
    for pct in (0, 100):
        base = min(run(text, pct, None)[0] for _ in range(a.repeat))
        runs = [run(text, pct, url) for _ in range(a.repeat)]
        wall, in_filter, scheduled = min(runs)
        assert scheduled == a.pods
        print(f"percentageOfNodesToScore {pct:3d}: without {base / a.pods * 1e3:6.2f} ms/pod, "
              f"with {wall / a.pods * 1e3:6.2f} ms/pod: +{(wall - base) / a.pods * 1e3:5.2f} "
              f"ms/pod; in the filter call {in_filter / a.pods * 1e3:5.2f} ms/pod")
    server.terminate()


def serve(ports: multiprocessing.Queue[int]) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), PassAll)
    ports.put(server.server_address[1])
    server.serve_forever()


if __name__ == "__main__":
    main()
