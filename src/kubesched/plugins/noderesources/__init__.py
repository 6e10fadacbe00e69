"""NodeResourcesFit and NodeResourcesBalancedAllocation (upstream ``plugins/noderesources``)."""

from kubesched.plugins.noderesources.balanced_allocation import BalancedAllocation
from kubesched.plugins.noderesources.fit import Fit

__all__ = ["BalancedAllocation", "Fit"]
