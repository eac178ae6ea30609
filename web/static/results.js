/* The end of a game: podium, final standings, highlights and "Rematch", on the table
 * screen (#screen-results) and the phones (#results).
 *
 * Shown when the running game has an outcome (someone won) and, once no game runs,
 * for the newest game that ended, until the next game starts. Data from
 * GET /api/games/<id>/results and GET /api/results/latest (docs/api.md).
 * Tabletop.results.view(results, api) builds the view (api null: no Rematch button).
 */
(function () {
  "use strict";
  var T = window.Tabletop;
  var h = T.h;

  function minutes(seconds) {
    if (seconds === null || seconds === undefined) { return ""; }
    var m = Math.round(seconds / 60);
    return m < 1 ? "under a minute" : m < 60 ? m + " min" : Math.floor(m / 60) + " h " + (m % 60) + " min";
  }

  function podium(rows) {
    // Second, first, third from left to right, as a podium stands.
    var order = [rows.filter(function (r) { return r.place === 2; }), rows.filter(function (r) { return r.place === 1; }),
      rows.filter(function (r) { return r.place === 3; })];
    return h("ol", { "class": "podium", "aria-label": "Podium" }, order.map(function (group, i) {
      var place = [2, 1, 3][i];
      return group.length ? h("li", { "class": "podium-step", "data-place": place }, [
        h("span", { "class": "podium-names" }, group.map(function (r) {
          var name = h("span", { "class": "podium-name", "data-player": r.player }, r.name);
          name.style.borderBottomColor = r.colour;
          return name;
        })),
        h("span", { "class": "podium-block" }, String(place))
      ]) : null;
    }));
  }

  function standings(rows) {
    return h("table", { "class": "results-standings" }, [
      h("thead", {}, h("tr", {}, [h("th", { scope: "col" }, "Place"), h("th", { scope: "col" }, "Player"), h("th", { scope: "col" }, "")])),
      h("tbody", {}, rows.map(function (r) {
        var name = h("td", { "class": "results-name" }, r.name);
        name.style.borderLeftColor = r.colour;
        return h("tr", { "data-player": r.player }, [h("td", {}, r.place + "."), name, h("td", { "class": "muted" }, r.score || "")]);
      }))
    ]);
  }

  function view(results, api) {
    var parts = [
      h("h2", { "class": "results-headline", "data-results": "headline" }, results.headline),
      h("p", { "class": "results-meta muted" }, [results.title, results.duration_s !== null ? " · " + minutes(results.duration_s) : ""]),
      results.reason ? h("p", { "class": "results-reason" }, results.reason) : null,
      results.podium.length ? podium(results.podium) : null,
      standings(results.standings),
      results.highlights.length ? h("ul", { "class": "results-highlights" }, results.highlights.map(function (x) {
        return h("li", { "data-highlight": x.kind }, [h("strong", {}, x.title + ": "), x.text]);
      })) : null
    ];
    if (api) {
      var button = h("button", { type: "button", "class": "primary big", id: "rematch", onclick: function () {
        button.disabled = true;
        api.post("/api/rematch", { game_id: results.game_id }).then(function () {
          api.toast("Rematch started", "info");
        }).catch(function () { button.disabled = false; });
      } }, "Rematch: " + results.title + ", same players");
      parts.push(button);
    }
    parts.push(h("p", {}, h("a", { href: "/history" }, "All past games and records")));
    return h("section", { "class": "results", "data-game": results.game_id }, parts);
  }

  /* Which results belong on the page now: a URL and a key that changes when they may have. */
  var lastGameId = null;
  function wanted(state) {
    var game = state.game;
    if (game && game.outcome) {
      lastGameId = game.game_id;
      return { url: "/api/games/" + game.game_id + "/results", key: game.game_id + ":" + JSON.stringify(game.outcome) };
    }
    if (game) { lastGameId = game.game_id; return null; }
    return { url: "/api/results/latest", key: "latest:" + lastGameId };
  }

  function mount(box) {
    var shownKey = null;
    var current = null;
    function draw() {
      var api = T.trusted || T.trustLapsed ? T.api : null;
      box.hidden = !current;
      document.body.classList.toggle("results-on", !!current);
      box.replaceChildren.apply(box, current ? [view(current, box.getAttribute("data-mode") === "phone" ? api : null)] : []);
    }
    T.onState(function (state) {
      var want = wanted(state);
      if (!want) {
        shownKey = null;
        if (current) { current = null; draw(); }
        return;
      }
      if (want.key === shownKey) { return; }
      shownKey = want.key;
      fetch(want.url, { credentials: "same-origin", cache: "no-store" }).then(function (r) { return r.json(); }).then(function (data) {
        if (shownKey !== want.key) { return; }  // a newer state asked for other results meanwhile
        current = data && data.results !== undefined ? data.results : data;
        draw();
      }).catch(function () { /* offline: the badge says so; the next state tries again */ shownKey = null; });
    });
    T.onTrust(function () { if (current) { draw(); } });
  }

  T.results = { view: view };
  ["screen-results", "results"].forEach(function (id) {
    var box = document.getElementById(id);
    if (box) { mount(box); }
  });
})();
