"""One small hierarchy of errors, each also a builtin so callers can catch either.

Every message says what to fix. The web layer maps these to 4xx responses;
anything else escaping a request is a bug (a 500).
"""

from __future__ import annotations


class CompanionError(Exception):
    """Root of every error this project raises on purpose."""


class ConfigError(CompanionError, ValueError):
    """A configuration key or value is wrong; the message names key, value and what is valid."""


class RuleError(CompanionError, ValueError):
    """A command or move is not legal in the current game state; the message gives the reason."""


class InputError(CompanionError, ValueError):
    """A request or command is malformed (missing field, wrong type, out of range)."""


class NotFoundError(CompanionError, LookupError):
    """Something named by a request (a player, a game, an event) does not exist."""


class PermissionDeniedError(CompanionError, PermissionError):
    """The caller needs the table PIN (or a fresh CSRF token) for this."""


class PadSourceError(CompanionError, OSError):
    """A pad source cannot be opened or has failed (no port, no GPIO, no answer)."""


class StoreError(CompanionError, RuntimeError):
    """The event log cannot be used (damaged, from a newer version, unwritable).

    The database file is never overwritten when this is raised.
    """
