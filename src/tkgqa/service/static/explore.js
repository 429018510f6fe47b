// tkgqa web UI, exploring the KG: an entity's neighbours (paged, filtered by relation, time and counterpart,
// "30 of 24,328", facts per year), ARI operator queries, appending facts, and @-autocomplete of entities.
"use strict";
const NEIGHBOR_PAGE = 30;
const nb = { entity: null, relation: "", time: "", counterpart: "", offset: 0 };

async function showNeighbors(name, filters) {
  if (name !== nb.entity) Object.assign(nb, { relation: "", time: "", counterpart: "", offset: 0 });
  Object.assign(nb, { entity: name }, filters || {});
  const sec = $("neighbors"); const out = $("neighbors-body"); sec.classList.remove("hidden");
  out.replaceChildren(el("span", null, "spinner"));
  const params = { entity: name, limit: String(NEIGHBOR_PAGE), offset: String(nb.offset) };
  for (const k of ["relation", "time", "counterpart"]) if (nb[k]) params[k] = nb[k];
  try {
    const d = await api("/api/kg/neighbors?" + new URLSearchParams(params));
    $("neighbors-title").textContent = "Neighbours of " + d.label;
    out.replaceChildren(el("p", plural(d.n_facts, "fact") + (nb.relation || nb.time || nb.counterpart ? " matching the filters" : "") +
      ", " + plural(d.n_neighbors, "neighbour") + ", active " + (d.first || "?") + " … " + (d.last || "?"), "meta"));
    out.appendChild(neighborFilters(d));
    if (d.years && d.years.length > 1) out.appendChild(histogram(d.years));
    const chips = out.appendChild(el("div", null, "chips"));
    for (const n of d.neighbors) {
      const a = entityLink(n.name, n.label + " (" + n.facts + ")"); a.classList.add("chip"); chips.appendChild(a);
    }
    const shown = d.facts.length;
    const page = out.appendChild(el("div", null, "pager"));
    page.appendChild(el("span", shown ? "facts " + (d.offset + 1).toLocaleString("en") + "–" + (d.offset + shown).toLocaleString("en") +
      " of " + d.n_facts.toLocaleString("en") : "no facts on this page", "meta count"));
    const prev = page.appendChild(el("button", "‹ Earlier", "secondary small")); prev.type = "button"; prev.disabled = d.offset === 0;
    prev.addEventListener("click", () => showNeighbors(name, { offset: Math.max(0, d.offset - NEIGHBOR_PAGE) }));
    const next = page.appendChild(el("button", "Later ›", "secondary small")); next.type = "button"; next.disabled = d.offset + shown >= d.n_facts;
    next.addEventListener("click", () => showNeighbors(name, { offset: d.offset + NEIGHBOR_PAGE }));
    out.appendChild(el("div", null, "scroll")).appendChild(factTable(d.facts, []));
  } catch (err) { out.replaceChildren(errorNode(err)); }
  sec.scrollIntoView({ block: "nearest" });
}
function neighborFilters(d) {
  const form = el("form", null, "grid5 filters"); form.setAttribute("aria-label", "Filter the neighbours' facts");
  const rel = el("select"); rel.id = "nb-relation"; rel.appendChild(Object.assign(el("option", "any relation"), { value: "" }));
  for (const r of d.relations || []) rel.appendChild(Object.assign(el("option", r.label + " (" + r.facts + ")"), { value: r.name }));
  rel.value = nb.relation;
  const time = Object.assign(el("input"), { type: "text", id: "nb-time", value: nb.time, placeholder: "e.g. 2014-06", maxLength: 40 });
  const who = Object.assign(el("input"), { type: "text", id: "nb-counterpart", value: nb.counterpart, placeholder: "other entity", maxLength: 200 });
  for (const [label, input] of [["Relation", rel], ["Time", time], ["With", who]]) {
    const box = form.appendChild(el("div")); const l = box.appendChild(el("label", label)); l.htmlFor = input.id; box.appendChild(input);
  }
  const go = form.appendChild(el("div")).appendChild(el("button", "Filter")); go.type = "submit";
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    showNeighbors(nb.entity, { relation: rel.value, time: time.value.trim(), counterpart: who.value.trim(), offset: 0 });
  });
  rel.addEventListener("change", () => form.requestSubmit());
  return form;
}
function histogram(years) {  // facts per start year: a row of bars, each a button filtering to that year
  const max = Math.max(...years.map((y) => y[1]));
  const box = el("div", null, "histogram"); box.setAttribute("role", "group"); box.setAttribute("aria-label", "Facts per year");
  for (const [year, n] of years) {
    const b = box.appendChild(el("button", null, "bar" + (nb.time === year ? " on" : ""))); b.type = "button";
    b.title = year + ": " + plural(n, "fact"); b.setAttribute("aria-label", b.title);
    b.appendChild(el("span")).style.height = Math.max(2, Math.round(36 * n / max)) + "px";
    b.appendChild(el("small", year.slice(-2)));
    b.addEventListener("click", () => showNeighbors(nb.entity, { time: nb.time === year ? "" : year, offset: 0 }));
  }
  return box;
}

async function runQuery(event) {
  event.preventDefault();
  const params = new URLSearchParams();
  for (const [k, v] of new FormData($("query-form"))) if (String(v).trim()) params.set(k, String(v).trim());
  const out = $("query-result");
  try {
    const data = await api("/api/kg/query?" + params.toString());
    out.replaceChildren(el("p", data.op + ": " + plural(data.count, "fact") + (data.count > data.facts.length ? " (first " + data.facts.length + " shown)" : ""), "meta"), factTable(data.facts, []));
  } catch (err) { out.replaceChildren(errorNode(err)); }
}
async function appendFacts(event) {
  event.preventDefault();
  const out = $("append-result");
  try {
    const d = await postJson("/api/kg/facts", { lines: $("append-lines").value });
    out.textContent = d.added + " new facts; the KG now has " + d.facts.toLocaleString("en") + " facts";
    loadKgInfo(); loadStatus();  // the header's counts and the links' KG fingerprint follow the append
  } catch (err) { out.replaceChildren(errorNode(err)); }
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
