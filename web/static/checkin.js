/* Check-in on the table screen before a game: each player slaps their pad and their
 * name lights up, as quiz-buzzer systems do, so a dead or swapped pad is found before
 * the first card.
 *
 * One at a time and hard: each lone slap also teaches the pad box how vibration crosses
 * the table (firmware/README.md, "Detection", step 9), so it tells a player's slap from a
 * neighbour's shake better from the first card.
 *
 * Runs while no game is running (it starts afresh each time a game ends). A player is
 * checked in by a hit from the pad they are on; a hit from a pad nobody is on is
 * shown too ("pad 4 has nobody on it"), since that is usually a swapped pad.
 */
(function () {
  "use strict";
  var T = window.Tabletop;
  var h = T.h;
  var box = document.getElementById("checkin");
  if (!box) { return; }
  var seen = {};       // player id -> true since the check-in began
  var strayPads = {};  // pad -> true: hit, but nobody is on it
  var idle = null;

  function draw(state) {
    var players = state.players || [];
    box.hidden = !!state.game || !players.length;
    document.body.classList.toggle("checkin-on", !box.hidden);
    if (box.hidden) { return; }
    var withPad = players.filter(function (p) { return p.pad; });
    var done = withPad.filter(function (p) { return seen[p.id]; }).length;
    var note = !withPad.length ? "Give each player a pad on a phone first."
      : done === withPad.length ? "Every pad works: ready to play!"
      : "Check-in: one at a time, slap your pad hard and your name lights up (" + done + " of " + withPad.length + ")";
    var strays = Object.keys(strayPads).map(function (pad) { return "pad " + pad + " has nobody on it"; });
    var parts = [
      h("h2", { "class": "checkin-title", "data-checkin": "title" }, note),
      h("ul", { "class": "checkin-players" }, players.map(function (p) {
        var li = h("li", { "data-player": p.id, "class": seen[p.id] ? "checked-in" : null },
          [h("span", { "class": "checkin-name" }, p.name), h("span", { "class": "checkin-pad" }, p.pad ? "pad " + p.pad : "no pad")]);
        li.style.setProperty("--player-colour", p.colour);
        return li;
      })),
      strays.length ? h("p", { "class": "checkin-stray" }, strays.join(" · ") + ": is a pad plugged into the wrong socket?") : null
    ];
    // replaceChildren would write a null as the text "null".
    box.replaceChildren.apply(box, parts.filter(Boolean));
  }

  T.onState(function (state) {
    if (state.game) { idle = false; draw(state); return; }
    if (idle !== true) { seen = {}; strayPads = {}; idle = true; }
    draw(state);
  });
  T.onLog(function (event) {
    if (event.type !== "hit" || !idle) { return; }
    var data = event.data || {};
    if (data.player !== null && data.player !== undefined) { seen[data.player] = true; } else { strayPads[data.pad] = true; }
    if (T.latestState) { draw(T.latestState); }
  });
})();
