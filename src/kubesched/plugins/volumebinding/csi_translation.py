"""In-tree to CSI volume translation (upstream ``k8s.io/csi-translation-lib``), as far as the
scheduler uses it in v1.35.

CSI migration is on by default for AWS EBS, GCE PD, Azure Disk and OpenStack Cinder (GA, gates
locked) and for Portworx (``CSIMigrationPortworx``, on); Azure File and vSphere volumes are
migratable but the scheduler's plugins do not count them as migrated. Translation gives the CSI
driver name, the volume handle and, for PersistentVolumes, the node affinity rewritten to the
driver's topology key (``translateTopologyFromInTreeToCSI``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlparse

from kubesched.api.storage import (
    MIGRATED_PLUGINS_ANNOTATION,
    CSINode,
    PersistentVolume,
    copy_object,
)
from kubesched.api.types import (
    REGION_LABEL,
    REGION_LABEL_BETA,
    ZONE_LABEL,
    ZONE_LABEL_BETA,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Volume,
)
from kubesched.plugins.volumebinding.helpers import StorageError

AWS_EBS = "kubernetes.io/aws-ebs"
GCE_PD = "kubernetes.io/gce-pd"
AZURE_DISK = "kubernetes.io/azure-disk"
AZURE_FILE = "kubernetes.io/azure-file"
VSPHERE = "kubernetes.io/vsphere-volume"
CINDER = "kubernetes.io/cinder"
PORTWORX = "kubernetes.io/portworx-volume"


@dataclass(frozen=True, slots=True)
class _Plugin:
    name: str
    source_key: str  # the volume source field, in a PV and inline
    driver: str
    topology_key: str  # "" when the translation does not rewrite topology


PLUGINS: tuple[_Plugin, ...] = (
    _Plugin(GCE_PD, "gcePersistentDisk", "pd.csi.storage.gke.io", "topology.gke.io/zone"),
    _Plugin(AWS_EBS, "awsElasticBlockStore", "ebs.csi.aws.com",
            "topology.ebs.csi.aws.com/zone"),
    _Plugin(CINDER, "cinder", "cinder.csi.openstack.org", "topology.cinder.csi.openstack.org/zone"),
    _Plugin(AZURE_DISK, "azureDisk", "disk.csi.azure.com", "topology.disk.csi.azure.com/zone"),
    _Plugin(AZURE_FILE, "azureFile", "file.csi.azure.com", ""),
    _Plugin(VSPHERE, "vsphereVolume", "csi.vsphere.vmware.com", ""),
    _Plugin(PORTWORX, "portworxVolume", "pxd.portworx.com", ""),
)
_BY_NAME = {p.name: p for p in PLUGINS}
_BY_SOURCE = {p.source_key: p for p in PLUGINS}

UNSPECIFIED = "UNSPECIFIED"
_AWS_VOLUME_RE = re.compile(r"^vol-[^/]*$")
MULTI_ZONE_DELIMITER = "__"


class TranslationError(StorageError):
    pass


def pv_plugin_name(pv: PersistentVolume) -> str | None:
    """``GetInTreePluginNameFromSpec(pv, nil)`` for a migratable PV, else None."""
    p = _BY_SOURCE.get(pv.spec.source_kind)
    return p.name if p is not None else None


def inline_plugin_name(vol: Volume) -> str | None:
    """``GetInTreePluginNameFromSpec(nil, vol)`` for a migratable inline volume, else None."""
    if vol.source is None:
        return None
    for key in vol.source:
        p = _BY_SOURCE.get(key)
        if p is not None and vol.source[key] is not None:
            return p.name
    return None


def is_pv_migratable(pv: PersistentVolume) -> bool:
    return pv_plugin_name(pv) is not None


def is_inline_migratable(vol: Volume) -> bool:
    return inline_plugin_name(vol) is not None


def is_migratable_plugin_name(name: str) -> bool:
    return name in _BY_NAME


def csi_name_from_in_tree(name: str) -> str:
    p = _BY_NAME.get(name)
    if p is None:
        raise TranslationError(f"could not find CSI Driver name for plugin {name}")
    return p.driver


def migrated_plugins(csi_node: CSINode | None) -> set[str]:
    if csi_node is None:
        return set()
    mpa = csi_node.metadata.annotations.get(MIGRATED_PLUGINS_ANNOTATION, "")
    return set(mpa.split(",")) if mpa else set()


def is_csi_migration_on(csi_node: CSINode | None, plugin: str) -> bool:
    """NodeVolumeLimits' ``isCSIMigrationOn``: GA plugins need only a CSINode; Portworx also
    needs the plugin in the CSINode's migrated-plugins annotation."""
    if csi_node is None or not plugin:
        return False
    if plugin in (AWS_EBS, GCE_PD, AZURE_DISK, CINDER):
        return True
    if plugin == PORTWORX:
        return plugin in migrated_plugins(csi_node)
    return False


def is_migration_on_for_plugin(plugin: str) -> bool:
    """VolumeBinding's ``isCSIMigrationOnForPlugin``."""
    return plugin in (AWS_EBS, GCE_PD, AZURE_DISK, CINDER, PORTWORX)


def is_plugin_migrated_on_node(plugin: str, csi_node: CSINode | None) -> bool:
    """VolumeBinding's ``isPluginMigratedToCSIOnNode``."""
    return plugin in migrated_plugins(csi_node)


# ---------------------------------------------------------------- handles


def _aws_volume_id(kube_id: str) -> str:
    """``KubernetesVolumeIDToEBSVolumeID``."""
    if not kube_id.startswith("aws://"):
        return kube_id
    try:
        url = urlparse(kube_id)
    except ValueError as e:
        raise TranslationError(f"Invalid disk name ({kube_id}): {e}") from None
    aws_id = url.path.strip("/")
    if not _AWS_VOLUME_RE.match(aws_id):
        raise TranslationError(f"Invalid format for AWS volume ({kube_id})")
    return aws_id


def _gce_region_from_zones(zones: list[str]) -> str:
    regions = set()
    for zone in zones:
        i = zone.rfind("-")
        if i < 0:
            raise TranslationError(f"invalid zone {zone}")
        regions.add(zone[:i])
    if len(regions) != 1:
        raise TranslationError(f"multiple or no regions gotten from zones, got: {sorted(regions)}")
    return regions.pop()


def _gce_handle(pd_name: str, labels: dict[str, str] | None) -> str:
    zones_label = ""
    if labels is not None:
        beta, ga = labels.get(ZONE_LABEL_BETA, ""), labels.get(ZONE_LABEL, "")
        if beta and ga and beta != ga:
            raise TranslationError("PV has both beta and GA zone labels with different values")
        zones_label = ga or beta
    zones = zones_label.split(MULTI_ZONE_DELIMITER) if zones_label else []
    if len(zones) == 1:
        return f"projects/{UNSPECIFIED}/zones/{zones[0]}/disks/{pd_name}"
    if len(zones) > 1:
        region = _gce_region_from_zones(zones)
        return f"projects/{UNSPECIFIED}/regions/{region}/disks/{pd_name}"
    return f"projects/{UNSPECIFIED}/zones/{UNSPECIFIED}/disks/{pd_name}"


def _handle(plugin: _Plugin, src: dict, labels: dict[str, str] | None) -> str:
    if plugin.name == AWS_EBS:
        return _aws_volume_id(str(src.get("volumeID", "")))
    if plugin.name == GCE_PD:
        return _gce_handle(str(src.get("pdName", "")), labels)
    if plugin.name == AZURE_DISK:
        kind = src.get("kind", "Shared")
        if kind is not None and str(kind).lower() != "managed":
            raise TranslationError(f"kind({kind}) is not supported in csi migration")
        return str(src.get("diskURI", ""))
    if plugin.name in (CINDER, PORTWORX):
        return str(src.get("volumeID", ""))
    raise TranslationError(f"translation of {plugin.name} is not supported")


def translate_inline(vol: Volume) -> tuple[str, str]:
    """(driver, volume handle) of a migratable inline volume."""
    name = inline_plugin_name(vol)
    if name is None or vol.source is None:
        raise TranslationError(f"volume {vol.name} is not migratable")
    p = _BY_NAME[name]
    return p.driver, _handle(p, dict(vol.source[p.source_key] or {}), None)


def translate_pv(pv: PersistentVolume) -> PersistentVolume:
    """``TranslateInTreePVToCSI``: a copy of ``pv`` with a ``csi`` source and its topology
    moved to the driver's key."""
    name = pv_plugin_name(pv)
    if name is None:
        raise TranslationError(f"PV {pv.name} is not migratable")
    p = _BY_NAME[name]
    handle = _handle(p, pv.spec.source, pv.metadata.labels)
    out = copy_object(pv)
    out.spec.source_kind = "csi"
    out.spec.source = {"driver": p.driver, "volumeHandle": handle}
    if p.topology_key:
        out.spec.node_affinity = _translate_topology(pv, p.topology_key)
    return out


def _affinity_has_key(terms: tuple[NodeSelectorTerm, ...] | None, key: str) -> bool:
    return terms is not None and any(r.key == key for t in terms for r in t.match_expressions)


def _topology_labels(pv: PersistentVolume) -> tuple[str, str]:
    terms = pv.spec.node_affinity
    if _affinity_has_key(terms, ZONE_LABEL):
        return ZONE_LABEL, REGION_LABEL
    if _affinity_has_key(terms, ZONE_LABEL_BETA):
        return ZONE_LABEL_BETA, REGION_LABEL_BETA
    if ZONE_LABEL in pv.metadata.labels:
        return ZONE_LABEL, REGION_LABEL
    if ZONE_LABEL_BETA in pv.metadata.labels:
        return ZONE_LABEL_BETA, REGION_LABEL_BETA
    return ZONE_LABEL, REGION_LABEL


def _replace_key(terms: tuple[NodeSelectorTerm, ...], old: str, new: str
                 ) -> tuple[NodeSelectorTerm, ...]:
    return tuple(NodeSelectorTerm(
        match_expressions=tuple(
            NodeSelectorRequirement(new if r.key == old else r.key, r.operator, r.values)
            for r in t.match_expressions),
        match_fields=t.match_fields) for t in terms)


def _translate_topology(pv: PersistentVolume, csi_key: str
                        ) -> tuple[NodeSelectorTerm, ...] | None:
    """``translateTopologyFromInTreeToCSI``: the zone key of the node affinity becomes the
    driver's topology key (or, without one, the PV's zone label is added under it); a beta
    region key becomes the GA one."""
    terms = pv.spec.node_affinity
    zone_key, region_key = _topology_labels(pv)
    if _affinity_has_key(terms, zone_key):
        terms = _replace_key(terms, zone_key, csi_key)  # type: ignore[arg-type]
    elif zone_key in pv.metadata.labels:
        zones = sorted({z.strip() for z in pv.metadata.labels[zone_key].split(
            MULTI_ZONE_DELIMITER) if z.strip()})
        if zones:
            req = NodeSelectorRequirement(csi_key, "In", tuple(zones))
            base = terms if terms else (NodeSelectorTerm(),)
            terms = tuple(NodeSelectorTerm((*t.match_expressions, req), t.match_fields)
                          for t in base)
    if _affinity_has_key(terms, region_key) and region_key != REGION_LABEL:
        terms = _replace_key(terms, region_key, REGION_LABEL)  # type: ignore[arg-type]
    return terms
