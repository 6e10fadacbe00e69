"""The DynamicResources plugin (DRA) and upstream's structured allocator it drives."""
