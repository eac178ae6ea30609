/* The table screen: big, live, readable from across the table. */
(function () {
  "use strict";
  var T = window.Tabletop;
  var lastKey = "";

  function describeHit(state, hit) {
    var who = hit.player !== null && hit.player !== undefined ? T.playerName(state, hit.player) : "nobody";
    return "Pad " + hit.pad + " · " + who + " · " + hit.kind;
  }

  function renderAlert(state) {
    // The event log cannot be written (a full disk, a read-only file): nothing at the table counts.
    var box = document.getElementById("screen-alert");
    if (!box) { return; }
    var problem = state.log_problem;
    box.hidden = !problem;
    box.textContent = problem ? "Nothing is being recorded. " + problem.message : "";
  }

  function render(state) {
    T.latestState = state;
    renderAlert(state);
    var game = state.game;
    document.getElementById("screen-title").textContent = game ? game.title : "Tabletop";
    // While a game runs it owns the screen: the seat strip and last hit shrink (CSS).
    document.body.classList.toggle("game-on", !!game);
    T.renderGame(document.getElementById("screen-game"), state, "screen");

    var hits = state.recent_hits || [];
    var last = hits.length ? hits[hits.length - 1] : null;
    var lastEl = document.getElementById("last-hit");
    if (!last) {
      // Before the first slap: say what to do rather than show an empty band.
      lastEl.textContent = game ? "Waiting for the first slap…" : "Start a game from a phone";
      lastEl.classList.add("idle");
    } else {
      lastEl.classList.remove("idle");
    }
    if (last) {
      lastEl.textContent = describeHit(state, last);
      lastEl.setAttribute("data-pad", last.pad);
      lastEl.setAttribute("data-at-us", last.at_us);
      var key = last.pad + "@" + last.at_us;
      if (key !== lastKey) {
        lastKey = key;
        lastEl.classList.remove("flash");
        void lastEl.offsetWidth;  // restart the animation
        lastEl.classList.add("flash");
      }
    }

    var list = document.getElementById("screen-players");
    list.innerHTML = "";
    (state.players || []).forEach(function (p) {
      var li = T.el("li", { "data-player": p.id });
      li.style.borderColor = p.colour;
      li.appendChild(T.el("span", { "class": "name", title: p.name }, p.name));
      li.appendChild(T.el("span", { "class": "seat-pad" + (p.pad ? "" : " no-pad") }, p.pad ? "pad " + p.pad : "no pad"));
      if (last && last.player === p.id) { li.classList.add("hit"); }
      list.appendChild(li);
    });
  }

  /* PIN entry paused for the whole table (too many wrong PINs): say so, with the time left. */
  var pausedUntil = 0;
  function showPinPause() {
    var box = document.getElementById("pin-paused");
    if (!box) { return; }
    var left = Math.ceil((pausedUntil - Date.now()) / 1000);
    box.hidden = left <= 0;
    if (left > 0) {
      var text = left >= 60 ? Math.floor(left / 60) + " min " + (left % 60) + " s" : left + " s";
      box.textContent = "PIN entry paused after too many wrong PINs – try again in " + text;
    }
  }
  function pollPinPause() {
    fetch("/api/pin", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.json(); })
      .then(function (data) { pausedUntil = data.paused ? Date.now() + data.retry_after * 1000 : 0; showPinPause(); })
      .catch(function () { /* offline: the live badge says so */ });
  }
  var initial = document.getElementById("pin-paused");
  if (initial && !initial.hidden) { pausedUntil = Date.now() + parseInt(initial.getAttribute("data-retry-after"), 10) * 1000; }
  setInterval(showPinPause, 1000);
  setInterval(pollPinPause, 5000);

  T.live(render);
})();
