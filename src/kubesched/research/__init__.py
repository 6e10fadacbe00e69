"""Research tools: GPU-trace import, GPU sharing and the FGD paper's policies."""
