// The phone page: polls /api/state, draws the table as SVG, asks the rules API about what is tapped.
// Plain JS, no build step. Table frame: mm, x right, y away from the player at the y=0 edge.
"use strict";

const CSRF = document.querySelector('meta[name="csrf"]').content;
const RULESET = document.querySelector('meta[name="ruleset"]').content;
const SVG_NS = "http://www.w3.org/2000/svg";
const POLL_MS = 500;
const TAP_PX = 24; // a tap this close to a unit (in screen px) picks it, however small its base

const ui = {
  state: null,          // last /api/state
  key: "",              // what the map was drawn from (skip redraws of the same thing)
  selected: [],         // up to two unit ids: [first, second]
  ap: 3,
  moves: null,          // /api/moves answer for the first selection
  reach: null,          // /api/contienda/reach answer
  grid: null,           // /api/contienda/grid answer
  template: null,       // /api/infinity/template answer
  mod: 0,
  whole: false,         // map shows the whole table (else: fitted to what stands on it)
  flanked: new Set(),   // Contienda: units with enemies in two opposite hexes
  cellsKey: "",
};

const $ = (id) => document.getElementById(id);

// What a rule system's own script (static/rules/<system>.js, loaded after this one) adds to the page:
// drawUnder(svg) / drawOver(svg) on the map, unitLabel(u), select(ids) -> true when it answered the
// selection itself, renderGame(game) -> true when it drew the game, render() after every poll.
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

function render() {
  const s = ui.state;
  const cam = s.snapshot.camera;
  $("status").textContent = cam.ok ? (s.snapshot.registered_now ? `frame ${s.frame}` : "not registered") : cam.state;
  $("status").className = "pill " + (cam.ok && s.snapshot.registered_now ? "ok" : "bad");
  refreshBanner();
  // Redrawn only when something drawn changed (not the frame counter, nor when each unit was last
  // seen): a map replaced under a finger at every frame loses taps and a phone's battery.
  const drawn = (k, v) => (k === "last_seen_frame" ? undefined : v);
  const key = JSON.stringify([s.units, s.blocks, s.objects, s.game && s.game.version, ui.selected,
    ui.moves, ui.reach, ui.template, ui.grid ? 1 : 0], drawn);
  if (key !== ui.key) {
    ui.key = key;
    drawMap();
    renderUnits();
  }
  renderGame();
  if (RULESET === "contienda") updateFlanks();
  hook("render");
}

async function updateFlanks() {
  const key = JSON.stringify(ui.state.units.map((u) => [u.id, u.x_mm, u.y_mm]));
  if (key === ui.cellsKey) return;
  ui.cellsKey = key;
  try {
    const cells = await api("/api/contienda/cells");
    ui.flanked = new Set(cells.flanked);
    ui.key = "";
    render();
  } catch (e) { flash(e.message); }
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
  if (ui.grid) {
    const g = el("svg:g", { fill: "none", stroke: "#ffffff40", "stroke-width": 1.5 });
    for (const [, , corners] of ui.grid.hexes) g.append(el("svg:polygon", { points: pts(corners) }));
    svg.append(g);
  }
  if (ui.moves) {
    const colours = ["#ffffff66", "#80deea66", "#4dd0e166", "#26c6da66", "#00acc166", "#00838f66", "#006064aa"];
    for (const region of [...ui.moves.regions].reverse()) {
      for (const poly of region.polygons) {
        svg.append(el("svg:polygon", { points: pts(poly), fill: colours[Math.min(region.ap, 6)], stroke: "none", class: "move-region" }));
      }
    }
  }
  hook("drawUnder", svg);
  if (ui.reach && ui.grid) drawReach(svg);
  for (const b of s.blocks) {
    svg.append(el("svg:polygon", { points: pts(b.footprint_mm), fill: blockColour(b.color), stroke: "#000", "stroke-width": 1.5, class: "block" }));
    const c = centroid(b.footprint_mm);
    svg.append(el("svg:text", { x: c[0], y: Y(c[1]) + 7, "text-anchor": "middle" }, `${Math.round(b.height_mm)}`));
  }
  for (const o of s.objects) {
    const owner = o.controller ? colourOf(o.controller) : "#fff";
    svg.append(el("svg:circle", { cx: o.x_mm, cy: Y(o.y_mm), r: o.radius_mm, fill: "none", stroke: owner, "stroke-width": 3, "stroke-dasharray": "12 8" }));
    svg.append(el("svg:text", { x: o.x_mm, y: Y(o.y_mm) - o.radius_mm - 8, "text-anchor": "middle" }, `${o.name || o.kind}${o.controller ? ": " + o.controller : ""}`));
  }
  for (const squad of s.squads) drawSquad(svg, squad);
  if (ui.template) drawTemplate(svg);
  const affected = new Set(ui.template ? ui.template.affected : []);
  for (const u of s.units) drawUnit(svg, u, affected.has(u.id));
  hook("drawOver", svg);
  if (ui.selected.length === 2) {
    const a = unitById(ui.selected[0]), b = unitById(ui.selected[1]);
    if (a && b) svg.append(el("svg:line", { x1: a.x_mm, y1: Y(a.y_mm), x2: b.x_mm, y2: Y(b.y_mm), stroke: "#fff", "stroke-width": 3, "stroke-dasharray": "10 6" }));
  }
}

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

function drawUnit(svg, u, affected) {
  const r = u.base_mm / 2;
  const g = el("svg:g", { class: "unit", "data-id": u.id });
  const selected = ui.selected.includes(u.id);
  if (ui.flanked.has(u.id)) g.append(el("svg:circle", { cx: u.x_mm, cy: Y(u.y_mm), r: r + 16, fill: "none", stroke: "#ffab00", "stroke-width": 3, "stroke-dasharray": "6 6", class: "flank" }));
  if (selected || affected) g.append(el("svg:circle", { cx: u.x_mm, cy: Y(u.y_mm), r: r + 9, fill: "none", stroke: affected ? "#ff1744" : "#fff", "stroke-width": 5 }));
  const body = { cx: u.x_mm, cy: Y(u.y_mm), r, fill: u.colour, stroke: "#000", "stroke-width": 2 };
  if (u.seen !== "seen") { body["fill-opacity"] = 0.45; body["stroke-dasharray"] = "4 3"; }
  if (u.status === "gone") body.fill = "#777";
  g.append(el("svg:circle", body));
  const h = u.heading_deg * Math.PI / 180;
  const tip = [u.x_mm + (r + 14) * Math.cos(h), u.y_mm + (r + 14) * Math.sin(h)];
  g.append(el("svg:line", { x1: u.x_mm, y1: Y(u.y_mm), x2: tip[0], y2: Y(tip[1]), stroke: "#fff", "stroke-width": 4, "stroke-linecap": "round" }));
  const label = (u.status === "skeleton" ? "☠" : "") + u.id + (hook("unitLabel", u) || "");
  g.append(el("svg:text", { x: u.x_mm, y: Y(u.y_mm) + r + 30, "text-anchor": "middle" }, label));
  svg.append(g);
}

function drawSquad(svg, ids) {
  const members = ids.map(unitById).filter(Boolean);
  if (members.length < 2) return;
  const hull = convexHull(members.map((u) => [u.x_mm, u.y_mm]));
  const pad = Math.max(...members.map((u) => u.base_mm)) + 12;
  // A fat round-joined stroke around the hull outlines the squad without computing an offset curve.
  svg.append(el("svg:polygon", { points: pts(hull), fill: "#ffffff22", stroke: "#ffffff33", "stroke-width": pad, "stroke-linejoin": "round", class: "squad" }));
}

function drawReach(svg) {
  const costColour = { 1: "#81c784aa", 2: "#ffd54faa", 3: "#ff8a65aa" };
  const byHex = new Map(ui.grid.hexes.map(([q, r, c]) => [`${q},${r}`, c]));
  const provoking = new Set(ui.reach.provoking.map(([q, r]) => `${q},${r}`));
  for (const [q, r, cost] of ui.reach.hexes) {
    const corners = byHex.get(`${q},${r}`);
    if (!corners) continue;
    const p = provoking.has(`${q},${r}`);
    svg.append(el("svg:polygon", { points: pts(corners), fill: costColour[cost] || "#e57373aa", stroke: p ? "#d50000" : "none", "stroke-width": p ? 3 : 0, class: "reach-hex" }));
  }
  for (const lane of ui.reach.charges) {
    const start = unitById(ui.selected[0]);
    const end = hexCentre(lane.path[lane.path.length - 1]);
    if (start && end) svg.append(el("svg:line", { x1: start.x_mm, y1: Y(start.y_mm), x2: end[0], y2: Y(end[1]), stroke: "#ff1744", "stroke-width": 5, class: "charge" }));
  }
}

function drawTemplate(svg) {
  const t = ui.template;
  svg.append(el("svg:circle", { cx: t.centre_mm[0], cy: Y(t.centre_mm[1]), r: t.radius_mm, fill: "#ff174433", stroke: "#ff1744", "stroke-width": 3, class: "template" }));
}

function hexCentre([q, r]) {
  if (!ui.grid) return null;
  const w = ui.grid.size_mm, [ox, oy] = ui.grid.origin_mm;
  return [ox + w * (q + r / 2), oy + w * Math.sqrt(3) / 2 * r];
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
  ui.moves = null; ui.reach = null; ui.template = null;
  ui.key = "";
  updateSelection();
  if (ui.state) render();
}

$("clear").addEventListener("click", () => { ui.selected = []; ui.moves = ui.reach = ui.template = null; ui.key = ""; updateSelection(); render(); });

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
  const g = ui.state && ui.state.game;
  if (first && g && g.exists && g.turn === first.player && g.dice_left.black !== undefined) {
    ui.ap = Math.min(g.dice_left.black, 6); // the moves shown are for the AP its player has left
    $("ap").textContent = ui.ap;
  }
  $("sel-title").textContent = first ? `${first.name} (${first.player}${first.status === "skeleton" ? ", skeleton" : ""})` : `unit ${ui.selected[0]}`;
  $("moves-box").hidden = RULESET !== "knight" && RULESET !== "contienda";
  $("hint").textContent = ui.selected.length === 1
    ? (RULESET === "infinity" ? "Now tap the Main Target to place the template." : "Tap a second unit to measure to it.")
    : "Tap the first unit again to start over.";
  try {
    if (await hook("select", ui.selected)) return;
    if (RULESET === "knight") {
      const detail = await api(`/api/units/${ui.selected[0]}`);
      $("sel-range").textContent = detail.range ? `${detail.class}: range ${detail.range.text} (${Math.round(detail.range.mm)} mm, ${detail.acting_player}'s hand)` : `${detail.class}: melee only`;
      if (ui.selected.length === 1) showEnemies(detail.enemies);
    } else {
      $("sel-range").textContent = first ? `${first.class || "unit"} at (${Math.round(first.x_mm)}, ${Math.round(first.y_mm)}) mm` : "";
    }
    if (ui.selected.length === 2) await showPair();
    if (RULESET === "contienda" && ui.selected.length === 1) await showReach();
  } catch (e) {
    flash(e.message);
  }
}

function showEnemies(enemies) {
  const list = $("enemies");
  $("enemies-title").hidden = !enemies.length;
  for (const v of enemies) list.append(verdictItem(v));
}

function verdictItem(v) {
  const li = el("li", { class: "verdict", "data-target": v.target });
  li.append(el("div", { class: "name" }, `${v.name} — ${v.distance.text}`));
  const chips = el("div");
  for (const c of v.chips) chips.append(el("span", { class: `chip ${c.kind}` }, c.text));
  li.append(chips);
  if (v.legal) li.append(oddsBars(v.odds.attacker_wins, v.odds.tie, v.odds.defender_wins, ["attacker wins", "tie", "defender wins"]));
  const reasons = el("ul", { class: "reasons" });
  for (const r of v.reasons.concat(v.cover.blocks.map((b) => b.why))) reasons.append(el("li", {}, r));
  const mods = v.attack_modifiers.map((m) => `attack ${m.value >= 0 ? "+" : ""}${m.value} ${m.name} (${m.why})`)
    .concat(v.defence_modifiers.map((m) => `defence ${m.value >= 0 ? "+" : ""}${m.value} ${m.name} (${m.why})`));
  for (const m of mods) reasons.append(el("li", {}, m));
  li.append(reasons);
  return li;
}

function oddsBars(win, tie, lose, labels) {
  const bars = el("div", { class: "bars", role: "img", "aria-label": `${labels[0]} ${pct(win)}, ${labels[1]} ${pct(tie)}, ${labels[2]} ${pct(lose)}` });
  for (const [cls, p, label] of [["win", win, labels[0]], ["tie", tie, labels[1]], ["lose", lose, labels[2]]]) {
    const span = el("span", { class: cls, title: `${label} ${pct(p)}` }, p >= 0.12 ? pct(p) : "");
    span.style.width = `${(p * 100).toFixed(2)}%`;
    bars.append(span);
  }
  return bars;
}

function pct(p) { return `${(p * 100).toFixed(p < 0.1 ? 1 : 0)}%`; }

async function showPair() {
  const [a, b] = ui.selected;
  const ua = unitById(a), ub = unitById(b);
  if (RULESET === "infinity") {
    ui.template = await api(`/api/infinity/template?attacker=${a}&target=${b}`);
    showTemplate();
  } else {
    const m = await api(`/api/measure?from=${a}&to=${b}`);
    const out = $("measure-out");
    out.hidden = false;
    out.textContent = `${ua ? ua.name : a} → ${ub ? ub.name : b}: ${m.text} (${Math.round(m.edge_mm)} mm, ${m.player}'s hand)`;
    if (RULESET === "knight" && ua && ub && ua.player !== ub.player) {
      const v = await api(`/api/attack?attacker=${a}&target=${b}`);
      const list = el("ul", { class: "verdicts" });
      list.append(verdictItem(v));
      $("pair-verdict").replaceChildren(list);
    }
  }
  ui.key = "";
  render();
}

function showTemplate() {
  const t = ui.template;
  const box = $("pair-verdict");
  box.replaceChildren();
  box.append(el("p", { class: "measure" }, `Template on ${t.target}: affects ${t.affected.length ? t.affected.join(", ") : "nobody"}`));
  if (t.cancelled_by.length) box.append(el("p", { class: "chip bad" }, `cancelled: own trooper(s) ${t.cancelled_by.join(", ")} under the template`));
  box.append(el("p", { class: `chip ${t.line_of_fire ? "good" : "bad"}` }, t.line_of_fire_why));
  const list = el("ul", { class: "verdicts" });
  for (const [id, o] of Object.entries(t.odds)) {
    const u = unitById(Number(id));
    const li = el("li", { class: "verdict", "data-target": id });
    li.append(el("div", { class: "name" }, `${u ? u.name : id}: ${o.reaction}`));
    li.append(oddsBars(o.a_wins, o.none, o.b_wins, ["hit", "nothing", "it wins"]));
    list.append(li);
  }
  box.append(list);
  if (Object.keys(t.odds).length) box.append(el("p", {}, `expected troopers hit: ${t.expected_hits.toFixed(2)}`));
}

async function showReach() {
  if (!ui.grid) ui.grid = await api("/api/contienda/grid");
  ui.reach = await api(`/api/contienda/reach?unit=${ui.selected[0]}&ap=${Math.min(ui.ap, 3)}`);
  const flank = await api("/api/contienda/cells");
  const cell = flank.cells[String(ui.selected[0])];
  $("moves-out").textContent = `hex (${cell}); ${ui.reach.hexes.length} hexes in reach with ${Math.min(ui.ap, 3)} AP` +
    (ui.reach.provoking.length ? `, ${ui.reach.provoking.length} only by provoking (red edge)` : "") +
    `; ${ui.reach.charges.length} charge lane(s)` + (flank.flanked.length ? `; flanked: ${flank.flanked.join(", ")}` : "");
  ui.key = "";
  render();
}

async function showMoves() {
  if (!ui.selected.length) return;
  try {
    if (RULESET === "contienda") return await showReach();
    ui.moves = await api(`/api/moves?unit=${ui.selected[0]}&ap=${ui.ap}`);
    const best = ui.moves.regions[ui.moves.regions.length - 1];
    $("moves-out").textContent = best ? `${Math.round(best.area_mm2 / 100)} cm² of table within ${ui.ap} AP (lighter: fewer AP)` : "cannot move";
    ui.key = "";
    render();
  } catch (e) { flash(e.message); }
}

$("moves").addEventListener("click", showMoves);
$("ap-down").addEventListener("click", () => { ui.ap = Math.max(0, ui.ap - 1); $("ap").textContent = ui.ap; });
$("ap-up").addEventListener("click", () => { ui.ap = Math.min(RULESET === "contienda" ? 3 : 6, ui.ap + 1); $("ap").textContent = ui.ap; });

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

// --- the game (Knight: turns, rounds, siege) --------------------------------------------------------

let diceFilled = false;
function fillDice() {
  if (diceFilled) return;
  for (const die of ["black", "red", "white"]) {
    const select = $(`die-${die}`);
    for (let v = 1; v <= 6; v++) select.append(el("option", { value: v }, `${v}`));
  }
  diceFilled = true;
}

function renderGame() {
  const g = ui.state.game;
  const card = $("game");
  if (hook("renderGame", g)) { card.hidden = true; return; }
  if (!g || !g.available) { card.hidden = true; $("round-chip").hidden = true; return; }
  card.hidden = false;
  fillDice();
  $("new-game").hidden = g.exists;
  if (!g.exists) {
    if (!$("mode").options.length) {
      for (const m of g.modes) $("mode").append(el("option", { value: m }, m));
      for (const p of g.players) $("holder").append(el("option", { value: p }, p));
      $("mode").value = "siege";
    }
    $("game-line").textContent = "No game yet.";
    for (const id of ["end-turn", "end-round", "undo"]) $(id).disabled = true;
    $("roll").hidden = true;
    $("round-chip").hidden = true;
    return;
  }
  const roundText = g.siege_rounds ? `Round ${g.round} of ${g.siege_rounds}` : `Round ${g.round}`;
  $("game-title").textContent = `${g.mode[0].toUpperCase()}${g.mode.slice(1)}`;
  $("round-chip").hidden = false;
  $("round-chip").textContent = roundText;
  const dice = g.turn ? Object.entries(g.dice_left).map(([k, v]) => `${k} ${v}`).join(", ") : "";
  $("game-line").textContent = `${roundText}. ` + (g.turn ? `${g.turn}'s turn (dice left: ${dice}).` : `${g.next} to roll.`);
  $("winner").hidden = !g.winner;
  $("winner").textContent = g.winner ? `Winner: ${g.winner} (${g.win_reason})` : "";
  $("roll").hidden = !!g.turn || !!g.winner;
  $("roll-who").textContent = `${g.next}'s roll:`;
  $("end-turn").disabled = !g.turn;
  $("end-round").disabled = !g.turn;
  $("undo").disabled = !g.log.length;
  const control = Object.entries(g.control || {}).map(([k, v]) => `${k}: ${v || "nobody"}`).join("; ");
  $("control").textContent = control ? `Held now (camera): ${control}` : "";
  const log = $("log");
  const lines = g.log.slice(-12).reverse();
  if (log.dataset.key !== JSON.stringify(lines)) {
    log.dataset.key = JSON.stringify(lines);
    log.replaceChildren(...lines.map((line) => el("li", {}, line)));
  }
}

async function gameAction(path, body) {
  try {
    const g = await api(path, { method: "POST", body });
    if (ui.state) { ui.state.game = g; renderGame(); }
  } catch (e) { flash(e.message); }
}

$("new-game").addEventListener("submit", (event) => {
  event.preventDefault();
  gameAction("/api/game", { mode: $("mode").value, castle_holder: $("mode").value === "siege" ? $("holder").value : null });
});
$("mode").addEventListener("change", () => { $("holder-label").hidden = $("mode").value !== "siege"; });
$("roll").addEventListener("submit", (event) => {
  event.preventDefault();
  gameAction("/api/game/roll", { black: Number($("die-black").value), red: Number($("die-red").value), white: Number($("die-white").value) });
});
$("end-turn").addEventListener("click", () => gameAction("/api/game/end-turn"));
$("end-round").addEventListener("click", () => gameAction("/api/game/end-round"));
$("undo").addEventListener("click", () => gameAction("/api/game/undo"));

// --- Contienda odds ---------------------------------------------------------------------------------

async function showBands() {
  $("mod").textContent = ui.mod >= 0 ? `+${ui.mod}` : `${ui.mod}`;
  const adv = $("adv").value;
  const q = `mod=${ui.mod}&attack_number=${$("attack-number").value}` + (adv ? `&${adv}=1` : "");
  try {
    const b = await api(`/api/contienda/odds?${q}`);
    $("bands").replaceChildren(oddsBars(b.full, b.partial, b.miss, ["10+ full", "7-9 partial", "6- miss"]),
      el("p", { class: "hint" }, `full ${b.fractions.full}, partial ${b.fractions.partial}, miss ${b.fractions.miss}`));
  } catch (e) { flash(e.message); }
}

if (RULESET === "contienda") {
  $("contienda").hidden = false;
  $("mod-down").addEventListener("click", () => { ui.mod = Math.max(-10, ui.mod - 1); showBands(); });
  $("mod-up").addEventListener("click", () => { ui.mod = Math.min(10, ui.mod + 1); showBands(); });
  $("adv").addEventListener("change", showBands);
  $("attack-number").addEventListener("change", showBands);
  api("/api/contienda/grid").then((grid) => { ui.grid = grid; ui.key = ""; if (ui.state) render(); }).catch((e) => flash(e.message));
  showBands();
}

poll().then(schedule);
