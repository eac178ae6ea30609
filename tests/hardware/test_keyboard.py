"""Keyboard pads: the pure key map, and the reader on a real pseudo-terminal."""

from __future__ import annotations

import os
import pty
import termios
import threading
from contextlib import contextmanager
from typing import Iterator

import pytest

from core.hits import HitKind, PadHit
from hardware.keyboard import KeyboardReader, key_to_hit, keys_to_hits
from hardware.sim import SimulatedPads

TIMEOUT_S = 10.0  # only bounds a hang


@contextmanager
def pty_pair() -> Iterator[tuple[int, int]]:
    """A real pseudo-terminal: (master, slave) file descriptors, both closed afterwards."""
    master, slave = pty.openpty()
    try:
        yield master, slave
    finally:
        os.close(master)
        os.close(slave)


@pytest.mark.parametrize(
    "key, expected",
    [
        ("1", (1, HitKind.SLAP)),
        ("8", (8, HitKind.SLAP)),
        ("!", (1, HitKind.TOUCH)),
        ("*", (8, HitKind.TOUCH)),
        ("@", (2, HitKind.TOUCH)),
        ("q", (1, HitKind.TOUCH)),
        ("Q", (1, HitKind.TOUCH)),
        ("i", (8, HitKind.TOUCH)),
        ("9", None),
        ("0", None),
        ("a", None),
        (" ", None),
        ("", None),
        ("12", None),
    ],
)
def test_key_map(key: str, expected: tuple[int, HitKind] | None) -> None:
    assert key_to_hit(key) == expected


def test_keys_beyond_the_pad_count_are_ignored() -> None:
    assert key_to_hit("5", pad_count=4) is None
    assert key_to_hit("4", pad_count=4) == (4, HitKind.SLAP)


def test_escape_sequences_are_not_pads() -> None:
    # Up arrow, F3 (ESC O R), then real keys.
    assert keys_to_hits(b"\x1b[A\x1bOR2w\xff") == [(2, HitKind.SLAP), (2, HitKind.TOUCH)]


def collect(pads: SimulatedPads, n: int) -> list[PadHit]:
    return [pads.queue.get(timeout=TIMEOUT_S) for _ in range(n)]


def test_reader_on_a_pty_injects_hits_and_restores_the_terminal() -> None:
    with pty_pair() as (master, slave):
        before = termios.tcgetattr(slave)
        assert before[3] & termios.ICANON
        pads = SimulatedPads(pad_count=8)
        reader = KeyboardReader(pads, fd=slave)
        assert reader.is_terminal
        reader.start()
        during = termios.tcgetattr(slave)
        assert not during[3] & termios.ICANON  # key at a time, no Enter needed
        assert not during[3] & termios.ECHO
        assert during[3] & termios.ISIG  # Ctrl-C still interrupts
        os.write(master, b"3#x")
        hits = collect(pads, 2)
        assert [(h.pad, h.kind) for h in hits] == [(3, HitKind.SLAP), (3, HitKind.TOUCH)]
        assert hits[0].at_us <= hits[1].at_us
        reader.stop()
        assert termios.tcgetattr(slave)[3] == before[3]
        reader.stop()  # idempotent


def test_ctrl_d_ends_input() -> None:
    ended = threading.Event()
    with pty_pair() as (master, slave):
        pads = SimulatedPads(pad_count=4)
        with KeyboardReader(pads, fd=slave, on_eof=ended.set):
            os.write(master, b"1\x042")
            assert ended.wait(TIMEOUT_S)
            assert [h.pad for h in collect(pads, 1)] == [1]
            assert pads.queue.empty()  # nothing after Ctrl-D


def test_reader_on_a_pipe_reads_keys_until_end_of_input() -> None:
    r, w = os.pipe()
    ended = threading.Event()
    pads = SimulatedPads(pad_count=4)
    reader = KeyboardReader(pads, fd=r, on_eof=ended.set)
    try:
        assert not reader.is_terminal
        reader.start()
        os.write(w, b"14r")
        os.close(w)
        assert ended.wait(TIMEOUT_S)
        assert [(h.pad, h.kind) for h in collect(pads, 3)] == [(1, HitKind.SLAP), (4, HitKind.SLAP), (4, HitKind.TOUCH)]
    finally:
        reader.stop()
        os.close(r)
