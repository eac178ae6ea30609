/* The verdict flash on the table screen: for about two seconds the screen fills with
 * the colour and the huge name of who takes the pile (or who wins, or who flinched),
 * with a sound for each (Web Audio, made here: nothing is fetched), then the game's
 * own screen with the bars and milliseconds shows again.
 *
 * Lines, biggest first: the headline ("Dev takes the pile"), the detail ("Monkey
 * said with Hat · times after the card") and the reason in plain words ("Dev never
 * slapped, so Dev takes the pile"). A flinch lists what each flincher did
 * ("slapped 28 ms after the card: false start"). Listens to the live stream's
 * `verdict` and `overruled` events (docs/games/taco.md).
 */
(function () {
  "use strict";
  var T = window.Tabletop;
  var h = T.h;
  var SHOW_MS = 2000;
  var box = null;
  var timer = null;
  var audio = null;

  function cap(word) { return word ? word.charAt(0).toUpperCase() + word.slice(1) : ""; }

  function names(ids) {
    var list = ids.map(function (id) { return T.player(id).name; });
    return list.length <= 1 ? list.join("") : list.slice(0, -1).join(", ") + " and " + list[list.length - 1];
  }

  /* What the flash says about one verdict: {sound, player, headline, detail, reason, rows}. */
  function describe(v) {
    var taker = T.player(v.taker);
    var detail = [];
    if (v.card) { detail.push(cap(v.card) + (v.word ? " said with " + cap(v.word) : "")); }
    if (v.timing === "card") { detail.push("times after the card"); } else if (v.timing === "first_slap") { detail.push("times after the first slap"); }
    var out = { sound: "last", player: taker, headline: taker.name + " takes the pile", detail: detail.join(" · "), reason: "", rows: [] };
    if (v.kind === "slap" && v.winner !== null && v.winner !== undefined) {
      var w = T.player(v.winner);
      out.sound = "win"; out.player = w;
      out.headline = w.name + " wins!";
      out.reason = w.name + " had no cards left and slapped first, so " + w.name + " wins the game";
    } else if (v.kind === "slap") {
      var missing = v.missing || [];
      out.reason = missing.length
        ? names(missing) + " never slapped" + ", so " + taker.name + " takes the pile"
        : taker.name + " slapped last, so " + taker.name + " takes the pile";
      if ((v.photo_finish || []).some(function (p) { return p.decides === "last"; })) { out.reason += " (a photo finish)"; }
    } else if (v.kind === "flinch") {
      out.sound = "flinch";
      out.headline = taker.name + " flinched and takes the pile";
      out.rows = (v.order || []).map(function (e) { return { player: T.player(e.player), text: T.flinchWords(e.flinch) }; });
      out.reason = taker.name + " slapped first when no slap was due, so " + taker.name + " takes the pile";
    } else if (v.kind === "penalty") {
      out.sound = "flinch";
      var why = { gesture: "a wrong gesture", peek: "peeking", pace: "holding up the pace", other: "a penalty" }[v.penalty] || "a penalty";
      out.headline = taker.name + " takes the pile for " + why;
      out.reason = "The table gave " + taker.name + " a penalty for " + why;
    } else if (v.kind === "stalled") {
      out.headline = "Nobody has a card to flip";
      out.reason = taker.name + " began the round, so " + taker.name + " takes the pile back";
    }
    return out;
  }

  /* Three sounds players learn to tell apart: last (two falling notes), a win (a rising
   * arpeggio), a flinch or penalty (a low buzz). */
  var SOUNDS = {
    last: [["triangle", 660, 0, 0.16], ["triangle", 440, 0.18, 0.3]],
    win: [["sine", 523, 0, 0.14], ["sine", 659, 0.14, 0.14], ["sine", 784, 0.28, 0.14], ["sine", 1047, 0.42, 0.4]],
    flinch: [["square", 110, 0, 0.5]]
  };

  function play(name) {
    var Ctx = window.AudioContext || window.webkitAudioContext;
    if (!Ctx) { return; }
    try {
      audio = audio || new Ctx();
      if (audio.state === "suspended") { audio.resume(); }  // a kiosk allows it (docs/raspberry-pi.md); a tab after a tap
      var now = audio.currentTime;
      SOUNDS[name].forEach(function (n) {
        var osc = audio.createOscillator();
        var gain = audio.createGain();
        osc.type = n[0];
        osc.frequency.value = n[1];
        gain.gain.setValueAtTime(0.0001, now + n[2]);
        gain.gain.exponentialRampToValueAtTime(0.25, now + n[2] + 0.02);
        gain.gain.exponentialRampToValueAtTime(0.0001, now + n[2] + n[3]);
        osc.connect(gain);
        gain.connect(audio.destination);
        osc.start(now + n[2]);
        osc.stop(now + n[2] + n[3] + 0.05);
      });
    } catch (err) { console.error(err); }
  }

  function show(said) {
    if (!box) {
      box = h("div", { id: "verdict-flash", "class": "verdict-flash", role: "alert", hidden: true });
      document.body.appendChild(box);
    }
    box.style.background = said.player.colour;
    box.classList.toggle("light", T.isLight(said.player.colour));
    box.setAttribute("data-sound", said.sound);
    box.setAttribute("data-player", said.player.id);
    var parts = [
      h("div", { "class": "vf-name" }, said.player.name),
      h("div", { "class": "vf-headline" }, said.headline),
      said.detail ? h("div", { "class": "vf-detail" }, said.detail) : null,
      said.rows.length ? h("ul", { "class": "vf-rows" }, said.rows.map(function (r) {
        return h("li", {}, [h("strong", {}, r.player.name), " " + r.text]);
      })) : null,
      h("div", { "class": "vf-reason" }, said.reason)
    ];
    box.replaceChildren.apply(box, parts.filter(Boolean));  // a null would be written as "null"
    box.hidden = false;
    play(said.sound);
    clearTimeout(timer);
    timer = setTimeout(function () { box.hidden = true; }, SHOW_MS);
  }

  /* A penalty given after the verdict (an `overruled` event): the pile changes hands, so the flash says so. */
  function describeOverrule(o) {
    if (o.action !== "penalty" && o.action !== "reassign") { return null; }
    var to = T.player(o.to);
    var from = T.player(o.from);
    return {
      sound: o.action === "penalty" ? "flinch" : "last", player: to, rows: [], detail: "Verdict " + o.verdict + " overruled",
      headline: to.name + " takes the pile" + (o.action === "penalty" && o.note ? " for " + o.note : ""),
      reason: o.action === "penalty"
        ? "The table gave " + to.name + " a penalty" + (o.note ? " (" + o.note + ")" : "") + ", so the pile goes from " + from.name + " to " + to.name
        : "The table gave the pile from " + from.name + " to " + to.name
    };
  }

  T.verdictFlash = { describe: describe, describeOverrule: describeOverrule, show: show };
  T.onLog(function (event) {
    if (!event.data) { return; }
    var said = event.type === "verdict" ? describe(event.data) : event.type === "overruled" ? describeOverrule(event.data) : null;
    if (said) { show(said); }
  });
})();
