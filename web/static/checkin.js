/* Check-in on the table screen before a game: each player slaps their pad and their
 * name lights up, as quiz-buzzer systems do, so a dead or swapped pad is found before
 * the first card.
 *
 * One at a time, hard and twice (CHECKIN_SLAPS): each lone slap also teaches the pad box
 * how vibration crosses the table (firmware/README.md, "Detection", step 9), so it tells
 * a player's slap from a neighbour's shake better from the first card. A second round
 * teaches it much more than one: on the bench's tables (bench_padbox_detection --warmup
 * --warmup-slaps N, firmware/README.md, "What is not there yet") two lone slaps a pad
 * leave fewer real slaps dropped, fewer false slaps and fewer rounds with the wrong
 * taker than one. A slap counts towards them only if it was a slap (not a light touch)
 * and no other pad was hit within LONE_US of it: the box learns nothing from two slaps
 * at once.
 *
 * Runs while no game is running (it starts afresh each time a game ends). A player is
 * checked in (their name lit) by any hit from the pad they are on; a hit from a pad
 * nobody is on is shown too ("pad 4 has nobody on it"), since that is usually a
 * swapped pad. The check-in never holds a game back: it only says what is left to do.
 */
(function () {
  "use strict";
  var T = window.Tabletop;
  var h = T.h;
  var box = document.getElementById("checkin");
  if (!box) { return; }
  var CHECKIN_SLAPS = 2;   // lone slaps asked of each pad
  var LONE_US = 100000;    // a slap this close to another pad's hit teaches the box nothing
  var KEEP_HITS = 256;     // the check-in's hits kept (a long idle spell cannot grow it)
  var hits = [];           // {pad, at, player, slap} since the check-in began
  var idle = null;

  function lone(hit) {
    return !hits.some(function (o) { return o.pad !== hit.pad && Math.abs(o.at - hit.at) < LONE_US; });
  }

  /* What the hits so far say: pads that answered, lone slaps a player, strays, and whether the
   * newest hit came with another pad's (the "one at a time" line shows until a lone one follows). */
  function tally() {
    var out = { lit: {}, slaps: {}, strays: {}, overlap: hits.length > 0 && !lone(hits[hits.length - 1]) };
    hits.forEach(function (hit) {
      if (hit.player === null) { out.strays[hit.pad] = true; return; }
      out.lit[hit.player] = true;
      if (hit.slap && lone(hit)) { out.slaps[hit.player] = (out.slaps[hit.player] || 0) + 1; }
    });
    return out;
  }

  function pips(n) {
    var s = "";
    for (var i = 0; i < CHECKIN_SLAPS; i++) { s += i < n ? "\u25CF" : "\u25CB"; }
    return s;
  }

  function draw(state) {
    var players = state.players || [];
    box.hidden = !!state.game || !players.length;
    document.body.classList.toggle("checkin-on", !box.hidden);
    if (box.hidden) { return; }
    var t = tally();
    var withPad = players.filter(function (p) { return p.pad; });
    var done = withPad.filter(function (p) { return (t.slaps[p.id] || 0) >= CHECKIN_SLAPS; }).length;
    var note = !withPad.length ? "Give each player a pad on a phone first."
      : done === withPad.length ? "Every pad works: ready to play!"
      : "Check-in: one at a time, slap your pad hard twice and your name lights up (" + done + " of " + withPad.length + ")";
    var strays = Object.keys(t.strays).map(function (pad) { return "pad " + pad + " has nobody on it"; });
    var parts = [
      h("h2", { "class": "checkin-title", "data-checkin": "title" }, note),
      h("ul", { "class": "checkin-players" }, players.map(function (p) {
        var n = Math.min(t.slaps[p.id] || 0, CHECKIN_SLAPS);
        var li = h("li", { "data-player": p.id, "data-slaps": String(n), "class": t.lit[p.id] ? "checked-in" : null }, [
          h("span", { "class": "checkin-name" }, p.name),
          h("span", { "class": "checkin-pad" }, p.pad ? "pad " + p.pad : "no pad"),
          p.pad ? h("span", { "class": "checkin-slaps", "aria-label": n + " of " + CHECKIN_SLAPS + " slaps" }, pips(n)) : null
        ].filter(Boolean));
        li.style.setProperty("--player-colour", p.colour);
        return li;
      })),
      t.overlap ? h("p", { "class": "checkin-note", "data-checkin": "overlap" },
        "Two pads at once: those slaps do not count. One at a time, please.") : null,
      strays.length ? h("p", { "class": "checkin-stray" }, strays.join(" · ") + ": is a pad plugged into the wrong socket?") : null
    ];
    // replaceChildren would write a null as the text "null".
    box.replaceChildren.apply(box, parts.filter(Boolean));
  }

  T.onState(function (state) {
    if (state.game) { idle = false; draw(state); return; }
    if (idle !== true) { hits = []; idle = true; }
    draw(state);
  });
  T.onLog(function (event) {
    if (event.type !== "hit" || !idle) { return; }
    var data = event.data || {};
    var player = data.player === undefined ? null : data.player;
    hits.push({ pad: data.pad, at: Number(data.at_us) || 0, player: player, slap: data.kind !== "touch" });
    if (hits.length > KEEP_HITS) { hits.shift(); }
    if (T.latestState) { draw(T.latestState); }
  });
})();
