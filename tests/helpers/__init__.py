"""Test-only helpers: a tiny game and a child process for the crash test (not registered in GAMES)."""
