"""InterPodAffinity: required and preferred pod (anti-)affinity (upstream v1.35)."""

from kubesched.plugins.interpodaffinity.plugin import InterPodAffinity

__all__ = ["InterPodAffinity"]
