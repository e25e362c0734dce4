"""Stand-ins for the parts of Hermes Agent the memory-bridge shim reads (see tests/python/stubs/hermes.py)."""
