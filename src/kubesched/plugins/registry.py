"""The in-tree plugin registry: plugin name → class (upstream ``plugins/registry.go``)."""

from __future__ import annotations

from kubesched.framework.interface import Plugin
from kubesched.plugins.coscheduling import Coscheduling
from kubesched.plugins.defaultbinder import DefaultBinder
from kubesched.plugins.defaultpreemption import DefaultPreemption
from kubesched.plugins.dynamicresources.plugin import DynamicResources
from kubesched.plugins.gangscheduling import GangScheduling
from kubesched.plugins.imagelocality import ImageLocality
from kubesched.plugins.interpodaffinity import InterPodAffinity
from kubesched.plugins.nodeaffinity import NodeAffinity
from kubesched.plugins.nodedeclaredfeatures import NodeDeclaredFeatures
from kubesched.plugins.nodename import NodeName
from kubesched.plugins.nodeports import NodePorts
from kubesched.plugins.noderesources import BalancedAllocation, Fit
from kubesched.plugins.nodeunschedulable import NodeUnschedulable
from kubesched.plugins.nodevolumelimits import NodeVolumeLimits
from kubesched.plugins.podtopologyspread import PodTopologySpread
from kubesched.plugins.prioritysort import PrioritySort
from kubesched.plugins.schedulinggates import SchedulingGates
from kubesched.plugins.tainttoleration import TaintToleration
from kubesched.plugins.volumebinding import VolumeBinding
from kubesched.plugins.volumerestrictions import VolumeRestrictions
from kubesched.plugins.volumezone import VolumeZone


def in_tree_registry() -> dict[str, type[Plugin]]:
    registry: dict[str, type[Plugin]] = {
        SchedulingGates.name: SchedulingGates,
        PrioritySort.name: PrioritySort,
        NodeUnschedulable.name: NodeUnschedulable,
        NodeName.name: NodeName,
        TaintToleration.name: TaintToleration,
        NodeAffinity.name: NodeAffinity,
        NodePorts.name: NodePorts,
        Fit.name: Fit,
        VolumeRestrictions.name: VolumeRestrictions,
        NodeVolumeLimits.name: NodeVolumeLimits,
        VolumeBinding.name: VolumeBinding,
        VolumeZone.name: VolumeZone,
        PodTopologySpread.name: PodTopologySpread,
        InterPodAffinity.name: InterPodAffinity,
        BalancedAllocation.name: BalancedAllocation,
        DynamicResources.name: DynamicResources,
        DefaultPreemption.name: DefaultPreemption,
        ImageLocality.name: ImageLocality,
        DefaultBinder.name: DefaultBinder,
        NodeDeclaredFeatures.name: NodeDeclaredFeatures,
        GangScheduling.name: GangScheduling,
        # scheduler-plugins' Coscheduling: not upstream's, but what users run for gangs
        # today, so kubesched carries it (docs/gangs.md)
        Coscheduling.name: Coscheduling,
    }
    return registry
