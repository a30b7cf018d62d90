"""toxlib.report."""
