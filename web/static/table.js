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

  /* Names being typed, by player id: a live update (another phone changes the
   * players) redraws the list, and must not throw away a half-typed name. */
  var drafts = {};
  var redrawing = false;  // a field removed by a redraw may report a blur: that is no commit

  function readOnlyPlayer(p) {
    // A watcher's view of a seat: the same facts, nothing to press.
    var li = T.el("li", { "class": "player readonly", "data-player": p.id });
    var swatch = T.el("span", { "class": "player-swatch", "aria-hidden": "true" });
    swatch.style.background = p.colour || "#888888";
    li.appendChild(swatch);
    li.appendChild(T.el("span", { "class": "player-label" }, p.name));
    li.appendChild(T.el("span", { "class": "player-pad-label" }, p.pad ? "pad " + p.pad : "no pad"));
    return li;
  }

  function nameField(p) {
    var name = T.el("input", { value: p.name, maxlength: "24", "aria-label": "name", "class": "player-name" });
    if (p.id in drafts) { name.value = drafts[p.id]; }
    name.addEventListener("input", function () { drafts[p.id] = name.value; });
    var sent = p.name;
    function commit() {
      // change and blur both land here; a restored draft fires no change of its own.
      if (redrawing) { return; }
      var value = name.value.trim();
      if (!(p.id in drafts) || value === sent) { delete drafts[p.id]; return; }
      sent = value;
      api.command("update_player", { player: p.id, name: value })
        .then(function () { if (drafts[p.id] === name.value) { delete drafts[p.id]; } })
        .catch(function () {
          delete drafts[p.id];
          name.value = p.name;
          sent = p.name;
          if (T.latestState) { lastPlayers = ""; renderPlayers(T.latestState); }  // the field may have been redrawn meanwhile
        });
    }
    name.addEventListener("change", commit);
    name.addEventListener("blur", commit);
    name.addEventListener("keydown", function (e) { if (e.key === "Enter") { name.blur(); } });
    return name;
  }

  function renderPlayers(state) {
    var trusted = !!T.trusted;
    var key = JSON.stringify([state.players, state.pads && state.pads.count, trusted]);
    if (key === lastPlayers) { return; }
    lastPlayers = key;
    var list = $("players");
    // Keep the field being edited (focus, caret) across the redraw.
    var active = document.activeElement;
    var focused = active && list.contains(active) && active.classList.contains("player-name")
      ? { id: active.closest("li").getAttribute("data-player"), start: active.selectionStart, end: active.selectionEnd } : null;
    redrawing = true;
    try { list.innerHTML = ""; } finally { redrawing = false; }
    var players = state.players || [];
    var ids = players.map(function (p) { return String(p.id); });
    Object.keys(drafts).forEach(function (id) { if (ids.indexOf(id) < 0) { delete drafts[id]; } });
    if (!players.length) {
      list.appendChild(T.el("li", { "class": "empty-note" }, trusted ? "Nobody at the table yet: add the players below." : "Nobody at the table yet."));
    }
    players.forEach(function (p, index) {
      if (!trusted) { list.appendChild(readOnlyPlayer(p)); return; }
      var li = T.el("li", { "class": "player", "data-player": p.id });
      var colour = T.el("input", { type: "color", value: p.colour || "#888888", "aria-label": "colour of " + p.name, "class": "player-colour" });
      // A refused change (the toast says why) puts the field back as the table has it.
      colour.addEventListener("change", function () {
        api.command("update_player", { player: p.id, colour: colour.value }).catch(function () { colour.value = p.colour || "#888888"; });
      });
      var name = nameField(p);
      var pad = T.el("select", { "aria-label": "pad of " + p.name, "class": "player-pad" });
      padOptions(pad, state, p.pad);
      pad.addEventListener("change", function () {
        api.command("update_player", { player: p.id, pad: pad.value ? parseInt(pad.value, 10) : null })
          .catch(function () { pad.value = p.pad ? String(p.pad) : ""; });
      });
      var up = T.el("button", { type: "button", "class": "icon move-up", "aria-label": "move " + p.name + " up" }, "▲");
      up.disabled = index === 0;
      up.addEventListener("click", function () { move(players, index, -1); });
      var down = T.el("button", { type: "button", "class": "icon move-down", "aria-label": "move " + p.name + " down" }, "▼");
      down.disabled = index === players.length - 1;
      down.addEventListener("click", function () { move(players, index, 1); });
      var remove = T.el("button", { type: "button", "class": "icon danger remove", "aria-label": "remove " + p.name }, "✕");
      remove.addEventListener("click", function () {
        var game = T.latestState && T.latestState.game;
        if (game && !game.outcome && (game.players || []).indexOf(p.id) >= 0) {
          // The table refuses it anyway: say so before asking to confirm something that cannot happen.
          api.toast(p.name + " is playing " + game.title + "; end the game first", "error");
          return;
        }
        if (window.confirm("Remove " + p.name + " from the table?")) { api.command("remove_player", { player: p.id }).catch(function () {}); }
      });
      [colour, name, pad, up, down, remove].forEach(function (e) { li.appendChild(e); });
      list.appendChild(li);
      if (focused && focused.id === String(p.id)) {
        name.focus();
        try { name.setSelectionRange(focused.start, focused.end); } catch (err) { /* not a text field */ }
      }
    });
    // A new player gets the first free pad and a colour nobody has yet, so
    // "Add" alone seats a ready player.
    var taken = players.map(function (p) { return p.pad; });
    var count = (state.pads && state.pads.count) || 0;
    var free = null;
    for (var n = 1; n <= count && free === null; n++) { if (taken.indexOf(n) < 0) { free = n; } }
    padOptions($("new-pad"), state, free);
    var used = players.map(function (p) { return (p.colour || "").toLowerCase(); });
    var colour = PALETTE.filter(function (c) { return used.indexOf(c) < 0; })[0];
    if (colour) { $("new-colour").value = colour; }
  }

  // Distinct at a glance, also for common colour blindness (Okabe–Ito based).
  var PALETTE = ["#e4572e", "#0072b2", "#f0e442", "#009e73", "#cc79a7", "#56b4e9", "#e69f00", "#ffffff"];

  function move(players, index, delta) {
    var order = players.map(function (p) { return p.id; });
    var other = index + delta;
    var tmp = order[index]; order[index] = order[other]; order[other] = tmp;
    api.command("seat_players", { order: order });
  }

  /* How each setting reads at the table. Keyed "kind.key" first, then "key".
   * type: number (null = empty with an "auto" placeholder), player (a seat
   * picker; "" = null), choice, counts (a dict of whole numbers). Settings marked
   * advanced go into a folded <details>, so the form fits one phone screen. */
  // Labels, units, ranges and folding come from the game's own setting specs
  // (games_available[].setting_specs, declared once in Python); a setting without
  // one (a game that declares none) gets a label from its key and a type from its default.
  function settingInfo(game, key, value) {
    var spec = ((game && game.setting_specs) || []).filter(function (s) { return s.key === key; })[0] || {};
    var out = {};
    Object.keys(spec).forEach(function (k) { out[k] = spec[k]; });
    out.label = out.label || (key.charAt(0).toUpperCase() + key.slice(1)).replace(/_ms$/, "").replace(/_/g, " ");
    if (!out.unit && /_ms$/.test(key)) { out.unit = "ms"; }
    if (!out.type) {
      if (typeof value === "boolean") { out.type = "bool"; }
      else if (typeof value === "number" || (value === null && out.min !== undefined)) { out.type = "number"; }
      else if (typeof value === "string") { out.type = "string"; }
      else if (value && typeof value === "object" && !Array.isArray(value) &&
               Object.keys(value).every(function (k) { return typeof value[k] === "number"; })) { out.type = "counts"; }
      else { out.type = "json"; }
    }
    return out;
  }

  function numberInput(attrs, value, info) {
    var input = T.el("input", attrs);
    input.type = "number";
    input.inputMode = "numeric";
    if (info.min !== undefined) { input.min = String(info.min); }
    if (info.max !== undefined) { input.max = String(info.max); }
    // Every numeric setting is whole (ms, cards, points); step 1 keeps any whole value valid.
    input.step = "1";
    input.placeholder = info.placeholder || "auto";
    input.value = value === null || value === undefined ? "" : String(value);
    return input;
  }

  function withUnit(input, unit) {
    var box = T.el("span", { "class": "setting-value" });
    box.appendChild(input);
    // Numbers always get the unit column (maybe empty) so their boxes line up.
    if (unit || input.type === "number") { box.appendChild(T.el("span", { "class": "unit" }, unit || "")); }
    return box;
  }

  function settingInput(key, value, info, state) {
    if (info.type === "counts") {
      var field = T.el("fieldset", { "class": "setting-counts", "data-key": key });
      field.appendChild(T.el("legend", {}, info.label));
      Object.keys(value || {}).forEach(function (sub) {
        var row = T.el("label", { "class": "setting" });
        row.appendChild(T.el("span", { "class": "setting-label" }, sub));
        var input = numberInput({ "data-key": key, "data-sub": sub, "data-type": "counts" }, value[sub],
                                { min: info.min === undefined ? 0 : info.min, max: info.max, placeholder: "0" });
        row.appendChild(withUnit(input, info.unit));
        field.appendChild(row);
      });
      return field;
    }
    var label = T.el("label", { "class": "setting" + (info.type === "bool" ? " check" : "") });
    var input;
    if (info.type === "bool") {
      input = T.el("input", { type: "checkbox", "data-key": key, "data-type": "bool" });
      input.checked = !!value;
      label.appendChild(input);
      label.appendChild(T.el("span", { "class": "setting-label" }, info.label));
      return label;
    }
    var text = T.el("span", { "class": "setting-label" }, info.label);
    if (info.hint) { text.appendChild(T.el("small", {}, info.hint)); }
    label.appendChild(text);
    if (info.type === "number") {
      input = numberInput({ "data-key": key, "data-type": "number" }, value, info);
    } else if (info.type === "player") {
      input = T.el("select", { "data-key": key, "data-type": "player" });
      input.appendChild(T.el("option", { value: "" }, info.empty || "auto"));
      if (info.random) { input.appendChild(T.el("option", { value: "random" }, "random")); }
      (state.players || []).forEach(function (p) {
        input.appendChild(T.el("option", { value: String(p.id) }, p.name));
      });
      input.value = value === null || value === undefined ? "" : String(value);
    } else if (info.type === "choice") {
      input = T.el("select", { "data-key": key, "data-type": "string" });
      info.choices.forEach(function (c) { input.appendChild(T.el("option", { value: c[0] }, c[1])); });
      input.value = value;
    } else if (info.type === "string") {
      input = T.el("input", { value: value, "data-key": key, "data-type": "string" });
    } else {
      // Anything the form does not know yet: editable JSON, empty for null.
      input = T.el("input", { "data-key": key, "data-type": "json", placeholder: "auto" });
      input.value = value === null || value === undefined ? "" : JSON.stringify(value);
    }
    label.appendChild(withUnit(input, info.unit));
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
    players.querySelectorAll("label, .empty-note").forEach(function (l) { l.remove(); });
    if (!(state.players || []).length) { players.appendChild(T.el("p", { "class": "empty-note" }, "Add the players first (below).")); }
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
    // A live update (someone adds a player) redraws the form: keep what was typed for this game.
    var same = box.getAttribute("data-kind") === kind;
    var typed = same ? readSettings() : {};
    var wasOpen = same && !!box.querySelector("details.advanced[open]");
    box.setAttribute("data-kind", kind);
    Array.prototype.slice.call(box.children).forEach(function (c) { if (c.tagName !== "LEGEND") { c.remove(); } });
    var defaults = (game && game.settings) || {};
    var settings = {};
    Object.keys(defaults).forEach(function (k) { settings[k] = k in typed ? typed[k] : defaults[k]; });
    var advanced = T.el("details", { "class": "advanced" });
    advanced.open = wasOpen;
    advanced.appendChild(T.el("summary", {}, "Advanced"));
    Object.keys(settings).forEach(function (k) {
      var info = settingInfo(game, k, defaults[k]);
      (info.advanced ? advanced : box).appendChild(settingInput(k, settings[k], info, state));
    });
    if (advanced.children.length > 1) { box.appendChild(advanced); }
    box.hidden = Object.keys(settings).length === 0;
  }

  function readSettings() {
    var out = {};
    $("start-settings").querySelectorAll("[data-type]").forEach(function (input) {
      var key = input.getAttribute("data-key");
      var type = input.getAttribute("data-type");
      var v = input.value.trim ? input.value.trim() : input.value;
      if (type === "bool") { out[key] = input.checked; }
      else if (type === "number") { out[key] = v === "" ? null : Number(v); }
      else if (type === "counts") { out[key] = out[key] || {}; out[key][input.getAttribute("data-sub")] = v === "" ? 0 : Number(v); }
      else if (type === "player") { out[key] = v === "" ? null : v === "random" ? "random" : parseInt(v, 10); }
      else if (type === "json") { if (v === "") { out[key] = null; } else { try { out[key] = JSON.parse(v); } catch (e) { out[key] = v; } } }
      else { out[key] = input.value; }
    });
    return out;
  }

  function renderHits(state) {
    var pads = state.pads || {};
    var source = pads.source === "sim" ? "simulated" : (pads.source || "?");
    $("pads-status").textContent = (pads.count || 0) + " " + source + " pads · timing to " + (pads.resolution_us || "?") + " µs";
    var list = $("recent-hits");
    list.innerHTML = "";
    if (!(state.recent_hits || []).length) {
      list.appendChild(T.el("li", { "class": "empty-note" }, "No hits yet: slap a pad to check it."));
    }
    (state.recent_hits || []).slice(-5).reverse().forEach(function (h) {
      var who = h.player !== null && h.player !== undefined ? T.playerName(state, h.player) : "unassigned";
      list.appendChild(T.el("li", {}, "pad " + h.pad + " · " + who + " · " + h.kind));
    });
  }

  function renderGame(state) {
    var game = state.game;
    $("game-title").textContent = game ? game.title : "No game running";
    var trusted = !!T.trusted;
    $("game-actions").hidden = !game || !trusted;
    // The table refuses a second game while one runs: show the form only when it can work.
    $("new-game").hidden = !!game || !trusted;
    if (game) { $("undo").disabled = !game.can_undo; }
    T.renderGame($("game"), state, "phone");
  }

  /* "29 Nov, 22:27 · 12 min" in the phone's own time zone, or "… · running". */
  function when(started, ended) {
    var a = started ? new Date(started) : null;
    if (!a || isNaN(a.getTime())) { return started || ""; }
    var text = a.toLocaleString([], { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" });
    if (!ended) { return text + " · running"; }
    var b = new Date(ended);
    if (isNaN(b.getTime())) { return text; }
    var minutes = Math.max(0, Math.round((b - a) / 60000));
    return text + " · " + (minutes < 60 ? minutes + " min" : Math.floor(minutes / 60) + " h " + (minutes % 60) + " min");
  }

  var gamesSeen;  // undefined: not loaded yet (null would match "no game running" and never load)
  function refreshPastGames(state) {
    var id = state.game ? state.game.game_id : null;
    if (gamesSeen === id) { return; }
    gamesSeen = id;
    fetch("/api/history", { credentials: "same-origin" }).then(function (r) { return r.json(); }).then(function (data) {
      var list = $("past-games");
      list.innerHTML = "";
      var games = data.games || [];
      if (!games.length) { list.appendChild(T.el("li", { "class": "empty-note" }, "No games played yet.")); }
      games.forEach(function (g) {
        var li = T.el("li");
        li.appendChild(T.el("span", { "class": "past-title" }, g.title));
        li.appendChild(T.el("span", { "class": "past-when" }, when(g.started, g.ended)));
        // Who played and who won, not only the files.
        li.appendChild(T.el("span", { "class": "past-who" }, g.players.join(", ") +
          (g.winners.length ? " · won by " + g.winners.join(" and ") : g.ended ? " · nobody won" : "")));
        var links = T.el("span", { "class": "past-links" });
        links.appendChild(T.el("a", { href: "/api/games/" + g.game_id + "/export.json", "aria-label": g.title + " as JSON" }, "JSON"));
        // The CSV a spreadsheet opens as a table where the game has one (Taco's verdicts, Tap 4's sheet).
        var csv = T.sheetUrl(g) || "/api/games/" + g.game_id + "/export.csv";
        links.appendChild(T.el("a", { href: csv, "aria-label": g.title + " as CSV" }, "CSV"));
        li.appendChild(links);
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
  if ($("forget-phones")) {
    // A cookie may have been copied, or a guest left trusted: every other phone needs the PIN again.
    $("forget-phones").addEventListener("click", function () {
      if (!window.confirm("Every other phone will need the PIN again. Go on?")) { return; }
      api.post("/api/phones/forget", {}).then(function (data) {
        api.toast("Forgot " + data.forgotten + " other phone" + (data.forgotten === 1 ? "" : "s"), "info");
      }).catch(function () {});
    });
  }

  /* Trust decides which controls show: a watcher gets one call to action instead. */
  function showTrust(trusted) {
    $("trust").hidden = !trusted;
    $("pin-cta").hidden = !!trusted;
    $("add-player").hidden = !trusted;
    $("new-game").hidden = !trusted || !!(T.latestState && T.latestState.game);
  }
  showTrust(T.trusted);
  T.onTrust(function (trusted) {
    showTrust(trusted);
    if (T.latestState) { lastPlayers = ""; lastKinds = ""; render(T.latestState); }
  });

  T.live(render);
})();
