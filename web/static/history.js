/* The history page: every game played (date, duration, players, winner, files) and
 * per-player records across games, from GET /api/history and GET /api/records. */
(function () {
  "use strict";
  var T = window.Tabletop;
  var h = T.h;

  function when(text) {
    var d = text ? new Date(text) : null;
    if (!d || isNaN(d.getTime())) { return text || ""; }
    return d.toLocaleString([], { weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" });
  }

  function took(seconds) {
    if (seconds === null || seconds === undefined) { return "running"; }
    var m = Math.round(seconds / 60);
    return m < 1 ? "< 1 min" : m < 60 ? m + " min" : Math.floor(m / 60) + " h " + (m % 60) + " min";
  }

  function ms(v) { return v === null || v === undefined ? "–" : v + " ms"; }

  function files(g) {
    // A spreadsheet table where the game has one (Taco's verdicts, Tap 4's sheet); the whole log always.
    var links = [];
    var sheet = T.sheetUrl(g);
    if (sheet) { links.push(h("a", { href: sheet }, g.kind === "taco" ? "verdicts CSV" : "sheet CSV")); }
    links.push(h("a", { href: "/api/games/" + g.game_id + "/export.json" }, "log"));
    return links.reduce(function (acc, a) { if (acc.length) { acc.push(" · "); } acc.push(a); return acc; }, []);
  }

  function fill(id, rows, empty, columns) {
    var body = document.querySelector("#" + id + " tbody");
    body.replaceChildren.apply(body, rows.length ? rows : [h("tr", {}, h("td", { colspan: columns, "class": "muted" }, empty))]);
  }

  function get(url) {
    return fetch(url, { credentials: "same-origin", cache: "no-store" }).then(function (r) { return r.json(); });
  }

  get("/api/history").then(function (data) {
    fill("history-games", (data.games || []).map(function (g) {
      return h("tr", { "data-game": g.game_id }, [
        h("td", {}, when(g.started)), h("td", {}, g.title), h("td", {}, took(g.duration_s)),
        h("td", {}, g.players.join(", ")),
        h("td", { "data-col": "winner" }, g.winners.length ? g.winners.join(" and ") : (g.ended ? "nobody" : "…")),
        h("td", {}, files(g))
      ]);
    }), "No games played yet.", 6);
  });
  get("/api/records").then(function (data) {
    fill("history-records", (data.players || []).map(function (p) {
      var perGame = Object.keys(p.by_kind).map(function (k) { return p.by_kind[k].title + " " + p.by_kind[k].wins + "/" + p.by_kind[k].games; });
      return h("tr", { "data-player": p.player }, [
        h("td", {}, p.name), h("td", {}, String(p.games)), h("td", {}, String(p.wins)), h("td", {}, perGame.join(", ")),
        h("td", {}, ms(p.best_ms)), h("td", {}, ms(p.median_ms)), h("td", {}, String(p.flinches))
      ]);
    }), "No players yet.", 7);
  });
})();
