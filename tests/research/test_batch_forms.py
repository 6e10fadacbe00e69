"""The batch forms of GpuShare's Filter and of the policies' and the tie-break's Score
agree with the per-node forms on random clusters (shared GPUs, several models, nodes
without GPUs)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kubesched.framework.handle import Handle
from kubesched.research.gpushare import GpuShare
from kubesched.research.openb import OpenbSpec, load_openb
from kubesched.research.policies import POLICIES, TIE_BREAK, typical_pods, typical_to_args
from kubesched.testing import assert_forms_agree

HEADER = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
          "creation_time,deletion_time,scheduled_time\n")
MODELS = ["V100M16", "T4", "P100", "A100"]


def write(tmp: Path, seed: int) -> Path:
    rng = random.Random(seed)
    nodes = ["sn,cpu_milli,memory_mib,gpu,model"]
    for i in range(14):
        gpus = rng.choice([0, 1, 2, 4, 8, 8])
        nodes.append(f"n{i},{rng.choice([32000, 64000, 96000])},262144,{gpus},"
                     f"{rng.choice(MODELS) if gpus else ''}")
    pods = [HEADER.rstrip("\n")]
    for i in range(60):
        kind = rng.random()
        if kind < 0.2:
            num, milli = 0, 0
        elif kind < 0.7:
            num, milli = 1, rng.choice([100, 250, 500, 700])
        else:
            num, milli = rng.choice([1, 2, 4, 8]), 1000
        spec = rng.choice(["", "", "", "T4", "V100M16|P100"]) if num else ""
        pods.append(f"p{i:02d},{rng.choice([1000, 4000, 8000, 16000])},4096,{num},{milli},"
                    f"{spec},LS,Running,{i},,{i}")
    (tmp / "openb_node_list_gpu_node.csv").write_text("\n".join(nodes) + "\n")
    (tmp / "openb_pod_list_default.csv").write_text("\n".join(pods) + "\n")
    return tmp


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("plugin", ["GpuShare", *POLICIES, *TIE_BREAK])
def test_batch_forms_agree_with_per_node_forms(tmp_path: Path, plugin: str,
                                               seed: int) -> None:
    sc, trace, _nodes = load_openb(OpenbSpec(write(tmp_path, seed), order="replay"))
    rng = random.Random(seed)
    names = [n.metadata.name for n in sc.nodes]
    pods = sorted(sc.pods, key=lambda p: p.metadata.name)
    for p in pods[:35]:  # bound at load: the ledger places them best fit
        p.spec.node_name = rng.choice(names)
    typical = typical_to_args(typical_pods(t.shape for t in trace))
    args = {"typicalPods": typical}
    for p in pods[35:]:
        obj = (GpuShare({"gpuSelMethod": "best"}, Handle()) if plugin == "GpuShare"
               else TIE_BREAK[plugin][0](args, Handle()) if plugin in TIE_BREAK
               else POLICIES[plugin](args, Handle()))
        assert_forms_agree(obj, sc, p.key)
