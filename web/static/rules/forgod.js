// F0R60D on the phone page: the board of squares under the map, each card's square and detachment,
// its move and attack areas when tapped, a verdict on every enemy card, and the engagement's turns.
// Loaded after phone.js: it fills phone.js's RULES hooks and uses its helpers (el, api, pts, Y, ui).
"use strict";

const FG = { board: null, card: null, gameKey: "" };

// The engagement's panel: this rule system's own part of the page, put in before the units list.
document.querySelector("main").insertBefore(document.createRange().createContextualFragment(`
<section id="forgod" class="card" hidden>
    <h2 id="fg-title">Engagement</h2>
    <p id="fg-line"></p>
    <p id="fg-winner" class="winner" hidden></p>
    <p id="fg-army"></p>
    <form id="fg-reaction" hidden>
      <span>Reaction roll (d10 each):</span>
      <span id="fg-rolls"></span>
      <button type="submit">Start the round</button>
    </form>
    <form id="fg-act" hidden>
      <label>Card <select id="fg-card"></select></label>
      <label>Action <select id="fg-action"></select></label>
      <label>Target <select id="fg-target"></select></label>
      <button type="submit">Play the turn</button>
    </form>
    <ul id="fg-due" class="verdicts"></ul>
    <div class="row wrap">
      <button id="fg-new" type="button">New engagement</button>
      <button id="fg-undo" type="button" class="secondary">Undo</button>
    </div>
    <h3>Log</h3>
    <ol id="fg-log" class="log"></ol>
  </section>
`), $("units").closest("section"));
const ZONE_FILL = { move: "#42a5f555", attack: "#ef535066", far: "#ffa72666" };


RULES.drawUnder = (svg) => {
  if (!FG.board) return;
  const g = el("svg:g", { class: "fg-board" });
  const zones = new Map();
  if (FG.card && FG.card.areas) {
    for (const zone of ["move", "far", "attack"]) for (const [c, r] of FG.card.areas[zone] || []) zones.set(`${c},${r}`, zone);
  }
  const charge = new Set((FG.card && FG.card.areas && FG.card.areas.charge || []).map(([c, r]) => `${c},${r}`));
  for (const [col, row, side, line, corners] of FG.board.squares) {
    const tint = colourOf(side);
    g.append(el("svg:polygon", { points: pts(corners), fill: tint, "fill-opacity": line === "advanced" ? 0.28 : line === "rearguard" ? 0.12 : 0.2,
      stroke: "#ffffffaa", "stroke-width": 2, class: "fg-square", "data-cell": `${col},${row}` }));
    const zone = zones.get(`${col},${row}`);
    if (zone) g.append(el("svg:polygon", { points: pts(corners), fill: ZONE_FILL[zone], stroke: "none", class: `fg-${zone}`, "data-cell": `${col},${row}` }));
    if (charge.has(`${col},${row}`) && !zone) g.append(el("svg:polygon", { points: pts(corners), fill: "none", stroke: "#ff1744", "stroke-width": 3, "stroke-dasharray": "8 6", class: "fg-charge" }));
  }
  // each row's line, on the left of the board, so players can check the modifiers they get
  for (let row = 0; row < 2 * FG.board.rows_per_side; row++) {
    const sq = FG.board.squares.find((s) => s[0] === 0 && s[1] === row);
    const y = (sq[4][0][1] + sq[4][2][1]) / 2;
    g.append(el("svg:text", { x: sq[4][0][0] - 8, y: Y(y) + 9, "text-anchor": "end", class: "fg-line", style: "font-size:22px" }, sq[3].slice(0, 4)));
  }
  svg.append(g);
};

RULES.drawKey = () => [FG.board ? 1 : 0, FG.card && FG.card.card];
RULES.reset = () => { FG.card = null; };

RULES.unitLabel = (u) => {
  const info = ui.state.forgod && ui.state.forgod.cards[String(u.id)];
  if (!info) return "";
  return (info.cards > 1 ? ` ×${info.cards}` : "") + (info.commander ? " ★" : "");
};

function fgBars(odds) {
  return oddsBars(odds.critical, odds.hit - odds.critical, odds.evaded, ["critical", "hit", "evaded"],
    odds.kill === null ? "" : `· kill ${pct(odds.kill)} (${odds.fractions.kill})`);
}

function fgVerdictItem(v) {
  const li = el("li", { class: "verdict", "data-target": v.target });
  li.append(el("div", { class: "name" }, `${v.name} (${v.target}): ${v.legal ? "can attack" : "cannot attack"}`));
  const chips = el("div");
  for (const c of v.chips) chips.append(el("span", { class: `chip ${c.kind}` }, c.text));
  li.append(chips);
  if (v.legal) li.append(fgBars(v.odds));
  const reasons = el("ul", { class: "reasons" });
  for (const r of v.reasons) reasons.append(el("li", {}, r));
  li.append(reasons);
  const more = el("details", {});
  more.append(el("summary", {}, `modifiers (${v.modifiers.length})`));
  const mods = el("ul", { class: "reasons" });
  for (const m of v.modifiers) mods.append(el("li", {}, `${m.applies_to} ${m.applies_to === "multiplier" ? "x" + m.value : (m.value >= 0 ? "+" : "") + m.value}: ${m.name} (${m.why})`));
  more.append(mods);
  li.append(more);
  return li;
}

RULES.select = async (ids) => {
  FG.card = null;
  if (ids.length === 1) {
    const d = await api(`/api/forgod/cards/${ids[0]}`);
    FG.card = d;
    $("sel-range").textContent = `${d.type}${d.cards > 1 ? ` ×${d.cards}` : ""}, level ${d.level}, ${d.terrain}, ${d.attack_type}: ` +
      (d.cell ? `col ${d.cell.col}, row ${d.cell.row} (${d.cell.side}'s ${d.cell.line} line${d.cell.in_enemy_field ? ", enemy field: counts as advanced" : ""})` : "off the board");
    $("enemies-title").hidden = !d.enemies.length;
    $("enemies-title").textContent = "Against every enemy card";
    for (const v of d.enemies) $("enemies").append(fgVerdictItem(v));
    $("moves-out").textContent = "blue: its move; red: it strikes; orange: far zone (-6); dashed red: a charge's reach";
  } else if (ids.length === 2) {
    const v = await api(`/api/forgod/attack?attacker=${ids[0]}&target=${ids[1]}`);
    const list = el("ul", { class: "verdicts" });
    list.append(fgVerdictItem(v));
    $("pair-verdict").replaceChildren(list);
    $("sel-range").textContent = "";
  }
  ui.key = "";
  render();
};

// --- the engagement ---------------------------------------------------------------------------------

function fgOptions(select, items, keep = true) {
  const was = select.value;
  select.replaceChildren(...items.map(([value, text]) => el("option", { value }, text)));
  if (keep && items.some(([v]) => String(v) === was)) select.value = was;
}

function fgCardName(id) { const u = unitById(id); return u ? `${u.name} (${id})` : `card ${id}`; }

async function fgPush(event) {
  try {
    const g = await api("/api/forgod/game/events", { method: "POST", body: event });
    ui.state.game = g; FG.gameKey = ""; RULES.renderGame(g);
  } catch (e) { flash(e.message); }
}

RULES.renderGame = (g) => {
  if (!g || g.kind !== "forgod") return false;
  const box = $("forgod");
  box.hidden = false;
  const key = JSON.stringify([g, ui.state.units.map((u) => u.id)]);
  if (key === FG.gameKey) return true;
  FG.gameKey = key;
  $("round-chip").hidden = !g.exists || !g.round;
  if (!g.exists) {
    $("fg-line").textContent = "No engagement yet.";
    $("fg-new").textContent = "Start the engagement";
    for (const id of ["fg-reaction", "fg-act"]) $(id).hidden = true;
    return true;
  }
  $("fg-new").textContent = "New engagement";
  $("round-chip").textContent = `Round ${g.round}`;
  const mayAct = (p) => g.may_act[p].map(fgCardName).join(", ") || "none";
  $("fg-line").textContent = g.turn
    ? `Round ${g.round}: ${g.turn}'s turn${g.round === 1 ? " (commanders only)" : ""}. May act: ${mayAct(g.turn)}.`
    : (g.winner ? "" : `${g.round ? `Round ${g.round} is over. ` : ""}Roll for reaction to start round ${g.round + 1}.`);
  $("fg-winner").hidden = !g.winner;
  $("fg-winner").textContent = g.winner ? `Winner: ${g.winner}` : "";
  $("fg-army").textContent = g.army.valid ? `Armies valid (PC limit ${g.army.pc_limit}).` : `Army problems: ${g.army.problems.join("; ")}`;
  $("fg-army").className = g.army.valid ? "hint" : "chip bad";
  const reaction = $("fg-reaction");
  reaction.hidden = !!g.turn || !!g.winner;
  if (!reaction.hidden && !$("fg-rolls").children.length) {
    for (const p of g.players) {
      const s = el("select", { id: `fg-roll-${p}`, "aria-label": `${p}'s d10`, "data-player": p });
      fgOptions(s, Array.from({ length: 10 }, (_, i) => [i + 1, `${i + 1}`]), false);
      const label = el("label", {}, p);
      label.append(s);
      $("fg-rolls").append(label);
    }
  }
  const act = $("fg-act");
  act.hidden = !g.turn || !!g.winner;
  if (!act.hidden) {
    fgOptions($("fg-card"), g.may_act[g.turn].map((id) => [id, fgCardName(id)]));
    fgOptions($("fg-action"), ["attack", "move", "charge", "flank", "charge_flank", "shield", "royal_guard", "cover", "special", "pass"].map((a) => [a, a.replace("_", " ")]));
    const cards = Object.keys(ui.state.forgod.cards).map(Number).filter((id) => !g.dead.includes(id));
    fgOptions($("fg-target"), [["", "—"]].concat(cards.map((id) => [id, fgCardName(id)])));
  }
  const due = $("fg-due");
  due.replaceChildren();
  for (const d of g.due) {
    const li = el("li", { class: "verdict" });
    li.append(el("div", { class: "name" }, `${fgCardName(d.card)}: ${d.action.replace("_", " ")} on ${fgCardName(d.target)} — ${d.now ? d.needs + " now" : "lands on " + d.player + "'s next turn"}`));
    if (d.camera) li.append(el("p", { class: `chip ${d.in_reach === false || d.turned === false ? "bad" : "info"}` }, `camera: ${d.camera}`));
    if (d.cross_check) li.append(el("p", { class: "hint" }, `fortitude cross-check: +${d.cross_check.bonus_a} against +${d.cross_check.bonus_d}, ` +
      `${fgCardName(d.card)} wins ${pct(d.cross_check.attacker_wins)} (${d.cross_check.fractions.attacker_wins})`));
    if (d.now) {
      const outcomes = d.needs === "attack roll" ? ["hit", "evaded", "failed"] : ["won", "lost"];
      const row = el("div", { class: "row wrap" });
      for (const o of outcomes) {
        const b = el("button", { type: "button", class: "small" }, o);
        b.addEventListener("click", () => fgPush({ kind: "resolve", card: d.card, outcome: o }));
        row.append(b);
      }
      li.append(row);
    }
    due.append(li);
  }
  for (const c of g.counters) {
    const li = el("li", { class: "verdict" });
    const b = el("button", { type: "button" }, `${fgCardName(c.card)} counter-attacks ${fgCardName(c.against)} (+2)`);
    b.addEventListener("click", () => fgPush({ kind: "counter", card: c.card, against: c.against }));
    li.append(b);
    due.append(li);
  }
  for (const id of g.in_enemy_rearguard || []) {
    if (g.log.some((line) => line.startsWith(`card ${id} reached`))) continue;
    const li = el("li", { class: "verdict" });
    const b = el("button", { type: "button", class: "secondary" }, `${fgCardName(id)} reached the enemy rearguard: confirm`);
    b.addEventListener("click", () => fgPush({ kind: "reached_rearguard", card: id }));
    li.append(b);
    due.append(li);
  }
  $("fg-undo").disabled = !g.log.length;
  const lines = g.log.slice(-12).reverse();
  $("fg-log").replaceChildren(...lines.map((line) => el("li", {}, line)));
  return true;
};

$("fg-reaction").addEventListener("submit", (event) => {
  event.preventDefault();
  const rolls = {};
  for (const s of $("fg-rolls").querySelectorAll("select")) rolls[s.dataset.player] = Number(s.value);
  fgPush({ kind: "reaction", rolls });
});
$("fg-act").addEventListener("submit", (event) => {
  event.preventDefault();
  const target = $("fg-target").value;
  fgPush({ kind: "act", card: Number($("fg-card").value), action: $("fg-action").value, target: target === "" ? null : Number(target) });
});
$("fg-new").addEventListener("click", async () => {
  try {
    const g = await api("/api/forgod/game", { method: "POST", body: { force: true } });
    ui.state.game = g; FG.gameKey = ""; RULES.renderGame(g);
  } catch (e) { flash(e.message); }
});
$("fg-undo").addEventListener("click", async () => {
  try {
    const g = await api("/api/forgod/game/undo", { method: "POST" });
    ui.state.game = g; FG.gameKey = ""; RULES.renderGame(g);
  } catch (e) { flash(e.message); }
});

$("forgod").hidden = false;
api("/api/forgod/board").then((b) => { FG.board = b; ui.key = ""; if (ui.state) render(); }).catch((e) => flash(e.message));
