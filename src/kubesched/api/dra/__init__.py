"""Dynamic Resource Allocation (resource.k8s.io): objects, validation and the CEL environment."""
