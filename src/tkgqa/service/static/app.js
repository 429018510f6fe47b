// tkgqa web UI, the page: ask (POST /api/ask/stream) with live steps, compare methods side by side, history,
// shareable links that carry exactly what is on screen (?q=&method=&llm=&as_of=, or ?run=&qid= for a run's
// row); a link naming a method the server does not offer is an error on the page, never a substitute.
"use strict";
const state = { seq: 0, controller: null, last: null, methods: {}, presets: {}, kgName: "", llmAvailable: false, charts, server: null };
const HISTORY_KEY = "tkgqa.history";

// --- methods: what needs an LLM, and whether the server has one ------------------------------------------
function methodInfo(spec) { return state.presets[spec] || state.methods[String(spec).split(":")[0]] || null; }
function needsLlm(spec) { const i = methodInfo(spec); return !!(i && i.needs_llm); }
function llmMissing(spec) { return needsLlm(spec) && !state.llmAvailable; }
function offered(spec) { return [...$("method").options].some((o) => o.value === spec); }

function currentRequest(options) {
  const method = $("method").value; const info = methodInfo(method);
  const body = { question: $("question").value.trim() };
  if (method) body.method = method;
  if (info && info.uses_llm && $("llm").value) body.llm = $("llm").value;
  if ($("as-of").value.trim()) body.as_of = $("as-of").value.trim();
  if (options) body.options = options;
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
  if (step.count !== null && step.count !== undefined) li.appendChild(el("span", "→ " + plural(step.count, "result"), "count"));
  if (step.ok === true) li.appendChild(el("span", "✓ passed", "ok"));
  else if (step.ok === false) li.appendChild(el("span", "✗ failed", "failed"));
  list.appendChild(li); list.scrollTop = list.scrollHeight;
}
function clearSteps() { $("steps").replaceChildren(); $("steps").classList.add("hidden"); }
const warmed = new Set();  // methods this page has had answered: the first question to one also loads it
// What the server is loading right now (GET /api/status, the stream's `loading` event): "Loading MiniLM…"
// rather than only "Answering…" while a first question waits for a model.
function loadingText(loads) {
  if (!loads || !loads.length) return "";
  const secs = Math.round(Math.max(...loads.map((x) => x.elapsed_ms || 0)) / 1000);
  return "Loading " + loads.map((x) => x.what).join(", ") + "… (" + secs + " s; the first question to a method loads its model, once per server)";
}
function showLoading(loads) {
  const text = loadingText(loads); $("running").dataset.loading = (loads || []).map((x) => x.what).join(", ");
  if (text) $("running-text").textContent = text;
  return !!text;
}
function progressText(label, info, steps, method) {
  const secs = info.elapsed_ms !== undefined ? Math.round(info.elapsed_ms / 1000) : 0;
  if (info.running === false) return "Queued " + label + "… (" + secs + " s)";
  let text = "Answering " + label + "… (" + secs + " s)";
  if (!steps && secs >= 2 && !warmed.has(method)) text += " — the first question to a method also loads it (and its model, if it has one); this can take a while";
  return text;
}

async function ask(event, options, fromLink) {
  if (event) event.preventDefault();
  if (!fromLink) $("link-notice").replaceChildren();  // the notice is about the link's own question
  hideSuggest();
  const body = currentRequest(options);
  cancel();  // a newer question replaces the one in flight
  const seq = ++state.seq; clearSteps();
  if (!body.question) {
    showError(Object.assign(new Error("the question is empty: type a question first"), { body: { type: "ConfigError" }, status: 400 }), "", body.method, body.llm, body.as_of);
    return;
  }
  if (llmMissing(body.method)) {
    showError(Object.assign(new Error("the method " + body.method + " needs an LLM and this server has none"),
      { body: { type: "ConfigError" }, status: 400 }), body.question, body.method, null, body.as_of);
    return;
  }
  const controller = new AbortController(); state.controller = controller;
  $("result").classList.remove("hidden"); $("result-body").classList.add("hidden");
  const label = "“" + short(body.question, 80) + "” with " + (body.method || "the default method");
  setRunning(true, "Answering " + label + "…"); $("running").dataset.loading = "";
  updateUrl(body);
  let steps = 0;
  try {
    const data = await askStream(body, controller.signal, (event, info) => {
      if (seq !== state.seq) return;
      if (event === "step") { steps++; addStep(info); return; }
      if (event === "loading" || (event === "progress" && info.loading && info.loading.length)) {
        if (showLoading(info.loading)) return;
      }
      if (event === "queued") $("running-text").textContent = "Queued " + label + "…";
      else $("running-text").textContent = progressText(label, info, steps, body.method);
    });
    if (seq !== state.seq) return;  // a newer question was asked meanwhile: never show a stale answer
    warmed.add(body.method);
    if (body.options) data.request_options = body.options;  // the link and the export carry them
    clearSteps(); showResult(data, { url: false }); addHistory(body, data);
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
  const q = $("question").value.trim(); const asOf = $("as-of").value.trim();
  const picked = [...document.querySelectorAll("#compare-methods input:checked")].map((i) => i.value);
  const grid = $("compare-grid"); grid.replaceChildren(); $("compare-result").classList.remove("hidden");
  if (!q || !picked.length) { grid.appendChild(errorNode(new Error(!q ? "type a question first" : "tick at least one method"))); return; }
  $("compare-context").textContent = "Question: " + q + " · KG " + state.kgName + (asOf ? " · facts up to " + asOf : "");
  await Promise.all(picked.map(async (method) => {
    const box = grid.appendChild(el("div")); box.appendChild(el("h3", method));
    const wait = box.appendChild(el("p", null, "meta")); wait.appendChild(el("span", null, "spinner")); wait.append(" answering…");
    const body = { question: q, method }; const info = methodInfo(method);
    if (info && info.uses_llm && $("llm").value) body.llm = $("llm").value;
    if (asOf) body.as_of = asOf;
    try {
      const d = await postJson("/api/ask", body);
      wait.remove();
      box.appendChild(el("p", d.answers.length ? d.answers.map((a, i) => (i + 1) + ". " + a).join("  ") : "no answer: " + plainReason(d.reason), d.answers.length ? "" : "meta"));
      const cover = coverOf(d);
      box.appendChild(el("p", plural(d.evidence.length, "evidence fact") + (cover.answers ? " for " + cover.with_evidence + " of " + plural(cover.answers, "answer") : "") + " · " + usageText(d), "meta"));
      if (d.program) box.appendChild(el("p", "program: " + short(d.program.tree.text, 160), "meta mono"));
      const open = box.appendChild(el("button", "Open", "secondary")); open.type = "button";
      open.addEventListener("click", () => { showResult(d); $("result").scrollIntoView({ block: "start" }); });
    } catch (err) { wait.remove(); box.appendChild(errorNode(err)); }
  }));
}

// --- URL, history, export -----------------------------------------------------------------------------
// A link carries exactly what is on screen: the question, the method spec with its options, the request's
// options (opt, JSON), the LLM, the as-of date, and the KG fingerprint and server version it was made on.
function updateUrl(body) {
  const p = new URLSearchParams({ q: body.question });
  if (body.method) p.set("method", body.method);
  if (body.options && Object.keys(body.options).length) p.set("opt", JSON.stringify(body.options));
  if (body.llm) p.set("llm", body.llm);
  if (body.as_of) p.set("as_of", body.as_of);
  if (state.server) { p.set("kg", state.server.kg_fingerprint); p.set("v", state.server.version); }
  history.replaceState(null, "", "?" + p.toString());
}
// A link made on another KG (fingerprint) or another tkgqa version: said on the page, never silently.
function linkNotice(params) {
  const box = $("link-notice"); box.replaceChildren();
  const s = state.server; if (!s) return;
  const kg = params.get("kg"); const v = params.get("v"); const lines = [];
  if (kg && kg !== s.kg_fingerprint) lines.push("it was made on a KG with fingerprint " + kg + "; this server's KG " + s.kg + " has " + s.kg_fingerprint + " (other facts, or facts appended since)");
  if (v && v !== s.version) lines.push("it was made with tkgqa " + v + "; this server runs " + s.version);
  if (!lines.length) return;
  const p = box.appendChild(el("div", null, "notice abstained")); p.setAttribute("role", "status");
  p.appendChild(el("strong", "This link differs from this server: "));
  p.append(lines.join("; ") + ". The answer below is this server's and may differ from what the link's author saw.");
}
async function loadStatus() {
  try { state.server = await api("/api/status"); } catch (_) { state.server = null; }
  return state.server;
}
function showInForm(data) {  // the form and the URL follow what the answer view shows
  if (data.run) {
    history.replaceState(null, "", "?" + new URLSearchParams({ run: data.run, qid: data.qid || "" }).toString());
    return;
  }
  $("question").value = data.question || "";
  if (data.method && offered(data.method)) { $("method").value = data.method; syncMethod(); }
  $("as-of").value = data.as_of || "";
  updateUrl({ question: data.question || "", method: data.method, llm: data.llm, as_of: data.as_of, options: data.request_options });
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
    a.addEventListener("click", (e) => { e.preventDefault(); if (fill(h)) ask(); });
    li.append(" — " + h.method + ": " + (h.answers.join(", ") || "no answer"));
  }
}
// Fill the form from a link or the history; false (with the error shown) when it names what the server does
// not offer: an unknown method, a preset or option outside its allow-list, an LLM it does not have.
function fill(h) {
  $("question").value = h.q || "";
  $("as-of").value = h.as_of || "";
  if (h.method && !offered(h.method)) {
    const known = state.methods[String(h.method).split(":")[0]];
    const why = known ? "the server does not offer " + h.method + " (it offers " + [...$("method").options].map((o) => o.value).join(", ") + "; options other than these presets go in the request's options, within the server's allow-list)"
      : "there is no method " + h.method + " on this server (it offers " + Object.keys(state.methods).join(", ") + ")";
    showError(Object.assign(new Error("the link asks for method " + h.method + ", but " + why + "; nothing was run"),
      { body: { type: "NotOffered" }, status: 0 }), h.q, h.method, h.llm, h.as_of);
    return false;
  }
  if (h.method) $("method").value = h.method;
  syncMethod();
  if (h.llm && ![...$("llm").options].some((o) => o.value === h.llm)) {
    showError(Object.assign(new Error("the link asks for the LLM " + h.llm + ", which this server does not offer; nothing was run"),
      { body: { type: "NotOffered" }, status: 0 }), h.q, h.method, h.llm, h.as_of);
    return false;
  }
  if (h.llm) $("llm").value = h.llm;
  return true;
}
function linkOptions(text) {  // the link's `opt` (request options, JSON): an object, or an Error
  if (!text) return null;
  try { const o = JSON.parse(text); if (o && typeof o === "object" && !Array.isArray(o)) return o; } catch (_) { /* below */ }
  return new Error("the link's options (opt=" + short(text, 80) + ") are not a JSON object; nothing was run");
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

// --- start --------------------------------------------------------------------------------------------
function syncMethod() {
  const spec = $("method").value; const info = methodInfo(spec);
  const desc = $("method-desc"); desc.replaceChildren(info ? info.description : "");
  if (llmMissing(spec)) desc.appendChild(el("span", " Needs an LLM: " + START_LLM + ".", "hint"));
  const llm = $("llm"); llm.disabled = !(info && info.uses_llm);
  llm.title = llm.disabled ? "this method uses no LLM" : "";
}
async function loadKgInfo() {
  try {
    const kg = await api("/api/kg");
    state.kgName = kg.name;
    $("kg-info").textContent = "KG " + kg.name + ": " + kg.facts.toLocaleString("en") + " facts, " +
      kg.entities.toLocaleString("en") + " entities, " + kg.relations + " relations, " + (kg.start || "?") + " … " + (kg.end || "?");
    return kg;
  } catch (err) { $("kg-info").textContent = "could not load the KG summary: " + plainMessage(err.message); return null; }
}
function methodOption(spec, info) {
  const o = Object.assign(el("option", spec + (info.needs_llm ? " (LLM)" : "")), { value: spec });
  if (info.needs_llm && !state.llmAvailable) { o.disabled = true; o.textContent = spec + " (needs an LLM: none on this server)"; }
  return o;
}
function compareBox(spec, info, checked) {
  const lab = $("compare-methods").appendChild(el("label"));
  const cb = lab.appendChild(Object.assign(el("input"), { type: "checkbox", value: spec }));
  lab.append(spec);
  if (info.needs_llm && !state.llmAvailable) {
    cb.disabled = true; lab.classList.add("unavailable"); lab.title = "needs an LLM; " + START_LLM;
    lab.appendChild(el("span", "needs an LLM", "why"));
  } else cb.checked = checked;
}
async function loadMethods() {
  try {
    const m = await api("/api/methods");
    state.llmAvailable = !!m.llm_available || (m.llm_presets || []).length > 0;
    const sel = $("method");
    const presets = m.preset_details && m.preset_details.length ? m.preset_details
      : m.presets.map((p) => ({ name: p, description: p, uses_llm: true, needs_llm: true }));
    for (const x of m.methods) { state.methods[x.name] = x; sel.appendChild(methodOption(x.name, x)); }
    const group = sel.appendChild(Object.assign(el("optgroup"), { label: "presets" }));
    for (const p of presets) { state.presets[p.name] = p; group.appendChild(methodOption(p.name, p)); }
    if (!offered(m.default)) sel.appendChild(Object.assign(el("option", m.default), { value: m.default }));
    sel.value = m.default;
    const usable = (spec, info) => !(info.needs_llm && !state.llmAvailable);
    const firstPreset = presets.find((p) => usable(p.name, p));
    for (const x of m.methods) compareBox(x.name, x, x.name === m.default);
    for (const p of presets) compareBox(p.name, p, !!firstPreset && p.name === firstPreset.name);
    const llm = $("llm");
    for (const p of m.llm_presets) llm.appendChild(Object.assign(el("option", p), { value: p }));
    if (!m.llm_presets.length) llm.appendChild(Object.assign(el("option", "none: start the server with --llm"), { value: "" }));
    if (m.default_llm) llm.value = m.default_llm;
    syncMethod();
  } catch (err) { $("method-desc").replaceChildren(errorNode(err)); }
}
async function loadExamples() {
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
      chip.tabIndex = box.children.length ? -1 : 0;  // one tab stop for the whole list; arrows move within
      box.appendChild(chip);
    }
    box.setAttribute("role", "toolbar"); box.setAttribute("aria-label", "Example questions (arrow keys move)");
    box.addEventListener("keydown", (ev) => {
      const chips = [...box.children]; const i = chips.indexOf(document.activeElement); if (i < 0) return;
      const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[ev.key];
      const j = ev.key === "Home" ? 0 : ev.key === "End" ? chips.length - 1 : step ? (i + step + chips.length) % chips.length : -1;
      if (j < 0) return;
      ev.preventDefault(); chips[i].tabIndex = -1; chips[j].tabIndex = 0; chips[j].focus();
    });
  } catch (_) { $("examples-section").classList.add("hidden"); }
}

async function init() {
  $("ask-form").addEventListener("submit", (e) => ask(e));
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
  renderHistory();
  const [kg] = await Promise.all([loadKgInfo(), loadStatus()]);
  if (kg) {
    for (const r of kg.top_relations) $("rel-list").appendChild(Object.assign(el("option"), { value: r.relation }));
    $("append-section").classList.toggle("hidden", !kg.appendable);
    $("runs-section").classList.toggle("hidden", !kg.runs);
    if (kg.runs) loadRuns();
  }
  await loadMethods();
  loadExamples();
  const params = new URLSearchParams(location.search);
  if (params.get("run")) { $("runs-section").classList.remove("hidden"); openRunQuestion(params.get("run"), params.get("qid") || ""); }
  else if (params.get("q")) {
    const options = linkOptions(params.get("opt"));
    if (options instanceof Error) {
      showError(Object.assign(options, { body: { type: "BadLink" }, status: 0 }), params.get("q"), params.get("method"), params.get("llm"), params.get("as_of"));
    } else if (fill({ q: params.get("q"), method: params.get("method"), llm: params.get("llm"), as_of: params.get("as_of") })) {
      linkNotice(params); ask(null, options || undefined, true);
    }
  }
}
init();
