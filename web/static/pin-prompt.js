/* Asking for the PIN again, in place, when a phone's trust ends (a restart with a new
 * PIN, every phone forgotten): the page stays as it is, with whatever was typed, and
 * a change that was refused is sent again once the PIN is in.
 *
 * Tabletop.askPin() -> Promise: shows the prompt (once, however often it is asked)
 * and resolves when this phone is trusted again; rejects if the player chooses to
 * watch instead. The prompt also opens by itself the moment the page learns that
 * its trust ended (app.js checks /api/session whenever the live stream opens).
 */
(function () {
  "use strict";
  var T = window.Tabletop;
  if (!T) { return; }
  var waiting = [];
  var box = null;

  function finish(ok) {
    var list = waiting;
    waiting = [];
    if (box) { box.hidden = true; }
    list.forEach(function (w) { if (ok) { w.resolve(); } else { w.reject(new Error("the PIN was not entered")); } });
  }

  function build() {
    var h = T.h;
    var input = h("input", { id: "pin-again-input", inputmode: "numeric", pattern: "[0-9]*", maxlength: "12",
      autocomplete: "one-time-code", "class": "big-input", "aria-label": "Table PIN" });
    var message = h("p", { id: "pin-again-error", "class": "error", role: "alert", hidden: true });
    var form = h("form", { "class": "pin-form", onsubmit: function (e) { e.preventDefault(); send(input, message); } }, [
      input, message,
      h("div", { "class": "row" }, [
        h("button", { type: "submit", "class": "primary", id: "pin-again-send" }, "Carry on"),
        h("button", { type: "button", id: "pin-again-later", onclick: function () { finish(false); } }, "Just watch")
      ])
    ]);
    box = h("div", { id: "pin-again", "class": "pin-again", hidden: true, role: "dialog", "aria-modal": "true",
      "aria-labelledby": "pin-again-title" }, [
      h("div", { "class": "card" }, [
        h("h2", { id: "pin-again-title" }, "This phone needs the table PIN again"),
        h("p", {}, "The table was restarted with a new PIN (or someone asked every phone to enter it again). " +
          "Type the PIN shown on the table screen to carry on. Nothing you typed here is lost."),
        form
      ])
    ]);
    document.body.appendChild(box);
  }

  function send(input, message) {
    var pin = input.value.trim();
    if (!/^[0-9]{4,12}$/.test(pin)) {
      message.hidden = false;
      message.textContent = "The PIN is 4 to 12 digits: look at the table screen.";
      return;
    }
    var token = document.querySelector('meta[name="csrf-token"]');
    fetch("/api/pin", {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": token ? token.getAttribute("content") : "" },
      body: JSON.stringify({ pin: pin })
    }).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (data) {
        if (r.ok) {
          if (data.csrf_token && token) { token.setAttribute("content", data.csrf_token); }
          input.value = "";
          message.hidden = true;
          T.setTrusted(true);
          finish(true);
          T.toast("You can change things again", "info");
          return;
        }
        message.hidden = false;
        if (r.status === 429) {
          message.textContent = "Too many wrong PINs at this table: wait " + (r.headers.get("Retry-After") || "a few") +
            " seconds, then try again.";
        } else if (r.status === 403) {
          message.textContent = "That is not the table's PIN. Look again at the table screen.";
        } else {
          message.textContent = data.error || "That did not work (" + r.status + "); try again.";
        }
      });
    }, function () {
      message.hidden = false;
      message.textContent = "The table cannot be reached: check the Wi-Fi, then try again.";
    });
  }

  function askPin() {
    return new Promise(function (resolve, reject) {
      waiting.push({ resolve: resolve, reject: reject });
      if (!box) { build(); }
      if (box.hidden !== false) {
        box.hidden = false;
        var input = document.getElementById("pin-again-input");
        if (input) { input.focus(); }
      }
    });
  }

  T.askPin = askPin;
  T.onTrust(function (trusted) {
    if (trusted) { if (box && !box.hidden) { finish(true); } return; }
    // Learnt from the server that the trust ended: ask at once, before a change is refused.
    if (T.trustLapsed) { askPin().catch(function () { /* watching for now */ }); }
  });
})();
