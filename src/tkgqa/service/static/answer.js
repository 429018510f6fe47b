// tkgqa web UI, the answer view: answers (each with its evidence count; a run's row with gold and outcome),
// evidence for every answer or an explicit "evidence for k of n answers" with a way to load the rest, the
// timeline and graph, the program tree (collapsible; steps that never ran hidden; a legend), the trace.
"use strict";
const OUTCOME_TEXT = { correct: "right", wrong: "wrong", abstained: "abstained", error: "error" };

function entityLink(name, label, disabled) {
  if (disabled) { const s = el("span", label || name, "entity disabled"); s.title = disabled; return s; }
  const a = el("a", label || name, "entity"); a.href = "#neighbors"; a.title = name !== label ? name : "neighbours of " + label;
  a.addEventListener("click", (e) => { e.preventDefault(); showNeighbors(name); });
  return a;
}
function factTable(facts, answers, disabled) {
  if (!facts.length) return el("p", "no facts", "meta");
  const table = el("table"); const head = el("tr");
  for (const h of ["subject", "relation", "object", "start", "end"]) head.appendChild(el("th", h));
  table.appendChild(el("thead")).appendChild(head);
  const body = table.appendChild(el("tbody"));
  for (const f of facts) {
    const tr = el("tr", null, (answers || []).some((a) => cites(f, a)) ? "answer-fact" : "");
    tr.appendChild(el("td")).appendChild(entityLink(f.subject, f.subject_label, disabled));
    const rel = el("td", f.relation_label); rel.title = f.relation; tr.appendChild(rel);
    tr.appendChild(el("td")).appendChild(entityLink(f.object, f.object_label, disabled));
    tr.appendChild(el("td", f.start || "", "date")); tr.appendChild(el("td", f.end || "", "date"));
    body.appendChild(tr);
  }
  return table;
}
function outcomeBadge(outcome) {
  const b = el("span", OUTCOME_TEXT[outcome] || outcome, "badge outcome " + outcome);
  b.title = "outcome of this question in the run"; return b;
}

// --- program tree ---------------------------------------------------------------------------------------
const LEGEND = [["?", "the entity asked for"], ["*", "any entity"], ["~rel", "the relation read backwards (object → subject)"],
  ["<->", "either direction"], ["a|b", "any of these relations"], ["??", "first non-empty of: the second runs only if the first found nothing"],
  ["not run", "a branch the program never needed"]];
function treeNode(node, empty) {
  const ran = node.ran || node.facts !== null;
  const li = el("li", null, ran ? "" : "skipped");
  if (empty && node.text === empty) li.classList.add("empty");
  const line = el("span", null, "node");
  if (node.op === "value") { line.textContent = node.text; li.appendChild(line); return li; }
  line.appendChild(el("span", node.op === "??" ? "first non-empty of" : node.op, "op"));
  if (node.args.length) line.appendChild(document.createTextNode(" " + node.args.join(", ")));
  if (node.facts !== null) line.appendChild(el("span", plural(node.facts, "fact"), "count"));
  else if (!node.ran && node.op !== "entities" && node.op !== "times") line.appendChild(el("span", "not run", "count"));
  if (ran && node.op !== "value") selectable(line, node);
  if (!node.children.length) { li.appendChild(line); return li; }
  const toggle = li.appendChild(el("button", "▾", "toggle")); toggle.type = "button"; toggle.setAttribute("aria-expanded", "true");
  toggle.setAttribute("aria-label", "collapse " + node.op);
  li.appendChild(line);
  const ul = li.appendChild(el("ul"));
  for (const child of node.children) ul.appendChild(treeNode(child, empty));
  toggle.addEventListener("click", () => {
    const open = toggle.getAttribute("aria-expanded") !== "true";
    toggle.setAttribute("aria-expanded", open ? "true" : "false"); toggle.textContent = open ? "▾" : "▸";
    toggle.setAttribute("aria-label", (open ? "collapse " : "expand ") + node.op); ul.classList.toggle("hidden", !open);
  });
  return li;
}
// Selecting a step (click, Enter or Space) marks its facts on the timeline; selecting it again clears.
function selectable(line, node) {
  line.tabIndex = 0; line.setAttribute("role", "button"); line.setAttribute("aria-pressed", "false");
  line.title = "show this step's facts on the timeline";
  line.addEventListener("click", () => selectStep(node, line));
  line.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); selectStep(node, line); } });
}
function selectStep(node, line) {
  const again = line.classList.contains("selected");
  for (const n of document.querySelectorAll("#program .node.selected")) { n.classList.remove("selected"); n.setAttribute("aria-pressed", "false"); }
  const out = $("step-facts");
  if (again || !state.last) { highlightTimeline(null); out.textContent = ""; return; }
  line.classList.add("selected"); line.setAttribute("aria-pressed", "true");
  const facts = stepFacts(node, timelineFacts(state.last).map((x) => x.f), state.last);
  const n = highlightTimeline(new Set(facts.map(factKey)));
  out.textContent = "Step " + short(node.text, 120) + ": " + (n ? plural(n, "fact") + " marked on the timeline" : "none of its facts is on the timeline") + " (select it again to clear)";
}
function renderProgram(data) {
  $("step-facts").textContent = "";
  const list = $("program"); list.replaceChildren(); const tools = $("program-tools"); tools.replaceChildren();
  if (data.program) {
    list.appendChild(treeNode(data.program.tree, data.program.empty_step));
    const skipped = list.querySelectorAll("li.skipped").length;
    list.classList.add("hide-skipped");
    if (skipped) {
      const b = tools.appendChild(el("button", "Show " + plural(skipped, "step") + " that did not run", "secondary small"));
      b.type = "button"; b.id = "toggle-skipped";
      b.addEventListener("click", () => {
        const hidden = list.classList.toggle("hide-skipped");
        b.textContent = (hidden ? "Show " : "Hide ") + plural(skipped, "step") + " that did not run";
      });
    }
    const legend = tools.appendChild(el("details", null, "legend")); legend.appendChild(el("summary", "Notation", "meta"));
    const dl = legend.appendChild(el("dl"));
    for (const [k, v] of LEGEND) { dl.appendChild(el("dt", k)); dl.appendChild(el("dd", v)); }
    $("program-block").classList.remove("hidden"); return;
  }
  const steps = (data.trace || []).filter((s) => s && (s.action || s.step !== undefined));
  if (!steps.length) { $("program-block").classList.add("hidden"); return; }
  $("program-block").classList.remove("hidden");
  for (const s of steps.slice(0, 50)) {
    const li = el("li"); li.appendChild(el("span", "step " + (s.step ?? ""), "op"));
    li.appendChild(document.createTextNode(" " + (s.action || s.note || JSON.stringify(s).slice(0, 200))));
    if (s.result !== undefined) li.appendChild(el("div", "→ " + readable(s.result) + (typeof s.n_results === "number" ? " (" + plural(s.n_results, "result") + ")" : ""), "meta"));
    list.appendChild(li);
  }
}
function readable(value) {  // an ARI step's result: a list of facts/values, cut at a whole item
  const items = Array.isArray(value) ? value : [value];
  const text = items.slice(0, 8).map((v) => (Array.isArray(v) ? v.join(" · ") : typeof v === "object" && v ? JSON.stringify(v) : String(v)));
  return text.join("; ") + (items.length > 8 ? "; … " + (items.length - 8) + " more" : "");
}

function usageText(data) {
  const u = data.usage || {}; const parts = [data.latency_ms + " ms"];
  if (u.llm_calls) {
    const cached = u.cached_calls || 0;
    parts.push(u.llm_calls + " LLM call" + (u.llm_calls === 1 ? "" : "s") + (cached ? " (" + cached + " from cache)" : ""));
    parts.push(((u.prompt_tokens || 0) + (u.completion_tokens || 0)).toLocaleString("en") + " tokens");
    parts.push("$" + Number(u.cost_usd || 0).toFixed(4) + (cached === u.llm_calls ? " (cache hits cost $0)" : ""));
  } else parts.push("no LLM calls · $0");
  return parts.join(" · ");
}
function contextNode(q, method, llm, kg, asOf) {
  const p = $("context"); p.replaceChildren();
  p.append("Question: "); p.appendChild(el("b", q));
  p.append(" · method "); p.appendChild(el("b", method));
  p.append(" · LLM "); p.appendChild(el("b", llm || "none"));
  p.append(" · KG "); p.appendChild(el("b", String(kg || state.kgName).split("<")[0]));
  if (asOf) { p.append(" · facts up to "); p.appendChild(el("b", asOf)); }
}

function evidenceLine(data, cover) {
  const p = $("evidence-cover"); p.replaceChildren();
  if (!cover.answers) return;
  const all = cover.with_evidence === cover.answers;
  p.className = all ? "meta" : "notice abstained";
  const facts = " (" + plural((data.evidence || []).length, "fact") + ")";
  if (all) p.append((cover.answers === 1 ? "Evidence for the answer" : "Evidence for all " + plural(cover.answers, "answer")) + facts);
  else p.append("Evidence for " + cover.with_evidence + " of " + plural(cover.answers, "answer") + facts);
  if (all) return;
  p.append(". No fact shown for: " + cover.without.slice(0, 8).join(", ") + (cover.without.length > 8 ? ", …" : "") + ". ");
  if (!data.run && data.method && data.method.split(":")[0] === "symbolic") {
    const b = p.appendChild(el("button", "Load evidence for every answer", "secondary small")); b.type = "button"; b.id = "more-evidence";
    b.addEventListener("click", () => ask(null, { max_evidence: 1000 }));
  } else p.append("This method cited no fact for them.");
}

function showResult(data, options) {
  state.last = data;
  $("result").classList.remove("hidden"); $("result-body").classList.remove("hidden");
  contextNode(data.question, data.method, data.llm, data.kg, data.as_of);
  const counts = (data.answers || []).map((a) => (data.evidence || []).filter((f) => cites(f, a)).length);
  const answers = $("answers"); answers.replaceChildren(); answers.className = "answers" + (data.outcome ? " run-" + data.outcome : "");
  data.answers.forEach((a, i) => {
    const li = el("li", null, "answer");
    if (data.answers.length > 1) li.appendChild(el("span", "#" + (i + 1), "rank"));
    li.appendChild(document.createTextNode(a));
    li.dataset.facts = counts[i] ? plural(counts[i], "fact") : "no fact";  // shown by CSS (::after)
    li.title = "evidence: " + li.dataset.facts;
    answers.appendChild(li);
  });
  const notice = $("notice"); notice.replaceChildren();
  if (data.outcome) {
    const box = notice.appendChild(el("div", null, "run-row")); box.append("In run ");
    box.appendChild(el("b", data.run || "?")); box.append(": "); box.appendChild(outcomeBadge(data.outcome));
    box.append(" · gold: "); box.appendChild(el("b", (data.gold || []).join(", ") || "none given"));
  }
  if (data.abstained || !data.answers.length) {
    const box = el("div", null, "notice abstained"); box.appendChild(el("strong", "No answer (the method abstained): "));
    box.append(plainReason(data.reason));
    if (data.missing) box.appendChild(el("div", "Missing: " + data.missing));
    if (data.suggestions && data.suggestions.length) {
      box.appendChild(el("div", "Did you mean: " + data.suggestions.map((x) => x.label + " (for “" + x.mention + "”)").join(", ") + "?", "suggestions"));
    }
    notice.appendChild(box);
  } else if (!data.grounded) {
    const b = el("span", "not grounded", "badge"); b.title = "the answer cites no KG fact"; answers.appendChild(b);
  }
  $("status").textContent = usageText(data);
  $("answer-tools").classList.remove("hidden");
  const hasEvidence = (data.evidence || []).length > 0 || !!(data.decision && data.decision.candidates.length);
  $("evidence-block").classList.toggle("hidden", !hasEvidence);
  evidenceLine(data, coverOf(data));
  const disabled = data.links_disabled || null;
  $("evidence").replaceChildren(factTable(data.evidence || [], data.answers, disabled));
  if (disabled) $("evidence").prepend(el("p", disabled, "meta"));
  if (hasEvidence) { drawTimeline(data); drawGraph(data); }
  renderProgram(data);
  $("trace").textContent = JSON.stringify(data.trace, null, 2);
  if (!options || options.url !== false) showInForm(data);
}
function plainReason(reason) {
  const r = String(reason || "no reason given");
  const m = r.match(/^([a-z_]+)$/);  // a bare code such as policy_stopped
  return m ? r.replace(/_/g, " ") + " (the method stopped without an answer)" : plainMessage(r);
}

function showError(err, q, method, llm, asOf) {
  state.last = null;
  $("result").classList.remove("hidden"); $("result-body").classList.remove("hidden");
  contextNode(q, method, llm, state.kgName, asOf);
  $("answers").replaceChildren(); $("notice").replaceChildren(errorNode(err));
  $("status").textContent = ""; $("answer-tools").classList.add("hidden");
  $("evidence-block").classList.add("hidden"); $("program-block").classList.add("hidden"); $("trace").textContent = "";
}
