"""Local servers that tests point real SDKs at (127.0.0.1 only)."""
