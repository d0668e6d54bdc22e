// The Knight rules on the phone page: a verdict on every enemy with its reasons and odds, the pair's
// verdict, the AP regions a unit reaches, and the game (turns, WBR dice, rounds, the siege counter).
// Loaded after phone.js: it fills phone.js's RULES hooks and uses its helpers (el, api, pts, Y, ui).
"use strict";

const KN = { moves: null }; // /api/moves answer for the first selection

RULES.drawKey = () => KN.moves;
RULES.reset = () => { KN.moves = null; };

// One shade per AP, darker for more; drawn largest first, each region's outline filled even-odd
// (its holes are loops too), and the same swatches in the legend under the map.
const MOVE_SHADES = ["#ffffff66", "#80deea66", "#4dd0e166", "#26c6da66", "#00acc166", "#00838f66", "#006064aa"];

RULES.drawUnder = (svg) => {
  if (!KN.moves) return;
  for (const region of [...KN.moves.regions].reverse()) {
    if (!region.outlines.length) continue;
    const d = region.outlines.map((loop) => "M" + pts(loop).replaceAll(" ", "L") + "Z").join("");
    svg.append(el("svg:path", { d, fill: MOVE_SHADES[Math.min(region.ap, 6)], "fill-rule": "evenodd", stroke: "none", class: "move-region" }));
  }
};

function movesLegend(regions) {
  const legend = el("p", { class: "hint legend moves-legend" });
  const shade = (r) => MOVE_SHADES[Math.min(r.ap, 6)];
  for (const [k, region] of regions.entries()) {
    // Where k AP get it, the regions of k AP and more lie on top of each other over the table.
    const key = el("span", { class: "key" });
    key.style.background = regions.slice(k).map((r) => `linear-gradient(${shade(r)}, ${shade(r)})`).join(", ") + ", #4f7d48";
    legend.append(key, `${region.ap} AP  `);
  }
  return legend;
}

RULES.select = async (ids) => {
  const first = unitById(ids[0]);
  const g = ui.state && ui.state.game;
  if (first && g && g.exists && g.turn === first.player && g.dice_left.black !== undefined) {
    ui.ap = Math.min(g.dice_left.black, 6); // the moves shown are for the AP its player has left
    $("ap").textContent = ui.ap;
  }
  const detail = await api(`/api/units/${ids[0]}`);
  $("sel-range").textContent = detail.range ? `${detail.class}: range ${detail.range.text} (${Math.round(detail.range.mm)} mm, ${detail.acting_player}'s hand)` : `${detail.class}: melee only`;
  if (ids.length === 1) showEnemies(detail.enemies);
  if (ids.length === 2) {
    await showMeasure();
    const ua = unitById(ids[0]), ub = unitById(ids[1]);
    if (ua && ub && ua.player !== ub.player) {
      const v = await api(`/api/attack?attacker=${ids[0]}&target=${ids[1]}`);
      const list = el("ul", { class: "verdicts" });
      list.append(verdictItem(v));
      $("pair-verdict").replaceChildren(list);
    }
  }
};

RULES.moves = async () => {
  KN.moves = await api(`/api/moves?unit=${ui.selected[0]}&ap=${ui.ap}`);
  const best = KN.moves.regions[KN.moves.regions.length - 1];
  if (!best) $("moves-out").textContent = "cannot move";
  else $("moves-out").replaceChildren(`${Math.round(best.area_mm2 / 100)} cm² of table within ${ui.ap} AP; where each AP gets it:`, movesLegend(KN.moves.regions));
  ui.key = "";
  render();
};

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
  if (v.legal) li.append(oddsBars(v.odds.attacker_wins, v.odds.tie, v.odds.defender_wins, ["attacker wins", "tie (no effect)", "defender wins"]));
  // The verdict first; why, and the bonus lines, folded (an impossible attack shows no bonuses).
  const reasons = el("ul", { class: "reasons" });
  for (const r of v.reasons) reasons.append(el("li", {}, r));
  li.append(reasons);
  const more = el("details", {});
  const lines = v.cover.blocks.map((b) => b.why);
  if (v.legal) {
    lines.push(...v.attack_modifiers.map((m) => `attack ${m.value >= 0 ? "+" : ""}${m.value} ${m.name} (${m.why})`),
      ...v.defence_modifiers.map((m) => `defence ${m.value >= 0 ? "+" : ""}${m.value} ${m.name} (${m.why})`));
  }
  if (lines.length) {
    more.append(el("summary", {}, v.legal ? `cover and bonuses (attack +${v.attack_bonus}, defence +${v.defence_bonus})` : "cover"));
    const list = el("ul", { class: "reasons" });
    for (const line of lines) list.append(el("li", {}, line));
    more.append(list);
    li.append(more);
  }
  return li;
}

// --- the game (Knight: turns, rounds, siege) --------------------------------------------------------

let diceFilled = false;
function fillDice() {
  if (diceFilled) return;
  for (const die of ["black", "red", "white"]) {
    const select = $(`die-${die}`);
    select.append(el("option", { value: "" }, "—"));  // no face until the player picks the one rolled
    for (let v = 1; v <= 6; v++) select.append(el("option", { value: v }, `${v}`));
    select.addEventListener("change", diceReady);
  }
  diceFilled = true;
  diceReady();
}

// Each turn starts with no dice chosen: the last player's faces are never carried over.
function resetDice() {
  for (const die of ["black", "red", "white"]) $(`die-${die}`).value = "";
  diceReady();
}

function diceReady() {
  $("roll").querySelector("button").disabled = ["black", "red", "white"].some((d) => !$(`die-${d}`).value);
}

RULES.renderGame = renderGame;

function renderGame() {
  const g = ui.state.game;
  const card = $("game");
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
  const rollWasHidden = $("roll").hidden;
  $("roll").hidden = !!g.turn || !!g.winner;
  if (rollWasHidden && !$("roll").hidden) resetDice();
  $("roll-who").textContent = `${g.next}'s roll:`;
  $("end-turn").disabled = !g.turn;
  $("end-round").disabled = !g.turn;
  $("undo").disabled = !g.log.length;
  renderLedger(g.ledger);
  renderProposals(g.proposals || []);
  const control = Object.entries(g.control || {}).map(([k, v]) => `${k}: ${v || "nobody"}`).join("; ");
  $("control").textContent = control ? `Held now (camera): ${control}` : "";
  const log = $("log");
  const lines = g.log.slice(-12).reverse();
  if (log.dataset.key !== JSON.stringify(lines)) {
    log.dataset.key = JSON.stringify(lines);
    log.replaceChildren(...lines.map((line) => el("li", {}, line)));
  }
}

// A game action: the answer shown, and returned (undefined when refused, its reason flashed).
async function gameAction(path, body) {
  try {
    const g = await api(path, { method: "POST", body });
    if (ui.state) { ui.state.game = g; renderGame(); }
    return g;
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
$("undo").addEventListener("click", async () => {
  const g = await gameAction("/api/game/undo");
  if (g) flash(`Took back: ${g.undone}`);  // one line of the log, one Undo
});

// The turn under way, refereed by the camera: every move with its AP, turns, fortifications, and
// warnings when the turn spends more than its dice or the other side's units moved.
function renderLedger(led) {
  $("ledger").hidden = !led;
  if (!led) return;
  const key = JSON.stringify(led);
  if ($("ledger").dataset.key === key) return;
  $("ledger").dataset.key = key;
  $("ledger-title").textContent = `This turn: ${led.ap_spent} of ${led.ap_die} AP, ${led.units_acted.length} of ${led.warriors_die} warriors, ` +
    `${led.attacks_made} of ${led.attacks_die} attacks`;
  $("ledger-warnings").replaceChildren(...led.warnings.map((w) => el("li", { class: "chip bad" }, w)));
  const entries = [];
  for (const m of led.moves) entries.push(el("li", { class: "ledger-move" }, `${m.ap} AP: ${m.why}`));
  for (const t of led.turns) entries.push(el("li", { class: "ledger-turn" }, `${t.ap} AP: ${t.why}`));
  for (const f of led.fortifications) entries.push(el("li", { class: f.in_reach ? "ledger-fort" : "ledger-fort bad" }, `${f.ap} AP: ${f.why}`));
  if (!entries.length) entries.push(el("li", { class: "hint" }, "nothing moved yet"));
  $("ledger-entries").replaceChildren(...entries);
}

// What the camera saw that a player confirms with one tap (Undo takes it back): knocked over, gone
// from the table, sealed. Nothing of it is applied without the tap.
// The same asks again (only the seconds in their reasons moved) keep their buttons: a list
// rebuilt every poll would take a button away from under a thumb about to tap it.
function renderProposals(list) {
  const box = $("proposals");
  box.proposals = list;  // what a tap records: the latest reasons
  const key = JSON.stringify(list.map((p) => [p.unit, p.kind, p.ask, !!p.event]));
  if (box.dataset.key === key) {
    list.forEach((p, i) => { box.children[i].querySelector(".hint").textContent = `camera: ${p.why}`; });
    return;
  }
  box.dataset.key = key;
  box.replaceChildren(...list.map((p, i) => {
    const li = el("li", { class: "verdict proposal", "data-unit": p.unit });
    li.append(el("div", { class: "name" }, p.ask), el("p", { class: "hint" }, `camera: ${p.why}`));
    if (p.event) {
      const b = el("button", { type: "button" }, "Yes, record it");
      b.addEventListener("click", () => gameAction("/api/game/events", box.proposals[i].event));
      li.append(b);
    }
    return li;
  }));
}
