"""PodTopologySpread: spread pods evenly over topology domains (upstream v1.35)."""

from kubesched.plugins.podtopologyspread.plugin import PodTopologySpread

__all__ = ["PodTopologySpread"]
