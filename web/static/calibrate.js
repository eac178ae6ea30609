/* The calibration page: level meters, last peaks, threshold sliders, the guided check.
 *
 * Polls GET /api/calibration/levels five times a second (the box sends a level
 * line every 50 ms; a phone does not need more). Sliders post to
 * /api/calibration/thresholds as they move (debounced) so the box changes at
 * once; the server answers 403 with the reason when the phone lacks the PIN.
 * Everyone sees the meters and last peaks; the sliders, the save button and the
 * guided check show only while Tabletop.trusted (a watcher gets #pin-cta).
 */
(function () {
  "use strict";
  var T = window.Tabletop;
  var POLL_MS = 200;
  var root = document.getElementById("cal-pads");
  if (!root) {
    // Simulated or GPIO pads: the page shows why; say so in the status badge too.
    setConn("no levels", "conn-offline");
    return;
  }
  var pads = parseInt(root.getAttribute("data-pads"), 10) || 0;
  var MAX = 1023;
  var rows = {};
  var settings = {};
  var lastResult = null;
  var failures = 0;

  function pct(v) { return Math.max(0, Math.min(100, (v / MAX) * 100)) + "%"; }

  function setConn(text, cls) {
    var c = document.getElementById("conn");
    if (c) { c.textContent = text; c.className = "conn " + cls; }
  }

  function slider(pad, name, max) {
    var label = T.el("label", { "class": "th-slider" });
    label.hidden = !T.trusted;
    label.appendChild(T.el("span", { "class": "name" }, name));
    var input = T.el("input", { type: "range", min: name === "slap" ? "1" : "0", max: String(max), step: "1",
      id: "th-" + name + "-" + pad, "data-pad": String(pad), "data-param": name,
      "aria-label": "pad " + pad + " " + name + " threshold" });
    var out = T.el("output", { "for": input.id, id: "out-" + name + "-" + pad }, "–");
    var timer = null;
    function send() {
      clearTimeout(timer);
      timer = null;
      var body = { pad: pad };
      body[name] = parseInt(input.value, 10);
      T.api.post("/api/calibration/thresholds", body).then(function (data) {
        settings[pad] = data.settings;
        showSettings(pad);
      }, function () { showSettings(pad); /* back to what the box has */ });
    }
    input.addEventListener("input", function () {
      out.textContent = input.value;
      input.setAttribute("data-dirty", "1");
      clearTimeout(timer);
      timer = setTimeout(send, 150);
    });
    input.addEventListener("change", function () { if (timer) { send(); } });
    label.appendChild(input);
    label.appendChild(out);
    return label;
  }

  function build() {
    for (var pad = 1; pad <= pads; pad++) {
      var card = T.el("section", { "class": "cal-pad", "data-pad": String(pad) });
      var h = T.el("h3");
      h.appendChild(T.el("span", {}, "Pad " + pad));
      var last = T.el("span", { "class": "last-peak", id: "last-peak-" + pad }, "no hit yet");
      h.appendChild(last);
      card.appendChild(h);
      var meter = T.el("div", { "class": "meter", id: "meter-" + pad, role: "meter", "aria-valuemin": "0",
        "aria-valuemax": String(MAX), "aria-valuenow": "0", "aria-label": "pad " + pad + " level" });
      var fill = T.el("div", { "class": "fill" });
      var peak = T.el("div", { "class": "peak" });
      var slapMark = T.el("div", { "class": "mark slap" });
      var touchMark = T.el("div", { "class": "mark touch" });
      meter.appendChild(fill); meter.appendChild(peak); meter.appendChild(touchMark); meter.appendChild(slapMark);
      card.appendChild(meter);
      card.appendChild(slider(pad, "slap", MAX));
      card.appendChild(slider(pad, "touch", MAX));
      root.appendChild(card);
      rows[pad] = { meter: meter, fill: fill, peak: peak, slapMark: slapMark, touchMark: touchMark, last: last };
    }
  }

  function showSettings(pad) {
    var s = settings[pad];
    if (!s) { return; }
    ["slap", "touch"].forEach(function (name) {
      var input = document.getElementById("th-" + name + "-" + pad);
      if (input && document.activeElement !== input) {
        input.value = s[name];
        input.removeAttribute("data-dirty");
        document.getElementById("out-" + name + "-" + pad).textContent = s[name];
      }
    });
    var r = rows[pad];
    r.slapMark.style.left = pct(s.slap);
    r.touchMark.style.left = pct(s.touch);
    r.touchMark.hidden = !(s.touch > 0 && s.touch < s.slap);
  }

  function loadSettings() {
    return fetch("/api/calibration", { credentials: "same-origin" }).then(function (r) { return r.json(); }).then(function (info) {
      var status = document.getElementById("box-status");
      // The server writes commands between backticks: show them as code, not as raw marks.
      status.textContent = "";
      (info.message || "").split("`").forEach(function (part, i) {
        status.appendChild(i % 2 ? T.el("code", {}, part) : document.createTextNode(part));
      });
      if (info.settings) {
        Object.keys(info.settings).forEach(function (k) { settings[k] = info.settings[k]; showSettings(parseInt(k, 10)); });
      }
      return info;
    });
  }

  function showLevels(data) {
    for (var pad = 1; pad <= pads; pad++) {
      var r = rows[pad];
      var level = (data.levels || [])[pad - 1] || 0;
      var peak = (data.peaks || [])[pad - 1] || 0;
      r.fill.style.width = pct(level);
      r.peak.style.left = pct(peak);
      r.meter.setAttribute("aria-valuenow", String(level));
      r.meter.setAttribute("data-peak", String(peak));
      var lp = (data.last_peaks || [])[pad - 1];
      if (lp) {
        var s = settings[pad];
        var kind = s ? (lp.peak >= s.slap ? "slap" : (s.touch > 0 && s.touch < s.slap && lp.peak >= s.touch ? "touch" : "below")) : "";
        r.last.textContent = "last peak " + lp.peak + (kind ? " (" + kind + ")" : "");
        r.last.setAttribute("data-peak", String(lp.peak));
      }
    }
    var status = document.getElementById("box-status");
    if (!data.connected) {
      status.textContent = "No pad box connected" + (data.error ? ": " + data.error : "; plug it in.");
    } else if (!data.live) {
      status.textContent = "Waiting for levels from the pad box…";
    } else {
      status.textContent = "";
    }
    showCheck(data.check);
  }

  /* ---- guided check ------------------------------------------------------ */
  function $(id) { return document.getElementById(id); }

  function showCheck(check) {
    var running = !!check;
    $("check-start").disabled = running;
    $("check-pad").disabled = running;
    $("check-cancel").hidden = !running;
    $("check-next").hidden = !(running && check.phase === "slap");
    $("check-finish").hidden = !(running && check.phase === "touch");
    if (!running) {
      if (!lastResult) { $("check-step").textContent = ""; $("check-progress").textContent = ""; }
      return;
    }
    $("check-step").textContent = check.phase === "slap"
      ? "Slap pad " + check.pad + " hard, " + check.wants + " times."
      : "Now touch pad " + check.pad + " lightly, " + check.wants + " times.";
    $("check-progress").textContent = "Seen so far: " + check.slaps + " slap(s), " + check.touches + " touch(es).";
    $("check-progress").setAttribute("data-slaps", String(check.slaps));
    $("check-progress").setAttribute("data-touches", String(check.touches));
  }

  function showResult(result) {
    lastResult = result;
    $("check-result").hidden = false;
    $("check-step").textContent = "Pad " + result.pad + " checked.";
    $("check-progress").textContent = "Slaps " + (result.slaps.join(", ") || "none") +
      "; touches " + (result.touches.join(", ") || "none") + ".";
    var s = result.suggested;
    var sug = $("check-suggestion");
    if (s) {
      sug.textContent = "Suggested: slap " + s.slap + (s.touch !== null ? ", touch " + s.touch : " (touch unchanged)") + ".";
      sug.setAttribute("data-slap", String(s.slap));
      sug.setAttribute("data-touch", s.touch === null ? "" : String(s.touch));
    } else {
      sug.textContent = "No suggestion: see below.";
    }
    $("check-apply").hidden = !s;
    var problems = $("check-problems");
    problems.innerHTML = "";
    result.problems.forEach(function (p) { problems.appendChild(T.el("li", {}, p)); });
    var xt = $("check-xtalk");
    xt.innerHTML = "";
    result.crosstalk.forEach(function (x) {
      var text = "Pad " + x.pad + ": " + (x.verdict === "none" ? "nothing" : x.percent + "% (peak " + x.peak + ")") +
        (x.verdict === "risk" ? " – not cancelled, may count a false hit" : x.verdict === "cancelled" ? " – cancelled by the box" : "");
      xt.appendChild(T.el("li", { "class": "xtalk-" + x.verdict, "data-pad": String(x.pad), "data-percent": String(x.percent) }, text));
    });
  }

  function checkAction(body) {
    return T.api.post("/api/calibration/check", body);
  }

  $("check-start").addEventListener("click", function () {
    lastResult = null;
    $("check-result").hidden = true;
    checkAction({ action: "start", pad: parseInt($("check-pad").value, 10) }).then(function (d) { showCheck(d.check); }, function () {});
  });
  $("check-next").addEventListener("click", function () {
    checkAction({ action: "touch" }).then(function (d) { showCheck(d.check); }, function () {});
  });
  $("check-finish").addEventListener("click", function () {
    checkAction({ action: "finish" }).then(function (d) { showCheck(null); showResult(d.result); }, function () {});
  });
  $("check-cancel").addEventListener("click", function () {
    checkAction({ action: "cancel" }).then(function () { lastResult = null; showCheck(null); }, function () {});
  });
  $("check-apply").addEventListener("click", function () {
    if (!lastResult || !lastResult.suggested) { return; }
    var s = lastResult.suggested;
    var body = { pad: lastResult.pad, slap: s.slap };
    if (s.touch !== null) { body.touch = s.touch; }
    T.api.post("/api/calibration/thresholds", body).then(function (data) {
      settings[lastResult.pad] = data.settings;
      showSettings(lastResult.pad);
      T.toast("Pad " + lastResult.pad + ": thresholds set on the box", "info");
    }, function () {});
  });
  $("save").addEventListener("click", function () {
    T.api.post("/api/calibration/save", {}).then(function () { T.toast("Settings kept on the box", "info"); }, function () {});
  });

  /* ---- trust (the PIN) ------------------------------------------------------ */
  // Which controls are worth drawing; the server refuses a watcher's change regardless.
  function showTrust(trusted) {
    $("trust").hidden = !trusted;
    $("pin-cta").hidden = !!trusted;
    $("save-row").hidden = !trusted;
    $("check").hidden = !trusted;
    Array.prototype.forEach.call(root.querySelectorAll(".th-slider"), function (label) { label.hidden = !trusted; });
  }

  /* ---- polling ------------------------------------------------------------- */
  function poll() {
    fetch("/api/calibration/levels", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.json(); })
      .then(function (data) {
        failures = 0;
        setConn(data.live ? "live" : "waiting", data.live ? "conn-live" : "conn-connecting");
        showLevels(data);
      }, function () {
        failures += 1;
        setConn("offline – retrying", "conn-offline");
      })
      .then(function () { setTimeout(poll, failures ? Math.min(5000, POLL_MS * (1 + failures)) : POLL_MS); });
  }

  build();
  showTrust(T.trusted);
  T.onTrust(showTrust);
  loadSettings().then(poll, poll);
})();
