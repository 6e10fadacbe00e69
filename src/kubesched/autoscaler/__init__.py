"""cluster-autoscaler's decisions on kubesched's scheduler: node groups' scale-up (estimator,
expanders) and scale-down simulation, and ``kubesched plan`` (docs/autoscaling.md)."""
