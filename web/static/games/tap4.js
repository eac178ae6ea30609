/* Tap 4 score sheet: the sheet, round entry on a phone, corrections, chart, past games and statistics.
 *
 * Registers window.TabletopGames.tap4 = {phone(el, state, api), screen(el, state)}.
 * phone() is called on every live update: the sheet is redrawn, but a round
 * being typed in is kept (its form state lives on the element) until the
 * round it was for is on the sheet. A phone without the PIN gets api = null:
 * it sees the sheet, chart and statistics without entry, corrections or undo.
 */
(function () {
  "use strict";
  // Shared DOM helpers from app.js (loaded before any game script); the styles are games/<kind>.css.
  var h = window.Tabletop.h;

  var KEYS = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "tap_in", "tap_out"];
  var POINTS = { tap_in: 20, tap_out: 30 };
  KEYS.slice(0, 12).forEach(function (k) { POINTS[k] = parseInt(k, 10); });
  var LABEL = { tap_in: "Tap In", tap_out: "Tap Out" };


  function cardLabel(k) { return LABEL[k] || k; }
  function nameOf(view, id) {
    var p = view.players.filter(function (x) { return x.id === id; })[0];
    return p ? p.name : "?";
  }

  /* ---- the sheet -------------------------------------------------------- */
  function leaderLine(view) {
    if (!view.leaders || !view.leaders.length) { return null; }
    var total = view.players.filter(function (p) { return p.id === view.leaders[0]; })[0].total;
    return h("div", { "data-t4": "leader" }, "Leading: " +
      view.leaders.map(function (id) { return nameOf(view, id); }).join(" and ") + " with " + total);
  }

  function statusLine(view, outcome) {
    if (view.over && outcome) {
      var winners = outcome.winners.map(function (w) { return nameOf(view, w); }).join(" and ");
      return h("div", { "class": "t4-status", "data-t4": "status" }, [
        h("strong", {}, "Game over: " + winners + (outcome.winners.length > 1 ? " share the win" : " wins")),
        h("div", { "class": "t4-setup" }, outcome.reason)
      ]);
    }
    var next = view.next;
    return h("div", { "class": "t4-status", "data-t4": "status" }, [
      h("span", {}, "Round " + next.round + ": "),
      h("strong", { "data-t4": "dealer" }, nameOf(view, next.dealer)),
      h("span", {}, " deals, "),
      h("strong", { "data-t4": "starter" }, nameOf(view, next.starter)),
      h("span", {}, " starts."),
      h("div", { "class": "t4-setup" }, next.setup.summary + (next.setup.note ? " " + next.setup.note : "")),
      leaderLine(view),
      h("div", { "class": "t4-setup" }, "Target " + view.target + " · lowest total wins.")
    ]);
  }

  function sheetTable(view, onEdit) {
    var leaders = view.leaders || [];
    var head = h("tr", {}, [h("th", { "class": "t4-round", scope: "col" }, "Rd")].concat(view.players.map(function (p) {
      var th = h("th", { scope: "col", "data-player": p.id, "class": leaders.indexOf(p.id) >= 0 ? "leader" : null }, p.name);
      th.style.borderBottomColor = p.colour;
      return th;
    })));
    var rows = view.rounds.map(function (r) {
      var first = onEdit
        ? h("th", { scope: "row" }, h("button", { type: "button", "class": "t4-edit", "data-round": r.round,
            "aria-label": "correct round " + r.round, onclick: function () { onEdit(r.round); } }, r.round + " ✎"))
        : h("th", { scope: "row" }, String(r.round));
      // A corrected round is marked where everyone sees it, not only in a tooltip.
      if (r.edits) { first.appendChild(h("span", { "class": "t4-edited", "data-t4": "edited" }, "corrected")); }
      return h("tr", { "data-round": r.round, title: r.edits ? "corrected " + r.edits + "× (last by " + (r.edited_by || "?") + ")" : null },
        [first].concat(view.players.map(function (p, i) {
          return h("td", { "class": r.out === p.id ? "out" : null, "data-player": p.id }, [
            h("span", { "class": "pts" }, String(r.points[i])),
            h("span", { "class": "run" }, String(r.totals[i]))
          ]);
        })));
    });
    var foot = [
      h("tr", { "data-t4": "totals" }, [h("th", { scope: "row" }, "Total")].concat(view.players.map(function (p) {
        return h("td", { "data-player": p.id, "class": leaders.indexOf(p.id) >= 0 ? "leader t4-total-cell" : "t4-total-cell" }, String(p.total));
      }))),
      h("tr", { "data-t4": "to-target" }, [h("th", { scope: "row" }, "To " + view.target)].concat(view.players.map(function (p) {
        // Past the target nothing is left to go: 0, never a negative number.
        return h("td", { "data-player": p.id }, String(Math.max(0, p.to_target)));
      }))),
      h("tr", { "data-t4": "places" }, [h("th", { scope: "row" }, "Place")].concat(view.players.map(function (p) {
        return h("td", { "data-player": p.id }, view.rounds.length ? String(p.place) : "–");
      })))
    ];
    return h("div", { "class": "t4-wrap" }, h("table", { "class": "t4-sheet" }, [
      h("thead", {}, head), h("tbody", {}, rows), h("tfoot", {}, foot)
    ]));
  }

  function finalStandings(view, outcome) {
    if (!view.over || !outcome) { return null; }
    return h("ol", { "class": "t4-final", "data-t4": "standings" }, view.standings.map(function (s) {
      // The list numbers itself with the place (shared places: 1, 1, 3), so no second number in the text.
      return h("li", { value: s.place, "class": outcome.winners.indexOf(s.player) >= 0 ? "win" : null },
        nameOf(view, s.player) + " – " + s.total);
    }));
  }

  function chartFor(gameId, view) {
    var key = view.rounds.length + ":" + view.last_change + ":" + view.players.map(function (p) { return p.total + p.name + p.colour; }).join(",");
    return { key: key, src: "/api/games/tap4/" + gameId + "/chart.svg?v=" + encodeURIComponent(key) };
  }

  /* ---- round entry ------------------------------------------------------ */
  function freshForm(view, editing) {
    var form = { editing: editing, out: null, modes: {}, totals: {}, cards: {} };
    view.players.forEach(function (p) { form.modes[p.id] = "total"; form.totals[p.id] = ""; form.cards[p.id] = {}; });
    if (editing) {
      var r = view.rounds[editing - 1];
      r.entries.forEach(function (e) {
        if (e.mode === "out") { form.out = e.player; }
        else if (e.mode === "cards") {
          form.modes[e.player] = "cards";
          KEYS.forEach(function (k) { form.cards[e.player][k] = e.cards[k] ? String(e.cards[k]) : ""; });
        } else { form.totals[e.player] = String(e.total); }
      });
    }
    return form;
  }

  function parseCount(text) {
    if (text === "" || text === undefined) { return 0; }
    var n = Number(text);
    return isNaN(n) ? text : n;
  }

  function pointsOf(form, id) {
    if (form.out === id) { return 0; }
    if (form.modes[id] === "cards") {
      var sum = 0;
      KEYS.forEach(function (k) { var n = parseCount(form.cards[id][k]); if (typeof n === "number") { sum += n * POINTS[k]; } });
      return sum;
    }
    var t = form.totals[id];
    return t === "" || isNaN(Number(t)) ? null : Number(t);
  }

  function entriesOf(view, form) {
    return view.players.map(function (p) {
      if (form.out === p.id) { return { player: p.id, out: true }; }
      if (form.modes[p.id] === "cards") {
        var cards = {};
        KEYS.forEach(function (k) { var n = parseCount(form.cards[p.id][k]); if (n !== 0) { cards[k] = n; } });
        return { player: p.id, cards: cards };
      }
      var t = form.totals[p.id];
      return t === "" ? { player: p.id } : { player: p.id, total: isNaN(Number(t)) ? t : Number(t) };
    });
  }

  function numberInput(value, label, onInput) {
    return h("input", { type: "number", inputmode: "numeric", pattern: "[0-9]*", min: "0", step: "1",
      value: value, "aria-label": label, oninput: function (e) { onInput(e.target.value); },
      onfocus: function (e) { e.target.select(); } });
  }

  function playerBlock(view, form, p, refresh) {
    var pointsEl = h("span", { "class": "t4-points", "data-t4": "points" });
    function showPoints() {
      var pts = pointsOf(form, p.id);
      pointsEl.textContent = form.out === p.id ? "out · 0" : pts === null ? "–" : "= " + pts;
    }
    var block = h("div", { "class": "t4-player", "data-player": p.id });
    function mode(name, text) {
      var pressed = name === "out" ? form.out === p.id : form.out !== p.id && form.modes[p.id] === name;
      return h("button", { type: "button", "aria-pressed": pressed ? "true" : "false", "data-mode": name,
        onclick: function () {
          form.dirty = true;
          if (name === "out") { form.out = form.out === p.id ? null : p.id; }
          else { if (form.out === p.id) { form.out = null; } form.modes[p.id] = name; }
          refresh();
        } }, text);
    }
    var nameEl = h("span", { "class": "t4-player-name" }, p.name);
    nameEl.style.borderLeftColor = p.colour;
    block.appendChild(h("div", { "class": "t4-player-head" }, [nameEl, pointsEl]));
    block.appendChild(h("div", { "class": "t4-modes" }, [mode("out", "Went out"), mode("total", "Total"), mode("cards", "Cards")]));
    if (form.out === p.id) {
      block.appendChild(h("div", { "class": "t4-setup" }, p.name + " played their last card: 0 points."));
    } else if (form.modes[p.id] === "cards") {
      block.appendChild(h("div", { "class": "t4-cards" }, KEYS.map(function (k) {
        return h("label", { "class": POINTS[k] >= 20 ? "special" : null }, [
          h("span", {}, cardLabel(k) + (POINTS[k] >= 20 ? " (" + POINTS[k] + ")" : "")),
          numberInput(form.cards[p.id][k] || "", p.name + " " + cardLabel(k), function (v) { form.cards[p.id][k] = v; form.dirty = true; showPoints(); })
        ]);
      })));
    } else {
      block.appendChild(h("label", { "class": "t4-total" }, [
        h("span", { "class": "t4-setup" }, "Quick total"),
        numberInput(form.totals[p.id], p.name + " total", function (v) { form.totals[p.id] = v; form.dirty = true; showPoints(); })
      ]));
    }
    showPoints();
    return block;
  }

  function entryPanel(ui, view, api) {
    var form = ui.form;
    var panel = h("section", { "class": "t4-entry", "data-t4": "entry" });
    var title = form.editing ? "Correct round " + form.editing : "Enter round " + view.next.round;
    panel.appendChild(h("h3", {}, title));
    if (!form.editing) {
      panel.appendChild(h("div", { "class": "t4-setup" },
        nameOf(view, view.next.dealer) + " deals, " + nameOf(view, view.next.starter) + " starts."));
    }
    panel.appendChild(h("div", { "class": "t4-note", "data-t4": "tap-out-note" }, view.tap_out_note));
    var list = h("div", {});
    function refresh() {
      list.innerHTML = "";
      view.players.forEach(function (p) { list.appendChild(playerBlock(view, form, p, refresh)); });
    }
    refresh();
    panel.appendChild(list);
    var save = h("button", { type: "button", "class": "primary", "data-t4": "save", onclick: function () {
      save.disabled = true;
      form.sending = true;  // its own round coming back on the live stream is no surprise
      var name = form.editing ? "edit_round" : "enter_round";
      var args = { entries: entriesOf(view, form) };
      if (form.editing) { args.round = form.editing; }
      api.command(name, args).then(function () {
        api.toast && api.toast(form.editing ? "Round " + form.editing + " corrected" : "Round saved", "info");
        ui.form = null;
        ui.entryKey = null;
        if (ui.last) { render(ui, ui.last, api); }
      }).catch(function () { save.disabled = false; form.sending = false; });
    } }, form.editing ? "Save correction" : "Save round " + view.next.round);
    var actions = h("div", { "class": "t4-actions" }, [save]);
    if (form.editing) {
      actions.appendChild(h("button", { type: "button", "data-t4": "cancel", onclick: function () {
        ui.form = null; ui.entryKey = null; render(ui, ui.last, api);
      } }, "Cancel"));
    }
    panel.appendChild(actions);
    return panel;
  }

  function starterPicker(view, api) {
    if (!view.can_choose_starter) { return null; }
    var select = h("select", { "aria-label": "who starts round 1" }, view.players.map(function (p) {
      return h("option", { value: p.id, selected: p.id === view.first_starter }, p.name);
    }));
    return h("div", { "class": "t4-row" }, [
      h("span", {}, "Round 1 starts with (the youngest):"), select,
      h("button", { type: "button", onclick: function () {
        api.command("choose_starter", { player: parseInt(select.value, 10) }).catch(function () {});
      } }, "Set")
    ]);
  }

  /* ---- past games and statistics ---------------------------------------- */
  function fmt(v) { return v === null || v === undefined ? "–" : String(v); }

  function loadSummary(box) {
    box.innerHTML = "";
    box.appendChild(h("p", { "class": "t4-setup" }, "Loading…"));
    fetch("/api/games/tap4/summary", { credentials: "same-origin" }).then(function (r) { return r.json(); }).then(function (data) {
      box.innerHTML = "";
      box.appendChild(h("h4", {}, "Players"));
      box.appendChild(h("div", { "class": "t4-wrap" }, h("table", { "class": "t4-stats", "data-t4": "stats" }, [
        h("thead", {}, h("tr", {}, ["Player", "Games", "Wins", "Avg", "Best", "Worst", "Out first"].map(function (t) { return h("th", {}, t); }))),
        h("tbody", {}, (data.stats || []).map(function (s) {
          return h("tr", {}, [s.name, s.games, s.wins, fmt(s.average_round), fmt(s.best_round), fmt(s.worst_round),
            s.went_out + (s.rounds ? " (" + Math.round(100 * s.went_out_share) + "%)" : "")].map(function (t) { return h("td", {}, fmt(t)); }));
        }))
      ])));
      box.appendChild(h("h4", {}, "Games"));
      box.appendChild(h("ul", { "data-t4": "past-games" }, (data.games || []).map(function (g) {
        return h("li", {}, [
          (g.started || "").slice(0, 16).replace("T", " ") + " · " + g.rounds + " rounds · " +
            (g.winners.length ? "won by " + g.winners.join(" and ") : (g.ended ? "not finished" : "running")) + " ",
          h("a", { href: "/api/games/tap4/" + g.game_id + "/sheet.csv" }, "CSV"), " ",
          h("a", { href: "/api/games/tap4/" + g.game_id + "/chart.svg", target: "_blank" }, "chart")
        ]);
      })));
    }).catch(function () { box.innerHTML = ""; box.appendChild(h("p", { "class": "error" }, "Could not load the statistics.")); });
  }

  /* ---- phone ------------------------------------------------------------ */
  function build(el, gameId) {
    el.innerHTML = "";
    var ui = { gameId: gameId, root: h("div", { "class": "tap4", "data-game": gameId }), form: null, entryKey: null, chartKey: null };
    ui.status = h("div", {});
    ui.sheet = h("div", {});
    ui.final = h("div", {});
    ui.starter = h("div", {});
    ui.entry = h("div", {});
    ui.tools = h("div", { "class": "t4-row" });
    ui.img = h("img", { alt: "Running totals per player over the rounds", "data-t4": "chart" });
    ui.chart = h("div", { "class": "t4-chart" }, ui.img);
    var statsBox = h("div", {});
    var details = h("details", { ontoggle: function () { if (details.open) { loadSummary(statsBox); } } },
      [h("summary", {}, "Past games and statistics"), statsBox]);
    [ui.status, ui.sheet, ui.final, ui.starter, ui.entry, ui.tools, ui.chart, details].forEach(function (c) { ui.root.appendChild(c); });
    el.appendChild(ui.root);
    el._tap4 = ui;
    return ui;
  }

  function render(ui, state, api) {
    ui.last = state;
    var game = state.game;
    var view = game.view;
    ui.status.replaceChildren(statusLine(view, game.outcome));
    ui.sheet.replaceChildren(sheetTable(view, api ? function (round) {
      ui.form = freshForm(view, round);
      ui.entryKey = null;
      render(ui, ui.last, api);
      ui.entry.scrollIntoView({ behavior: "smooth", block: "start" });
    } : null));
    var fin = finalStandings(view, game.outcome);
    ui.final.replaceChildren.apply(ui.final, fin ? [fin] : []);
    var picker = api ? starterPicker(view, api) : null;
    ui.starter.replaceChildren.apply(ui.starter, picker ? [picker] : []);

    // The entry form survives live updates until its round is on the sheet.
    if (ui.form && ui.form.editing && ui.form.editing > view.rounds.length) { ui.form = null; }
    if (ui.form && !ui.form.editing && (!view.next || ui.form.round !== view.next.round)) {
      // Another phone saved this round first: say so, rather than drop what was typed without a word.
      if (ui.form.dirty && !ui.form.sending && api && api.toast) {
        api.toast("Round " + ui.form.round + " was saved from another phone first, so what you typed was not sent. " +
          "Check the sheet; tap the round number to correct it.", "error");
      }
      ui.form = null;
    }
    if (!ui.form && view.next) { ui.form = freshForm(view, null); ui.form.round = view.next.round; }
    if (!api) { ui.form = null; }  // watching: nothing to enter
    var key = !ui.form ? "none" : (ui.form.editing ? "edit:" + ui.form.editing : "new:" + ui.form.round) + ":" +
      view.players.map(function (p) { return p.id + "=" + p.name + p.colour; }).join(",");
    if (key !== ui.entryKey) {
      ui.entryKey = key;
      ui.entry.replaceChildren.apply(ui.entry, ui.form ? [entryPanel(ui, view, api)] : []);
    }

    ui.tools.replaceChildren(
      api ? h("button", { type: "button", "data-t4": "undo", disabled: !game.can_undo, onclick: function () {
        api.command("undo", {}).catch(function () {});
      } }, "Undo last change") : "",
      h("a", { "class": "button", href: "/api/games/tap4/" + game.game_id + "/sheet.csv", "data-t4": "csv" }, "CSV")
    );
    var chart = chartFor(game.game_id, view);
    if (chart.key !== ui.chartKey) { ui.chartKey = chart.key; ui.img.src = chart.src; }
  }

  function phone(el, state, api) {
    var ui = el._tap4;
    if (!ui || ui.gameId !== state.game.game_id || ui.root.parentNode !== el) { ui = build(el, state.game.game_id); }
    render(ui, state, api);
  }

  /* ---- table screen ----------------------------------------------------- */
  function screen(el, state) {
    var game = state.game;
    var view = game.view;
    var chart = chartFor(game.game_id, view);
    var old = el.querySelector("img[data-t4=chart]");
    var img = old && old.getAttribute("data-key") === chart.key ? old
      : h("img", { alt: "Running totals per player over the rounds", "data-t4": "chart", "data-key": chart.key, src: chart.src });
    el.replaceChildren(h("div", { "class": "tap4" }, [
      statusLine(view, game.outcome),
      h("div", { "class": "t4-screen" }, [
        h("div", {}, [sheetTable(view, null), finalStandings(view, game.outcome)]),
        h("div", { "class": "t4-chart" }, img)
      ])
    ]));
  }

  window.TabletopGames = window.TabletopGames || {};
  window.TabletopGames.tap4 = { phone: phone, screen: screen };
})();
