"""The ``kubesched run`` and ``kubesched snapshot`` commands (registered by ``cli.py``).

Nothing heavy is imported until a command runs: ``kubesched simulate`` never loads the
Kubernetes client.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from kubesched.cliopts import decision_options
from kubesched.errors import InputError, check_output_path, require_extra

if TYPE_CHECKING:
    from kubesched.config.features import FeatureGates


# what backends/kube/client.py talks to an API server with (the kube extra installs them;
# orjson, which it uses too, is a core dependency)
CLIENT_LIBRARIES = ("kubernetes", "urllib3")


def _fail(message: str, status: int = 2) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(status)


def default_run_config(features: Any = None) -> Any:
    """Without --config: upstream's defaults with one profile named ``kubesched`` (the
    default ``default-scheduler`` profile would compete with the cluster's own
    scheduler)."""
    from kubesched.config import API_VERSION, KIND, load_config

    return load_config({"apiVersion": API_VERSION, "kind": KIND,
                        "profiles": [{"schedulerName": "kubesched"}]}, "<kubesched run default>",
                       features)


def _load_config(config_path: str | None, features: Any = None) -> tuple[Any, bool]:
    """The configuration (default when no file), and whether the file named
    leaderElection.resourceName itself."""
    from kubesched.config import KIND, load_config_file, parse_yaml_documents

    if not config_path:
        return default_run_config(features), False
    config = load_config_file(config_path, features)
    named = False
    try:
        docs = parse_yaml_documents(Path(config_path).read_text(encoding="utf-8"),
                                    config_path)
        for d in docs:
            if isinstance(d, dict) and (d.get("kind") == KIND or len(docs) == 1):
                le = d.get("leaderElection")
                named = isinstance(le, dict) and bool(le.get("resourceName"))
    except (OSError, InputError):
        named = False
    return config, named


def _client(kubeconfig: str | None, context: str | None, **kw: Any) -> Any:
    from kubesched.backends.kube.client import KubeClient

    try:
        return KubeClient.load(kubeconfig, context=context, **kw)
    except FileNotFoundError as e:
        _fail(str(e))
    except Exception as e:  # the kubernetes library's ConfigException and friends
        where = f"kubeconfig {kubeconfig}" if kubeconfig else "cluster configuration"
        _fail(f"{where}: {e}")
    return None


@click.command("run")
@click.option("--kubeconfig", type=click.Path(dir_okay=False),
              help="kubeconfig file (default: clientConnection.kubeconfig, the in-cluster "
                   "service account, $KUBECONFIG, ~/.kube/config).")
@click.option("--context", help="kubeconfig context (default: its current context).")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False),
              help="A KubeSchedulerConfiguration: the profiles (schedulerNames) kubesched "
                   "serves, leaderElection, clientConnection.")
@click.option("--dry-run", is_flag=True,
              help="Decide for its pods but write nothing: log and count the decisions.")
@click.option("--shadow", metavar="SCHEDULER",
              help="Also evaluate each pod SCHEDULER (e.g. default-scheduler) binds and count "
                   "whether kubesched would have chosen the same node.")
@click.option("--address", default="0.0.0.0:10259", show_default=True,
              help="HOST:PORT of /healthz, /readyz and /metrics (plain HTTP; '' disables).")
@click.option("--kube-api-qps", "qps", type=float,
              help="Client QPS (default: clientConnection.qps, 50).")
@click.option("--kube-api-burst", "burst", type=int,
              help="Client burst (default: clientConnection.burst, 100).")
@click.option("--leader-elect/--no-leader-elect", default=None,
              help="Leader election on a Lease (default: leaderElection.leaderElect, on).")
@click.option("--leader-elect-resource-name", "lease_name",
              help="Lease name (default: leaderElection.resourceName, else kubesched).")
@click.option("--leader-elect-resource-namespace", "lease_namespace",
              help="Lease namespace (default: leaderElection.resourceNamespace, kube-system).")
@click.option("--id", "identity", help="Identity in the lease (default: HOSTNAME_UUID).")
@click.option("--request-timeout", type=float, default=30.0, show_default=True,
              help="Seconds before a request without an answer is given up (and retried).")
@click.option("--shutdown-timeout", type=float, default=30.0, show_default=True,
              help="Seconds to finish bindings in flight after SIGTERM.")
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("-v", "--verbose", count=True, help="More logs (-v: debug).")
@decision_options
def run_command(kubeconfig: str | None, context: str | None, config_path: str | None,
                dry_run: bool, shadow: str | None, address: str, qps: float | None,
                burst: int | None, leader_elect: bool | None, lease_name: str | None,
                lease_namespace: str | None, identity: str | None, request_timeout: float,
                shutdown_timeout: float, log_format: str, verbose: int,
                features: FeatureGates, plugins: dict[str, type]) -> None:
    """Schedule a live cluster's pods whose schedulerName names a kubesched profile."""
    require_extra("kube", "kubesched run", *CLIENT_LIBRARIES, "prometheus_client")
    from kubesched.backends.kube import logs

    try:
        config, named = _load_config(config_path, features)
    except InputError as e:
        _fail(str(e))
        return
    config.features = features
    config.out_of_tree = plugins
    if address:
        from kubesched.backends.kube.server import parse_address

        try:
            parse_address(address)
        except ValueError as e:
            _fail(str(e))
    from kubesched.backends.kube.runner import KubeRunner, RunOptions

    opts = RunOptions(config=config, kubeconfig=kubeconfig, context=context, dry_run=dry_run,
                      shadow=shadow, address=address, qps=qps, burst=burst,
                      leader_elect=leader_elect, lease_name=lease_name,
                      lease_namespace=lease_namespace, lease_name_from_config=named,
                      identity=identity, request_timeout=request_timeout,
                      shutdown_timeout=shutdown_timeout)
    cc = config.client_connection
    client = _client(kubeconfig or cc.get("kubeconfig") or None, context,
                     qps=float(qps if qps is not None else cc.get("qps", 50.0)),
                     burst=int(burst if burst is not None else cc.get("burst", 100)),
                     request_timeout=request_timeout)
    logs.setup(log_format, logging.DEBUG if verbose else logging.INFO)
    if any(p.scheduler_name == "default-scheduler" for p in config.profiles):
        logging.getLogger("kubesched.kube").warning(
            "a profile is named default-scheduler: kubesched will compete with the cluster's "
            "own scheduler for its pods")
    try:
        runner = KubeRunner(opts, client)
    except OSError as e:  # the health address is taken, ...
        _fail(f"cannot start: {e}", 1)
        return
    sys.exit(runner.run())


@click.command("snapshot")
@click.option("--kubeconfig", type=click.Path(dir_okay=False),
              help="kubeconfig file (default: the in-cluster service account, $KUBECONFIG, "
                   "~/.kube/config).")
@click.option("--context", help="kubeconfig context (default: its current context).")
@click.option("--out", "out_path", metavar="PATH",
              default="-", show_default=True,
              help="Where to write the scenario ('-': stdout; a name ending in .json: one "
                   "JSON List, which loads faster than YAML).")
def snapshot_command(kubeconfig: str | None, context: str | None, out_path: str) -> None:
    """Export a live cluster's nodes, pods and other scheduling objects as a scenario that
    simulate and explain load."""
    require_extra("kube", "kubesched snapshot", *CLIENT_LIBRARIES)
    from kubesched.api.jsonlist import wants_json
    from kubesched.backends.kube.client import ApiError
    from kubesched.backends.kube.snapshot_export import export

    check_output_path(out_path, "--out")
    client = _client(kubeconfig, context)
    warn = lambda msg: click.echo(f"warning: {msg}", err=True)  # noqa: E731
    try:
        if out_path == "-":
            counts = export(client, sys.stdout, warn=warn)
        else:
            tmp = Path(out_path + ".tmp")
            with tmp.open("w", encoding="utf-8") as f:
                counts = export(client, f, warn=warn, as_json=wants_json(out_path))
            tmp.replace(out_path)
    except ApiError as e:
        _fail(f"reading the cluster: {e}", 1)
        return
    summary = ", ".join(f"{n} {k}" for k, n in counts.items())
    click.echo(f"snapshot: {summary or 'empty cluster'}"
               + (f" -> {out_path}" if out_path != "-" else ""), err=True)
