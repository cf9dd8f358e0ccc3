// cdcd's status page. It polls what the daemon already serves (the REST API's connector statuses, the slot
// guardian's /slots, /metrics and /health) and renders it. Everything the daemon returns is inserted as text
// (append/textContent), never as HTML: connector names and traces are the database's and the user's words.
// Connector configs are never fetched, so no secret can reach the page.
"use strict";

const POLL_MS = 5000;
const STALL_MS = 120000; // a running snapshot that read no row for this long is reported as stalled
const MAX_ALERTS = 30;

// What one poll remembers for the next: counters for rates, snapshot progress for stalls, alerts for the
// "recent" list, and which traces the reader opened (a refresh must not close them).
const memory = { events: new Map(), at: 0, snapshots: new Map(), alerts: new Map(), openTraces: new Set(), refreshes: 0 };

// Paths are relative to /ui/, so the page also works behind a proxy that mounts cdcd under a prefix. A page
// opened with credentials in its URL (user:password@host/ui/) would pass them on, and fetch refuses a request
// URL with credentials: they are left out, and the browser answers the API's 401 with those it holds for the page.
const apiBase = new URL("../", location.href);
apiBase.username = "";
apiBase.password = "";

async function get(path, asText) {
  const r = await fetch(new URL(path, apiBase), { cache: "no-store", headers: { Accept: asText ? "text/plain" : "application/json" } });
  if (r.status === 404) return null; // /slots exists only where the slot guardian runs (standalone mode)
  if (r.status === 401) throw new Error("not authorised (HTTP 401)");
  if (!r.ok && r.status !== 503) throw new Error("HTTP " + r.status);
  return asText ? r.text() : r.json();
}

function parseMetrics(text) {
  const out = new Map();
  for (const line of (text || "").split("\n")) {
    if (!line || line[0] === "#") continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = {};
    for (const l of (m[2] || "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      labels[l[1]] = l[2].replace(/\\(.)/g, (_, c) => (c === "n" ? "\n" : c));
    }
    if (!out.has(m[1])) out.set(m[1], []);
    out.get(m[1]).push({ labels, value: Number(m[3]) });
  }
  return out;
}

// pick returns the samples of name whose labels include every label of want.
function pick(metrics, name, want) {
  return (metrics.get(name) || []).filter((s) => Object.entries(want).every(([k, v]) => s.labels[k] === v));
}

function one(metrics, name, want) {
  const s = pick(metrics, name, want);
  return s.length ? s[0].value : undefined;
}

function total(metrics, name, want) {
  const s = pick(metrics, name, want);
  return s.length ? s.reduce((a, b) => a + b.value, 0) : undefined;
}

// lsn reads PostgreSQL's X/Y notation as a 64-bit number.
function lsn(s) {
  const m = /^([0-9A-Fa-f]+)\/([0-9A-Fa-f]+)$/.exec(s || "");
  return m ? (BigInt("0x" + m[1]) << 32n) + BigInt("0x" + m[2]) : undefined;
}

function fmtBytes(n) {
  if (n === undefined || n === null) return "—";
  n = Number(n);
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (Math.abs(n) >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n.toFixed(0) : n.toFixed(1)) + " " + units[i];
}

function fmtDuration(seconds) {
  if (seconds === undefined || seconds === null || !isFinite(seconds)) return "—";
  if (seconds < 1) return Math.round(seconds * 1000) + " ms";
  if (seconds < 60) return seconds.toFixed(1) + " s";
  const d = Math.floor(seconds / 86400), h = Math.floor(seconds / 3600) % 24, m = Math.floor(seconds / 60) % 60, s = Math.floor(seconds) % 60;
  if (d) return d + " d " + h + " h";
  if (h) return h + " h " + m + " min";
  return m + " min " + s + " s";
}

function fmtTime(t) {
  return t ? new Date(t).toLocaleTimeString(undefined, { hour12: false }) : "—";
}

function el(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null) continue;
    if (k === "class") e.className = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : String(c));
  return e;
}

// num is a right-aligned cell that keeps the raw value in data-value (for scripts and tests).
function num(cls, value, text) {
  return el("td", { class: "num " + cls, "data-value": value === undefined || value === null ? undefined : String(value) }, text);
}

function firstLine(trace) {
  return (trace || "").split("\n")[0];
}

// traceCell shows a state and, when there is one, its trace folded under it.
function traceCell(key, state, trace) {
  const td = el("td", {}, el("span", { class: "state " + state }, state));
  if (trace) {
    const d = el("details", {}, el("summary", {}, firstLine(trace)), el("pre", {}, trace));
    d.open = memory.openTraces.has(key);
    d.addEventListener("toggle", () => (d.open ? memory.openTraces.add(key) : memory.openTraces.delete(key)));
    td.append(d);
  }
  return td;
}

function fill(id, rows) {
  document.querySelector("#" + id + " tbody").replaceChildren(...rows);
  document.getElementById(id + "-empty").hidden = rows.length > 0;
}

// slotLagBytes is how far the connector's slot is behind the server's WAL: the current WAL position (the slot's
// restart_lsn plus the WAL it retains) minus what the connector confirmed (confirmed_flush_lsn).
function slotLagBytes(slot) {
  const restart = lsn(slot.restart_lsn), confirmed = lsn(slot.confirmed_flush_lsn);
  if (restart === undefined || confirmed === undefined || slot.retained_wal_bytes === null) return undefined;
  const lag = restart + BigInt(slot.retained_wal_bytes) - confirmed;
  return lag > 0n ? Number(lag) : 0;
}

function renderConnectors(status, slots, metrics, now, alerts) {
  const rows = [];
  const events = new Map();
  const elapsed = memory.at ? (now - memory.at) / 1000 : 0;
  for (const name of Object.keys(status || {}).sort()) {
    const st = status[name].status;
    const c = st.connector;
    if (c.state === "FAILED") alerts.push({ key: "connector/" + name, severity: "error", message: "connector " + name + " failed: " + firstLine(c.trace) });
    const slot = (slots ? slots.slots : []).find((s) => s.connector === name && s.status === "owned");
    const lagBytes = slot ? slotLagBytes(slot) : undefined;
    const tasks = st.tasks.length ? st.tasks : [null];
    tasks.forEach((t, i) => {
      const task = t ? String(t.id) : undefined;
      const labels = { connector: name, task: task };
      const connected = t ? one(metrics, "cdcd_connected", labels) : undefined;
      const lagMs = t ? one(metrics, "cdcd_milliseconds_behind_source", labels) : undefined;
      const seen = t ? total(metrics, "cdcd_events_total", labels) : undefined;
      let eps;
      if (seen !== undefined) {
        const key = name + "/" + task;
        events.set(key, seen);
        if (elapsed > 0 && memory.events.has(key)) eps = Math.max(0, (seen - memory.events.get(key)) / elapsed);
      }
      if (t && t.state === "FAILED") alerts.push({ key: "task/" + name + "/" + task, severity: "error", message: "connector " + name + " task " + task + " failed: " + firstLine(t.trace) });
      if (t && t.state === "RUNNING" && connected === 0) alerts.push({ key: "disconnected/" + name + "/" + task, severity: "warn", message: "connector " + name + " task " + task + " is not connected to its database" });
      const tr = el("tr", { class: "task", "data-connector": name, "data-task": task });
      tr.append(
        el("td", {}, i === 0 ? name : ""),
        i === 0 ? traceCell("c/" + name, c.state, c.trace) : el("td"),
        el("td", {}, task === undefined ? "—" : task),
        t ? traceCell("t/" + name + "/" + task, t.state, t.trace) : el("td", {}, "—"),
        el("td", {}, t ? t.worker_id : c.worker_id),
        el("td", { class: "connected" }, connected === undefined ? "—" : connected ? "yes" : "no"),
        num("lag-ms", lagMs, lagMs === undefined ? "—" : fmtDuration(lagMs / 1000)),
        num("lag-bytes", lagBytes, slot ? fmtBytes(lagBytes) : "—"),
        num("eps", eps === undefined ? undefined : eps.toFixed(1), eps === undefined ? "—" : eps.toFixed(1)),
      );
      rows.push(tr);
    });
  }
  memory.events = events;
  fill("connectors", rows);
}

function renderSnapshots(metrics, now, alerts) {
  const rows = [];
  for (const s of pick(metrics, "cdcd_snapshot_tables", { state: "total" })) {
    if (!s.value) continue;
    const labels = { connector: s.labels.connector, task: s.labels.task };
    const running = one(metrics, "cdcd_snapshot_running", labels) === 1;
    const done = one(metrics, "cdcd_snapshot_tables", { ...labels, state: "done" }) || 0;
    const scanned = one(metrics, "cdcd_snapshot_rows_scanned", labels) || 0;
    const estimated = one(metrics, "cdcd_snapshot_rows_estimated", labels);
    const left = one(metrics, "cdcd_snapshot_remaining_seconds", labels);
    const key = labels.connector + "/" + labels.task;
    const prev = memory.snapshots.get(key);
    const since = prev && prev.rows === scanned ? prev.since : now;
    memory.snapshots.set(key, { rows: scanned, since });
    if (running && now - since >= STALL_MS) {
      alerts.push({ key: "stalled/" + key, severity: "warn", message: "the snapshot of connector " + labels.connector + " task " + labels.task + " has read no row for " + fmtDuration((now - since) / 1000) });
    }
    const fraction = estimated ? Math.min(1, scanned / estimated) : done / s.value;
    const state = running ? "running" : done >= s.value ? "completed" : "not running";
    rows.push(el("tr", { class: "snapshot", "data-connector": labels.connector, "data-task": labels.task },
      el("td", {}, labels.connector), el("td", {}, labels.task), el("td", { class: "state" }, state),
      num("tables", done, done + " / " + s.value),
      num("rows", scanned, scanned + (estimated ? " / ~" + estimated : "")),
      el("td", {}, el("progress", { max: "1", value: String(fraction) }), " " + Math.round(fraction * 100) + " %"),
      num("time-left", running ? left : undefined, running ? fmtDuration(left) : "—"),
    ));
  }
  fill("snapshots", rows);
}

function renderSlots(slots, alerts) {
  const rows = [];
  for (const srv of (slots ? slots.servers : [])) {
    if (!srv.up) alerts.push({ key: "server/" + srv.server, severity: "error", message: "cannot read the replication slots of " + srv.server + ": " + (srv.error || "unknown error") });
  }
  for (const s of (slots ? slots.slots : [])) {
    for (const a of s.alerts || []) {
      alerts.push({ key: "slot/" + s.server + "/" + s.slot_name + "/" + a.kind, severity: a.severity, since: Date.parse(a.since), message: s.server + ": " + a.message });
    }
    rows.push(el("tr", { class: "slot", "data-slot": s.slot_name, "data-server": s.server },
      el("td", {}, s.server), el("td", {}, s.slot_name), el("td", {}, s.connector || "—"),
      el("td", { class: "status " + s.status }, s.status),
      el("td", { class: s.active ? "active" : "" }, s.active ? "yes" : "no, for " + fmtDuration(s.inactive_seconds)),
      el("td", { class: "wal-status " + (s.wal_status || "") }, s.wal_status || "—"),
      num("retained", s.retained_wal_bytes, fmtBytes(s.retained_wal_bytes)),
      num("safe-wal", s.safe_wal_size, s.safe_wal_size === null ? "no limit" : fmtBytes(s.safe_wal_size)),
      num("growth", s.growth_bytes_per_second, s.growth_bytes_per_second === null ? "—" : fmtBytes(s.growth_bytes_per_second) + "/s"),
      num("time-to-full", s.time_to_full_seconds, s.time_to_full_seconds === null ? "unknown" : fmtDuration(s.time_to_full_seconds)),
    ));
  }
  fill("slots", rows);
}

// renderAlerts folds this poll's alerts into the recent ones: a new alert is kept from when it was first
// seen (or the time the daemon gives), one that went away stays listed as cleared until pushed out. After an
// incomplete poll (a request failed) nothing is cleared: the alert's source was not read.
function renderAlerts(current, now, complete) {
  const seen = new Set();
  for (const a of current) {
    seen.add(a.key);
    const known = memory.alerts.get(a.key);
    memory.alerts.set(a.key, { ...a, since: known && known.active ? known.since : a.since || now, active: true });
  }
  for (const [key, a] of memory.alerts) {
    if (complete && !seen.has(key) && a.active) memory.alerts.set(key, { ...a, active: false, cleared: now });
  }
  const list = [...memory.alerts.values()].sort((a, b) => (b.active - a.active) || (b.since - a.since));
  const active = list.filter((a) => a.active).length;
  document.getElementById("alert-count").textContent = active ? " (" + active + " active)" : "";
  for (const a of list.slice(MAX_ALERTS)) memory.alerts.delete(a.key);
  fill("alerts", list.slice(0, MAX_ALERTS).map((a) => el("tr", { class: "alert " + (a.active ? "" : "cleared"), "data-key": a.key },
    el("td", { class: a.severity }, a.severity), el("td", {}, fmtTime(a.since)), el("td", {}, a.message),
    el("td", {}, a.active ? "active" : "cleared " + fmtTime(a.cleared)))));
}

async function poll() {
  const problems = [];
  const attempt = (what, p) => p.catch((e) => { problems.push(what + ": " + e.message); return undefined; });
  const [info, health, status, slots, text] = await Promise.all([
    attempt("GET /", get("")),
    attempt("GET /health", get("health")),
    attempt("GET /connectors", get("connectors?expand=status")),
    attempt("GET /slots", get("slots")),
    attempt("GET /metrics", get("metrics", true)),
  ]);
  const now = Date.now();
  const metrics = parseMetrics(text);
  const alerts = [];
  if (info) document.getElementById("version").textContent = "version " + info.commit;
  const badge = document.getElementById("health");
  badge.textContent = health ? health.status : "unknown";
  badge.className = "badge " + (health ? health.status : "error");
  if (health && health.status !== "healthy") alerts.push({ key: "health", severity: "warn", message: health.message });
  if (status !== undefined) renderConnectors(status, slots, metrics, now, alerts);
  if (text !== undefined) renderSnapshots(metrics, now, alerts);
  if (slots !== undefined) renderSlots(slots, alerts);
  memory.at = now;
  renderAlerts(alerts, now, problems.length === 0);
  const problem = document.getElementById("problem");
  problem.textContent = problems.join("; ");
  problem.hidden = problems.length === 0;
  document.getElementById("updated").textContent = "updated " + fmtTime(now);
  document.documentElement.dataset.refreshes = String(++memory.refreshes);
}

async function loop() {
  try {
    await poll();
  } finally {
    setTimeout(loop, POLL_MS);
  }
}

loop();
