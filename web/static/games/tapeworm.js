/* Tapeworm: whose turn, hand counts, deck and discard, one-tap actions, the log, the winner.
 *
 * Registers window.TabletopGames.tapeworm = {phone(el, state, api), screen(el, state)}.
 * Every button sends one command; the counts shown always come from the
 * server's state, never from the phone's own arithmetic.
 */
(function () {
  "use strict";
  // Shared DOM helpers from app.js (loaded before any game script); the styles are games/<kind>.css.
  var h = window.Tabletop.h;


  function player(state, id) {
    return (state.players || []).filter(function (p) { return p.id === id; })[0] || { name: "?", colour: "#888" };
  }

  function turnLine(state, view) {
    if (view.winner !== null && view.winner !== undefined) {
      return h("div", { "class": "tw-winner", "data-tw": "winner" }, player(state, view.winner).name + " wins!");
    }
    var cur = player(state, view.current);
    return h("div", { "class": "tw-turn", "data-tw": "turn" }, [
      h("span", {}, "Turn " + view.turn + ": "),
      h("strong", { "data-tw": "current" }, cur.name),
      h("div", { "class": "tw-hint" }, view.must_draw ? "draws a card first" :
        (view.played_this_turn ? "has played " + view.played_this_turn + " this turn" : "plays a colour sequence, or ends the turn"))
    ]);
  }

  function counts(view) {
    return h("div", { "class": "tw-counts" }, [
      h("div", { "data-tw": "deck" }, [h("b", {}, String(view.deck)), "deck"]),
      h("div", { "data-tw": "discard" }, [h("b", {}, String(view.discard)), "discard"]),
      h("div", { "data-tw": "worm" }, [h("b", {}, String(view.worm)), "in the worm"])
    ]);
  }

  function hands(state, view) {
    return h("ul", { "class": "tw-hands" }, view.hands.map(function (hand) {
      var p = player(state, hand.player);
      var li = h("li", { "class": hand.player === view.current ? "current" : null, "data-player": hand.player }, [
        h("span", {}, p.name), h("b", { "data-tw": "hand" }, String(hand.cards))
      ]);
      li.style.borderLeftColor = p.colour;
      return li;
    }));
  }

  function others(state, view) {
    return view.order.filter(function (id) { return id !== view.current; }).map(function (id) {
      return h("option", { value: id }, player(state, id).name);
    });
  }

  function stepper(id, value, min, max) {
    var input = h("input", { id: id, type: "number", inputmode: "numeric", min: min, max: max, value: value, "aria-label": id });
    function bump(d) {
      var v = Math.max(min, Math.min(max, (parseInt(input.value, 10) || min) + d));
      input.value = v;
    }
    return h("span", { "class": "tw-stepper" }, [
      h("button", { type: "button", "aria-label": "fewer", onclick: function () { bump(-1); } }, "−"),
      input,
      h("button", { type: "button", "aria-label": "more", onclick: function () { bump(1); } }, "+")
    ]);
  }

  function number(root, id) { return parseInt(root.querySelector("#" + id).value, 10); }

  function actions(root, state, view, api) {
    function send(name, args) { return api.command(name, args || {}).catch(function () {}); }
    if (view.winner !== null && view.winner !== undefined) { return null; }
    var held = (view.hands.filter(function (x) { return x.player === view.current; })[0] || { cards: 1 }).cards;
    var target = function (id) { return h("select", { id: id, "aria-label": "target player" }, others(state, view)); };
    return h("div", {}, [
      h("div", { "class": "tw-actions" }, [
        h("button", { type: "button", "class": "primary wide", "data-tw": "draw", disabled: !view.must_draw,
          onclick: function () { send("draw"); } }, "Draw a card"),
        h("span", { "class": "wide tw-stepper" }, [stepper("tw-count", 1, 1, Math.max(1, held)),
          h("button", { type: "button", "class": "primary", "data-tw": "play", style: "flex:1",
            onclick: function () { send("play", { count: number(root, "tw-count") }); } }, "Play cards")]),
        h("button", { type: "button", "data-tw": "peek", onclick: function () { send("peek"); } }, "Peek"),
        h("button", { type: "button", "data-tw": "dig", onclick: function () { send("dig"); } }, "Dig")
      ]),
      h("div", { "class": "tw-effect tw-actions" }, [
        target("tw-hatch-target"),
        h("button", { type: "button", "data-tw": "hatch", onclick: function () {
          send("hatch", { target: parseInt(root.querySelector("#tw-hatch-target").value, 10) }); } }, "Hatch: they draw"),
        target("tw-swap-target"),
        h("button", { type: "button", "data-tw": "swap", onclick: function () {
          send("swap", { target: parseInt(root.querySelector("#tw-swap-target").value, 10), took: true }); } }, "Swap: took one, gave one"),
        h("button", { type: "button", "class": "secondary wide", "data-tw": "swap-look", onclick: function () {
          send("swap", { target: parseInt(root.querySelector("#tw-swap-target").value, 10), took: false }); } },
          "Swap: looked, took nothing")
      ]),
      h("div", { "class": "tw-effect tw-actions" }, [
        stepper("tw-severed", 1, 1, Math.max(1, view.worm)),
        h("button", { type: "button", "data-tw": "cut", onclick: function () {
          send("cut", { severed: number(root, "tw-severed") }); } }, "Cut: cards severed"),
        stepper("tw-ring", 2, 0, 2),
        h("button", { type: "button", "data-tw": "ringworm", onclick: function () {
          send("ringworm", { discard: number(root, "tw-ring") }); } }, "Ringworm: discard")
      ]),
      h("div", { "class": "tw-actions" }, [
        h("button", { type: "button", "class": "primary big wide", "data-tw": "end_turn",
          onclick: function () { send("end_turn"); } }, "End turn"),
        h("button", { type: "button", "class": "danger wide", "data-tw": "declare_locked", onclick: function () {
          if (window.confirm("Only a Cut could be played and the player has none: end the game?")) { send("declare_locked"); }
        } }, "Locked table: end the game")
      ])
    ]);
  }

  function log(view) {
    return h("details", { open: true }, [
      h("summary", {}, "Game log"),
      h("ol", { "class": "tw-log", reversed: true }, view.log.slice().reverse().map(function (line) { return h("li", {}, line); }))
    ]);
  }

  function render(el, state, api) {
    var view = state.game.view;
    // Keep what is typed in the steppers across live redraws.
    var kept = {};
    ["tw-count", "tw-severed", "tw-ring"].forEach(function (id) {
      var input = el.querySelector("#" + id);
      if (input) { kept[id] = input.value; }
    });
    el.innerHTML = "";
    var root = h("div", { "class": "tw" });
    el.appendChild(root);
    root.appendChild(turnLine(state, view));
    root.appendChild(hands(state, view));
    root.appendChild(counts(view));
    if (api) {
      var acts = actions(root, state, view, api);
      if (acts) { root.appendChild(acts); }
    }
    root.appendChild(log(view));
    Object.keys(kept).forEach(function (id) {
      var input = root.querySelector("#" + id);
      if (input) { input.value = kept[id]; }
    });
  }

  window.TabletopGames = window.TabletopGames || {};
  window.TabletopGames.tapeworm = {
    phone: function (el, state, api) { render(el, state, api); },
    screen: function (el, state) { render(el, state, null); }
  };
})();
