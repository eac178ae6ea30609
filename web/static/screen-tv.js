/* The table screen as a TV (screen-tv.css): folds Tap 4's oldest rounds so the latest
 * ones and the totals stay in view, and says how many folded. Runs after every redraw
 * of the game (a MutationObserver: the game's script may load after the first state),
 * when the window is resized, and when the game's size changes without a redraw (a
 * ResizeObserver: a picture or a font that arrives late, a style sheet). */
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
    watchSheet();
    watch();
  });
  function watch() { watcher.observe(game, { childList: true, subtree: true }); }
  watch();
  window.addEventListener("resize", foldTap4);
  // The game's size and its sheet's, watched: a picture (the chart) grows the game, and the
  // game's box may keep its size while the sheet in it grows. A redraw may bring a new sheet,
  // so it is looked for again after each one. A fold changes their sizes too, but to the same
  // sizes each time: reported once, then quiet.
  var sized = window.ResizeObserver ? new ResizeObserver(function () { foldTap4(); }) : null;
  var sizedSheet;
  function watchSheet() {
    var sheet = game.querySelector(".tap4 .t4-sheet");
    if (!sized || sheet === sizedSheet) { return; }
    sized.disconnect();
    sizedSheet = sheet;
    sized.observe(game);
    if (sheet) { sized.observe(sheet); }
  }
  watchSheet();
})();
