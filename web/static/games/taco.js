/* Taco Hat Cake Gift Pizza: the table screen (the card huge, the word, piles, verdict bars)
 * and the phone (verdicts, piles, penalties, overrules, pause, caller view).
 *
 * Registers window.TabletopGames.taco = {phone(el, state, api), screen(el, state)}.
 * Both are called on every live update and redraw from the public state; the
 * phone keeps its open panel (which verdict is being overruled) on the element.
 * A phone without the PIN gets api = null and shows the game without controls.
 */
(function () {
  "use strict";
  // Shared DOM helpers from app.js (loaded before any game script); the styles are games/<kind>.css.
  var h = window.Tabletop.h;

  var FACES = {  // card colours; the pictures are inline SVG (Tabletop.icon), never emoji
    taco: { colour: "#e4572e" }, hat: { colour: "#29a3d6" },
    cake: { colour: "#f368e0" }, gift: { colour: "#6ab04c" },
    pizza: { colour: "#f3c623" }, monkey: { colour: "#b5651d" },
    unicorn: { colour: "#a55eea" }, ninja: { colour: "#555b66" }
  };
  var PENALTIES = [["gesture", "Wrong gesture"], ["peek", "Peeked"], ["pace", "Lost the pace"]];


  function player(state, id) {
    return (state.players || []).filter(function (p) { return p.id === id; })[0] ||
      ((state.game && state.game.players) || []).filter(function (p) { return p && p.id === id; })[0] || null;
  }
  function nameOf(state, id) { var p = player(state, id); return p ? p.name : "#" + id; }
  function colourOf(state, id) { var p = player(state, id); return p ? p.colour : "#888"; }
  function cap(word) { return word ? word.charAt(0).toUpperCase() + word.slice(1) : ""; }
  /* The verdict's reason names players as #id; show their names. */
  function named(state, text) {
    return String(text || "").replace(/#(\d+)/g, function (_, id) { return nameOf(state, parseInt(id, 10)); });
  }
  function fmtMs(v) { return v === null || v === undefined ? "" : (Math.round(v * 10) / 10).toFixed(1) + " ms"; }

  /* ---- pieces shared by screen and phone --------------------------------- */
  function cardFace(top, due) {
    if (!top) { return h("div", { "class": "tc-card empty", "data-taco": "card" }, "no card"); }
    var face = FACES[top.card] || { colour: "#444" };
    var card = h("div", { "class": "tc-card" + (due ? " due" : ""), "data-taco": "card", "data-card": top.card }, [
      window.Tabletop.icon(top.card), h("span", {}, top.card)
    ]);
    card.style.background = face.colour;
    return card;
  }

  function stage(state, view) {
    var top = view.top;
    var w = view.window;
    var due = w && (w.kind === "due" || (w.kind === "physical" && top && top.due));
    var said = [];
    if (top && top.word) {
      said.push(h("div", { "class": "tc-said", "data-taco": "said" }, [
        nameOf(state, top.player) + " said ", h("span", { "class": "word" }, cap(top.word))]));
    }
    if (due) { said.push(h("div", { "class": "tc-slap", "data-taco": "slap" }, "SLAP!")); }
    if (w && w.kind === "flinch") { said.push(h("div", { "class": "tc-slap" }, "Flinch!")); }
    if (w && w.kind === "physical" && !top) { said.push(h("div", { "class": "tc-slap" }, "Slap window open")); }
    if (top && top.gesture && due) { said.push(h("div", { "class": "tc-gesture", "data-taco": "gesture" }, top.gesture)); }
    if (view.beat && view.beat.player !== null && view.winner === null) {
      said.push(h("div", { "data-taco": "beat" }, [
        "Next: ", h("strong", {}, nameOf(state, view.beat.player)),
        view.beat.word ? " says “" + cap(view.beat.word) + "”" : ""]));
    }
    said.push(h("div", { "class": "muted", "data-taco": "central" },
      "Centre: " + (view.central === null ? "?" : view.central) + " card" + (view.central === 1 ? "" : "s")));
    return h("div", { "class": "tc-stage" }, [cardFace(top, due), h("div", {}, said)]);
  }

  function piles(state, view) {
    var w = view.window;
    var slapped = w ? (w.slapped || []).concat(w.flinched || []) : [];
    return h("div", { "class": "tc-piles", "data-taco": "piles" }, view.piles.map(function (p) {
      var classes = "tc-pile" + (view.beat && view.beat.player === p.player ? " beat" : "") +
        (slapped.indexOf(p.player) >= 0 ? " slapped" : "");
      var box = h("div", { "class": classes, "data-player": p.player }, [
        h("div", { "class": "name", title: nameOf(state, p.player) },
          slapped.indexOf(p.player) >= 0 ? [window.Tabletop.icon("hand"), " ", nameOf(state, p.player)] : nameOf(state, p.player)),
        h("div", { "class": "n", "data-taco": "pile-count" }, p.count === null ? "?" : String(p.count))
      ]);
      box.style.borderLeftColor = colourOf(state, p.player);
      return box;
    }));
  }

  function verdictBox(state, v, fresh) {
    if (!v) { return h("div", { "class": "tc-verdict muted", "data-taco": "verdict" }, "No verdict yet."); }
    var rows = [];
    var maxAfter = 1;
    v.order.forEach(function (e) { maxAfter = Math.max(maxAfter, e.after_ms || 0); });
    var holder = v.holder !== undefined ? v.holder : v.taker;
    v.order.forEach(function (e) {
      var bar = h("div", { "class": "bar" });
      bar.style.width = Math.max(2, 100 * (e.after_ms || 0) / maxAfter) + "%";
      bar.style.background = colourOf(state, e.player);
      rows.push(h("div", { "class": "tc-row" + (e.player === holder ? " taker" : ""), "data-player": e.player, "data-place": e.place }, [
        h("span", {}, String(e.place)), h("span", { "class": "name" }, nameOf(state, e.player)),
        // A flinch row says what happened ("slapped 28 ms after the card: false start"), not "flinch 0.0 ms".
        h("div", {}, e.flinch ? h("span", { "class": "tc-flinch-why", "data-taco": "flinch-why" }, window.Tabletop.flinchWords(e.flinch)) : bar),
        h("span", { "class": "t" }, e.flinch ? "" : fmtMs(e.after_ms) +
          (e.margin_ms !== null && e.margin_ms !== undefined ? " (+" + fmtMs(e.margin_ms) + ")" : ""))
      ]));
    });
    (v.missing || []).forEach(function (pid) {
      rows.push(h("div", { "class": "tc-row missing" + (pid === holder ? " taker" : ""), "data-player": pid, "data-place": "last" }, [
        h("span", {}, "–"), h("span", { "class": "name" }, nameOf(state, pid)), h("div", {}, h("div", { "class": "bar" })),
        h("span", { "class": "t" }, "no slap")
      ]));
    });
    (v.still || []).forEach(function (pid) {  // after a flinch: rightly did not slap
      rows.push(h("div", { "class": "tc-row still", "data-player": pid, "data-place": "still" }, [
        h("span", {}, "–"), h("span", { "class": "name" }, nameOf(state, pid)), h("div", {}),
        h("span", { "class": "t" }, "no slap ✓")
      ]));
    });
    var head = [h("div", { "class": "tc-reason", "data-taco": "reason" }, named(state, v.reason))];
    (v.photo_finish || []).forEach(function (p) {
      head.push(h("div", {}, [h("span", { "class": "tc-photo", "data-taco": "photo" }, "PHOTO FINISH"),
        " " + p.players.map(function (x) { return nameOf(state, x); }).join(" / ") + ": " + fmtMs(p.margin_ms) +
        " apart, " + (p.uncertainty_ms !== undefined && p.uncertainty_ms > p.resolution_ms
          ? "too close to call within " + fmtMs(p.uncertainty_ms) + " (phones)"
          : "resolution " + fmtMs(p.resolution_ms))]));
    });
    var timing = v.timing === "card" ? "times after the card" : v.timing === "first_slap" ? "times after the first slap" : "";
    var taker = h("div", { "data-taco": "taker" }, [h("strong", {}, nameOf(state, holder)), " takes " +
      (v.count === null || v.count === undefined ? "the pile" : v.count + " card" + (v.count === 1 ? "" : "s")) +
      (v.cancelled ? " (cancelled)" : "")]);
    var notes = (v.overrules || []).map(function (o) {
      var what = o.action === "winner" ? "winner: " + nameOf(state, o.winner)
        : o.action === "cancel_flinch" ? "flinch cancelled"
        : (o.action === "penalty" ? "penalty (" + (o.note || "") + "): " : "overruled: ") + nameOf(state, o.from) + " → " + nameOf(state, o.to);
      return h("div", {}, what);
    });
    return h("div", { "class": "tc-verdict" + (fresh ? " fresh" : ""), "data-taco": "verdict", "data-verdict": v.n }, [
      h("div", {}, head),
      h("div", { "class": "muted" }, "Verdict " + v.n + (v.card ? " · " + cap(v.card) + " said with " + cap(v.word) : "") + (timing ? " · " + timing : "")),
      h("div", { "data-taco": "bars" }, rows), taker,
      notes.length ? h("div", { "class": "tc-overrules", "data-taco": "overrules" }, notes) : null
    ]);
  }

  function statusLine(state, view) {
    var game = state.game;
    var left = view.winner !== null
      ? h("span", { "class": "tc-winner", "data-taco": "winner" }, nameOf(state, view.winner) + " wins!")
      : h("span", {}, ["Round " + view.round + " · ", h("strong", {}, view.mode === "digital" ? "digital cards" : "real cards")]);
    return h("div", { "class": "tc-status", "data-taco": "status" }, [
      left, view.paused ? h("span", { "class": "tc-paused", "data-taco": "paused" }, "PAUSED") : null,
      game && game.outcome && view.winner === null ? h("span", {}, named(state, game.outcome.reason)) : null
    ]);
  }

  /* ---- sound on a new verdict (where the browser allows it) --------------- */
  var lastSounded = null;
  function chime(v) {
    if (!v || lastSounded === v.n) { return; }
    var first = lastSounded === null;
    lastSounded = v.n;
    if (first) { return; }  // not for the verdict already shown when the page opened
    try {
      var Ctx = window.AudioContext || window.webkitAudioContext;
      if (!Ctx) { return; }
      var ctx = chime.ctx || (chime.ctx = new Ctx());
      var osc = ctx.createOscillator();
      var gain = ctx.createGain();
      osc.frequency.value = v.kind === "flinch" ? 220 : 660;
      gain.gain.setValueAtTime(0.2, ctx.currentTime);
      gain.gain.exponentialRampToValueAtTime(0.001, ctx.currentTime + 0.4);
      osc.connect(gain); gain.connect(ctx.destination);
      osc.start(); osc.stop(ctx.currentTime + 0.4);
    } catch (err) { /* no sound on this device */ }
  }

  /* ---- the table screen --------------------------------------------------- */
  function screen(el, state) {
    var view = state.game.view;
    var v = view.verdict;
    var fresh = v && (!view.window) && view.round > 0;
    chime(v);
    el.innerHTML = "";
    el.appendChild(h("div", { "class": "taco" }, [
      statusLine(state, view),
      h("div", { "class": "tc-main" }, [
        h("div", {}, [stage(state, view), piles(state, view)]),
        verdictBox(state, v, fresh)
      ])
    ]));
  }

  /* ---- the phone ---------------------------------------------------------- */
  function run(api, name, args) {
    return api.command(name, args || {}).catch(function () { /* the toast shows why */ });
  }

  function controls(el, state, view, api) {
    var ui = el._taco;
    var blocks = [];
    if (view.winner === null) {
      blocks.push(h("div", { "class": "tc-actions" }, [
        view.paused
          ? h("button", { type: "button", "class": "primary", "data-taco": "resume", onclick: function () { run(api, "resume"); } }, "Resume")
          : h("button", { type: "button", "data-taco": "pause", onclick: function () { run(api, "pause"); } }, "Pause")
      ]));
    }
    if (view.mode === "physical" && view.winner === null) {
      blocks.push(h("h3", {}, "Caller: tap the card just flipped"));
      blocks.push(h("div", { "class": "tc-caller", "data-taco": "caller" }, view.cards.map(function (c) {
        var b = h("button", { type: "button", "data-card": c, "aria-label": "flipped " + c,
          onclick: function () { run(api, "card_flipped", { card: c }); } }, [window.Tabletop.icon(c), c]);
        b.style.background = FACES[c].colour;
        return b;
      })));
    }
    if (view.winner === null) {
      var who = ui.penaltyPlayer;
      blocks.push(h("details", { open: ui.penaltyOpen || null, ontoggle: function (e) { ui.penaltyOpen = e.target.open; } }, [
        h("summary", {}, "Penalty (takes the pile)"),
        h("div", { "class": "tc-actions" }, view.piles.map(function (p) {
          return h("button", { type: "button", "aria-pressed": who === p.player ? "true" : "false", "class": who === p.player ? "primary" : null,
            "data-taco": "penalty-player", "data-player": p.player,
            onclick: function () { ui.penaltyPlayer = p.player; phone(el, state, api); } }, nameOf(state, p.player));
        })),
        h("div", { "class": "tc-actions" }, PENALTIES.map(function (r) {
          return h("button", { type: "button", "class": "danger", disabled: who === undefined || null, "data-taco": "penalty-" + r[0],
            onclick: function () { run(api, "penalty", { player: who, reason: r[0] }); ui.penaltyPlayer = undefined; } }, r[1]);
        }))
      ]));
    }
    if (view.verdict) {
      var v = view.verdict;
      var holder = v.holder !== undefined ? v.holder : v.taker;
      var give = view.piles.filter(function (p) { return p.player !== holder; }).map(function (p) {
        return h("button", { type: "button", "data-taco": "give", "data-player": p.player,
          onclick: function () { run(api, "overrule", { verdict: v.n, taker: p.player }); } }, "→ " + nameOf(state, p.player));
      });
      var extra = [];
      if (v.kind === "flinch" && !v.cancelled && view.winner === null) {
        extra.push(h("button", { type: "button", "data-taco": "cancel-flinch",
          onclick: function () { run(api, "overrule", { verdict: v.n, cancel_flinch: true }); } }, "Cancel the flinch"));
      }
      blocks.push(h("details", { open: ui.overruleOpen || null, ontoggle: function (e) { ui.overruleOpen = e.target.open; } }, [
        h("summary", {}, "Overrule verdict " + v.n),
        view.winner === null ? h("div", {}, "Give " + nameOf(state, holder) + "'s pile to:") : null,
        view.winner === null ? h("div", { "class": "tc-actions" }, give) : null,
        h("div", { "class": "tc-actions" }, extra),
        h("div", {}, "Declare the winner:"),
        h("div", { "class": "tc-actions" }, view.piles.map(function (p) {
          return h("button", { type: "button", "data-taco": "winner", "data-player": p.player,
            onclick: function () { if (window.confirm("Declare " + nameOf(state, p.player) + " the winner?")) { run(api, "overrule", { winner: p.player }); } } },
            nameOf(state, p.player));
        }))
      ]));
    }
    if (view.mode === "physical") {
      blocks.push(h("details", {}, [
        h("summary", {}, "Correct a pile count"),
        h("div", {}, view.piles.map(function (p) {
          var input = h("input", { type: "number", min: "0", max: "64", inputmode: "numeric", value: p.count === null ? "" : p.count,
            "aria-label": nameOf(state, p.player) + " cards" });
          return h("div", { "class": "row" }, [h("span", { style: "flex:1" }, nameOf(state, p.player)), input,
            h("button", { type: "button", onclick: function () {
              run(api, "set_pile", { player: p.player, count: parseInt(input.value, 10) });
            } }, "Set")]);
        }))
      ]));
    }
    return blocks;
  }

  function history(state, view) {
    var older = (view.verdicts || []).slice(1);
    if (!older.length) { return null; }
    return h("details", {}, [
      h("summary", {}, "Earlier verdicts (" + (view.verdict_count - 1) + ")"),
      h("ol", { "class": "tc-history", reversed: true, "data-taco": "history" }, older.map(function (v) {
        var holder = v.holder !== undefined ? v.holder : v.taker;
        return h("li", { value: v.n }, [named(state, v.reason), h("span", { "class": "muted" },
          " → " + nameOf(state, holder) + ((v.overrules || []).length ? " (overruled)" : ""))]);
      }))
    ]);
  }

  /* Statistics across games, fetched when the panel is opened (GET /api/games/taco/stats.json). */
  function statsPanel(el, state, api) {
    var ui = el._taco;
    var body = h("div", { "data-taco": "stats" }, ui.stats ? statsTable(ui.stats) : h("span", { "class": "muted" }, "…"));
    function load() {
      fetch("/api/games/taco/stats.json", { credentials: "same-origin" }).then(function (r) { return r.json(); }).then(function (data) {
        ui.stats = data.players || [];
        if (ui.statsOpen) { phone(el, (window.Tabletop && window.Tabletop.latestState) || state, api); }
      }).catch(function () { /* offline: keep what we had */ });
    }
    return h("details", { open: ui.statsOpen || null, ontoggle: function (e) {
      var opening = e.target.open && !ui.statsOpen;
      ui.statsOpen = e.target.open;
      if (opening) { load(); }
    } }, [h("summary", {}, "Statistics (all games)"), body]);
  }

  function statsTable(rows) {
    if (!rows.length) { return h("span", { "class": "muted" }, "No games yet."); }
    var cols = [["name", "Player"], ["median_ms", "Median"], ["best_ms", "Best"], ["flinches", "Flinch"],
      ["piles", "Piles"], ["wins", "Wins"], ["games", "Games"]];
    return h("table", { "class": "tc-stats" }, [
      h("thead", {}, h("tr", {}, cols.map(function (c) { return h("th", { scope: "col" }, c[1]); }))),
      h("tbody", {}, rows.map(function (r) {
        return h("tr", { "data-player": r.player }, cols.map(function (c) {
          var v = r[c[0]];
          return h("td", {}, v === null || v === undefined ? "–" : (c[0].slice(-3) === "_ms" ? Math.round(v) + " ms" : String(v)));
        }));
      }))
    ]);
  }

  function phone(el, state, api) {
    el._taco = el._taco || {};
    var view = state.game.view;
    var scrollY = window.scrollY;
    el.innerHTML = "";
    el.appendChild(h("div", { "class": "taco" }, [
      statusLine(state, view),
      stage(state, view),
      piles(state, view),
      verdictBox(state, view.verdict, false),
      history(state, view)
    // Without the PIN (api is null) the phone watches: no pause, caller, penalty or overrule.
    ].concat(api ? controls(el, state, view, api) : []).concat([statsPanel(el, state, api)])));
    window.scrollTo(0, scrollY);
  }

  window.TabletopGames = window.TabletopGames || {};
  window.TabletopGames.taco = { phone: phone, screen: screen };
})();
