"""The answer slot of one command: the table loop fills it after the commit, the caller waits on it."""

from __future__ import annotations

import threading
from typing import Any


class Reply:
    """A small future: the loop sets the result (or the error) of one command after the commit."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self._result: dict[str, Any] | None = None
        self._error: BaseException | None = None

    def set_result(self, result: dict[str, Any]) -> None:
        self._result = result
        self._done.set()

    def set_error(self, error: BaseException) -> None:
        self._error = error
        self._done.set()

    def done(self) -> bool:
        """True once the loop has answered."""
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> dict[str, Any]:
        """The result; raises the command's error, or TimeoutError if the loop has not answered in time."""
        if not self._done.wait(timeout):
            raise TimeoutError(f"the table did not answer within {timeout} s; the command may still be applied")
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result
