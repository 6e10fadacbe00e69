"""The kube backend: kubesched as a secondary scheduler of a live cluster (``kubesched run``).

``client`` (configuration, transport, JSON requests), ``informer`` (list + watch),
``backend`` (bindings, status patches, events, deletes), ``leader`` (Lease election),
``server`` (healthz / readyz / metrics), ``runner`` (the threads and their shutdown).
See docs/kube.md.
"""
