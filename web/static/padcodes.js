/* The table screen's list of free pads and the code a phone types on /pad to take one (GET /api/pad/codes),
 * shown while a phone on /pad holds no pad. */
(function () {
  "use strict";
  var box = document.getElementById("pad-codes");
  if (!box) { return; }
  var list = box.querySelector("[data-pad-codes]");
  function names() {
    var owners = {};
    var state = window.Tabletop && window.Tabletop.latestState;
    ((state && state.players) || []).forEach(function (p) { if (p.pad) { owners[p.pad] = p.name; } });
    return owners;
  }
  function show(codes, waiting) {
    var owners = names();
    list.innerHTML = "";
    Object.keys(codes).forEach(function (pad) {
      var li = document.createElement("li");
      li.setAttribute("data-pad", pad);
      li.textContent = "pad " + pad + (owners[pad] ? " (" + owners[pad] + ")" : "") + ": ";
      var code = document.createElement("strong");
      code.className = "pad-code";
      code.textContent = codes[pad];
      li.appendChild(code);
      list.appendChild(li);
    });
    // Only while a phone on /pad holds no pad: a table of hardware pads never sees the box.
    box.hidden = Object.keys(codes).length === 0 || !waiting;
  }
  function poll() {
    fetch("/api/pad/codes", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.json(); })
      .then(function (data) { show(data.codes || {}, data.waiting || 0); })
      .catch(function () { /* offline: the live badge says so */ });
  }
  poll();
  setInterval(poll, 3000);
})();
