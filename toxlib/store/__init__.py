"""toxlib.store."""
