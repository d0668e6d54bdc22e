// Infinity on the phone page: tap the attacker, then the Main Target: the circular template on the
// map, who is under it, the line of fire, and Face to Face odds per trooper.
// Loaded after phone.js: it fills phone.js's RULES hooks and uses its helpers (el, api, pts, Y, ui).
"use strict";

const IN = { template: null }; // /api/infinity/template answer

RULES.drawKey = () => IN.template;
RULES.reset = () => { IN.template = null; };
RULES.hint = (n) => (n === 1 ? "Now tap the Main Target to place the template." : undefined);

RULES.drawOver = (svg) => { if (IN.template) drawTemplate(svg); };

RULES.decorate = (g, u, r) => {
  if (IN.template && IN.template.affected.includes(u.id)) g.append(el("svg:circle", { cx: u.x_mm, cy: Y(u.y_mm), r: r + 9, fill: "none", stroke: "#ff1744", "stroke-width": 5 }));
};

RULES.select = async (ids) => {
  if (ids.length !== 2) return;
  IN.template = await api(`/api/infinity/template?attacker=${ids[0]}&target=${ids[1]}`);
  showTemplate();
  ui.key = "";
  render();
};

function drawTemplate(svg) {
  const t = IN.template;
  svg.append(el("svg:circle", { cx: t.centre_mm[0], cy: Y(t.centre_mm[1]), r: t.radius_mm, fill: "#ff174433", stroke: "#ff1744", "stroke-width": 3, class: "template" }));
}

function showTemplate() {
  const t = IN.template;
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
