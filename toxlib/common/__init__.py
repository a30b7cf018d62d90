"""toxlib.common."""
