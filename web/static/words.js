/* Words for players, shared by the game UIs and the table screen's extras.
 *
 * Tabletop.flinchWords(why): the referee's reason for a flinch, said as what happened:
 * "false start: 28.0 ms after the card" becomes "slapped 28 ms after the card: false start";
 * other reasons ("slapped before the card appeared", "slapped when no slap was due: …")
 * already say it and are kept.
 */
(function () {
  "use strict";
  function flinchWords(why) {
    var m = /^false start: ([0-9.]+) ms after the card$/.exec(why || "");
    if (m) { return "slapped " + Math.round(parseFloat(m[1])) + " ms after the card: false start"; }
    return why || "slapped when no slap was due";
  }
  window.Tabletop.flinchWords = flinchWords;
})();
