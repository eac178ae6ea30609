/* The table page: the running game, starting a game, players, seats and pads. */
(function () {
  "use strict";
  var T = window.Tabletop;
  var api = T.api;
  var $ = function (id) { return document.getElementById(id); };
  var lastKinds = "";
  var lastPlayers = "";

  function padOptions(select, state, current) {
    select.innerHTML = "";
    select.appendChild(T.el("option", { value: "" }, "no pad"));
    var count = (state.pads && state.pads.count) || 0;
    for (var i = 1; i <= count; i++) {
      var o = T.el("option", { value: String(i) }, "pad " + i);
      if (current === i) { o.selected = true; }
      select.appendChild(o);
    }
  }

  function renderPlayers(state) {
    var key = JSON.stringify([state.players, state.pads && state.pads.count]);
    if (key === lastPlayers) { return; }
    lastPlayers = key;
    var list = $("players");
    list.innerHTML = "";
    var players = state.players || [];
    players.forEach(function (p, index) {
      var li = T.el("li", { "class": "player", "data-player": p.id });
      var colour = T.el("input", { type: "color", value: p.colour || "#888888", "aria-label": "colour of " + p.name, "class": "player-colour" });
      colour.addEventListener("change", function () { api.command("update_player", { player: p.id, colour: colour.value }); });
      var name = T.el("input", { value: p.name, maxlength: "24", "aria-label": "name", "class": "player-name" });
      name.addEventListener("change", function () {
        api.command("update_player", { player: p.id, name: name.value }).catch(function () { name.value = p.name; });
      });
      var pad = T.el("select", { "aria-label": "pad of " + p.name, "class": "player-pad" });
      padOptions(pad, state, p.pad);
      pad.addEventListener("change", function () {
        api.command("update_player", { player: p.id, pad: pad.value ? parseInt(pad.value, 10) : null });
      });
      var up = T.el("button", { type: "button", "class": "icon move-up", "aria-label": "move " + p.name + " up" }, "▲");
      up.disabled = index === 0;
      up.addEventListener("click", function () { move(players, index, -1); });
      var down = T.el("button", { type: "button", "class": "icon move-down", "aria-label": "move " + p.name + " down" }, "▼");
      down.disabled = index === players.length - 1;
      down.addEventListener("click", function () { move(players, index, 1); });
      var remove = T.el("button", { type: "button", "class": "icon danger remove", "aria-label": "remove " + p.name }, "✕");
      remove.addEventListener("click", function () {
        if (window.confirm("Remove " + p.name + " from the table?")) { api.command("remove_player", { player: p.id }); }
      });
      [colour, name, pad, up, down, remove].forEach(function (e) { li.appendChild(e); });
      list.appendChild(li);
    });
    padOptions($("new-pad"), state, null);
  }

  function move(players, index, delta) {
    var order = players.map(function (p) { return p.id; });
    var other = index + delta;
    var tmp = order[index]; order[index] = order[other]; order[other] = tmp;
    api.command("seat_players", { order: order });
  }

  function settingInput(key, value) {
    var label = T.el("label", { "class": "setting" });
    label.appendChild(T.el("span", {}, key.replace(/_/g, " ")));
    var input;
    if (typeof value === "boolean") {
      input = T.el("input", { type: "checkbox", "data-key": key, "data-type": "bool" });
      input.checked = value;
    } else if (typeof value === "number") {
      input = T.el("input", { type: "number", step: "any", value: String(value), "data-key": key, "data-type": "number" });
    } else if (typeof value === "string") {
      input = T.el("input", { value: value, "data-key": key, "data-type": "string" });
    } else {
      input = T.el("input", { value: JSON.stringify(value), "data-key": key, "data-type": "json" });
    }
    label.appendChild(input);
    return label;
  }

  function renderStartForm(state) {
    var games = state.games_available || [];
    var key = JSON.stringify([games, state.players]);
    if (key === lastKinds) { return; }
    lastKinds = key;
    var select = $("start-kind");
    var chosen = select.value;
    select.innerHTML = "";
    games.forEach(function (g) {
      var o = T.el("option", { value: g.kind }, g.title + " (" + g.min_players + "–" + g.max_players + ")");
      if (g.kind === chosen) { o.selected = true; }
      select.appendChild(o);
    });
    var players = $("start-players");
    players.querySelectorAll("label").forEach(function (l) { l.remove(); });
    (state.players || []).forEach(function (p) {
      var l = T.el("label", { "class": "check" });
      var c = T.el("input", { type: "checkbox", value: String(p.id), name: "players" });
      c.checked = true;
      l.appendChild(c);
      l.appendChild(document.createTextNode(" " + p.name));
      players.appendChild(l);
    });
    renderSettings(state);
  }

  function renderSettings(state) {
    var games = state.games_available || [];
    var kind = $("start-kind").value;
    var game = games.filter(function (g) { return g.kind === kind; })[0];
    var box = $("start-settings");
    box.querySelectorAll("label").forEach(function (l) { l.remove(); });
    var settings = (game && game.settings) || {};
    Object.keys(settings).forEach(function (k) { box.appendChild(settingInput(k, settings[k])); });
    box.hidden = Object.keys(settings).length === 0;
  }

  function readSettings() {
    var out = {};
    $("start-settings").querySelectorAll("input[data-key]").forEach(function (input) {
      var key = input.getAttribute("data-key");
      var type = input.getAttribute("data-type");
      if (type === "bool") { out[key] = input.checked; }
      else if (type === "number") { out[key] = input.value === "" ? null : Number(input.value); }
      else if (type === "json") { try { out[key] = JSON.parse(input.value); } catch (e) { out[key] = input.value; } }
      else { out[key] = input.value; }
    });
    return out;
  }

  function renderHits(state) {
    var pads = state.pads || {};
    $("pads-status").textContent = (pads.source || "?") + " pads · " + (pads.count || 0) + " pads · resolution " + (pads.resolution_us || "?") + " µs";
    var list = $("recent-hits");
    list.innerHTML = "";
    (state.recent_hits || []).slice(-5).reverse().forEach(function (h) {
      var who = h.player !== null && h.player !== undefined ? T.playerName(state, h.player) : "unassigned";
      list.appendChild(T.el("li", {}, "pad " + h.pad + " · " + who + " · " + h.kind));
    });
  }

  function renderGame(state) {
    var game = state.game;
    $("game-title").textContent = game ? game.title : "No game running";
    $("game-actions").hidden = !game;
    if (game) { $("undo").disabled = !game.can_undo; }
    T.renderGame($("game"), state, "phone");
  }

  var gamesSeen = null;
  function refreshPastGames(state) {
    var id = state.game ? state.game.game_id : null;
    if (gamesSeen === id) { return; }
    gamesSeen = id;
    fetch("/api/games", { credentials: "same-origin" }).then(function (r) { return r.json(); }).then(function (data) {
      var list = $("past-games");
      list.innerHTML = "";
      (data.games || []).forEach(function (g) {
        var li = T.el("li");
        li.appendChild(T.el("span", {}, g.title + " · " + (g.started || "") + (g.ended ? "" : " (running)") + " "));
        li.appendChild(T.el("a", { href: "/api/games/" + g.game_id + "/export.json" }, "JSON"));
        li.appendChild(document.createTextNode(" "));
        li.appendChild(T.el("a", { href: "/api/games/" + g.game_id + "/export.csv" }, "CSV"));
        list.appendChild(li);
      });
    }).catch(function () { /* the list is a convenience */ });
  }

  function render(state) {
    T.latestState = state;
    renderGame(state);
    renderStartForm(state);
    renderPlayers(state);
    renderHits(state);
    refreshPastGames(state);
  }

  $("start-kind").addEventListener("change", function () { if (T.latestState) { renderSettings(T.latestState); } });
  $("start-form").addEventListener("submit", function (e) {
    e.preventDefault();
    var players = [];
    $("start-players").querySelectorAll("input:checked").forEach(function (c) { players.push(parseInt(c.value, 10)); });
    api.command("start_game", { kind: $("start-kind").value, settings: readSettings(), players: players })
      .then(function () { api.toast("Game started", "info"); }).catch(function () {});
  });
  $("add-player").addEventListener("submit", function (e) {
    e.preventDefault();
    var args = { name: $("new-name").value.trim(), colour: $("new-colour").value };
    var pad = $("new-pad").value;
    if (pad) { args.pad = parseInt(pad, 10); }
    api.command("add_player", args).then(function () { $("new-name").value = ""; }).catch(function () {});
  });
  $("end-game").addEventListener("click", function () {
    if (window.confirm("End the game?")) { api.command("end_game", {}).catch(function () {}); }
  });
  $("undo").addEventListener("click", function () { api.command("undo", {}).catch(function () {}); });
  if ($("logout")) {
    // Hand the phone to a guest: it goes back to watching until the PIN is entered again.
    $("logout").addEventListener("click", function () {
      api.post("/api/logout", {}).then(function () { window.location.reload(); }).catch(function () {});
    });
  }

  T.live(render);
})();
