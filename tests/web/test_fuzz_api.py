"""Generated requests (issue 13, item 7): no input makes a 5xx, and a refusal never changes the table.

Property-based with hypothesis, on the real app, service and event log; the
only stand-in is at the hardware seam: simulated pads whose clock stands
still, so no game deadline fires by itself and every change of the table's
state is caused by a request.

* Every route of the app, every method it allows, with generated path values,
  query strings, headers and bodies (JSON of any shape, form data, bytes).
* Every table command, and every command of every game that ``/api/state``
  lists on a running game of that kind, with generated arguments: the argument
  names come from the command summaries and the rules' source, the values are
  any JSON mixed with values seen in the table's state (disc ids, tiles,
  players, recent seqs). Each example is a short sequence of commands on a
  fresh table (a game dealt from a fixed seed), so what an example draws never
  depends on an earlier example.

After each request: status below 500; on a 4xx, the table's state and the log
are exactly as before. Examples are derandomized, so a run is reproducible.
Both 500s of issue 13 item 7 are found within these examples (checked by
undoing each fix): ``?after=`` with a Unicode digit, and a TacTile ``disc``
that is a list or an object.
"""

from __future__ import annotations

import inspect
import json
import re
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import CompanionError
from companion.games import load_games
from companion.service import TableService
from hardware.sim import SimulatedPads

from helpers.browser import make_app, make_service, stop_service, trust

ROOT = Path(__file__).resolve().parents[2]
#: Examples per route (about 35 routes), for the table's commands and per game; commands an example sends at most.
ROUTE_EXAMPLES = 15
TABLE_EXAMPLES = 60
COMMAND_EXAMPLES = 80
STEPS = 4
#: Routes that change who is trusted: driven by a fresh untrusted phone, so the trusted one stays trusted.
TRUST_ROUTES = re.compile(r"pin|logout|forget|revoke|trust", re.I)
SETTINGS = dict(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])


class StillPads(SimulatedPads):
    """Simulated pads whose clock never moves: a game's deadline never comes by itself."""

    def now_us(self) -> int:
        return 1_000_000_000


# ------------------------------------------------------------- what to generate ----
def _harvest(pattern: str, *globs: str) -> set[str]:
    """Every name ``pattern``'s first group finds in the source files matched by ``globs``."""
    names: set[str] = set()
    for glob in globs:
        for path in ROOT.glob(glob):
            for match in re.finditer(pattern, path.read_text(encoding="utf-8")):
                names.update(re.findall(r"[A-Za-z][\w-]*", match.group(1)))
    return names


#: Query parameters and headers the web layer reads, and the keys its JSON bodies take.
WEB_NAMES = sorted(
    _harvest(r"request\.(?:args|form|values|headers)\.get\(\s*[\"']([^\"']+)", "web/*.py", "web/games/*.py")
    | _harvest(r"check_keys\(\s*\w+,\s*\{([^}]*)\}", "web/*.py", "web/games/*.py")
    | _harvest(r"body(?:\.get\(|\[)\s*\"(\w+)\"", "web/*.py", "web/games/*.py")
    | {"name", "args", "pin", "after"}
)
#: Argument names of table and game commands, from the rules' source.
ARG_NAMES = sorted(
    _harvest(r"args(?:\.get\(|\[)\s*\"(\w+)\"", "companion/table.py", "companion/games/*.py")
    | _harvest(r"require\w*\(\s*[\w.]+,\s*\"(\w+)\"", "companion/table.py", "companion/games/*.py")
    | _harvest(r"_only\(cmd, \{([^}]*)\}", "companion/table.py")
    | _harvest(r"frozenset\(\{([^}]*)\}\)", "companion/games/*.py")
)

#: Text that looks like a number to one check and not to another: Unicode number characters, signs, exponents.
#: Every character str.isdigit() accepts: the digits of every script, superscripts, circled digits...
DIGITS = [c for c in map(chr, range(0x30000)) if c.isdigit()]
numberish = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.text(st.sampled_from(DIGITS), min_size=1, max_size=3),
    st.text(st.sampled_from([c for c in DIGITS if ord(c) < 256]), min_size=1, max_size=3),  # fits a header
    st.sampled_from(["", " ", "-1", "+1", "1e3", "0x10", "1_000", "07", "9" * 19, "NaN", "Infinity"]),
)
text = st.one_of(st.text(max_size=12), numberish)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.integers(-3, 12),
                    st.floats(allow_nan=False, allow_infinity=False), text)


def json_values(leaves: st.SearchStrategy[Any], keys: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    """Any JSON value built from ``leaves``, objects keyed by ``keys``."""
    return st.recursive(leaves, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(keys, inner, max_size=3)), max_leaves=6)


def seen_values(state: Any, limit: int = 300) -> list[Any]:
    """Scalars in ``state`` (ids, names, tiles...): arguments a real phone would send."""
    out: list[Any] = []
    stack = [state]
    while stack and len(out) < limit:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
            out.extend(k for k in item if isinstance(k, str))
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, (str, int)) and item not in out:
            out.append(item)
    return out or [0]


# ------------------------------------------------------------------- the table ----
class Table:
    """The service, the app and two phones: one trusted for the evening, one that never is."""

    def __init__(self, tmp_path: Path) -> None:
        self.service: TableService = make_service(tmp_path / "data", games=load_games(), source=StillPads(pad_count=4))
        self.app: Flask = make_app(self.service, tmp_path / "data", SSE_POLL_S=0.01, SSE_KEEPALIVE_S=0.05)
        self.trusted: FlaskClient = self.app.test_client()
        self.trusted.environ_base["HTTP_X_CSRF_TOKEN"] = trust(self.trusted)["X-CSRF-Token"]
        for pad, name in enumerate(("Ann", "Bob", "Cy", "Dee"), start=1):
            self.service.submit("add_player", {"name": name, "pad": pad})

    def close(self) -> None:
        stop_service(self.service)

    def stranger(self) -> FlaskClient:
        """A new phone that has a CSRF token but never entered the PIN."""
        client = self.app.test_client()
        client.environ_base["HTTP_X_CSRF_TOKEN"] = client.get("/api/session").get_json()["csrf_token"]
        return client

    def settle(self) -> None:
        """Wait until everything queued so far is folded and published.

        Two refused commands in a row: the second is decided in a later batch
        than anything queued before the first, and a batch is published before
        the loop takes the next one.
        """
        for _ in range(2):
            with pytest.raises(CompanionError):
                self.service.submit("settle_probe")

    def state(self) -> tuple[int, int, str]:
        seq, snapshot = self.service.snapshot()
        return seq, self.service.store.last_seq, json.dumps(snapshot, sort_keys=True, default=repr)

    def check(self, send: Any, what: str) -> int:
        """Send one request; assert no 5xx, and no change of the table when it was refused."""
        self.settle()
        before = self.state()
        response = send()
        try:
            status = response.status_code
            if status < 400 and response.mimetype == "text/event-stream":
                next(iter(response.response))  # the stream's first message, then hang up
            else:
                response.get_data()
        finally:
            response.close()
        assert status < 500, f"{what} -> {status}: {response.get_data()[:300]!r}"
        self.settle()
        if status >= 400:
            assert self.state() == before, f"{what} was refused ({status}) but changed the table"
        return status


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    t = Table(tmp_path)
    try:
        yield t
    finally:
        t.close()


# ---------------------------------------------------------------------- routes ----
def latin1(value: str) -> bool:
    """True when ``value`` can be sent as an HTTP header value (printable, one byte a character)."""
    return value.isprintable() and all(ord(c) < 256 for c in value)


_READS = re.compile(r"request\.(args|form|values|headers)\.get\(\s*[\"']([^\"']+)")


def route_reads(view: Any) -> dict[str, list[str]]:
    """The query parameters and headers a view reads, itself or through a function of its module it calls."""
    module = inspect.getmodule(view)
    sources = [inspect.getsource(view)]
    for name in re.findall(r"\b(\w+)\(", sources[0]):
        helper = getattr(module, name, None)
        if inspect.isfunction(helper) and helper is not view and inspect.getmodule(helper) is module:
            sources.append(inspect.getsource(helper))
    reads: dict[str, list[str]] = {"query": [], "headers": []}
    for where, name in _READS.findall("\n".join(sources)):
        reads["headers" if where == "headers" else "query"].append(name)
    return reads


def _path_for(rule: Any, draw: Any) -> str:
    values: dict[str, Any] = {}
    for arg, converter in rule._converters.items():
        if type(converter).__name__ == "IntegerConverter":
            values[arg] = draw(st.one_of(st.integers(0, 12), st.integers(0, 2**80)))
        else:
            values[arg] = draw(st.text(st.characters(categories=("L", "N")), min_size=1, max_size=6))
    return rule.build(values, append_unknown=False)[1]


def test_every_route_answers_generated_requests_without_a_5xx_or_a_change_on_refusal(table: Table) -> None:
    table.service.submit("start_game", {"kind": "tap4"})
    table.service.submit("enter_round", {"entries": [{"player": 1, "out": True}, {"player": 2, "total": 7},
                                                     {"player": 3, "total": 3}, {"player": 4, "total": 2}]})
    rules = sorted((r for r in table.app.url_map.iter_rules() if r.endpoint != "static"), key=lambda r: r.rule)
    keys = st.one_of(st.sampled_from(WEB_NAMES), st.text(max_size=6))
    bodies = json_values(scalars, keys)

    def probe_route(rule: Any) -> None:
        reads = route_reads(table.app.view_functions[rule.endpoint])
        # A parameter the route reads: a number-like value twice as often as any text.
        param = st.one_of(numberish, numberish, text)
        header_text = st.text(st.characters(max_codepoint=255, blacklist_categories=("Cc",)), max_size=8)

        @settings(max_examples=ROUTE_EXAMPLES * (6 if reads["query"] or reads["headers"] else 1), **SETTINGS)
        @given(st.data())
        def probe(data: Any) -> None:
            method = data.draw(st.sampled_from(sorted(rule.methods - {"HEAD", "OPTIONS"})), label="method")
            path = _path_for(rule, data.draw)
            query = {k: data.draw(param, label=k) for k in reads["query"] if data.draw(st.booleans(), label=f"{k}?")}
            query.update(data.draw(st.dictionaries(keys, text, max_size=2), label="other query"))
            headers = {k: data.draw(param.filter(latin1), label=k)
                       for k in reads["headers"] if data.draw(st.booleans(), label=f"{k}?")}
            headers.update(data.draw(st.dictionaries(st.sampled_from(["X-Forwarded-For", "Accept"]), header_text,
                                                     max_size=1), label="other headers"))
            kind = data.draw(st.sampled_from(["json", "json", "raw", "form", "none"]), label="body kind")
            kwargs: dict[str, Any] = {"query_string": query, "headers": headers}
            if method != "GET":
                if kind == "json":
                    kwargs["data"] = json.dumps(data.draw(bodies, label="body"))
                    kwargs["content_type"] = "application/json"
                elif kind == "raw":
                    kwargs["data"] = data.draw(st.binary(max_size=40), label="bytes")
                    kwargs["content_type"] = data.draw(st.sampled_from(["application/json", "text/plain", ""]))
                elif kind == "form":
                    kwargs["data"] = data.draw(st.dictionaries(keys, text, max_size=3), label="form")
            client = table.stranger() if TRUST_ROUTES.search(rule.endpoint) else table.trusted
            table.check(lambda: client.open(path, method=method, buffered=False, **kwargs),
                        f"{method} {path} {kwargs}")

        probe()

    for rule in rules:  # each route gets its own examples: none is left untried
        probe_route(rule)


# -------------------------------------------------------------------- commands ----
def summary_args(summary: str) -> set[str]:
    """Argument names a command's summary shows in braces, e.g. ``{disc, to, card?}``."""
    return {w for group in re.findall(r"\{([^}]*)\}", summary) for w in re.findall(r"[a-z_]+", group)}


def game_kinds() -> list[str]:
    return sorted(load_games())


def picked_from(pool: list[Any]) -> st.SearchStrategy[Any]:
    """A value of ``pool``, chosen by an index of fixed range.

    The pool comes from the table's state; drawing an index whose range never
    depends on the pool's size keeps what hypothesis records the same shape in
    every replay, even where the state, and so the pool, is not.
    """
    return st.integers(0, 255).map(lambda i: pool[i % len(pool)])


class Tables:
    """A fresh table for each example, so an example depends only on what it drew, never on an earlier one."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.made = 0

    @contextmanager
    def fresh(self) -> Iterator[Table]:
        self.made += 1
        where = self.root / f"example-{self.made}"
        table = Table(where)
        try:
            yield table
        finally:
            table.close()
            shutil.rmtree(where, ignore_errors=True)


@pytest.fixture
def tables(tmp_path: Path) -> Tables:
    return Tables(tmp_path)


def test_every_table_command_answers_generated_arguments_without_a_5xx_or_a_change_on_refusal(tables: Tables) -> None:
    table_commands = ["add_player", "update_player", "remove_player", "seat_players", "start_game", "end_game", "undo"]
    keys = st.one_of(st.sampled_from(ARG_NAMES), st.text(max_size=5))
    tried: set[str] = set()

    @settings(max_examples=TABLE_EXAMPLES, **SETTINGS)
    @given(st.data())
    def probe(data: Any) -> None:
        with tables.fresh() as table:
            for _ in range(data.draw(st.integers(1, STEPS), label="commands")):
                name = data.draw(st.sampled_from(table_commands), label="command")
                state = table.service.snapshot()[1]
                seen = picked_from(seen_values({"p": state["players"], "g": state["games_available"]}))
                args = data.draw(st.dictionaries(keys, json_values(st.one_of(scalars, seen), keys), max_size=4),
                                 label="args")
                tried.add(name)
                table.check(lambda name=name, args=args: table.trusted.post("/api/command", json={"name": name, "args": args}),
                            f"{name} {args!r}")

    probe()
    assert tried == set(table_commands), f"table commands never tried: {sorted(set(table_commands) - tried)}"


@pytest.mark.parametrize("kind", game_kinds())
def test_every_game_command_answers_generated_arguments_without_a_5xx_or_a_change_on_refusal(
        tables: Tables, kind: str) -> None:
    with tables.fresh() as table:
        available = {g["kind"]: g for g in table.trusted.get("/api/state").get_json()["games_available"]}
    assert kind in available, f"/api/state does not list {kind}"
    game = available[kind]
    commands = [c["name"] for c in game["commands"]] + ["undo"]
    # Each argument the command's own summary shows, present or not; then a few other names.
    own_args = {c["name"]: sorted(summary_args(c["summary"])) for c in game["commands"]}
    own_args["undo"] = ["seq"]
    keys = st.one_of(st.sampled_from(ARG_NAMES), st.text(max_size=5))
    seats = min(4, game["max_players"])
    tried: set[str] = set()

    @settings(max_examples=COMMAND_EXAMPLES, **SETTINGS)
    @given(st.data())
    def probe(data: Any) -> None:
        with tables.fresh() as table:
            # The same deal every example: a fixed seed.
            table.service.submit("start_game", {"kind": kind, "players": list(range(1, seats + 1)), "seed": 13})
            for _ in range(data.draw(st.integers(1, STEPS), label="commands")):
                name = data.draw(st.sampled_from(commands), label="command")
                # Values a real phone would send (disc ids, tiles, players, recent seqs)...
                game_now = table.service.snapshot()[1]["game"]
                last = table.service.store.last_seq
                seen = picked_from(seen_values(game_now) + list(range(max(1, last - 4), last + 2)))
                # ...and a value of the wrong shape as often as a plausible one: [] or {} where a name belongs.
                values = st.one_of(scalars, seen, st.just([]), st.just({}),
                                   json_values(st.one_of(scalars, seen), keys))
                args = {key: data.draw(values, label=key)
                        for key in own_args[name] if data.draw(st.booleans(), label=f"{key}?")}
                # Now and then an argument the command does not take (refused before anything else is looked at).
                args.update(data.draw(st.one_of(st.just({}), st.just({}), st.dictionaries(keys, values, min_size=1, max_size=2)),
                                      label="other args"))
                tried.add(name)
                table.check(lambda name=name, args=args: table.trusted.post("/api/command", json={"name": name, "args": args}),
                            f"{kind} {name} {args!r}")

    probe()
    assert set(commands) <= tried, f"{kind} commands never tried: {sorted(set(commands) - tried)}"
