"""The assume caches of PersistentVolumes and PersistentVolumeClaims (upstream
``volumebinding/assume_cache.go`` and ``scheduler/util/assumecache``).

Reserve *assumes* an object (a PV pre-bound to a claim, a claim annotated with its selected
node) so that later pods see it before the API server does; Unreserve restores the API
object. The API objects live in ``handle.objects`` (the informers' caches); an assumed
object is dropped as soon as the API object it was derived from is replaced (upstream keeps it
until an informer update with a newer resourceVersion arrives — every update of a stored object
is a new object here, so identity tells the same).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubesched.api.storage import object_key, resource_version_int
from kubesched.plugins.volumebinding.helpers import StorageError


class AssumeCache:
    def __init__(self, description: str, get_api: Callable[[str], Any]) -> None:
        self.description = description
        self._get_api = get_api
        # key -> (assumed object, the API object it was assumed over)
        self._assumed: dict[str, tuple[Any, Any]] = {}

    def get_api(self, key: str) -> Any:
        """The API object (``GetAPIObj``), ignoring assumptions."""
        return self._get_api(key)

    def get(self, key: str) -> Any:
        """The latest object (``Get``): the assumed one while its API object is unchanged."""
        api = self._get_api(key)
        entry = self._assumed.get(key)
        if entry is not None:
            if entry[1] is api and api is not None:
                return entry[0]
            del self._assumed[key]
        return api

    def resolve(self, key: str, api: Any) -> Any:
        """``get`` when the caller already has the API object of ``key``."""
        entry = self._assumed.get(key)
        if entry is None:
            return api
        if entry[1] is api and api is not None:
            return entry[0]
        del self._assumed[key]
        return api

    def assume(self, obj: Any) -> None:
        """``Assume``: the object must exist and not be older than the stored one."""
        key = object_key(obj)
        current = self.get(key)
        if current is None:
            raise StorageError(f'{self.description} "{key}" not found')
        new_v, stored_v = resource_version_int(obj), resource_version_int(current)
        if new_v is not None and stored_v is not None and new_v < stored_v:
            raise StorageError(f'{self.description} "{key}" is out of sync '
                               f"(stored: {stored_v}, assume: {new_v})")
        self._assumed[key] = (obj, self._get_api(key))

    def restore(self, key: str) -> None:
        """``Restore``: back to the API object."""
        self._assumed.pop(key, None)

    def is_assumed(self, key: str) -> bool:
        return self.get(key) is not self._get_api(key)

    def __len__(self) -> int:
        return len(self._assumed)
