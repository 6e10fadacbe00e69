"""Measure Kubernetes client libraries for kubesched's kube backend (docs/kube.md has the
numbers). Not a test: run it by hand, with the candidates installed::

    pip install kubernetes kubernetes_asyncio lightkube
    python tests/kube/measure_clients.py [--pods 5000] [--binds 1000]

It starts the API server double in a child process (so the client's CPU time is its own),
loads it with realistic pods, and for each library measures: import time (fresh process),
a LIST of all pods decoded into the library's generated models and, raw, into kubesched's
object model (json + api.parse), a watch of N events, and N sequential small POSTs (the
pods/binding shape). Client CPU is process time of this process, wall is end to end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kube_double import ApiServerDouble, node, pod


def realistic_pod(i: int) -> dict:
    p = pod(f"web-{i:05d}", cpu="250m", memory="256Mi", scheduler="default-scheduler",
            node_name=f"n{i % 100}", labels={"app": "web", "pod-template-hash": "5d8f7c9b6"})
    md = p["metadata"]
    md["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                              "name": "web-5d8f7c9b6", "uid": "0b1c2d3e-aaaa-bbbb-cccc-1234",
                              "controller": True, "blockOwnerDeletion": True}]
    md["annotations"] = {"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"}
    md["managedFields"] = [{"manager": "kube-controller-manager", "operation": "Update",
                            "apiVersion": "v1", "time": "2026-01-01T00:00:00Z",
                            "fieldsType": "FieldsV1",
                            "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                                         "f:spec": {"f:containers": {"k:{\"name\":\"c\"}": {
                                             ".": {}, "f:image": {}, "f:name": {}}}}}}]
    c = p["spec"]["containers"][0]
    c["env"] = [{"name": f"VAR_{k}", "value": f"value-{k}"} for k in range(5)]
    c["ports"] = [{"containerPort": 8080, "protocol": "TCP"}]
    c["volumeMounts"] = [{"name": "kube-api-access", "mountPath": "/var/run/secrets",
                          "readOnly": True}]
    c["livenessProbe"] = {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 10}
    p["spec"]["volumes"] = [{"name": "kube-api-access", "projected": {"sources": [
        {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}}]}}]
    p["spec"]["tolerations"] = [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300}]
    p["status"] = {"phase": "Running", "podIP": f"10.0.{i // 250}.{i % 250}",
                   "startTime": "2026-01-01T00:00:00Z",
                   "conditions": [{"type": t, "status": "True",
                                   "lastTransitionTime": "2026-01-01T00:00:00Z"}
                                  for t in ("Initialized", "Ready", "ContainersReady",
                                            "PodScheduled")],
                   "containerStatuses": [{"name": "c", "ready": True, "restartCount": 0,
                                          "image": "registry.k8s.io/pause:3.10",
                                          "imageID": "sha256:abc", "containerID": "c://x",
                                          "state": {"running": {
                                              "startedAt": "2026-01-01T00:00:00Z"}}}]}
    return p


def serve(n_pods: int, ready: mp.Queue, stop: mp.Event) -> None:
    d = ApiServerDouble(bookmark_interval=3600).start()
    for i in range(100):
        d.create(node(f"n{i}"))
    for i in range(n_pods):
        d.create(realistic_pod(i))
    d.create(pod("target", scheduler="kubesched"))
    ready.put(d.port)
    stop.wait()
    d.stop()


def import_time(stmt: str) -> float:
    code = f"import time; t=time.perf_counter(); {stmt}; print(time.perf_counter()-t)"
    best = min(float(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                    text=True, check=True).stdout) for _ in range(3))
    return best


class Timer:
    def __enter__(self) -> Timer:
        self.w, self.c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *a: object) -> None:
        self.wall = time.perf_counter() - self.w
        self.cpu = time.process_time() - self.c

    def __str__(self) -> str:
        return f"{self.wall * 1000:8.0f} ms wall {self.cpu * 1000:8.0f} ms cpu"


def best(fn, n: int = 3) -> Timer:
    """The fastest of ``n`` runs of ``fn`` (by wall time)."""
    runs = []
    for _ in range(n):
        with Timer() as t:
            fn()
        runs.append(t)
    return min(runs, key=lambda t: t.wall)


def parse_all(items: list[dict]) -> int:
    from kubesched.api.parse import parse_pod
    return sum(1 for it in items if parse_pod(it))


def bench_kubernetes(url: str, kcfg: str, n_binds: int, n_watch: int) -> dict:
    from kubernetes import client, config

    conf = client.Configuration()
    config.load_kube_config(config_file=kcfg, client_configuration=conf)
    api = client.ApiClient(conf)
    core = client.CoreV1Api(api)
    out = {}
    out["list_models"] = best(lambda: core.list_pod_for_all_namespaces().items)
    out["list_raw_bytes"] = best(
        lambda: core.list_pod_for_all_namespaces(_preload_content=False).data)
    hdrs = {"Content-Type": "application/json", "Accept": "application/json",
            "Authorization": conf.auth_settings()["BearerToken"]["value"]}
    body = json.dumps({"apiVersion": "v1", "kind": "Binding",
                       "metadata": {"name": "x"}, "target": {"name": "n0"}})
    rest = api.rest_client
    with Timer() as t:
        for _ in range(n_binds):
            resp = rest.pool_manager.request("POST", f"{url}/api/v1/namespaces/default/pods/"
                                             "nosuch/binding", body=body, headers=hdrs)
            assert resp.status == 404
    out["post_raw"] = t
    with Timer() as t:
        for _ in range(min(n_binds, 300)):
            with contextlib.suppress(client.ApiException):
                core.create_namespaced_pod_binding(
                    "nosuch", "default", client.V1Binding(
                        metadata=client.V1ObjectMeta(name="nosuch"),
                        target=client.V1ObjectReference(name="n0", kind="Node")))
    out["post_models_x300"] = t
    with Timer() as t:
        resp = rest.pool_manager.request(
            "GET", f"{url}/api/v1/pods?watch=1&resourceVersion=0&timeoutSeconds=5",
            headers=hdrs, preload_content=False)
        n = 0
        buf = b""
        for chunk in resp.stream(65536):
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                if line:
                    json.loads(line)
                    n += 1
            if n >= n_watch:
                break
        resp.release_conn()
    out["watch_raw_json"] = t
    return out


def bench_kubernetes_asyncio(url: str, kcfg: str, n_binds: int, n_watch: int) -> dict:
    async def main() -> dict:
        from kubernetes_asyncio import client, config

        conf = client.Configuration()
        await config.load_kube_config(config_file=kcfg, client_configuration=conf)
        async with client.ApiClient(conf) as api:
            core = client.CoreV1Api(api)
            out = {}
            runs = []
            for _ in range(3):
                with Timer() as t:
                    await core.list_pod_for_all_namespaces()
                runs.append(t)
            out["list_models"] = min(runs, key=lambda t: t.wall)
            runs = []
            for _ in range(3):
                with Timer() as t:
                    r = await core.list_pod_for_all_namespaces(_preload_content=False)
                    await r.read()
                runs.append(t)
            out["list_raw_bytes"] = min(runs, key=lambda t: t.wall)
            sess = api.rest_client.pool_manager
            hdrs = {"Content-Type": "application/json",
                    "Authorization": conf.api_key["BearerToken"]}
            body = json.dumps({"apiVersion": "v1", "kind": "Binding",
                               "metadata": {"name": "x"}, "target": {"name": "n0"}})
            with Timer() as t:
                for _ in range(n_binds):
                    async with sess.post(f"{url}/api/v1/namespaces/default/pods/nosuch/"
                                         "binding", data=body, headers=hdrs) as resp:
                        await resp.read()
                        assert resp.status == 404
            out["post_raw"] = t
            with Timer() as t:
                async with sess.get(f"{url}/api/v1/pods?watch=1&resourceVersion=0&"
                                    "timeoutSeconds=5", headers=hdrs) as resp:
                    n = 0
                    async for line in resp.content:
                        if line.strip():
                            json.loads(line)
                            n += 1
                        if n >= n_watch:
                            break
            out["watch_raw_json"] = t
            return out

    return asyncio.run(main())


def bench_lightkube(url: str, kcfg: str, n_binds: int, n_watch: int) -> dict:
    from lightkube import Client, KubeConfig
    from lightkube.resources.core_v1 import Pod

    c = Client(KubeConfig.from_file(kcfg))
    out = {}
    out["list_models"] = best(lambda: list(c.list(Pod, namespace="*")))
    hx = c._client._client  # the httpx client lightkube configured (auth, TLS)
    out["list_raw_bytes"] = best(lambda: hx.get("/api/v1/pods").content)
    body = json.dumps({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "x"},
                       "target": {"name": "n0"}})
    with Timer() as t:
        for _ in range(n_binds):
            r = hx.post("/api/v1/namespaces/default/pods/nosuch/binding", content=body,
                        headers={"Content-Type": "application/json"})
            assert r.status_code == 404
    out["post_raw"] = t
    with Timer() as t:
        n = 0
        with hx.stream("GET", "/api/v1/pods?watch=1&resourceVersion=0&timeoutSeconds=5",
                       timeout=None) as resp:
            for line in resp.iter_lines():
                if line:
                    json.loads(line)
                    n += 1
                if n >= n_watch:
                    break
    out["watch_raw_json"] = t
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pods", type=int, default=5000)
    ap.add_argument("--binds", type=int, default=1000)
    args = ap.parse_args()
    ready: mp.Queue = mp.Queue()
    stop = mp.Event()
    proc = mp.Process(target=serve, args=(args.pods, ready, stop), daemon=True)
    proc.start()
    port = ready.get(timeout=300)
    url = f"http://127.0.0.1:{port}"
    kcfg = os.path.join(tempfile.mkdtemp(), "kubeconfig")
    ApiServerDouble(port=port).kubeconfig(kcfg)
    print(f"{args.pods} pods, {args.binds} POSTs, watch of {args.pods} events; "
          f"python {sys.version.split()[0]}")
    imports = {
        "kubernetes": "import kubernetes.client, kubernetes.config",
        "kubernetes_asyncio": "import kubernetes_asyncio.client, kubernetes_asyncio.config",
        "lightkube": "import lightkube, lightkube.resources.core_v1",
    }
    benches = {"kubernetes": bench_kubernetes, "kubernetes_asyncio": bench_kubernetes_asyncio,
               "lightkube": bench_lightkube}
    for name, fn in benches.items():
        try:
            it = import_time(imports[name])
        except subprocess.CalledProcessError:
            print(f"{name}: not installed")
            continue
        res = fn(url, kcfg, args.binds, args.pods)
        print(f"\n{name}: import {it * 1000:.0f} ms")
        for k, t in res.items():
            extra = ""
            if k == "post_raw":
                extra = f"  ({t.wall / args.binds * 1e6:.0f} us/request)"
            print(f"  {k:18s} {t}{extra}")
    print("\ndecoding the same LIST body (library-independent):")
    import urllib.request
    req = urllib.request.Request(f"{url}/api/v1/pods",
                                 headers={"Authorization": "Bearer double-token"})
    data = urllib.request.urlopen(req).read()
    print(f"  body {len(data) / 1e6:.1f} MB")
    print(f"  json.loads         {best(lambda: json.loads(data))}")
    try:
        import orjson
        print(f"  orjson.loads       {best(lambda: orjson.loads(data))}")
    except ImportError:
        pass
    try:
        import msgspec
        print(f"  msgspec decode     {best(lambda: msgspec.json.decode(data))}")
    except ImportError:
        pass
    items = json.loads(data)["items"]
    print(f"  api.parse_pod      {best(lambda: parse_all(items))}"
          f"  ({len(items)} pods)")
    stop.set()
    proc.join(10)


if __name__ == "__main__":
    main()
