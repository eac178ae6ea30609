/* A phone as a pad (/pad): the whole screen is a slap area in the player's colour.
 *
 * Each touch is stamped where it lands (PointerEvent.timeStamp, the page's
 * monotonic clock) and sent with that stamp; the table maps it onto the pad
 * clock from the round trips this page keeps making (/api/pad/sync), less
 * this phone's calibrated touch latency. Network delay therefore never
 * decides who was first. docs/pads.md describes it for players.
 */
(function () {
  "use strict";
  var root = document.getElementById("phone-pad");
  var area = document.getElementById("pp-area");
  function part(name) { return root.querySelector('[data-pad="' + name + '"]'); }
  function csrf() { var m = document.querySelector('meta[name="csrf-token"]'); return m ? m.content : ""; }
  function us(ms) { return Math.round(ms * 1000); }

  function call(method, url, body) {
    return fetch(url, {
      method: method, credentials: "same-origin", cache: "no-store",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
      body: body === undefined ? undefined : JSON.stringify(body)
    }).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (data) {
        if (!r.ok) { var e = new Error(data.error || ("request failed (" + r.status + ")")); e.status = r.status; throw e; }
        return data;
      });
    });
  }

  var me = null;
  function say(text, kind) {
    var el = part("message");
    el.textContent = text || "";
    el.className = "pp-msg" + (kind ? " pp-" + kind : "");
  }

  function show(data) {
    me = data;
    part("tag").textContent = data.tag;
    var p = data.player;
    part("who").textContent = p ? p.name + " · pad " + data.pad : (data.pad ? "pad " + data.pad + " (nobody seated on it)" : "no pad yet");
    area.style.backgroundColor = p ? p.colour : "";
    area.style.color = p && window.Tabletop && window.Tabletop.isLight && window.Tabletop.isLight(p.colour) ? "#111" : "";
    root.setAttribute("data-state", data.pad ? "ready" : "unassigned");
    part("claim").hidden = !!data.pad;
    part("release").hidden = !data.pad;
    part("calibrate-pad").hidden = !data.source || data.source === "sim";
    var lat = data.latency;
    part("latency").textContent = lat.calibrated
      ? "touch latency " + (lat.latency_us / 1000).toFixed(0) + " ms ± " + (lat.uncertainty_us / 1000).toFixed(0) + " ms"
      : "not calibrated (± " + (lat.uncertainty_us / 1000).toFixed(0) + " ms)";
    var s = data.sync;
    part("sync").textContent = s.error_ms === null ? "syncing the clock…" : "clock ± " + s.error_ms.toFixed(1) + " ms";
  }

  function refresh() { return call("GET", "/api/pad").then(show).catch(function () {}); }

  /* ---- the clock: round trips forever while the page is open ----
   * One is sent every next_sync_ms (the table says how often) without waiting for
   * the last: each reports the answers that came since, with their arrival (t4). */
  var answered = [];
  var restart = true;
  var nextMs = 50;
  function syncOnce() {
    var body = { t1_us: us(performance.now()) };
    if (answered.length) { body.answered = answered.slice(0, 32); answered = answered.slice(32); }
    if (restart) { body.restart = true; restart = false; }
    call("POST", "/api/pad/sync", body).then(function (data) {
      answered.push({ id: data.id, t4_us: us(performance.now()) });
      nextMs = data.next_sync_ms;
    }, function () { nextMs = 500; });
    setTimeout(syncOnce, nextMs);
  }

  /* ---- touches ---- */
  var calibrating = null;
  function send(stamp, kind) {
    if (calibrating) { calibrating.taps.push(stamp); return; }
    area.classList.remove("pp-hit"); void area.offsetWidth; area.classList.add("pp-hit");
    call("POST", "/api/pad/hit", { at_us: us(stamp), kind: kind, sent_us: us(performance.now()) })
      .then(function () { say("registered", "ok"); }, function (e) { say(e.message, "refused"); });
  }

  // A quick, small contact is a light touch where the phone reports its contact size (a finger's
  // contact is 10 to 60 px across; a phone that reports none says 0 to 2); else every touch is a slap.
  var TOUCH_LIFT_MS = 120, TOUCH_AREA_PX2 = 150, SIZE_REPORTED_PX = 5;
  area.addEventListener("pointerdown", function (e) {
    e.preventDefault();
    var stamp = e.timeStamp;
    var sized = e.pointerType === "touch" && (e.width >= SIZE_REPORTED_PX || e.height >= SIZE_REPORTED_PX);
    if (!sized || calibrating) { send(stamp, "slap"); return; }
    var small = e.width * e.height < TOUCH_AREA_PX2, done = false;
    function decide(kind) { if (!done) { done = true; area.removeEventListener("pointerup", up); send(stamp, kind); } }
    function up(u) { decide(small && u.timeStamp - stamp < TOUCH_LIFT_MS ? "touch" : "slap"); }
    area.addEventListener("pointerup", up);
    setTimeout(function () { decide("slap"); }, TOUCH_LIFT_MS);
  });
  area.addEventListener("contextmenu", function (e) { e.preventDefault(); });

  /* ---- calibration: tap along with a flash and a click ---- */
  var BEATS = 20, WARM_UP = 4, BEAT_MS = 600;
  part("calibrate").addEventListener("click", function () {
    if (calibrating) { return; }
    var audio = null;
    try { audio = new (window.AudioContext || window.webkitAudioContext)(); } catch (err) { audio = null; }
    calibrating = { beats: [], taps: [] };
    say("tap along with each flash and click", "ok");
    var start = performance.now() + 1000, n = 0;
    function beat() {
      requestAnimationFrame(function (frameTime) {
        calibrating.beats.push(frameTime);  // the frame that shows the flash
        area.classList.add("pp-flash");
        if (audio) {
          var o = audio.createOscillator(), g = audio.createGain();
          o.frequency.value = 1000; g.gain.value = 0.3; o.connect(g); g.connect(audio.destination);
          o.start(); o.stop(audio.currentTime + 0.03);
        }
        setTimeout(function () { area.classList.remove("pp-flash"); }, 80);
        n += 1;
        root.setAttribute("data-calibration-beat", String(n));
        say("tap along with each flash and click: " + n + " of " + BEATS, "ok");
        if (n < BEATS) { setTimeout(beat, start + n * BEAT_MS - performance.now()); } else { setTimeout(finish, BEAT_MS); }
      });
    }
    setTimeout(beat, start - performance.now());
    function finish() {
      var c = calibrating; calibrating = null;
      root.removeAttribute("data-calibration-beat");
      var beats = c.beats.slice(WARM_UP), offsets = [];
      c.taps.forEach(function (t) {
        var best = null;
        beats.forEach(function (b) { if (best === null || Math.abs(t - b) < Math.abs(t - best)) { best = b; } });
        if (best !== null && Math.abs(t - best) < BEAT_MS / 2) { offsets.push(us(t - best)); }
      });
      call("POST", "/api/pad/calibration", { asynchronies_us: offsets })
        .then(function (d) { say("calibrated: " + (d.latency.latency_us / 1000).toFixed(0) + " ms", "ok"); refresh(); },
              function (e) { say(e.message, "refused"); });
    }
  });

  /* ---- calibration against a hardware pad: slap the box's pad and the phone together ---- */
  var PAD_TAPS = 12, PAD_WINDOW_MS = 20000;
  part("calibrate-pad").addEventListener("click", function () { part("pad-calibration").hidden = false; });
  part("pad-calibration").addEventListener("submit", function (e) {
    e.preventDefault();
    var pad = parseInt(e.target.pad.value, 10);
    if (calibrating) { return; }
    part("pad-calibration").hidden = true;
    calibrating = { beats: null, taps: [] };
    say("slap pad " + pad + " and this phone together, " + PAD_TAPS + " times", "ok");
    var started = performance.now();
    (function wait() {
      if (calibrating.taps.length < PAD_TAPS && performance.now() - started < PAD_WINDOW_MS) { setTimeout(wait, 200); return; }
      var taps = calibrating.taps.map(us); calibrating = null;
      // The box's hits reach the table over USB a moment after the slap: let the last arrive.
      setTimeout(function () {
        call("POST", "/api/pad/calibration/pad", { pad: pad, taps_us: taps })
          .then(function (d) { say("calibrated: " + (d.latency.latency_us / 1000).toFixed(0) + " ms", "ok"); refresh(); },
                function (err) { say(err.message, "refused"); });
      }, 500);
    })();
  });

  part("claim").addEventListener("submit", function (e) {
    e.preventDefault();
    call("POST", "/api/pad/claim", { code: e.target.code.value }).then(show, function (err) { say(err.message, "refused"); });
  });
  part("release").addEventListener("click", function () { call("POST", "/api/pad/release", {}).then(show); });

  /* ---- never sleep the screen while the page is open (Wake Lock where offered) ---- */
  function keepAwake() {
    if (navigator.wakeLock && document.visibilityState === "visible") {
      navigator.wakeLock.request("screen").catch(function () { /* refused: battery saver */ });
    }
  }
  document.addEventListener("visibilitychange", keepAwake);
  keepAwake();

  refresh();
  syncOnce();
  setInterval(refresh, 2000);
})();
