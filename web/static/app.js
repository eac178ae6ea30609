/* Shared client for every page: live stream, commands, toasts, game UIs.
 *
 * Tabletop.live(onState, onLog)   open /api/events (EventSource) with automatic
 *                                 reconnect; shows the status in #conn.
 * Tabletop.api.command(name, args) POST /api/command with the CSRF header;
 *                                 resolves to {seq, events}; shows the server's
 *                                 error message as a toast and rejects.
 * Tabletop.api.post(url, body)    the same for any JSON POST.
 * Tabletop.h(tag, attrs, children)  DOM helper shared by the game UIs:
 *                                 attrs "onX" functions become listeners,
 *                                 null/undefined/false attrs and children are
 *                                 skipped, text children become text nodes.
 * Tabletop.renderGame(el, state, mode)  mode "phone" or "screen": calls
 *                                 window.TabletopGames[kind][mode], loading
 *                                 /static/games/<kind>.js on first use, with a
 *                                 key/value fallback for kinds without a UI.
 *                                 A phone without the PIN gets api = null: the
 *                                 game then draws a read-only view.
 * Tabletop.trusted                true when this phone entered the PIN (from the
 *                                 page's <meta name="trusted">, confirmed by
 *                                 /api/session, false after a PIN refusal);
 *                                 null while unknown.
 * Tabletop.onTrust(fn)            fn(trusted) whenever that changes.
 * Tabletop.onState(fn) / onLog(fn) fn(state) / fn(event) for every message of the
 *                                 page's live stream (extras such as results.js
 *                                 listen without opening a second stream); a state
 *                                 listener added after the first state gets the
 *                                 latest one at once.
 * Tabletop.askPin                 set by pin-prompt.js: asks for the PIN in place
 *                                 and resolves once this phone is trusted again.
 *                                 A change refused for want of the PIN is then
 *                                 sent again, so nothing typed is lost.
 */
(function () {
  "use strict";

  window.TabletopGames = window.TabletopGames || {};

  function meta(name) {
    var el = document.querySelector('meta[name="' + name + '"]');
    return el ? el.getAttribute("content") : "";
  }

  function toast(message, kind) {
    var box = document.getElementById("toasts");
    if (!box) { return; }
    // The same message again only renews its toast, and at most three stay: toasts must not pile up.
    Array.prototype.slice.call(box.children).forEach(function (old) { if (old.textContent === message) { old.remove(); } });
    while (box.children.length >= 3) { box.firstChild.remove(); }
    var t = document.createElement("div");
    t.className = "toast " + (kind || "error");
    t.textContent = message;
    t.addEventListener("click", function () { t.remove(); });  // tap to dismiss
    box.appendChild(t);
    setTimeout(function () { t.remove(); }, kind === "info" ? 2500 : 5000);
  }

  function post(url, body) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": meta("csrf-token") },
      body: JSON.stringify(body || {})
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        if (!response.ok) {
          var message = data.error || ("request failed (" + response.status + ")");
          var needsPin = response.status === 403 && /PIN/.test(message);
          if (needsPin && window.Tabletop.askPin && url !== "/api/pin" && (window.Tabletop.trusted || lapsed)) {
            // The trust ran out (a restart with a new PIN): ask in place, then send it again.
            setTrusted(false);
            return window.Tabletop.askPin().then(function () { return post(url, body); });
          }
          toast(message, "error");
          if (needsPin) {
            // The trust ran out (or the PIN changed): hide the controls again.
            setTrusted(false);
            showPinLink();
          }
          var err = new Error(message);
          err.status = response.status;
          err.data = data;
          throw err;
        }
        return data;
      });
    }, function (networkError) {
      toast("the table cannot be reached: " + networkError.message, "error");
      throw networkError;
    });
  }

  function showPinLink() {
    ["trust", "pin-cta"].forEach(function (id) {
      var box = document.getElementById(id);
      if (box && !box.hidden) { box.classList.add("flash"); }
    });
  }

  /* ---- trust (the PIN) ---------------------------------------------------- */
  // The server refuses every change from an untrusted phone whatever the page
  // shows; this only decides which controls are worth drawing.
  var trustListeners = [];
  var initialTrust = meta("trusted");
  // Trust this page had and lost (a restart with a new PIN, every phone forgotten): the
  // game UI keeps its controls and what was typed, and the next change asks for the PIN.
  var lapsed = false;

  function setTrusted(value) {
    if (window.Tabletop.trusted === value) { return; }
    lapsed = value === false && (window.Tabletop.trusted === true || lapsed);
    window.Tabletop.trusted = value;
    window.Tabletop.trustLapsed = lapsed;
    trustListeners.forEach(function (fn) {
      try { fn(value); } catch (err) { console.error(err); }
    });
  }

  function onTrust(fn) { trustListeners.push(fn); }

  function checkSession() {
    fetch("/api/session", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.json(); })
      .then(function (data) { setTrusted(!!data.trusted); })
      .catch(function () { /* offline: keep what the page said */ });
  }

  var api = {
    command: function (name, args) { return post("/api/command", { name: name, args: args || {} }); },
    post: post,
    toast: toast
  };

  /* ---- listeners of the page's one live stream -------------------------- */
  var stateListeners = [];
  var logListeners = [];
  var lastState = null;  // a listener that registers late (its script loaded after the first state) starts from it

  function notify(list, value) {
    list.forEach(function (fn) {
      try { fn(value); } catch (err) { console.error(err); }
    });
  }

  /* ---- live stream ------------------------------------------------------ */
  function setStatus(text, cls) {
    var el = document.getElementById("conn");
    if (!el) { return; }
    el.textContent = text;
    el.className = "conn " + cls;
  }

  function live(onState, onLog) {
    var lastId = null;
    var source = null;
    var retryTimer = null;
    var retryMs = 3000;

    function open() {
      // EventSource sends Last-Event-ID itself when it reconnects; after a hard
      // failure (closed stream) we open a new one and pass ?after= instead.
      var url = "/api/events" + (lastId !== null ? "?after=" + encodeURIComponent(lastId) : "");
      source = new EventSource(url);
      setStatus("connecting…", "conn-connecting");
      source.onopen = function () {
        retryMs = 3000;
        setStatus("live", "conn-live");
        // A stream that opens again may follow a restart with a new PIN: learn at once whether we are still trusted.
        checkSession();
      };
      source.addEventListener("state", function (e) {
        setStatus("live", "conn-live");
        var state;
        try { state = JSON.parse(e.data); onState(state); } catch (err) { console.error(err); }
        if (state) { lastState = state; notify(stateListeners, state); }
      });
      source.addEventListener("log", function (e) {
        if (e.lastEventId) { lastId = e.lastEventId; }
        var event;
        try { event = JSON.parse(e.data); if (onLog) { onLog(event); } } catch (err) { console.error(err); }
        if (event) { notify(logListeners, event); }
      });
      source.onerror = function () {
        if (source.readyState === EventSource.CLOSED) {
          // Refused (the table serves as many live streams as it keeps threads for: 503) or
          // the server is gone: try again, waiting longer each time, up to 30 s.
          setStatus("offline – retrying", "conn-offline");
          clearTimeout(retryTimer);
          retryTimer = setTimeout(open, retryMs);
          retryMs = Math.min(30000, retryMs * 2);
        } else {
          setStatus("reconnecting…", "conn-connecting");
        }
      };
    }
    open();
    return { close: function () { clearTimeout(retryTimer); if (source) { source.close(); } } };
  }

  /* ---- game UIs --------------------------------------------------------- */
  var loading = {};

  function loadGameScript(kind, done) {
    var known = (meta("game-scripts") || "").split(",").filter(Boolean);
    if (known.indexOf(kind) < 0) { done(false); return; }
    if (loading[kind]) { loading[kind].push(done); return; }
    loading[kind] = [done];
    var s = document.createElement("script");
    s.src = "/static/games/" + encodeURIComponent(kind) + ".js";
    s.onload = function () { loading[kind].forEach(function (f) { f(true); }); loading[kind] = null; };
    s.onerror = function () { loading[kind].forEach(function (f) { f(false); }); };
    document.head.appendChild(s);
  }

  function fallback(el, state) {
    // Shows the game's public view as key/values, so a game without its own UI is still usable.
    var game = state.game;
    el.innerHTML = "";
    var dl = document.createElement("dl");
    dl.className = "kv";
    var view = game.view || {};
    Object.keys(view).forEach(function (key) {
      var dt = document.createElement("dt");
      dt.textContent = key;
      var dd = document.createElement("dd");
      var v = view[key];
      dd.textContent = typeof v === "object" ? JSON.stringify(v) : String(v);
      dl.appendChild(dt);
      dl.appendChild(dd);
    });
    el.appendChild(dl);
    if (game.outcome) {
      var p = document.createElement("p");
      p.className = "outcome";
      p.textContent = "Game over: " + JSON.stringify(game.outcome);
      el.appendChild(p);
    }
  }

  function renderGame(el, state, mode) {
    if (!el) { return; }
    var game = state.game;
    if (!game) { el.innerHTML = ""; el.removeAttribute("data-kind"); return; }
    el.setAttribute("data-kind", game.kind);
    var ui = window.TabletopGames[game.kind];
    if (ui && typeof ui[mode] === "function") {
      try {
        if (mode === "phone") { ui.phone(el, state, window.Tabletop.trusted || lapsed ? api : null); } else { ui.screen(el, state); }
      } catch (err) {
        console.error(err);
        fallback(el, state);
      }
      return;
    }
    if (ui) { fallback(el, state); return; }
    loadGameScript(game.kind, function (ok) {
      if (ok && window.TabletopGames[game.kind]) {
        renderGame(el, Tabletop.latestState || state, mode);
      } else {
        window.TabletopGames[game.kind] = window.TabletopGames[game.kind] || {};
        fallback(el, Tabletop.latestState || state);
      }
    });
  }

  function findPlayer(state, id) {
    return ((state || {}).players || []).filter(function (x) { return x.id === id; })[0];
  }

  function playerName(state, id) {
    var p = findPlayer(state, id);
    return p ? p.name : "?";
  }

  /** The player ``id`` in the latest state, or a stand-in named "#id" (the verdict flash and the replay). */
  function player(id) {
    return findPlayer(window.Tabletop.latestState, id) || { id: id, name: "#" + id, colour: "#555b66" };
  }

  /** The CSV a spreadsheet opens as a table, where game ``g`` has one (Taco's verdicts, Tap 4's sheet), else null. */
  function sheetUrl(g) {
    if (g.kind === "taco") { return "/api/games/taco/" + g.game_id + "/verdicts.csv"; }
    if (g.kind === "tap4") { return "/api/games/tap4/" + g.game_id + "/sheet.csv"; }
    return null;
  }

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) { e.textContent = text; }
    return e;
  }

  /* h("div", {class: "x", onclick: fn}, [children or text]) */
  function h(tag, attrs, children) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) { return; }
      if (k.indexOf("on") === 0 && typeof v === "function") { e.addEventListener(k.slice(2), v); }
      else if (k === "style") { e.style.cssText = String(v); }
      else { e.setAttribute(k, v === true ? "" : String(v)); }
    });
    (Array.isArray(children) ? children : children === undefined ? [] : [children]).forEach(function (c) {
      if (c === null || c === undefined || c === false) { return; }
      e.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
    });
    return e;
  }

  /* True for colours where black text reads better than white (relative luminance). */
  function isLight(hex) {
    var m = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex || "");
    if (!m) { return false; }
    var lum = [m[1], m[2], m[3]].map(function (x) {
      var c = parseInt(x, 16) / 255;
      return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * lum[0] + 0.7152 * lum[1] + 0.0722 * lum[2] > 0.4;
  }

  window.Tabletop = {
    trusted: initialTrust === "1" ? true : initialTrust === "0" ? false : null,
    onTrust: onTrust,
    setTrusted: setTrusted,
    trustLapsed: false,
    askPin: null,
    onState: function (fn) {
      stateListeners.push(fn);
      if (lastState) { notify([fn], lastState); }
    },
    onLog: function (fn) { logListeners.push(fn); },
    h: h,
    isLight: isLight,
    api: api,
    live: live,
    renderGame: renderGame,
    toast: toast,
    playerName: playerName,
    player: player,
    sheetUrl: sheetUrl,
    el: el,
    latestState: null
  };
  checkSession();
  // A page restored from the back/forward cache may predate a PIN entry or a logout.
  window.addEventListener("pageshow", function (e) { if (e.persisted) { checkSession(); } });
})();
