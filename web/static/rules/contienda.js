// Contienda Arcana on the phone page: the hex grid over the map, the hexes a unit reaches with its AP
// (provoking ones edged red), charge lanes, flanked units, and the 2d6 + mod bands.
// Loaded after phone.js: it fills phone.js's RULES hooks and uses its helpers (el, api, pts, Y, ui).
"use strict";

const CT = { grid: null, reach: null, flanked: new Set(), cellsKey: "", mod: 0 };

RULES.drawKey = () => [CT.reach, CT.grid ? 1 : 0, [...CT.flanked]];
RULES.reset = () => { CT.reach = null; };
RULES.maxAp = () => 3;

RULES.drawUnder = (svg) => {
  if (!CT.grid) return;
  const g = el("svg:g", { fill: "none", stroke: "#ffffff40", "stroke-width": 1.5 });
  for (const [, , corners] of CT.grid.hexes) g.append(el("svg:polygon", { points: pts(corners) }));
  svg.append(g);
  if (CT.reach) drawReach(svg);
};

RULES.decorate = (g, u, r) => {
  if (CT.flanked.has(u.id)) g.append(el("svg:circle", { cx: u.x_mm, cy: Y(u.y_mm), r: r + 16, fill: "none", stroke: "#ffab00", "stroke-width": 3, "stroke-dasharray": "6 6", class: "flank" }));
};

RULES.select = async (ids) => {
  if (ids.length === 2) await showMeasure();
  if (ids.length === 1) await showReach();
};

RULES.moves = () => showReach();

RULES.render = () => updateFlanks();

async function updateFlanks() {
  const key = JSON.stringify(ui.state.units.map((u) => [u.id, u.x_mm, u.y_mm]));
  if (key === CT.cellsKey) return;
  CT.cellsKey = key;
  try {
    const cells = await api("/api/contienda/cells");
    CT.flanked = new Set(cells.flanked);
    ui.key = "";
    render();
  } catch (e) { flash(e.message); }
}

function drawReach(svg) {
  const costColour = { 1: "#81c784aa", 2: "#ffd54faa", 3: "#ff8a65aa" };
  const byHex = new Map(CT.grid.hexes.map(([q, r, c]) => [`${q},${r}`, c]));
  const provoking = new Set(CT.reach.provoking.map(([q, r]) => `${q},${r}`));
  for (const [q, r, cost] of CT.reach.hexes) {
    const corners = byHex.get(`${q},${r}`);
    if (!corners) continue;
    const p = provoking.has(`${q},${r}`);
    svg.append(el("svg:polygon", { points: pts(corners), fill: costColour[cost] || "#e57373aa", stroke: p ? "#d50000" : "none", "stroke-width": p ? 3 : 0, class: "reach-hex" }));
  }
  for (const lane of CT.reach.charges) {
    const start = unitById(ui.selected[0]);
    const end = hexCentre(lane.path[lane.path.length - 1]);
    if (start && end) svg.append(el("svg:line", { x1: start.x_mm, y1: Y(start.y_mm), x2: end[0], y2: Y(end[1]), stroke: "#ff1744", "stroke-width": 5, class: "charge" }));
  }
}

function hexCentre([q, r]) {
  if (!CT.grid) return null;
  const w = CT.grid.size_mm, [ox, oy] = CT.grid.origin_mm;
  return [ox + w * (q + r / 2), oy + w * Math.sqrt(3) / 2 * r];
}

async function showReach() {
  if (!CT.grid) CT.grid = await api("/api/contienda/grid");
  CT.reach = await api(`/api/contienda/reach?unit=${ui.selected[0]}&ap=${Math.min(ui.ap, 3)}`);
  const flank = await api("/api/contienda/cells");
  const cell = flank.cells[String(ui.selected[0])];
  $("moves-out").textContent = `hex (${cell}); ${CT.reach.hexes.length} hexes in reach with ${Math.min(ui.ap, 3)} AP` +
    (CT.reach.provoking.length ? `, ${CT.reach.provoking.length} only by provoking (red edge)` : "") +
    `; ${CT.reach.charges.length} charge lane(s)` + (flank.flanked.length ? `; flanked: ${flank.flanked.join(", ")}` : "");
  ui.key = "";
  render();
}

// --- Contienda odds ---------------------------------------------------------------------------------

async function showBands() {
  $("mod").textContent = CT.mod >= 0 ? `+${CT.mod}` : `${CT.mod}`;
  const adv = $("adv").value;
  const q = `mod=${CT.mod}&attack_number=${$("attack-number").value}` + (adv ? `&${adv}=1` : "");
  try {
    const b = await api(`/api/contienda/odds?${q}`);
    $("bands").replaceChildren(oddsBars(b.full, b.partial, b.miss, ["10+ full", "7-9 partial", "6- miss"]),
      el("p", { class: "hint" }, `full ${b.fractions.full}, partial ${b.fractions.partial}, miss ${b.fractions.miss}`));
  } catch (e) { flash(e.message); }
}

{
  $("contienda").hidden = false;
  $("mod-down").addEventListener("click", () => { CT.mod = Math.max(-10, CT.mod - 1); showBands(); });
  $("mod-up").addEventListener("click", () => { CT.mod = Math.min(10, CT.mod + 1); showBands(); });
  $("adv").addEventListener("change", showBands);
  $("attack-number").addEventListener("change", showBands);
  api("/api/contienda/grid").then((grid) => { CT.grid = grid; ui.key = ""; if (ui.state) render(); }).catch((e) => flash(e.message));
  showBands();
}
