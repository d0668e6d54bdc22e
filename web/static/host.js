// The host screen: the MJPEG view is an <img>; this keeps the status lines fresh.
"use strict";

async function refresh() {
  try {
    const response = await fetch("/api/state", { credentials: "same-origin" });
    const s = await response.json();
    if (!response.ok) throw new Error(s.error || `HTTP ${response.status}`);
    const cam = s.snapshot.camera;
    const camera = document.getElementById("camera");
    camera.textContent = cam.ok ? `${cam.source}: ok` : `${cam.state}: ${cam.message}`;
    camera.className = cam.ok ? "ok" : "bad";
    const reg = document.getElementById("registration");
    reg.textContent = s.snapshot.registered_now
      ? `registered (anchors seen), frame ${s.frame}, ${s.units.length} units, pipeline ${s.snapshot.tracker_ms} ms`
      : `not registered now (${s.snapshot.reason || "no anchor"}); last state ${s.age_s === null ? "none" : Math.round(s.age_s) + " s old"}`;
    reg.className = s.snapshot.registered_now ? "ok" : "bad";
    const banner = document.getElementById("banner");
    banner.hidden = cam.ok;
    banner.textContent = cam.ok ? "" : `Camera ${cam.state}: ${cam.message}`;
    const notes = document.getElementById("notes");
    notes.replaceChildren(...(s.warnings || []).map((w) => Object.assign(document.createElement("li"), { textContent: w })));
    const g = s.game;
    document.getElementById("game").textContent = g && g.exists
      ? `${g.mode}: round ${g.round}${g.siege_rounds ? " of " + g.siege_rounds : ""}; ${g.turn ? g.turn + "'s turn" : g.next + " to roll"}${g.winner ? "; winner " + g.winner : ""}`
      : "";
  } catch (e) {
    document.getElementById("camera").textContent = `server unreachable (${e.message})`;
  }
}

refresh();
setInterval(refresh, 1000);
