"""toxlib.build."""
