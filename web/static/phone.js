// The phone page: polls /api/state, draws the table as SVG, asks the rules API about what is tapped.
// Plain JS, no build step. Table frame: mm, x right, y away from the player at the y=0 edge.
"use strict";

const CSRF = document.querySelector('meta[name="csrf"]').content;
const SVG_NS = "http://www.w3.org/2000/svg";
const POLL_MS = 500;
const TAP_PX = 24; // a tap this close to a unit (in screen px) picks it, however small its base

const ui = {
  state: null,          // last /api/state
  key: "",              // what the map was drawn from (skip redraws of the same thing)
  selected: [],         // up to two unit ids: [first, second]
  ap: 3,
  whole: false,         // map shows the whole table (else: fitted to what stands on it)
};

const $ = (id) => document.getElementById(id);

// What the table's rule system draws and answers comes from its own script (static/rules/<system>.js,
// loaded after this one), through these hooks: drawKey() -> what of its own the map shows (redrawn when
// it changes); drawUnder(svg) / drawOver(svg) on the map, under the blocks / under the units;
// decorate(g, u, r) a unit's mark; unitLabel(u); hint(n) for n units selected; select(ids) after a tap;
// moves() the moves button; maxAp(); reset() when the selection is cleared; renderGame(game) after
// every poll; render() likewise.
const RULES = {};
function hook(name, ...args) { return RULES[name] ? RULES[name](...args) : undefined; }

function el(tag, attrs = {}, text) {
  const node = tag.startsWith("svg:") ? document.createElementNS(SVG_NS, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

async function api(path, options = {}) {
  const init = { credentials: "same-origin", headers: {} };
  if (options.method && options.method !== "GET") {
    init.method = options.method;
    init.headers["X-Companion-Token"] = CSRF;
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(options.body || {});
  }
  const response = await fetch(path, init);
  let data = null;
  try { data = await response.json(); } catch (e) { data = { error: `HTTP ${response.status}` }; }
  if (!response.ok) {
    const error = new Error(data && data.error ? data.error : `HTTP ${response.status}`);
    error.status = response.status;
    throw error;
  }
  return data;
}

function showBanner(text) {
  const banner = $("banner");
  banner.hidden = !text;
  banner.textContent = text || "";
}

function flash(text) { showBanner(text); setTimeout(() => { if ($("banner").textContent === text) refreshBanner(); }, 4000); }

// --- polling --------------------------------------------------------------------------------------

async function poll() {
  try {
    const state = await api("/api/state");
    ui.state = state;
    render();
  } catch (e) {
    $("status").textContent = "server unreachable";
    $("status").className = "pill bad";
    showBanner(e.status === 401 ? "Not joined: scan the QR code on the host screen." : `Cannot reach the companion (${e.message}); retrying…`);
  }
}

function schedule() {
  setTimeout(async () => {
    if (document.visibilityState === "visible") await poll();
    schedule();
  }, POLL_MS);
}

function refreshBanner() {
  const s = ui.state;
  if (!s) return;
  const cam = s.snapshot.camera;
  if (!cam.ok) {
    const age = s.age_s === null ? "no state yet" : `last state ${Math.round(s.age_s)} s old`;
    showBanner(`Camera: ${cam.message || cam.state}. ${age}.`);
  } else if (!s.snapshot.registered_now) {
    showBanner(`Table not registered in the current frame (${s.snapshot.reason || "no anchor seen"}): units stay where they were last seen.`);
  } else {
    showBanner("");
  }
}

// What the camera says about its own view (an overexposed paper, heights not to be trusted, a
// mini off the table): listed under the map, replaced only when it changes.
function renderNotes(warnings) {
  const key = JSON.stringify(warnings || []);
  if (key === ui.notesKey) return;
  ui.notesKey = key;
  $("notes").hidden = !(warnings && warnings.length);
  $("notes-list").replaceChildren(...(warnings || []).map((w) => el("li", {}, w)));
}

function render() {
  const s = ui.state;
  const cam = s.snapshot.camera;
  $("status").textContent = cam.ok ? (s.snapshot.registered_now ? `frame ${s.frame}` : "not registered") : cam.state;
  $("status").className = "pill " + (cam.ok && s.snapshot.registered_now ? "ok" : "bad");
  refreshBanner();
  renderNotes(s.warnings);
  // Redrawn only when something drawn changed (not the frame counter, nor when each unit was last
  // seen): a map replaced under a finger at every frame loses taps and a phone's battery.
  const drawn = (k, v) => (k === "last_seen_frame" ? undefined : v);
  const key = JSON.stringify([s.units, s.blocks, s.objects, s.game && s.game.version, ui.selected,
    hook("drawKey")], drawn);
  if (key !== ui.key) {
    ui.key = key;
    drawMap();
    renderUnits();
  }
  hook("renderGame", s.game);
  hook("render");
}

// --- the map --------------------------------------------------------------------------------------

function unitById(id) { return ui.state && ui.state.units.find((u) => u.id === id); }
function Y(y) { return ui.state.table.depth_mm - y; }
function pts(poly) { return poly.map(([x, y]) => `${x.toFixed(1)},${Y(y).toFixed(1)}`).join(" "); }

function drawMap() {
  const s = ui.state;
  const svg = $("map");
  const w = s.table.width_mm, d = s.table.depth_mm;
  svg.setAttribute("viewBox", viewBox(s));
  svg.replaceChildren();
  svg.append(el("svg:rect", { x: 0, y: 0, width: w, height: d, fill: "#4f7d48", stroke: "#ffd54f", "stroke-width": 4 }));
  hook("drawUnder", svg);
  for (const b of s.blocks) {
    const look = { points: pts(b.footprint_mm), fill: blockColour(b.color), stroke: "#000", "stroke-width": 1.5, class: "block" };
    // a block hidden whole under a standing mini: drawn dashed, its extent is the camera's guess
    if (b.hidden_under != null) Object.assign(look, { "stroke-dasharray": "6 4", "fill-opacity": 0.5 });
    svg.append(el("svg:polygon", look));
  }
  for (const o of s.objects) {
    const owner = o.controller ? colourOf(o.controller) : "#fff";
    svg.append(el("svg:circle", { cx: o.x_mm, cy: Y(o.y_mm), r: o.radius_mm, fill: "none", stroke: owner, "stroke-width": 3, "stroke-dasharray": "12 8" }));
  }
  for (const squad of s.squads) drawSquad(svg, squad);
  hook("drawOver", svg);
  for (const u of s.units) drawUnit(svg, u);
  if (ui.selected.length === 2) {
    const a = unitById(ui.selected[0]), b = unitById(ui.selected[1]);
    if (a && b) svg.append(el("svg:line", { x1: a.x_mm, y1: Y(a.y_mm), x2: b.x_mm, y2: Y(b.y_mm), stroke: "#fff", "stroke-width": 3, "stroke-dasharray": "10 6" }));
  }
  drawLabels(svg, s);
}

// --- labels ---------------------------------------------------------------------------------------

// Every label goes where it overlaps nothing placed before it: the unit ids first (what players
// tap by), then the objects' names, then the blocks' heights (in mm, smaller and in italics, so a
// height never reads as a unit id). Each tries below, above, right and left of what it names and
// the diagonals; when all are taken, the least covered. Each text is measured as drawn.
const LABEL_TRIES = [[0, 1], [0, -1], [1, 0], [-1, 0], [1, 1], [-1, 1], [1, -1], [-1, -1]];

function drawLabels(svg, s) {
  const vb = svg.viewBox.baseVal, view = [vb.x, vb.y, vb.x + vb.width, vb.y + vb.height];
  const taken = [];  // [x0, y0, x1, y1, weight] in map coordinates (y down)
  for (const u of s.units) {
    const r = u.base_mm / 2, [tx, ty] = headingTip(u);
    taken.push([u.x_mm - r, Y(u.y_mm) - r, u.x_mm + r, Y(u.y_mm) + r, 1]);
    taken.push([tx - 4, Y(ty) - 4, tx + 4, Y(ty) + 4, 1]);
  }
  for (const b of s.blocks) {  // a label may cover a block, though not where it can go elsewhere
    const xs = b.footprint_mm.map((p) => p[0]), ys = b.footprint_mm.map((p) => Y(p[1]));
    taken.push([Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys), 0.3]);
  }
  // Around its thing first, then a ring further out; a label that only fits over another label or
  // a unit is dropped when it can be (a block's height: its block's detail says it too).
  const place = (x, y, gap, text, kind, attrs = {}, droppable = false) => {
    const label = el("svg:text", { x, y, "text-anchor": "middle", "dominant-baseline": "central", class: `label-${kind}`, ...attrs }, text);
    svg.append(label);
    const size = label.getBBox(), w = size.width + 4, hgt = size.height + 2;
    let best = null;
    for (const ring of [0, 1, 2]) {
      for (const [dx, dy] of LABEL_TRIES) {
        const cx = x + dx * (gap + w / 2 + ring * w / 2), cy = y + dy * (gap + hgt / 2 + ring * hgt);
        const box = [cx - w / 2, cy - hgt / 2, cx + w / 2, cy + hgt / 2];
        const outside = area(box) - overlap(box, view);  // cut off at the map's edge: as bad as covering a label
        const cover = taken.reduce((sum, t) => sum + t[4] * overlap(box, t), outside);
        const onLabels = taken.reduce((sum, t) => sum + (t[4] === 1 ? overlap(box, t) : 0), outside);
        if (!best || cover < best.cover - 1e-6) best = { box, cx, cy, cover, onLabels };
        if (cover === 0) break;
      }
      if (best.cover === 0) break;
    }
    if (droppable && best.onLabels > 0) { label.remove(); return; }
    taken.push([...best.box, 1]);
    label.setAttribute("x", best.cx.toFixed(1));
    label.setAttribute("y", best.cy.toFixed(1));
  };
  for (const u of s.units) place(u.x_mm, Y(u.y_mm), u.base_mm / 2 + 4, unitLabel(u), "unit", { "data-unit": u.id });
  for (const o of s.objects) place(o.x_mm, Y(o.y_mm), o.radius_mm + 4, `${o.name || o.kind}${o.controller ? ": " + o.controller : ""}`, "object");
  for (const b of s.blocks) {
    const c = centroid(b.footprint_mm);
    const ys = b.footprint_mm.map((p) => p[1]);
    place(c[0], Y(c[1]), (Math.max(...ys) - Math.min(...ys)) / 2 + 2, `${Math.round(b.height_mm)} mm`, "height", {}, true);
  }
}

function area(a) { return (a[2] - a[0]) * (a[3] - a[1]); }

function overlap(a, b) {
  return Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0])) * Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
}

function unitLabel(u) { return (u.status === "skeleton" ? "☠" : "") + u.id + (hook("unitLabel", u) || ""); }

// The table is wide and minis are small: by default the map fits what stands on the table (with a
// margin), keeping the table's aspect so the map does not jump in height; "Whole table" shows it all.
function viewBox(s) {
  const w = s.table.width_mm, d = s.table.depth_mm;
  const things = s.units.map((u) => [u.x_mm, u.y_mm]).concat(s.objects.map((o) => [o.x_mm, o.y_mm]))
    .concat(s.blocks.flatMap((b) => b.footprint_mm));
  if (ui.whole || !things.length) return `-10 -10 ${w + 20} ${d + 20}`;
  const margin = 90;
  let x0 = Math.min(...things.map((p) => p[0])) - margin, x1 = Math.max(...things.map((p) => p[0])) + margin;
  let y0 = Math.min(...things.map((p) => p[1])) - margin, y1 = Math.max(...things.map((p) => p[1])) + margin;
  let vw = x1 - x0, vh = y1 - y0;
  if (vw / vh < w / d) { const grow = vh * w / d - vw; x0 -= grow / 2; vw += grow; } else { const grow = vw * d / w - vh; y0 -= grow / 2; vh += grow; }
  if (vw >= w + 20) return `-10 -10 ${w + 20} ${d + 20}`;
  x0 = Math.min(Math.max(x0, -10), w + 10 - vw);
  y0 = Math.min(Math.max(y0, -10), d + 10 - vh);
  return `${x0.toFixed(1)} ${(d - y0 - vh).toFixed(1)} ${vw.toFixed(1)} ${vh.toFixed(1)}`;
}

$("zoom").addEventListener("click", () => {
  ui.whole = !ui.whole;
  $("zoom").textContent = ui.whole ? "Fit units" : "Whole table";
  ui.key = "";
  render();
});

function drawUnit(svg, u) {
  const r = u.base_mm / 2;
  const g = el("svg:g", { class: "unit", "data-id": u.id });
  hook("decorate", g, u, r);
  if (ui.selected.includes(u.id)) g.append(el("svg:circle", { cx: u.x_mm, cy: Y(u.y_mm), r: r + 9, fill: "none", stroke: "#fff", "stroke-width": 5 }));
  const body = { cx: u.x_mm, cy: Y(u.y_mm), r, fill: u.colour, stroke: "#000", "stroke-width": 2 };
  if (u.seen !== "seen") { body["fill-opacity"] = 0.45; body["stroke-dasharray"] = "4 3"; }
  if (u.status === "gone") body.fill = "#777";
  g.append(el("svg:circle", body));
  const tip = headingTip(u);
  g.append(el("svg:line", { x1: u.x_mm, y1: Y(u.y_mm), x2: tip[0], y2: Y(tip[1]), stroke: "#fff", "stroke-width": 4, "stroke-linecap": "round" }));
  svg.append(g);
}

// Where a unit's facing line ends (table mm): 14 mm beyond its base.
function headingTip(u) {
  const h = u.heading_deg * Math.PI / 180, reach = u.base_mm / 2 + 14;
  return [u.x_mm + reach * Math.cos(h), u.y_mm + reach * Math.sin(h)];
}

function drawSquad(svg, ids) {
  const members = ids.map(unitById).filter(Boolean);
  if (members.length < 2) return;
  const hull = convexHull(members.map((u) => [u.x_mm, u.y_mm]));
  const pad = Math.max(...members.map((u) => u.base_mm)) + 12;
  // A fat round-joined stroke around the hull outlines the squad without computing an offset curve.
  svg.append(el("svg:polygon", { points: pts(hull), fill: "#ffffff22", stroke: "#ffffff33", "stroke-width": pad, "stroke-linejoin": "round", class: "squad" }));
}

function centroid(poly) {
  const n = poly.length;
  return [poly.reduce((a, p) => a + p[0], 0) / n, poly.reduce((a, p) => a + p[1], 0) / n];
}

function convexHull(points) {
  const p = [...points].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  if (p.length < 3) return p;
  const cross = (o, a, b) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const lower = [], upper = [];
  for (const q of p) { while (lower.length >= 2 && cross(lower[lower.length - 2], lower[lower.length - 1], q) <= 0) lower.pop(); lower.push(q); }
  for (const q of [...p].reverse()) { while (upper.length >= 2 && cross(upper[upper.length - 2], upper[upper.length - 1], q) <= 0) upper.pop(); upper.push(q); }
  return lower.slice(0, -1).concat(upper.slice(0, -1));
}

const LEGO = { red: "#c91a09", blue: "#0055bf", yellow: "#f2cd37", green: "#237841", white: "#f2f3f2", black: "#1b2a34", gray: "#a0a5a9", orange: "#fe8a18" };
function blockColour(name) { return LEGO[name] || "#b0a890"; }
function colourOf(player) { const p = ui.state.players.find((q) => q.name === player); return p ? p.colour : "#888"; }

// --- taps -----------------------------------------------------------------------------------------

$("map").addEventListener("click", (event) => {
  if (!ui.state) return;
  const svg = $("map");
  const box = svg.getBoundingClientRect();
  const vb = svg.viewBox.baseVal;
  const scale = vb.width / box.width; // mm per screen px
  const x = vb.x + (event.clientX - box.left) * scale;
  const y = ui.state.table.depth_mm - (vb.y + (event.clientY - box.top) * scale);
  let best = null, bestGap = Infinity;
  for (const u of ui.state.units) {
    const gap = Math.hypot(u.x_mm - x, u.y_mm - y) - u.base_mm / 2;
    if (gap < bestGap) { best = u; bestGap = gap; }
  }
  if (best && bestGap <= TAP_PX * scale) tapUnit(best.id);
});

function tapUnit(id) {
  if (ui.selected.length === 1 && ui.selected[0] === id) ui.selected = [];
  else if (ui.selected.length === 1) ui.selected = [ui.selected[0], id];
  else ui.selected = [id];
  hook("reset");
  ui.key = "";
  updateSelection();
  if (ui.state) render();
}

$("clear").addEventListener("click", () => { ui.selected = []; hook("reset"); ui.key = ""; updateSelection(); render(); });

async function updateSelection() {
  const card = $("selection");
  $("measure-out").hidden = true;
  $("pair-verdict").replaceChildren();
  $("enemies").replaceChildren();
  $("enemies-title").hidden = true;
  $("moves-out").textContent = "";
  if (!ui.selected.length) { card.hidden = true; $("hint").textContent = "Tap a unit; tap a second one to measure between them."; return; }
  card.hidden = false;
  const first = unitById(ui.selected[0]);
  $("sel-title").textContent = first ? `${first.name} (${first.player}${first.status === "skeleton" ? ", skeleton" : ""})` : `unit ${ui.selected[0]}`;
  $("moves-box").hidden = !RULES.moves;
  $("hint").textContent = hook("hint", ui.selected.length) || (ui.selected.length === 1
    ? "Tap a second unit to measure to it." : "Tap the first unit again to start over.");
  $("sel-range").textContent = first ? `${first.class || "unit"} at (${Math.round(first.x_mm)}, ${Math.round(first.y_mm)}) mm` : "";
  try {
    if (RULES.select) await RULES.select(ui.selected);
    else if (ui.selected.length === 2) await showMeasure();
  } catch (e) {
    flash(e.message);
  }
}

// Three odds as one bar, with a legend in words under it (a phone shows no tooltips).
function oddsBars(win, tie, lose, labels, extra = "") {
  const parts = [["win", win, labels[0]], ["tie", tie, labels[1]], ["lose", lose, labels[2]]];
  const box = el("div", { class: "odds" });
  const bars = el("div", { class: "bars", role: "img", "aria-label": parts.map(([, p, l]) => `${l} ${pct(p)}`).join(", ") });
  for (const [cls, p, label] of parts) {
    const span = el("span", { class: cls, title: `${label} ${pct(p)}` }, p >= 0.12 ? pct(p) : "");
    span.style.width = `${(p * 100).toFixed(2)}%`;
    bars.append(span);
  }
  const legend = el("p", { class: "hint legend" });
  for (const [cls, p, label] of parts) {
    legend.append(el("span", { class: `key ${cls}` }), `${label} ${pct(p)}  `);
  }
  if (extra) legend.append(extra);
  box.append(bars, legend);
  return box;
}

function pct(p) { return `${(p * 100).toFixed(p < 0.1 ? 1 : 0)}%`; }

// The two selected units' distance, base edge to base edge, in the first one's owner's hand.
async function showMeasure() {
  const [a, b] = ui.selected;
  const ua = unitById(a), ub = unitById(b);
  const m = await api(`/api/measure?from=${a}&to=${b}`);
  const out = $("measure-out");
  out.hidden = false;
  out.textContent = `${ua ? ua.name : a} → ${ub ? ub.name : b}: ${m.text} (${Math.round(m.edge_mm)} mm, ${m.player}'s hand)`;
  ui.key = "";
  render();
}

$("moves").addEventListener("click", async () => {
  if (!ui.selected.length) return;
  try { await hook("moves"); } catch (e) { flash(e.message); }
});
$("ap-down").addEventListener("click", () => { ui.ap = Math.max(0, ui.ap - 1); $("ap").textContent = ui.ap; });
$("ap-up").addEventListener("click", () => { ui.ap = Math.min(hook("maxAp") || 6, ui.ap + 1); $("ap").textContent = ui.ap; });

// --- the units list -------------------------------------------------------------------------------

function renderUnits() {
  const list = $("units");
  list.replaceChildren();
  for (const u of ui.state.units) {
    const b = el("button", { type: "button", "data-id": u.id, class: ui.selected.includes(u.id) ? "selected" : "" });
    const dot = el("span", { class: "dot" });
    dot.style.background = u.colour;
    b.append(dot, el("span", {}, `${u.name}${u.status === "skeleton" ? " ☠" : ""}${u.status === "gone" ? " (out)" : ""}${u.seen !== "seen" ? ` (${u.seen})` : ""}`));
    b.addEventListener("click", () => tapUnit(u.id));
    const li = el("li");
    li.append(b);
    list.append(li);
  }
}

// The first poll waits for the rule system's script (loaded after this one) to fill the hooks.
window.addEventListener("load", () => poll().then(schedule));
