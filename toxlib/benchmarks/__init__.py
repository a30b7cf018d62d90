"""toxlib.benchmarks."""
