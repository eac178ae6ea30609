/* Simulated pads: one big pad per pad; tap = slap, the strip = a light touch, keys 1-8. */
(function () {
  "use strict";
  var T = window.Tabletop;
  var box = document.getElementById("pads");
  var simulated = box.getAttribute("data-simulated") === "1";
  var built = 0;

  function hit(pad, kind) {
    var el = box.querySelector('[data-pad="' + pad + '"]');
    if (el) {
      el.classList.remove("pressed");
      void el.offsetWidth;
      el.classList.add("pressed");
    }
    return T.api.post("/api/sim/hit", { pad: pad, kind: kind, strength: kind === "slap" ? 0.8 : 0.1 })
      .catch(function () { /* the toast already says why */ });
  }

  function build(count) {
    box.innerHTML = "";
    for (var pad = 1; pad <= count; pad++) {
      var wrap = T.el("div", { "class": "pad-wrap" });
      var slap = T.el("button", { "type": "button", "class": "pad", "data-pad": pad, "aria-label": "slap pad " + pad });
      slap.appendChild(T.el("span", { "class": "pad-number" }, String(pad)));
      slap.appendChild(T.el("span", { "class": "pad-player" }, ""));
      var touch = T.el("button", { "type": "button", "class": "pad-touch", "data-touch-pad": pad, "aria-label": "touch pad " + pad }, "light touch");
      if (simulated) {
        // pointerdown, not click: a slap should register the moment the finger lands.
        slap.addEventListener("pointerdown", (function (n) { return function (e) { e.preventDefault(); hit(n, "slap"); }; })(pad));
        slap.addEventListener("keydown", (function (n) { return function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); hit(n, "slap"); } }; })(pad));
        touch.addEventListener("click", (function (n) { return function () { hit(n, "touch"); }; })(pad));
      } else {
        slap.disabled = true;
        touch.disabled = true;
      }
      wrap.appendChild(slap);
      wrap.appendChild(touch);
      box.appendChild(wrap);
    }
    built = count;
  }

  function render(state) {
    T.latestState = state;
    var count = (state.pads && state.pads.count) || 4;
    if (count !== built) { build(count); }
    var owners = {};
    (state.players || []).forEach(function (p) { if (p.pad) { owners[p.pad] = p; } });
    box.querySelectorAll(".pad").forEach(function (el) {
      var p = owners[el.getAttribute("data-pad")];
      el.querySelector(".pad-player").textContent = p ? p.name : "";
      el.style.backgroundColor = p ? p.colour : "";
      // Dark text on light pad colours (yellow, white), white text on dark ones.
      el.style.color = p && T.isLight(p.colour) ? "#111" : "";
    });
  }

  document.addEventListener("keydown", function (e) {
    if (!simulated || e.ctrlKey || e.metaKey || e.altKey) { return; }
    // e.code is layout independent: Shift+1 is "!" as a key but still "Digit1".
    var m = /^(?:Digit|Numpad)([1-8])$/.exec(e.code || "");
    if (!m) { return; }
    var pad = parseInt(m[1], 10);
    if (pad > built) { return; }
    e.preventDefault();
    hit(pad, e.shiftKey ? "touch" : "slap");
  });

  T.live(render);
})();
