// tkgqa web UI: ask (POST /api/ask), evidence timeline and entity graph (Apache ECharts, served locally),
// program tree, neighbours (GET /api/kg/neighbors), compare, history, shareable ?q=&method= links.
"use strict";
const $ = (id) => document.getElementById(id);
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}
const state = { seq: 0, controller: null, last: null, methods: {}, kgName: "", charts: {} };
const HISTORY_KEY = "tkgqa.history";

async function api(path, init) {
  const res = await fetch(path, init);
  let body = null;
  try { body = await res.json(); } catch (_) { body = { error: res.status + " " + res.statusText, type: "HTTPError" }; }
  if (!res.ok) {
    const err = new Error((body && body.error) || ("HTTP " + res.status));
    err.body = body || {}; err.status = res.status; throw err;
  }
  return body;
}

// POST /api/ask/stream: server-sent events (queued, started, step, progress, answer | error); onProgress(event, data)
async function askStream(body, signal, onProgress) {
  const res = await fetch("/api/ask/stream", { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body), signal });
  if (!res.ok) {  // refused before it was queued: the plain JSON error
    let err = null; try { err = await res.json(); } catch (_) { err = { error: res.status + " " + res.statusText, type: "HTTPError" }; }
    throw Object.assign(new Error(err.error || ("HTTP " + res.status)), { body: err, status: res.status });
  }
  const reader = res.body.getReader(); const decoder = new TextDecoder(); let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut); buffer = buffer.slice(cut + 2);
      let event = "message"; let data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) event = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      const parsed = data ? JSON.parse(data) : {};
      if (event === "answer") return parsed;
      if (event === "error") throw Object.assign(new Error(parsed.error), { body: parsed, status: parsed.status });
      onProgress(event, parsed);
    }
  }
  throw Object.assign(new Error("the server closed the connection before answering"), { body: { type: "NetworkError" } });
}

function errorNode(err) {
  const type = (err.body && err.body.type) || (err.name === "AbortError" ? "Cancelled" : "NetworkError");
  let head = "Error";
  if (type === "LLMError") head = "The LLM failed (HTTP " + err.status + ") — this is an error, not an abstention";
  else if (type === "Timeout") head = "No answer within the deadline";
  else if (type === "Busy") head = "The server is busy";
  else if (err.status) head = "Error " + err.status + " (" + type + ")";
  const box = el("div", null, "notice error"); box.setAttribute("role", "alert");
  box.appendChild(el("strong", head + ": ")); box.appendChild(document.createTextNode(err.message));
  const sug = err.body && err.body.suggestions;
  if (sug && sug.length && !err.message.includes("did you mean")) box.appendChild(el("div", "Did you mean: " + sug.join(", "), "meta"));
  return box;
}

// --- dates -------------------------------------------------------------------------------------------
function dayMs(y, m, d) { return Date.UTC(y, m - 1, d); }
function isoRange(iso) {  // "2014" | "2014-11" | "2014-11-10" → [first ms, last ms]
  if (!iso) return null;
  const m = String(iso).match(/^(-?\d{1,4})(?:-(\d{2}))?(?:-(\d{2}))?/);
  if (!m) return null;
  const y = +m[1];
  if (m[3]) { const t = dayMs(y, +m[2], +m[3]); return [t, t]; }
  if (m[2]) return [dayMs(y, +m[2], 1), dayMs(y, +m[2] + 1, 1) - 864e5];
  return [dayMs(y, 1, 1), dayMs(y + 1, 1, 1) - 864e5];
}
function questionWindow(trace) {  // from the symbolic parse: "in 2014-11", "before 2015", "after 2014-03"
  const parse = (trace || []).find((s) => s && s.parse);
  const times = parse && parse.parse.times;
  if (!times || !times.length) return null;
  const m = String(times[0]).match(/^(in|before|after|during|since|until)?\s*(\S+)(?:\s+(?:and|to)\s+(\S+))?/);
  if (!m) return null;
  const a = isoRange(m[2]); if (!a) return null;
  const b = m[3] ? isoRange(m[3]) : null;
  if (m[1] === "before" || m[1] === "until") return { from: null, to: a[0], text: times[0] };
  if (m[1] === "after" || m[1] === "since") return { from: a[1], to: null, text: times[0] };
  return { from: a[0], to: b ? b[1] : a[1], text: times[0] };
}

// --- rendering ----------------------------------------------------------------------------------------
function entityLink(name, label) {
  const a = el("a", label || name, "entity"); a.href = "#neighbors"; a.title = name !== label ? name : "neighbours of " + label;
  a.addEventListener("click", (e) => { e.preventDefault(); showNeighbors(name); });
  return a;
}
function factTable(facts, answers) {
  if (!facts.length) return el("p", "no facts", "meta");
  const set = new Set(answers || []);
  const table = el("table"); const head = el("tr");
  for (const h of ["subject", "relation", "object", "start", "end"]) head.appendChild(el("th", h));
  table.appendChild(el("thead")).appendChild(head);
  const body = table.appendChild(el("tbody"));
  for (const f of facts) {
    const tr = el("tr", null, set.has(f.subject_label) || set.has(f.object_label) ? "answer-fact" : "");
    tr.appendChild(el("td")).appendChild(entityLink(f.subject, f.subject_label));
    const rel = el("td", f.relation_label); rel.title = f.relation; tr.appendChild(rel);
    tr.appendChild(el("td")).appendChild(entityLink(f.object, f.object_label));
    tr.appendChild(el("td", f.start || "", "date")); tr.appendChild(el("td", f.end || "", "date"));
    body.appendChild(tr);
  }
  return table;
}

function chart(id) {
  if (typeof echarts === "undefined") return null;
  if (!state.charts[id]) state.charts[id] = echarts.init($(id), null, { renderer: "canvas" });
  return state.charts[id];
}
function short(text, n) { return text.length > n ? text.slice(0, n - 1) + "…" : text; }

function drawTimeline(data) {
  const c = chart("timeline"); if (!c) return;
  const facts = (data.evidence || []).slice(0, 60);
  const answers = new Set(data.answers || []);
  const rows = facts.map((f) => f.subject_label + " · " + f.relation_label + " · " + f.object_label);
  const items = [];
  facts.forEach((f, i) => {
    const a = isoRange(f.start), b = isoRange(f.end || f.start) || a;
    if (!a) return;
    const hit = answers.has(f.subject_label) || answers.has(f.object_label);
    items.push({ value: [i, a[0], b[1] + 864e5, f.start + (f.end && f.end !== f.start ? " … " + f.end : ""), hit ? 1 : 0] });
  });
  const win = questionWindow(data.trace);
  const narrow = $("timeline").clientWidth < 500;
  const xs = items.flatMap((it) => [it.value[1], it.value[2]]);
  if (win) { if (win.from !== null) xs.push(win.from); if (win.to !== null) xs.push(win.to); }
  const lo = Math.min(...xs), hi = Math.max(...xs);
  const pad = Math.max(30 * 864e5, (hi - lo) * 0.05);
  $("timeline").style.height = Math.max(150, Math.min(460, 70 + rows.length * 24)) + "px";
  const mark = win ? { silent: true, itemStyle: { color: "rgba(255,196,0,0.18)" }, label: { show: !narrow, position: "insideTop", color: "#8a4b00", fontSize: 11 },
    data: [[{ name: "asked: " + win.text, xAxis: win.from ?? "min" }, { xAxis: win.to ?? "max" }]] } : undefined;
  c.setOption({
    animation: false,
    grid: { left: narrow ? 8 : 10, right: 16, top: 24, bottom: 28, containLabel: true },
    tooltip: { trigger: "item", confine: true, formatter: (p) => rows[p.value[0]] + "<br>" + p.value[3] },
    xAxis: { type: "time", min: lo - pad, max: hi + pad, axisLabel: { hideOverlap: true } },
    yAxis: { type: "category", data: rows, inverse: true, axisLabel: { width: narrow ? 90 : 220, overflow: "truncate", fontSize: 11 } },
    series: [{
      type: "custom", encode: { x: [1, 2], y: 0 }, markArea: mark,
      renderItem: (params, api) => {
        const y = api.coord([0, api.value(0)])[1];
        const x0 = api.coord([api.value(1), 0])[0], x1 = api.coord([api.value(2), 0])[0];
        const h = Math.min(16, api.size([0, 1])[1] * 0.6);
        const color = api.value(4) ? "#1a7f43" : "#7f8ca3";
        if (x1 - x0 < 6) return { type: "circle", shape: { cx: (x0 + x1) / 2, cy: y, r: Math.max(4, Math.min(7, h / 2)) }, style: { fill: color } };
        return { type: "rect", shape: { x: x0, y: y - h / 2, width: x1 - x0, height: h, r: 3 }, style: { fill: color } };
      },
      data: items,
    }],
  }, true);
  c.resize();
}

function drawGraph(data) {
  const c = chart("graph"); if (!c) return;
  const answers = new Set(data.answers || []);
  const nodes = new Map(); const links = [];
  for (const f of (data.evidence || []).slice(0, 40)) {
    for (const [n, l] of [[f.subject, f.subject_label], [f.object, f.object_label]]) {
      if (!nodes.has(n)) nodes.set(n, { id: n, name: short(l, 28), symbolSize: answers.has(l) ? 22 : 14,
        itemStyle: { color: answers.has(l) ? "#1a7f43" : "#2357c6" } });
    }
    links.push({ source: f.subject, target: f.object, value: f.relation_label + (f.start ? " (" + f.start + ")" : "") });
  }
  c.setOption({
    animation: false,
    tooltip: { confine: true, formatter: (p) => (p.dataType === "edge" ? p.data.value : p.data.name) },
    series: [{ type: "graph", layout: "force", roam: true, draggable: true, data: [...nodes.values()], links,
      force: { repulsion: 200, edgeLength: 110 }, label: { show: true, fontSize: 11 }, edgeSymbol: ["none", "arrow"],
      lineStyle: { color: "#9aa6bb" } }],
  }, true);
  c.off("click"); c.on("click", (p) => { if (p.dataType === "node") showNeighbors(p.data.id); });
  c.resize();
}

function treeNode(node, empty) {
  const li = el("li", null, node.ran || node.facts === null ? "" : "skipped");
  if (empty && node.text === empty) li.classList.add("empty");
  const line = li.appendChild(el("span", null, "node"));
  if (node.op === "value") { line.textContent = node.text; return li; }
  line.appendChild(el("span", node.op === "??" ? "first non-empty of" : node.op, "op"));
  if (node.args.length) line.appendChild(document.createTextNode(" " + node.args.join(", ")));
  if (node.facts !== null) line.appendChild(el("span", node.facts + (node.facts === 1 ? " fact" : " facts"), "count"));
  else if (!node.ran && node.op !== "entities" && node.op !== "times") line.appendChild(el("span", "not run", "count"));
  if (node.children.length) {
    const ul = li.appendChild(el("ul"));
    for (const child of node.children) ul.appendChild(treeNode(child, empty));
  }
  return li;
}
function renderProgram(data) {
  const list = $("program"); list.replaceChildren();
  if (data.program) { list.appendChild(treeNode(data.program.tree, data.program.empty_step)); $("program-block").classList.remove("hidden"); return; }
  const steps = (data.trace || []).filter((s) => s && (s.action || s.step !== undefined));
  if (!steps.length) { $("program-block").classList.add("hidden"); return; }
  $("program-block").classList.remove("hidden");
  for (const s of steps.slice(0, 50)) {
    const li = el("li"); li.appendChild(el("span", "step " + (s.step ?? ""), "op"));
    li.appendChild(document.createTextNode(" " + (s.action || s.note || JSON.stringify(s).slice(0, 200))));
    if (s.result) li.appendChild(el("div", "→ " + String(s.result).slice(0, 300), "meta"));
    list.appendChild(li);
  }
}

function usageText(data) {
  const u = data.usage || {}; const parts = [data.latency_ms + " ms"];
  if (u.llm_calls) {
    const cached = u.cached_calls || 0;
    parts.push(u.llm_calls + " LLM call" + (u.llm_calls === 1 ? "" : "s") + (cached ? " (" + cached + " from cache)" : ""));
    parts.push((u.prompt_tokens + u.completion_tokens).toLocaleString() + " tokens");
    parts.push("$" + Number(u.cost_usd || 0).toFixed(4) + (cached === u.llm_calls ? " (cache hits cost $0)" : ""));
  } else parts.push("no LLM calls · $0");
  return parts.join(" · ");
}

function contextNode(q, method, llm, kg, asOf) {
  const p = $("context"); p.replaceChildren();
  p.append("Question: "); p.appendChild(el("b", q));
  p.append(" · method "); p.appendChild(el("b", method));
  p.append(" · LLM "); p.appendChild(el("b", llm || "none"));
  p.append(" · KG "); p.appendChild(el("b", (kg || state.kgName) + (asOf ? " as of " + asOf : "")));
}

function showResult(data) {
  state.last = data;
  $("result").classList.remove("hidden"); $("result-body").classList.remove("hidden");
  contextNode(data.question, data.method, data.llm, data.kg, data.as_of);
  const answers = $("answers"); answers.replaceChildren();
  data.answers.forEach((a, i) => {
    const li = el("li", null, "answer");
    if (data.answers.length > 1) li.appendChild(el("span", "#" + (i + 1), "rank"));
    li.appendChild(document.createTextNode(a)); answers.appendChild(li);
  });
  const notice = $("notice"); notice.replaceChildren();
  if (data.abstained || !data.answers.length) {
    const box = el("div", null, "notice abstained"); box.appendChild(el("strong", "No answer (the method abstained): "));
    box.append(data.reason || "no reason given");
    if (data.missing) box.appendChild(el("div", "Missing: " + data.missing));
    notice.appendChild(box);
  } else if (!data.grounded) {
    const b = el("span", "not grounded", "badge"); b.title = "the answer cites no KG fact"; answers.appendChild(b);
  }
  $("status").textContent = usageText(data);
  $("answer-tools").classList.remove("hidden");
  const hasEvidence = (data.evidence || []).length > 0;
  $("evidence-block").classList.toggle("hidden", !hasEvidence);
  $("evidence").replaceChildren(factTable(data.evidence || [], data.answers));
  if (hasEvidence) { drawTimeline(data); drawGraph(data); }
  renderProgram(data);
  $("trace").textContent = JSON.stringify(data.trace, null, 2);
}

function showError(err, q, method, llm, asOf) {
  state.last = null;
  $("result").classList.remove("hidden"); $("result-body").classList.remove("hidden");
  contextNode(q, method, llm, state.kgName, asOf);
  $("answers").replaceChildren(); $("notice").replaceChildren(errorNode(err));
  $("status").textContent = ""; $("answer-tools").classList.add("hidden");
  $("evidence-block").classList.add("hidden"); $("program-block").classList.add("hidden"); $("trace").textContent = "";
}

// --- asking -------------------------------------------------------------------------------------------
function currentRequest() {
  const method = $("method").value; const info = state.methods[method.split(":")[0]];
  const body = { question: $("question").value.trim() };
  if (method) body.method = method;
  if (info && info.uses_llm && $("llm").value) body.llm = $("llm").value;
  if ($("as-of").value.trim()) body.as_of = $("as-of").value.trim();
  return body;
}
function setRunning(on, text) {
  $("running").classList.toggle("hidden", !on); $("running-text").textContent = text || "Answering…";
  $("cancel-button").classList.toggle("hidden", !on);
  $("result").setAttribute("aria-busy", on ? "true" : "false");
}
function cancel() { if (state.controller) state.controller.abort(); }
// One step of a multi-step method (ARI action, R3 branch/check/expansion), streamed as a `step` event.
function addStep(step) {
  const list = $("steps"); list.classList.remove("hidden");
  const li = el("li"); li.dataset.kind = step.kind;
  li.appendChild(el("span", step.kind, "kind"));
  li.appendChild(el("span", step.label));
  if (step.count !== null && step.count !== undefined) li.appendChild(el("span", "→ " + step.count + (step.count === 1 ? " result" : " results"), "count"));
  if (step.ok === true) li.appendChild(el("span", "✓ passed", "ok"));
  else if (step.ok === false) li.appendChild(el("span", "✗ failed", "failed"));
  list.appendChild(li); list.scrollTop = list.scrollHeight;
}
function clearSteps() { $("steps").replaceChildren(); $("steps").classList.add("hidden"); }

async function ask(event) {
  if (event) event.preventDefault();
  hideSuggest();
  const body = currentRequest();
  cancel();  // a newer question replaces the one in flight
  const seq = ++state.seq; clearSteps();
  if (!body.question) {
    showError(Object.assign(new Error("the question is empty: type a question first"), { body: { type: "ConfigError" }, status: 400 }), "", body.method, body.llm, body.as_of);
    return;
  }
  const controller = new AbortController(); state.controller = controller;
  $("result").classList.remove("hidden"); $("result-body").classList.add("hidden");
  setRunning(true, "Answering “" + short(body.question, 80) + "” with " + (body.method || "the default method") + "…");
  updateUrl(body);
  try {
    const label = "“" + short(body.question, 80) + "” with " + (body.method || "the default method");
    const data = await askStream(body, controller.signal, (event, info) => {
      if (seq !== state.seq) return;
      if (event === "step") { addStep(info); return; }
      const secs = info.elapsed_ms !== undefined ? " (" + (info.elapsed_ms / 1000).toFixed(0) + " s)" : "";
      if (event === "queued") $("running-text").textContent = "Queued " + label + "…";
      else $("running-text").textContent = (info.running === false ? "Queued " : "Answering ") + label + "…" + secs;
    });
    if (seq !== state.seq) return;  // a newer question was asked meanwhile: never show a stale answer
    clearSteps(); showResult(data); addHistory(body, data);
  } catch (err) {
    if (seq !== state.seq) return;
    const shown = err.name === "AbortError"
      ? Object.assign(new Error("cancelled; no answer was shown"), { body: { type: "Cancelled" } }) : err;
    showError(shown, body.question, body.method || "default", body.llm, body.as_of);
  } finally {
    if (seq === state.seq) { setRunning(false); state.controller = null; }
  }
}

async function compare() {
  const q = $("question").value.trim();
  const picked = [...document.querySelectorAll("#compare-methods input:checked")].map((i) => i.value);
  const grid = $("compare-grid"); grid.replaceChildren(); $("compare-result").classList.remove("hidden");
  if (!q || !picked.length) { grid.appendChild(errorNode(new Error(!q ? "type a question first" : "tick at least one method"))); return; }
  $("compare-context").textContent = "Question: " + q + " · KG " + state.kgName;
  await Promise.all(picked.map(async (method) => {
    const box = grid.appendChild(el("div")); box.appendChild(el("h3", method));
    const wait = box.appendChild(el("p", null, "meta")); wait.appendChild(el("span", null, "spinner")); wait.append(" answering…");
    const body = { question: q, method }; const info = state.methods[method.split(":")[0]];
    if (info && info.uses_llm && $("llm").value) body.llm = $("llm").value;
    try {
      const d = await api("/api/ask", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
      wait.remove();
      box.appendChild(el("p", d.answers.length ? d.answers.map((a, i) => (i + 1) + ". " + a).join("  ") : "no answer: " + (d.reason || ""), d.answers.length ? "" : "meta"));
      box.appendChild(el("p", d.evidence.length + " evidence facts · " + usageText(d), "meta"));
      const open = box.appendChild(el("button", "Open", "secondary")); open.type = "button";
      open.addEventListener("click", () => showResult(d));
    } catch (err) { wait.remove(); box.appendChild(errorNode(err)); }
  }));
}

// --- neighbours ---------------------------------------------------------------------------------------
async function showNeighbors(name) {
  const sec = $("neighbors"); const out = $("neighbors-body"); sec.classList.remove("hidden");
  out.replaceChildren(el("span", null, "spinner"));
  try {
    const d = await api("/api/kg/neighbors?" + new URLSearchParams({ entity: name, limit: "30" }));
    $("neighbors-title").textContent = "Neighbours of " + d.label;
    out.replaceChildren(el("p", d.n_facts + " facts, " + d.n_neighbors + " neighbours, " + (d.first || "?") + " … " + (d.last || "?"), "meta"));
    const chips = out.appendChild(el("div", null, "chips"));
    for (const n of d.neighbors) { const a = entityLink(n.name, n.label + " (" + n.facts + ")"); a.classList.add("chip"); chips.appendChild(a); }
    out.appendChild(el("div", null, "scroll")).appendChild(factTable(d.facts, []));
  } catch (err) { out.replaceChildren(errorNode(err)); }
  sec.scrollIntoView({ block: "nearest" });
}

// --- autocomplete: "@name" lists KG entities; ArrowDown/ArrowUp move, Enter/Tab insert, Escape closes ---
let suggestTimer = null; let suggestions = []; let active = -1; let mention = null;
function mentionAt(input) {
  const upto = input.value.slice(0, input.selectionStart);
  const m = upto.match(/@([^@]{1,60})$/);
  return m ? { text: m[1], start: upto.length - m[0].length, end: upto.length } : null;
}
function hideSuggest() {
  $("entity-suggest").classList.add("hidden"); $("question").setAttribute("aria-expanded", "false");
  $("question").removeAttribute("aria-activedescendant"); suggestions = []; active = -1;
}
function highlight(i) {
  active = i;
  [...$("entity-suggest").children].forEach((li, j) => li.setAttribute("aria-selected", j === i ? "true" : "false"));
  if (i >= 0) { $("question").setAttribute("aria-activedescendant", "sugg-" + i); $("sugg-" + i).scrollIntoView({ block: "nearest" }); }
}
function choose(i) {
  const input = $("question"); const c = suggestions[i]; if (!c || !mention) return;
  input.value = input.value.slice(0, mention.start) + c.label + input.value.slice(mention.end);
  const pos = mention.start + c.label.length; input.setSelectionRange(pos, pos); hideSuggest(); input.focus();
}
async function suggest() {
  const input = $("question"); const m = mentionAt(input); const list = $("entity-suggest");
  if (!m || m.text.trim().length < 2) { hideSuggest(); return; }
  try {
    const data = await api("/api/entities?" + new URLSearchParams({ q: m.text.trim(), k: "8" }));
    const now = mentionAt(input); if (!now || now.text !== m.text) return;  // the user typed on
    mention = m; suggestions = data.candidates.filter((c) => c.score >= 0.6); list.replaceChildren();
    suggestions.forEach((c, i) => {
      const li = el("li", c.label); li.id = "sugg-" + i; li.setAttribute("role", "option");
      if (c.label !== c.name) li.appendChild(el("span", c.name, "meta"));
      li.addEventListener("mousedown", (e) => { e.preventDefault(); choose(i); });
      list.appendChild(li);
    });
    const open = suggestions.length > 0;
    list.classList.toggle("hidden", !open); input.setAttribute("aria-expanded", open ? "true" : "false");
    highlight(open ? 0 : -1);
  } catch (_) { hideSuggest(); }
}
function onQuestionKey(e) {
  if (!suggestions.length || $("entity-suggest").classList.contains("hidden")) return;
  if (e.key === "ArrowDown") { e.preventDefault(); highlight((active + 1) % suggestions.length); }
  else if (e.key === "ArrowUp") { e.preventDefault(); highlight((active - 1 + suggestions.length) % suggestions.length); }
  else if ((e.key === "Enter" || e.key === "Tab") && active >= 0) { e.preventDefault(); choose(active); }
  else if (e.key === "Escape") { e.preventDefault(); hideSuggest(); }
}

// --- URL, history, export -----------------------------------------------------------------------------
function updateUrl(body) {
  const p = new URLSearchParams({ q: body.question });
  if (body.method) p.set("method", body.method);
  if (body.llm) p.set("llm", body.llm);
  if (body.as_of) p.set("as_of", body.as_of);
  history.replaceState(null, "", "?" + p.toString());
}
function loadHistory() { try { return JSON.parse(localStorage.getItem(HISTORY_KEY) || "[]"); } catch (_) { return []; } }
function addHistory(body, data) {
  const items = loadHistory().filter((h) => !(h.q === body.question && h.method === body.method));
  items.unshift({ q: body.question, method: data.method, llm: data.llm || "", as_of: body.as_of || "", answers: data.answers.slice(0, 3) });
  try { localStorage.setItem(HISTORY_KEY, JSON.stringify(items.slice(0, 20))); } catch (_) { /* storage full or off */ }
  renderHistory();
}
function renderHistory() {
  const items = loadHistory(); const list = $("history"); list.replaceChildren();
  $("history-section").classList.toggle("hidden", !items.length);
  for (const h of items) {
    const li = list.appendChild(el("li")); const a = li.appendChild(el("a", h.q, "entity")); a.href = "#";
    a.addEventListener("click", (e) => { e.preventDefault(); fill(h); ask(); });
    li.append(" — " + h.method + ": " + (h.answers.join(", ") || "no answer"));
  }
}
function fill(h) {
  $("question").value = h.q || "";
  if (h.method && [...$("method").options].some((o) => o.value === h.method)) $("method").value = h.method;
  syncMethod();
  if (h.llm && [...$("llm").options].some((o) => o.value === h.llm)) $("llm").value = h.llm;
  $("as-of").value = h.as_of || "";
}
function exportJson() {
  if (!state.last) return;
  const blob = new Blob([JSON.stringify(state.last, null, 2)], { type: "application/json" });
  const a = el("a"); a.href = URL.createObjectURL(blob); a.download = "tkgqa-answer.json";
  document.body.appendChild(a); a.click(); a.remove(); setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}
async function copyLink() {
  try { await navigator.clipboard.writeText(location.href); $("link-button").textContent = "Link copied"; }
  catch (_) { $("link-button").textContent = "Copy failed: see the address bar"; }
  setTimeout(() => { $("link-button").textContent = "Copy link"; }, 2000);
}

// --- explore, append ----------------------------------------------------------------------------------
async function runQuery(event) {
  event.preventDefault();
  const params = new URLSearchParams();
  for (const [k, v] of new FormData($("query-form"))) if (String(v).trim()) params.set(k, String(v).trim());
  const out = $("query-result");
  try {
    const data = await api("/api/kg/query?" + params.toString());
    out.replaceChildren(el("p", data.op + ": " + data.count + " facts", "meta"), factTable(data.facts, []));
  } catch (err) { out.replaceChildren(errorNode(err)); }
}
async function appendFacts(event) {
  event.preventDefault();
  const out = $("append-result");
  try {
    const d = await api("/api/kg/facts", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ lines: $("append-lines").value }) });
    out.textContent = d.added + " new facts; the KG now has " + d.facts.toLocaleString() + " facts";
  } catch (err) { out.replaceChildren(errorNode(err)); }
}

// --- runs browser ---------------------------------------------------------------------------------------
function pct(x) { return x === null || x === undefined ? "" : (100 * x).toFixed(1); }
async function loadRuns() {
  const out = $("runs-list");
  try {
    const d = await api("/api/runs");
    if (!d.runs.length) { out.replaceChildren(el("p", "no runs in the runs folder", "meta")); return; }
    const table = el("table"); const head = el("tr");
    for (const h of ["run", "method", "dataset", "n", "strict Hits@1", "answered %", "errors"]) head.appendChild(el("th", h));
    table.appendChild(el("thead")).appendChild(head); const body = table.appendChild(el("tbody"));
    for (const r of d.runs) {
      const tr = body.appendChild(el("tr")); const a = el("a", r.name, "entity"); a.href = "#run-view";
      a.addEventListener("click", (e) => { e.preventDefault(); showRun(r.name); });
      tr.appendChild(el("td")).appendChild(a);
      for (const v of [r.method, r.dataset, r.n, pct(r.strict_hits_at_1), pct(r.answered), r.errors]) tr.appendChild(el("td", v ?? ""));
    }
    out.replaceChildren(table);
  } catch (err) { out.replaceChildren(errorNode(err)); }
}
async function showRun(name) {
  $("run-view").classList.remove("hidden");
  try {
    const r = await api("/api/runs/" + encodeURIComponent(name));
    $("run-title").textContent = r.name + " — " + (r.method || "?") + " on " + (r.dataset || "?") + ", " + r.n + " questions";
    const img = $("run-chart"); img.classList.toggle("hidden", !r.has_chart);
    if (r.has_chart) img.src = "/api/runs/" + encodeURIComponent(name) + "/chart";
    $("run-report").textContent = r.report_md;
    const filters = $("run-filters"); filters.replaceChildren();
    for (const o of ["all", "correct", "wrong", "abstained", "error"]) {
      const b = el("button", o + " (" + r.counts[o] + ")", "secondary"); b.type = "button"; b.dataset.outcome = o;
      b.addEventListener("click", () => showRunResults(name, o)); filters.appendChild(b);
    }
    showRunResults(name, r.counts.wrong ? "wrong" : "all");
  } catch (err) { $("run-results").replaceChildren(errorNode(err)); }
}
async function showRunResults(name, outcome) {
  for (const b of $("run-filters").children) b.setAttribute("aria-pressed", b.dataset.outcome === outcome ? "true" : "false");
  const out = $("run-results");
  try {
    const d = await api("/api/runs/" + encodeURIComponent(name) + "/results?" + new URLSearchParams({ outcome, limit: "100" }));
    const table = el("table"); const head = el("tr");
    for (const h of ["question", "answer", "gold", "outcome", ""]) head.appendChild(el("th", h));
    table.appendChild(el("thead")).appendChild(head); const body = table.appendChild(el("tbody"));
    for (const row of d.results) {
      const tr = body.appendChild(el("tr"));
      tr.appendChild(el("td", row.question)); tr.appendChild(el("td", row.answers.slice(0, 3).join(", ")));
      tr.appendChild(el("td", row.gold.join(", "))); tr.appendChild(el("td", row.outcome));
      const open = el("button", "Open", "secondary"); open.type = "button";
      open.addEventListener("click", () => { showResult(row); $("result").scrollIntoView({ block: "start" }); });
      tr.appendChild(el("td")).appendChild(open);
    }
    out.replaceChildren(el("p", d.total + " " + outcome + (d.total > d.results.length ? " (first " + d.results.length + " shown)" : ""), "meta"), table);
  } catch (err) { out.replaceChildren(errorNode(err)); }
}

// --- start --------------------------------------------------------------------------------------------
function syncMethod() {
  const info = state.methods[$("method").value.split(":")[0]];
  $("method-desc").textContent = info ? info.description : "";
  const llm = $("llm"); llm.disabled = !(info && info.uses_llm);
  llm.title = llm.disabled ? "this method uses no LLM" : "";
}

async function init() {
  $("ask-form").addEventListener("submit", ask);
  $("cancel-button").addEventListener("click", cancel);
  $("compare-button").addEventListener("click", compare);
  $("query-form").addEventListener("submit", runQuery);
  $("append-form").addEventListener("submit", appendFacts);
  $("export-button").addEventListener("click", exportJson);
  $("link-button").addEventListener("click", copyLink);
  $("clear-history").addEventListener("click", () => { localStorage.removeItem(HISTORY_KEY); renderHistory(); });
  $("method").addEventListener("change", syncMethod);
  const q = $("question");
  q.addEventListener("input", () => { clearTimeout(suggestTimer); suggestTimer = setTimeout(suggest, 120); });
  q.addEventListener("keydown", onQuestionKey);
  q.addEventListener("blur", () => setTimeout(hideSuggest, 100));
  window.addEventListener("resize", () => Object.values(state.charts).forEach((c) => c.resize()));
  renderHistory();
  try {
    const kg = await api("/api/kg");
    state.kgName = kg.name;
    $("kg-info").textContent = "KG " + kg.name + ": " + kg.facts.toLocaleString() + " facts, " +
      kg.entities.toLocaleString() + " entities, " + kg.relations + " relations, " + (kg.start || "?") + " … " + (kg.end || "?");
    for (const r of kg.top_relations) $("rel-list").appendChild(Object.assign(el("option"), { value: r.relation }));
    $("append-section").classList.toggle("hidden", !kg.appendable);
    $("runs-section").classList.toggle("hidden", !kg.runs);
    if (kg.runs) loadRuns();
  } catch (err) { $("kg-info").textContent = "could not load the KG summary: " + err.message; }
  try {
    const m = await api("/api/methods");
    const sel = $("method"); const checks = $("compare-methods");
    for (const x of m.methods) {
      state.methods[x.name] = x;
      sel.appendChild(Object.assign(el("option", x.name + (x.uses_llm ? " (LLM)" : "")), { value: x.name }));
      const lab = checks.appendChild(el("label")); const cb = lab.appendChild(Object.assign(el("input"), { type: "checkbox", value: x.name }));
      cb.checked = x.name === m.default || x.name === "ari"; lab.append(x.name);
    }
    for (const p of m.presets) sel.appendChild(Object.assign(el("option", p), { value: p }));
    if (![...sel.options].some((o) => o.value === m.default)) sel.appendChild(Object.assign(el("option", m.default), { value: m.default }));
    sel.value = m.default;
    const llm = $("llm");
    for (const p of m.llm_presets) llm.appendChild(Object.assign(el("option", p), { value: p }));
    if (!m.llm_presets.length) llm.appendChild(Object.assign(el("option", "none configured"), { value: "" }));
    if (m.default_llm) llm.value = m.default_llm;
    syncMethod();
  } catch (err) { $("method-desc").replaceChildren(errorNode(err)); }
  try {
    const ex = await api("/api/examples"); const box = $("examples"); box.replaceChildren();
    if (!ex.examples.length) $("examples-section").classList.add("hidden");
    const source = ex.examples.length && ex.examples[0].source;
    if (source) $("examples-title").textContent = "Example questions from " + source + (ex.examples[0].qtype ? " (one per question type)" : "");
    for (const e of ex.examples) {
      const chip = el("button", e.question, "chip"); chip.type = "button";
      const gold = e.answers && e.answers.length ? "gold: " + e.answers.join(", ") : "";
      chip.title = [e.qtype, gold].filter(Boolean).join(" · ");
      chip.addEventListener("click", () => { $("question").value = e.question; ask(); });
      box.appendChild(chip);
    }
  } catch (_) { $("examples-section").classList.add("hidden"); }
  const params = new URLSearchParams(location.search);
  if (params.get("q")) { fill({ q: params.get("q"), method: params.get("method"), llm: params.get("llm"), as_of: params.get("as_of") }); ask(); }
}
init();
