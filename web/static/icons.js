/* Icons drawn as inline SVG, not emoji: a Raspberry Pi kiosk has no colour emoji font
 * and would show empty boxes. Simple shapes, readable at 1em and at 7rem.
 *
 * Tabletop.icon(name) -> <span class="emoji icon" aria-hidden="true"><svg>…</svg></span>
 * for the Taco cards (taco, hat, cake, gift, pizza, monkey, unicorn, ninja) and
 * "clock" and "hand" (a pile whose player slapped); an unknown name gives a question mark. The span keeps the class "emoji",
 * so the games' CSS sizes it as it sized the emoji (the SVG is 1em square).
 */
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  // Each icon: shapes on a 64x64 grid, [tag, attributes].
  var SHAPES = {
    taco: [["path", { d: "M6 46a26 26 0 0 1 52 0z", fill: "#f3c623", stroke: "#8a5a12", "stroke-width": "3" }],
      ["path", { d: "M14 40q4-8 8 0q4-8 8 0q4-8 8 0q4-8 8 0q4-8 6-2", fill: "none", stroke: "#3fa34d", "stroke-width": "4" }],
      ["circle", { cx: "24", cy: "32", r: "3", fill: "#c0392b" }], ["circle", { cx: "38", cy: "30", r: "3", fill: "#c0392b" }]],
    hat: [["rect", { x: "18", y: "12", width: "28", height: "34", rx: "3", fill: "#23262d", stroke: "#fff", "stroke-width": "2" }],
      ["rect", { x: "18", y: "36", width: "28", height: "6", fill: "#c0392b" }],
      ["rect", { x: "6", y: "46", width: "52", height: "7", rx: "3", fill: "#23262d", stroke: "#fff", "stroke-width": "2" }]],
    cake: [["rect", { x: "10", y: "30", width: "44", height: "24", rx: "4", fill: "#f7c6d9", stroke: "#8a3b5c", "stroke-width": "2" }],
      ["path", { d: "M10 38q5 5 11 0t11 0t11 0t11 0", fill: "none", stroke: "#fff", "stroke-width": "4" }],
      ["rect", { x: "29", y: "14", width: "6", height: "16", fill: "#29a3d6" }],
      ["path", { d: "M32 4q5 6 0 10q-5-4 0-10z", fill: "#f2a541" }]],
    gift: [["rect", { x: "8", y: "26", width: "48", height: "30", rx: "3", fill: "#6ab04c", stroke: "#2d5a1e", "stroke-width": "2" }],
      ["rect", { x: "5", y: "18", width: "54", height: "10", rx: "2", fill: "#7cc85a", stroke: "#2d5a1e", "stroke-width": "2" }],
      ["rect", { x: "28", y: "18", width: "8", height: "38", fill: "#e4572e" }],
      ["path", { d: "M32 18q-14-14-16-2q2 4 16 2q14 2 16-2q-2-12-16 2z", fill: "#e4572e" }]],
    pizza: [["path", { d: "M32 60L6 10q26-10 52 0z", fill: "#f3c623", stroke: "#b5651d", "stroke-width": "3" }],
      ["path", { d: "M6 10q26-10 52 0l-3 6q-23-8-46 0z", fill: "#d08b3a" }],
      ["circle", { cx: "26", cy: "24", r: "4", fill: "#c0392b" }], ["circle", { cx: "38", cy: "28", r: "4", fill: "#c0392b" }],
      ["circle", { cx: "31", cy: "42", r: "4", fill: "#c0392b" }]],
    monkey: [["circle", { cx: "12", cy: "30", r: "8", fill: "#b5651d" }], ["circle", { cx: "52", cy: "30", r: "8", fill: "#b5651d" }],
      ["circle", { cx: "32", cy: "32", r: "22", fill: "#b5651d" }],
      ["ellipse", { cx: "32", cy: "38", rx: "15", ry: "12", fill: "#f0c9a0" }],
      ["circle", { cx: "25", cy: "28", r: "3", fill: "#000" }], ["circle", { cx: "39", cy: "28", r: "3", fill: "#000" }],
      ["path", { d: "M26 42q6 5 12 0", fill: "none", stroke: "#000", "stroke-width": "2.5" }]],
    unicorn: [["path", { d: "M32 2l6 22h-12z", fill: "#f3c623", stroke: "#a57c00", "stroke-width": "1.5" }],
      ["circle", { cx: "32", cy: "38", r: "20", fill: "#fff", stroke: "#a55eea", "stroke-width": "3" }],
      ["path", { d: "M14 30q-6-14 6-16l4 10z", fill: "#a55eea" }], ["path", { d: "M50 30q6-14-6-16l-4 10z", fill: "#f368e0" }],
      ["circle", { cx: "25", cy: "36", r: "3", fill: "#000" }], ["circle", { cx: "39", cy: "36", r: "3", fill: "#000" }],
      ["path", { d: "M26 47q6 4 12 0", fill: "none", stroke: "#a55eea", "stroke-width": "2.5" }]],
    ninja: [["circle", { cx: "32", cy: "32", r: "26", fill: "#23262d", stroke: "#fff", "stroke-width": "2" }],
      ["rect", { x: "8", y: "24", width: "48", height: "14", rx: "7", fill: "#f0c9a0" }],
      ["circle", { cx: "24", cy: "31", r: "3.5", fill: "#000" }], ["circle", { cx: "40", cy: "31", r: "3.5", fill: "#000" }],
      ["path", { d: "M56 26l8-6v12z", fill: "#c0392b" }]],
    clock: [["circle", { cx: "32", cy: "34", r: "24", fill: "none", stroke: "currentColor", "stroke-width": "5" }],
      ["path", { d: "M32 20v14l10 6", fill: "none", stroke: "currentColor", "stroke-width": "5", "stroke-linecap": "round" }],
      ["rect", { x: "26", y: "2", width: "12", height: "6", rx: "2", fill: "currentColor" }]],
    hand: [["rect", { x: "15", y: "10", width: "8", height: "30", rx: "4", fill: "currentColor" }],
      ["rect", { x: "24", y: "5", width: "8", height: "32", rx: "4", fill: "currentColor" }],
      ["rect", { x: "33", y: "7", width: "8", height: "31", rx: "4", fill: "currentColor" }],
      ["rect", { x: "42", y: "13", width: "7", height: "26", rx: "3.5", fill: "currentColor" }],
      ["rect", { x: "46", y: "30", width: "8", height: "22", rx: "4", fill: "currentColor", transform: "rotate(40 50 41)" }],
      ["rect", { x: "15", y: "28", width: "34", height: "30", rx: "12", fill: "currentColor" }]],
    unknown: [["circle", { cx: "32", cy: "32", r: "26", fill: "#555b66" }],
      ["path", { d: "M24 24q0-10 8-10t8 8q0 6-8 8v6", fill: "none", stroke: "#fff", "stroke-width": "5", "stroke-linecap": "round" }],
      ["circle", { cx: "32", cy: "48", r: "3.5", fill: "#fff" }]]
  };

  function icon(name) {
    var svg = document.createElementNS(NS, "svg");
    svg.setAttribute("viewBox", "0 0 64 64");
    svg.setAttribute("width", "1em");
    svg.setAttribute("height", "1em");
    svg.setAttribute("focusable", "false");
    (SHAPES[name] || SHAPES.unknown).forEach(function (shape) {
      var el = document.createElementNS(NS, shape[0]);
      Object.keys(shape[1]).forEach(function (k) { el.setAttribute(k, shape[1][k]); });
      svg.appendChild(el);
    });
    var span = document.createElement("span");
    span.className = "emoji icon";
    span.setAttribute("aria-hidden", "true");
    span.setAttribute("data-icon", SHAPES[name] ? name : "unknown");
    span.appendChild(svg);
    return span;
  }

  window.Tabletop.icon = icon;
})();
