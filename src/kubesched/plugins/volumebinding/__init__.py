"""VolumeBinding: the plugin, its volume binder and assume caches, and the storage helpers
the other volume plugins share."""

from kubesched.plugins.volumebinding.plugin import VolumeBinding

__all__ = ["VolumeBinding"]
