/* Instant replay on the table screen: after the verdict flash, the slap window again on a
 * millisecond timeline, ten times slower than it happened. A cursor runs from the card
 * (or the first slap in physical play) to the last hit; each player's mark appears as
 * the cursor reaches their slap, with their time. Who never slapped is named beside it.
 *
 * Docked at the bottom of the screen, so the next card stays in view; it goes as soon
 * as the next card is flipped, or when it is over. Listens to `verdict` events of
 * slap and flinch verdicts with times (docs/games/taco.md, "On the table screen").
 */
(function () {
  "use strict";
  var T = window.Tabletop;
  var h = T.h;
  var SLOW = 10;            // slow motion: ten times slower than it happened
  var AFTER_FLASH_MS = 2100; // the verdict flash first (flash.js shows it for 2 s)
  var MAX_MS = 6000;        // a replay never takes longer than this
  var HOLD_MS = 1500;       // the finished timeline stays a moment
  var box = null;
  var timers = [];

  function stop() {
    timers.forEach(clearTimeout);
    timers = [];
    if (box) { box.hidden = true; }
  }

  function later(fn, ms) { timers.push(setTimeout(fn, ms)); }

  function start(v) {
    var hits = (v.order || []).filter(function (e) { return typeof e.after_ms === "number"; });
    if (!hits.length) { return; }
    stop();
    var span = Math.max(50, hits[hits.length - 1].after_ms * 1.1);
    var playMs = Math.min(MAX_MS, span * SLOW);
    if (!box) {
      box = h("section", { id: "slap-replay", "class": "slap-replay", "aria-label": "Instant replay", hidden: true });
      document.body.appendChild(box);
    }
    var cursor = h("div", { "class": "rp-cursor" });
    var track = h("div", { "class": "rp-track" }, [cursor]);
    var marks = hits.map(function (e) {
      var p = T.player(e.player);
      var mark = h("div", { "class": "rp-mark" + (e.flinch ? " flinch" : ""), "data-player": p.id,
        style: "left:" + (100 * e.after_ms / span).toFixed(2) + "%" }, [
        h("span", { "class": "rp-name" }, p.name),
        h("span", { "class": "rp-ms" }, Math.round(e.after_ms) + " ms")
      ]);
      mark.style.setProperty("--player-colour", p.colour);
      track.appendChild(mark);
      return { el: mark, at: e.after_ms };
    });
    var never = (v.missing || []).map(function (id) { return T.player(id).name; });
    box.replaceChildren.apply(box, [
      h("div", { "class": "rp-title" }, ["Instant replay", h("span", { "class": "rp-speed" }, " · " + SLOW + "× slower · ms after " +
        (v.timing === "first_slap" ? "the first slap" : "the card"))]),
      track,
      never.length ? h("div", { "class": "rp-never" }, "never slapped: " + never.join(", ")) : null
    ].filter(Boolean));
    box.hidden = false;
    var began = performance.now();
    function frame() {
      if (box.hidden) { return; }
      var t = Math.min(1, (performance.now() - began) / playMs);
      cursor.style.left = (100 * t) + "%";
      marks.forEach(function (m) { if (m.at <= t * span) { m.el.classList.add("shown"); } });
      if (t < 1) { window.requestAnimationFrame(frame); }
    }
    window.requestAnimationFrame(frame);
    later(stop, playMs + HOLD_MS);
  }

  T.slapReplay = { start: start, stop: stop };
  T.onLog(function (event) {
    if (event.type === "verdict" && event.data && (event.data.kind === "slap" || event.data.kind === "flinch")) {
      var v = event.data;
      stop();
      later(function () { start(v); }, AFTER_FLASH_MS);
    } else if (event.type === "flipped") {
      stop();  // the next card matters more than the last window
    }
  });
})();
