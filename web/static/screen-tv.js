/* The table screen as a TV (screen-tv.css): folds Tap 4's oldest rounds so the latest
 * ones and the totals stay in view, and says how many folded. Runs after every redraw
 * of the game (a MutationObserver: the game's script may load after the first state). */
(function () {
  "use strict";
  var T = window.Tabletop;
  var TV = window.matchMedia("(orientation: landscape) and (min-width: 900px)");

  /* Fold the oldest rounds, one at a time, until the screen no longer scrolls (at least two stay). */
  function overflows() { return document.documentElement.scrollHeight > window.innerHeight; }

  function foldTap4() {
    var body = document.querySelector(".screen-game .tap4 .t4-sheet tbody");
    if (!body) { return; }
    var rows = Array.prototype.slice.call(body.querySelectorAll("tr[data-round]"));
    var old = body.querySelector("tr.t4-folded");
    if (old) { old.remove(); }
    rows.forEach(function (r) { r.removeAttribute("data-folded"); });
    if (!TV.matches || !rows.length) { return; }
    var note = T.h("tr", { "class": "t4-folded", "data-t4": "folded" }, T.h("th", { colspan: rows[0].children.length }));
    var folded = 0;
    while (overflows() && rows.length - folded > 2) {
      rows[folded].setAttribute("data-folded", "");
      folded += 1;
      note.firstChild.textContent = folded === 1 ? "Round 1 folded" : "Rounds 1–" + folded + " folded";
      if (!note.parentNode) { body.insertBefore(note, rows[0]); }
    }
  }

  var game = document.getElementById("screen-game");
  if (!game) { return; }
  var watcher = new MutationObserver(function () {
    watcher.disconnect();  // our own changes are not a redraw
    foldTap4();
    watch();
  });
  function watch() { watcher.observe(game, { childList: true, subtree: true }); }
  watch();
  window.addEventListener("resize", foldTap4);
})();
