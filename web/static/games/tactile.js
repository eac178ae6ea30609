/* TacTile turn tracking: the board with discs, whose turn, basic actions left, cards, market, log.
 *
 * Registers window.TabletopGames.tactile = {phone(el, state, api), screen(el, state)}.
 * Recording a move is two taps: a disc, then its destination (a tap on another
 * player's disc pushes it with an active push card). The server decides; an
 * illegal move comes back with its reason, shown under the board. phone() is
 * redrawn on every live update; the selected disc and half-typed forms live on
 * the element so an update does not lose them. A phone without the PIN gets
 * api = null: it sees board, players, market and log, with nothing to tap.
 */
(function () {
  "use strict";
  // Shared DOM helpers from app.js (loaded before any game script); the styles are games/<kind>.css.
  var h = window.Tabletop.h;

  var COLOURS = ["red", "yellow", "green", "blue"];
  var TYPES = ["move", "gain", "push"];
  var SHAPE = { red: "●", yellow: "▲", green: "◆", blue: "★" };  // the rulebook's colour-blind shapes
  var BASICS = ["move", "gain", "buy", "swap", "reset"];


  function tileName(r, c) { return "abcdef".charAt(c) + (r + 1); }

  function tablePlayer(state, id) {
    return (state.players || []).filter(function (p) { return p.id === id; })[0] || { name: "player " + id, colour: "#888" };
  }

  function clock(seconds) {
    var s = Math.floor(seconds || 0);
    return Math.floor(s / 60) + ":" + ("0" + (s % 60)).slice(-2);
  }

  function costText(cost) {
    var parts = COLOURS.filter(function (c) { return cost[c]; }).map(function (c) { return cost[c] + SHAPE[c]; });
    return parts.length ? parts.join(" ") : "free";
  }

  function cardChip(card, stateName) {
    return h("span", { "class": "tt-card " + card.colour + (stateName ? " " + stateName : ""), "data-card": card.id,
      "data-state": stateName || null, title: card.colour + " " + card.type + " (" + (stateName || "market") + ")" },
      "#" + card.id + " " + SHAPE[card.colour] + " " + card.type + (stateName ? " · " + stateName : ""));
  }

  /* ---- pieces shared by phone and screen ----------------------------------- */
  function statusLine(state, view, outcome) {
    if (outcome) {
      var names = outcome.winners.map(function (w) { return tablePlayer(state, w).name; }).join(" and ");
      return h("p", { "class": "tt-outcome", "data-tt": "outcome" }, names + " win: " + outcome.reason);
    }
    if (view.phase === "setup") {
      return h("p", { "class": "tt-status", "data-tt": "status" }, "Setting up: " + view.board.unplaced.length + " tiles to enter");
    }
    var p = tablePlayer(state, view.turn.player);
    return h("p", { "class": "tt-status", "data-tt": "status" }, [
      view.mode.charAt(0).toUpperCase() + view.mode.slice(1) + " · turn " + view.turn.number + ": ",
      h("strong", { "data-tt": "current", style: "border-left-color:" + p.colour }, p.name)
    ]);
  }

  function basicsLine(view) {
    return h("div", { "class": "tt-basics", "data-tt": "basics" }, BASICS.map(function (b) {
      var used = view.turn.basics_used.indexOf(b) >= 0;
      var left = view.turn.basics_left.indexOf(b) >= 0;
      return h("span", { "class": used ? "used" : left ? "left" : "", "data-basic": b, "data-left": left ? "1" : "0" }, b);
    }).concat([h("span", { "data-tt": "basics-count" }, view.turn.basics_left.length ? (2 - view.turn.basics_used.length) + " left" : "none left")]));
  }

  function board(state, view, ui, onTap) {
    var discsAt = {};
    Object.keys(view.discs).sort().forEach(function (id) {
      var d = view.discs[id];
      if (d.tile) { (discsAt[d.tile] = discsAt[d.tile] || []).push(id); }
    });
    var targets = {};
    if (ui && ui.selected) {
      view.legal.forEach(function (a) { if (a.disc === ui.selected && a.to) { targets[a.to] = true; } });
    }
    if (ui && ui.tile && view.phase === "setup") { targets[ui.tile] = true; }
    var homes = {};
    Object.keys(view.board.homes).forEach(function (pid) { homes[view.board.homes[pid]] = parseInt(pid, 10); });
    var cells = [];
    for (var r = 0; r < 6; r++) {
      for (var c = 0; c < 6; c++) {
        var name = tileName(r, c);
        var colour = view.board.tiles[r][c];
        var corner = (r === 0 || r === 5) && (c === 0 || c === 5);
        var cls = "tt-tile " + (corner ? "home" : colour || "unplaced") + (targets[name] ? " target" : "");
        var owner = homes[name];
        var style = corner && owner !== undefined ? "border-color:" + tablePlayer(state, owner).colour : null;
        var kids = [corner ? null : h("span", { "class": "shape", "aria-hidden": "true" }, colour ? SHAPE[colour] : "")];
        (discsAt[name] || []).forEach(function (id) {
          var p = tablePlayer(state, view.discs[id].player);
          kids.push(h("span", { "class": "tt-disc" + (ui && ui.selected === id ? " selected" : ""), "data-disc": id,
            style: "background:" + p.colour }, id));
        });
        cells.push(h(onTap ? "button" : "div", {
          type: onTap ? "button" : null, "class": cls, "data-tile": name, style: style,
          "aria-label": name + " " + (corner ? "home" : colour || "not placed") + ((discsAt[name] || []).length ? ", discs " + discsAt[name].join(" ") : ""),
          onclick: onTap ? (function (n, ds) { return function () { onTap(n, ds); }; })(name, discsAt[name] || []) : null
        }, kids));
      }
    }
    return h("div", { "class": "tt-board", "data-tt": "board" }, cells);
  }

  function playersBlock(state, view) {
    return h("div", { "class": "tt-players", "data-tt": "players" }, view.players.map(function (p) {
      var tp = tablePlayer(state, p.id);
      return h("div", { "class": "tt-player" + (p.id === view.turn.player ? " current" : ""), "data-player": p.id }, [
        h("div", {}, [h("span", { "class": "name", style: "border-left-color:" + tp.colour }, tp.name),
          " · home " + p.home + " · scores on " + p.score_tiles.join("/") + " · scored " ,
          h("span", { "data-tt": "scored" }, String(p.scored)),
          p.eliminated ? " · eliminated" : "", p.ally ? " · ally " + tablePlayer(state, p.ally).name : "",
          " · ", h("span", { "data-tt": "clock", title: "time on finished turns" }, [window.Tabletop.icon("clock"), " ", clock(p.turn_time_s)])]),
        h("div", { "class": "tt-res", "data-tt": "resources" }, COLOURS.map(function (c) {
          return h("span", { "data-colour": c }, SHAPE[c] + " " + c + " " + p.resources[c]);
        })),
        h("div", { "data-tt": "cards" }, p.cards.length ? p.cards.map(function (card) { return cardChip(card, card.state); }) : "no cards")
      ]);
    }));
  }

  function marketBlock(view, onBuy) {
    var buyable = {};
    view.legal.forEach(function (a) { if (a.kind === "buy") { buyable[a.slot] = true; } });
    return h("div", {}, [
      h("div", { "class": "tt-market", "data-tt": "market" }, view.market.slots.map(function (s) {
        return h("div", { "class": "tt-slot", "data-slot": s.slot }, [
          h("div", {}, "slot " + s.slot),
          s.card ? cardChip(s.card, null) : h("em", {}, s.pending ? "enter this card" : "empty"),
          s.card ? h("div", {}, "cost " + costText(s.card.cost)) : null,
          onBuy && s.card ? h("button", { type: "button", "data-buy": s.slot, disabled: !buyable[s.slot], onclick: function () { onBuy(s.slot); } }, "Buy") : null
        ]);
      })),
      h("div", { "data-tt": "deck" }, "deck " + view.market.deck + (view.market.deck_reshuffled ? " (reshuffled)" : "") +
        " · discard " + view.market.discard + " · stockpile " + COLOURS.map(function (c) { return SHAPE[c] + view.stockpile[c]; }).join(" "))
    ]);
  }

  function logBlock(view) {
    return h("details", { "data-tt": "log-box" }, [h("summary", {}, "Log"),
      h("ol", { "class": "tt-log", "data-tt": "log" }, view.log.slice().reverse().map(function (line) { return h("li", {}, line); }))]);
  }

  /* ---- phone: controls --------------------------------------------------------- */
  function uiFor(el, state) {
    var gameId = state.game.game_id;
    if (!el._tactile || el._tactile.gameId !== gameId) {
      el._tactile = { gameId: gameId, selected: null, error: "", entry: { colour: "red", type: "move", cost: {} }, give: "red", take: "yellow", layout: "" };
    }
    return el._tactile;
  }

  function phone(el, state, api) {
    var view = state.game.view;
    var outcome = state.game.outcome;
    var ui = uiFor(el, state);
    ui.state = state;  // a redraw after a reply uses the newest state, not this call's
    var redraw = function () { phone(el, ui.state, api); };

    function send(name, args) {
      ui.error = "";
      return api.command(name, args).then(function () { ui.selected = null; ui.error = ""; redraw(); })
        .catch(function (err) { ui.error = err && err.message ? err.message : String(err); redraw(); });
    }

    function onTap(tile, discs) {
      // A highlighted destination of the selected disc moves it (or pushes it); a tap on discs
      // selects one (tapping again cycles through a home tile's discs); a tap on an empty tile
      // asks the server anyway, so an illegal move comes back with its reason.
      var targets = view.legal.filter(function (a) { return a.disc === ui.selected && a.to === tile; });
      if (ui.selected && targets.length) { send(targets[0].kind === "push" ? "push" : "move", { disc: ui.selected, to: tile }); return; }
      if (discs.length) {
        var mine = discs.filter(function (id) { return view.discs[id].player === view.turn.player; });
        var pool = mine.length ? mine : discs;
        var at = pool.indexOf(ui.selected);
        ui.selected = at >= 0 && pool.length === 1 ? null : pool[(at + 1) % pool.length];
        ui.error = "";
        redraw();
        return;
      }
      if (ui.selected) { send("move", { disc: ui.selected, to: tile }); }
    }

    el.innerHTML = "";
    var root = h("div", { "class": "tactile", "data-tt": "phone" });
    el.appendChild(root);
    root.appendChild(statusLine(state, view, outcome));
    var play = view.phase === "play";
    if (view.phase === "setup" && api) {
      root.appendChild(tilePicker(ui, view, send));
      root.appendChild(layoutForm(ui, send));
    }
    if (play) {
      root.appendChild(basicsLine(view));
    }
    var onSetupTap = function (tile) { ui.tile = tile; ui.error = ""; redraw(); };
    root.appendChild(board(state, view, ui, !api ? null : play ? onTap : view.phase === "setup" ? onSetupTap : null));
    // Only what has something to say takes room under the board: an empty error line
    // and an empty hint paragraph used to leave a gap about 50 px high.
    root.appendChild(h("div", { "class": "tt-error", "data-tt": "error", role: "alert" }, ui.error));
    if (api && (ui.selected || play)) {
      root.appendChild(h("p", { "class": "tt-hint", "data-tt": "hint" }, ui.selected ? "Disc " + ui.selected + " selected: tap where it goes." : "Tap a disc, then its destination."));
    }
    if (api && view.market.pending.length && !outcome) {
      root.appendChild(entryForm(ui, view, send));
    }
    if (api && play) {
      root.appendChild(actionRow(ui, view, send));
    }
    if (api) {
      var undo = undoRow(view, send);
      if (undo) { root.appendChild(undo); }
    }
    root.appendChild(playersBlock(state, view));
    root.appendChild(h("h3", {}, "Market"));
    root.appendChild(marketBlock(view, api && play ? function (slot) { send("buy", { slot: slot }); } : null));
    root.appendChild(logBlock(view));
  }

  function actionRow(ui, view, send) {
    var gains = {};
    view.legal.forEach(function (a) { if (a.kind === "gain" || a.kind === "card_gain") { gains[a.colour] = true; } });
    var row = h("div", { "class": "tt-row", "data-tt": "actions" }, []);
    COLOURS.forEach(function (c) {
      if (gains[c]) { row.appendChild(h("button", { type: "button", "data-gain": c, onclick: function () { send("gain", { colour: c }); } }, "Gain " + SHAPE[c] + " " + c)); }
    });
    var give = h("select", { "aria-label": "give", onchange: function (e) { ui.give = e.target.value; } }, COLOURS.map(function (c) { return h("option", { value: c, selected: ui.give === c }, c); }));
    var take = h("select", { "aria-label": "take", onchange: function (e) { ui.take = e.target.value; } }, COLOURS.map(function (c) { return h("option", { value: c, selected: ui.take === c }, c); }));
    var swap = h("div", { "class": "tt-row" }, [give, "→", take,
      h("button", { type: "button", "data-tt": "swap", onclick: function () { send("swap", { give: ui.give, take: ui.take }); } }, "Swap")]);
    var ends = h("div", { "class": "tt-row" }, [
      h("button", { type: "button", "data-tt": "reset-market", onclick: function () { send("reset_market", {}); } }, "Reset market"),
      h("button", { type: "button", "class": "primary", "data-tt": "end-turn", onclick: function () { send("end_turn", {}); } }, "End turn")
    ]);
    return h("div", {}, [row, swap, swapCardRow(ui, view, send), ends]);
  }

  /* One undo that says what it takes back (the view's last_step), and after a finished
   * turn the whole-turn undo saying where it goes back to; null when neither applies. */
  function undoRow(view, send) {
    var step = view.last_step, back = view.undo_turn_to;
    if (!step && !back) { return null; }
    var name = function (pid) {
      var p = view.players.filter(function (q) { return q.id === pid; })[0];
      return p ? p.name : "player " + pid;
    };
    var turnText = back ? "back to turn " + back.turn + " (" + name(back.player) + ")" : "";
    return h("div", { "class": "tt-row tt-undo", "data-tt": "undo-row" }, [
      step ? h("button", { type: "button", "class": "secondary", "data-tt": "undo", onclick: function () { send("undo", {}); } },
        "Undo: " + step.text) : null,
      back ? h("button", { type: "button", "class": "secondary", "data-tt": "undo-turn", onclick: function () {
        if (window.confirm("Take back every step since turn " + back.turn + " began? " + name(back.player) + " plays turn " + back.turn + " again.")) {
          send("undo_turn", {});
        }
      } }, "Undo turn: " + turnText) : null
    ]);
  }

  function entryForm(ui, view, send) {
    var slot = view.market.pending[0];
    var e = ui.entry;
    function select(key, options) {
      return h("select", { "aria-label": "card " + key, onchange: function (ev) { e[key] = ev.target.value; } },
        options.map(function (o) { return h("option", { value: o, selected: e[key] === o }, o); }));
    }
    var costs = COLOURS.map(function (c) {
      return h("label", {}, [SHAPE[c] + " ", h("input", { type: "number", min: "0", max: "16", inputmode: "numeric", "aria-label": "cost " + c,
        value: e.cost[c] || "", oninput: function (ev) { e.cost[c] = parseInt(ev.target.value, 10) || 0; } })]);
    });
    return h("div", { "class": "tt-entry", "data-tt": "entry" }, [
      h("strong", {}, "Market slot " + slot + " shows a new card: enter it"),
      h("div", { "class": "tt-row" }, [select("colour", COLOURS), select("type", TYPES)]),
      h("div", { "class": "tt-row" }, ["cost"].concat(costs)),
      h("button", { type: "button", "class": "primary", "data-tt": "enter-card", onclick: function () {
        var cost = {};
        COLOURS.forEach(function (c) { if (e.cost[c]) { cost[c] = e.cost[c]; } });
        send("enter_card", { slot: slot, colour: e.colour, type: e.type, cost: cost }).then(function () { e.cost = {}; });
      } }, "Enter card")
    ]);
  }

  function tilePicker(ui, view, send) {
    // Tile by tile: tap a tile on the board, then its colour.
    if (!ui.tile || view.board.unplaced.indexOf(ui.tile) < 0) {
      return h("p", { "data-tt": "tile-hint" }, "Tap a grey tile, then its colour; or type the whole layout below.");
    }
    var tile = ui.tile;
    return h("div", { "class": "tt-row", "data-tt": "tile-picker" }, [h("strong", {}, tile + ":")].concat(COLOURS.map(function (c) {
      return h("button", { type: "button", "class": "tt-card " + c, "data-place": c, onclick: function () {
        send("place_tile", { tile: tile, colour: c }).then(function () { ui.tile = null; });
      } }, SHAPE[c] + " " + c);
    })));
  }

  function swapCardRow(ui, view, send) {
    var pairs = view.legal.filter(function (a) { return a.kind === "swap_card"; });
    if (!pairs.length) { return null; }
    var select = h("select", { "aria-label": "swap cards with your ally", onchange: function (e) { ui.swapPair = e.target.value; } },
      pairs.map(function (a) {
        var v = a.card + ":" + a.ally_card;
        return h("option", { value: v, selected: ui.swapPair === v }, "#" + a.card + " ⇄ ally's #" + a.ally_card);
      }));
    return h("div", { "class": "tt-row", "data-tt": "swap-cards" }, [select, h("button", { type: "button", onclick: function () {
      var v = (ui.swapPair || pairs[0].card + ":" + pairs[0].ally_card).split(":");
      send("swap", { card: parseInt(v[0], 10), ally_card: parseInt(v[1], 10) });
    } }, "Swap cards")]);
  }

  function layoutForm(ui, send) {
    var area = h("textarea", { rows: "6", "aria-label": "layout rows", placeholder: "hrygbh\nrygbry\n…", oninput: function (ev) { ui.layout = ev.target.value; } });
    area.value = ui.layout;
    return h("div", { "class": "tt-entry", "data-tt": "layout" }, [
      h("div", {}, "Enter the dealt layout: six rows of h (home), r, y, g, b, top row first."),
      area,
      h("button", { type: "button", "class": "primary", onclick: function () {
        send("set_layout", { rows: ui.layout.split(/\s+/).filter(Boolean) });
      } }, "Set layout")
    ]);
  }

  /* ---- table screen: read-only --------------------------------------------------- */
  function screen(el, state) {
    var view = state.game.view;
    el.innerHTML = "";
    var root = h("div", { "class": "tactile", "data-tt": "screen" });
    el.appendChild(root);
    root.appendChild(statusLine(state, view, state.game.outcome));
    if (view.phase === "play") { root.appendChild(basicsLine(view)); }
    root.appendChild(h("div", { "class": "tt-screen" }, [
      board(state, view, null, null),
      h("div", {}, [playersBlock(state, view), h("h3", {}, "Market"), marketBlock(view, null), logBlock(view)])
    ]));
  }

  window.TabletopGames = window.TabletopGames || {};
  window.TabletopGames.tactile = { phone: phone, screen: screen };
})();
