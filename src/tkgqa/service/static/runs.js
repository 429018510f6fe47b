// tkgqa web UI, the runs browser (tkgqa serve --runs-dir): runs, a run's results with gold and an outcome
// badge on every row, filters that show which is on, entity links only when the served KG is the run's, and
// a paired diff of two runs per question (GET /api/runs/{a}/diff/{b}: what tkgqa eval-compare computes).
"use strict";
const runsState = { names: [], current: null, kg: null };
function pct(x) { return x === null || x === undefined ? "" : (100 * x).toFixed(1); }
function runTitle(r) {  // the method as run: its spec plus policy and options (ari:policy=oracle, not ari)
  const rc = r.run_config || {}; const spec = rc.method || r.method || "?"; const extra = [];
  if (rc.policy && !String(spec).includes("policy=")) extra.push("policy=" + rc.policy);
  for (const [k, v] of Object.entries(rc.method_options || {})) extra.push(k + "=" + (typeof v === "object" ? JSON.stringify(v) : v));
  if (rc.llm) extra.push("LLM " + rc.llm);
  return spec + (extra.length ? " (" + extra.join(", ") + ")" : "");
}
async function loadRuns() {
  const out = $("runs-list");
  try {
    const d = await api("/api/runs");
    runsState.names = d.runs.map((r) => r.name);
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
    diffForm(d.runs);
  } catch (err) { out.replaceChildren(errorNode(err)); }
}
function diffForm(runs) {
  const box = $("run-diff-form"); box.replaceChildren();
  if (runs.length < 2) return;
  const pick = (id, i, label) => {
    const wrap = box.appendChild(el("div")); const l = wrap.appendChild(el("label", label)); l.htmlFor = id;
    const s = wrap.appendChild(el("select")); s.id = id;
    for (const r of runs) s.appendChild(Object.assign(el("option", r.name), { value: r.name }));
    s.selectedIndex = i; return s;
  };
  const a = pick("diff-a", 0, "Run A"); const b = pick("diff-b", 1, "Run B");
  const go = box.appendChild(el("div")).appendChild(el("button", "Compare runs", "secondary")); go.type = "button"; go.id = "diff-button";
  go.addEventListener("click", () => showDiff(a.value, b.value));
}
async function showDiff(a, b) {
  const out = $("run-diff"); out.replaceChildren(el("span", null, "spinner"));
  try {
    const d = await api("/api/runs/" + encodeURIComponent(a) + "/diff/" + encodeURIComponent(b));
    const t = d.mcnemar;
    out.replaceChildren(el("p", "A " + a + ": " + pct(d["a_strict_hits@1"]) + "% · B " + b + ": " + pct(d["b_strict_hits@1"]) +
      "% strict Hits@1 on " + plural(d.n_common, "common question") + " · only A right: " + t.b + " · only B right: " + t.c +
      " · McNemar (" + t.method + ") p = " + Number(t.p_value).toPrecision(3) +
      (d.only_in_a || d.only_in_b ? " · " + d.only_in_a + " only in A, " + d.only_in_b + " only in B" : ""), "meta diff-summary"));
    const table = el("table"); const head = el("tr");
    for (const h of ["question", "gold", "A", "B", "change"]) head.appendChild(el("th", h));
    table.appendChild(el("thead")).appendChild(head); const body = table.appendChild(el("tbody"));
    for (const q of d.questions) {
      const tr = body.appendChild(el("tr", null, "change-" + q.change));
      tr.appendChild(el("td", q.question)); tr.appendChild(el("td", q.gold.join(", ")));
      for (const side of [q.a, q.b]) {
        const td = tr.appendChild(el("td")); td.appendChild(outcomeBadge(side.outcome)); td.append(" " + side.answers.slice(0, 3).join(", "));
      }
      tr.appendChild(el("td", q.change.replace(/_/g, " ")));
    }
    out.appendChild(el("div", null, "scroll")).appendChild(table);
  } catch (err) { out.replaceChildren(errorNode(err)); }
}
async function showRun(name) {
  $("run-view").classList.remove("hidden");
  try {
    const r = await api("/api/runs/" + encodeURIComponent(name));
    runsState.current = r;
    $("run-title").textContent = r.name + " — " + runTitle(r) + " on " + (r.dataset || "?") + ", " + plural(r.n || 0, "question");
    const img = $("run-chart"); img.classList.toggle("hidden", !r.has_chart);
    if (r.has_chart) img.src = "/api/runs/" + encodeURIComponent(name) + "/chart";
    $("run-report").textContent = r.report_md;
    const filters = $("run-filters"); filters.replaceChildren();
    for (const o of ["all", "correct", "wrong", "abstained", "error"]) {
      const b = el("button", o + " (" + r.counts[o] + ")", "secondary filter"); b.type = "button"; b.dataset.outcome = o;
      b.addEventListener("click", () => showRunResults(name, o)); filters.appendChild(b);
    }
    await showRunResults(name, r.counts.wrong ? "wrong" : "all");
  } catch (err) { $("run-results").replaceChildren(errorNode(err)); }
}
function runLinksDisabled(row) {  // entity links query the served KG: only when it is the run's KG
  if (!row.kg) return "Entity links are off: the run does not record which KG it used.";
  if (row.kg !== state.kgName) return "Entity links are off: this run used the KG " + row.kg + ", the server serves " + state.kgName + " (start it with tkgqa serve --kg … for that KG).";
  return null;
}
async function showRunResults(name, outcome) {
  for (const b of $("run-filters").children) {
    const on = b.dataset.outcome === outcome;
    b.setAttribute("aria-pressed", on ? "true" : "false"); b.classList.toggle("on", on);
  }
  const out = $("run-results");
  try {
    const d = await api("/api/runs/" + encodeURIComponent(name) + "/results?" + new URLSearchParams({ outcome, limit: "100" }));
    const table = el("table"); const head = el("tr");
    for (const h of ["question", "answer", "gold", "gold answer's facts", "outcome", ""]) head.appendChild(el("th", h));
    table.appendChild(el("thead")).appendChild(head); const body = table.appendChild(el("tbody"));
    for (const row of d.results) {
      const tr = body.appendChild(el("tr", null, "outcome-" + row.outcome));
      tr.appendChild(el("td", row.question)); tr.appendChild(el("td", row.answers.slice(0, 3).join(", ")));
      tr.appendChild(el("td", row.gold.join(", ")));
      const gold = tr.appendChild(el("td", "…", "gold-facts meta")); gold.dataset.run = name; gold.dataset.qid = row.qid;
      goldObserver().observe(gold);
      tr.appendChild(el("td")).appendChild(outcomeBadge(row.outcome));
      const open = el("button", "Open", "secondary"); open.type = "button";
      open.addEventListener("click", () => {
        showResult({ ...row, run: name, links_disabled: runLinksDisabled(row) });
        $("result").scrollIntoView({ block: "start" });
      });
      tr.appendChild(el("td")).appendChild(open);
    }
    out.replaceChildren(el("p", "Showing: " + plural(d.total, outcome === "all" ? "question" : outcome + " answer") +
      (d.total > d.results.length ? " (first " + d.results.length + " shown)" : ""), "meta"), table);
  } catch (err) { out.replaceChildren(errorNode(err)); }
}
// The gold answer's facts of a row (GET …/gold-facts): fetched when the row scrolls into view, at most
// GOLD_FACTS per row ("3 of 7"), a few rows at a time; "no fact found" (with the reason) when there is none.
const GOLD_FACTS = 3; const GOLD_PARALLEL = 4;
let goldSeen = null; const goldQueue = []; let goldBusy = 0;
function goldObserver() {
  if (!goldSeen) {
    goldSeen = new IntersectionObserver((entries) => {
      for (const e of entries) if (e.isIntersecting) { goldSeen.unobserve(e.target); goldQueue.push(e.target); }
      pumpGold();
    }, { rootMargin: "200px" });
  }
  return goldSeen;
}
function pumpGold() {
  while (goldBusy < GOLD_PARALLEL && goldQueue.length) {
    const cell = goldQueue.shift(); goldBusy++;
    loadGoldFacts(cell).finally(() => { goldBusy--; pumpGold(); });
  }
}
async function loadGoldFacts(cell) {
  // the id as a query parameter: any id ("a/b", ".", "..") reaches the server as it is
  const url = "/api/runs/" + encodeURIComponent(cell.dataset.run) + "/gold-facts?" + new URLSearchParams({ qid: cell.dataset.qid, limit: String(GOLD_FACTS) });
  try {
    const d = await api(url); cell.replaceChildren(); cell.dataset.total = String(d.total); cell.dataset.shown = String(d.facts.length);
    if (!d.facts.length) { cell.append(d.note || "no fact found"); cell.dataset.state = "none"; return; }
    const list = cell.appendChild(el("ul", null, "gold-list"));
    for (const f of d.facts) list.appendChild(el("li", f.subject_label + " · " + f.relation_label + " · " + f.object_label + (f.start ? " (" + f.start + ")" : "")));
    if (d.total > d.facts.length) cell.appendChild(el("div", d.facts.length + " of " + plural(d.total, "fact")));
    if (d.note) cell.appendChild(el("div", d.note));
    cell.dataset.state = "facts";
  } catch (err) { cell.replaceChildren(el("span", "could not load: " + plainMessage(err.message))); cell.dataset.state = "error"; }
}
async function openRunQuestion(name, qid) {  // a ?run=&qid= link: that row of that run, as it was
  try {
    const row = await api("/api/runs/" + encodeURIComponent(name) + "/question?" + new URLSearchParams({ qid }));
    showResult({ ...row, run: name, links_disabled: runLinksDisabled(row) });
  } catch (err) { showError(err, "question " + qid + " of run " + name, "?", null, null); }
}
