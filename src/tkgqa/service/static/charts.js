// tkgqa web UI, charts (Apache ECharts, served locally): the evidence timeline as lanes (one per fact
// pattern, Gantt style: intervals as bars, points as dots) with years on the axis, the answer's facts marked,
// and for first/last and before/after questions the competing facts and the reference event drawn; the
// entity graph. Tooltips are escaped text (tipHtml).
"use strict";
const MAX_LANES = 24;
const ROLE_STYLE = {
  answer: { fill: "#1a7f43", name: "answer fact" },
  evidence: { fill: "#7f8ca3", name: "other evidence" },
  candidate: { fill: "#c3cad6", name: "candidate not chosen" },
  reference: { fill: "#d9822b", name: "reference event" },
};
const charts = {};
const HIGHLIGHT = "#c2185b";
function chart(id) {
  if (typeof echarts === "undefined") return null;
  if (!charts[id]) charts[id] = echarts.init($(id), null, { renderer: "canvas" });
  return charts[id];
}
let resizeTimer = null;  // resize once the window has settled, and only charts that are on screen
window.addEventListener("resize", () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => Object.values(charts).forEach((c) => {
    const box = c.getDom();
    if (box.offsetParent !== null && box.clientWidth > 0 && box.clientHeight > 0) c.resize();
  }), 150);
});

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

// The facts the timeline draws, each with its role: the answer's facts, other evidence, the candidates a
// first/last step did not choose, the reference events.
function timelineFacts(data) {
  const answers = data.answers || []; const out = new Map();
  const role = (f) => (answers.some((a) => cites(f, a)) ? "answer" : "evidence");
  for (const f of data.evidence || []) out.set(factKey(f), { f, role: role(f) });
  const d = data.decision || {};
  for (const f of d.candidates || []) if (!out.has(factKey(f))) out.set(factKey(f), { f, role: role(f) === "answer" ? "answer" : "candidate" });
  for (const f of d.reference || []) out.set(factKey(f), { f, role: "reference" });
  return [...out.values()].filter((x) => isoRange(x.f.start));
}

// Lanes: one per fact pattern (subject · relation · object). With more than MAX_LANES patterns, facts are
// grouped by subject · relation, by relation · object, then by relation — unless that leaves under 4 lanes
// (who is who would be lost): then the earliest patterns keep their lanes and one lane takes the rest. The
// table lists every fact either way.
function lanesOf(items) {
  const pattern = (f) => f.subject_label + " · " + f.relation_label + " · " + f.object_label;
  const levels = [pattern, (f) => f.subject_label + " · " + f.relation_label + " · …",
    (f) => "… · " + f.relation_label + " · " + f.object_label, (f) => "… " + f.relation_label + " …"];
  const start = (x) => isoRange(x.f.start)[0];
  const order = (k) => { const first = new Map(); for (const x of items) { const n = k(x.f); first.set(n, Math.min(first.get(n) ?? start(x), start(x))); }
    return [...first.keys()].sort((a, b) => first.get(a) - first.get(b)); };
  let key = levels.find((k) => order(k).length <= MAX_LANES);
  if (!key || order(key).length < 4) {
    const kept = new Set(order(pattern).slice(0, MAX_LANES - 1));
    key = (f) => (kept.has(pattern(f)) ? pattern(f) : "other facts");
  }
  const names = order(key); const index = new Map(names.map((n, i) => [n, i]));
  const count = new Map(); for (const x of items) count.set(key(x.f), (count.get(key(x.f)) || 0) + 1);
  return { key, names, index, labels: names.map((n) => (count.get(n) > 1 ? n + " (×" + count.get(n) + ")" : n)) };
}

function drawTimeline(data) {
  const c = chart("timeline"); if (!c) return;
  const items = timelineFacts(data); const lanes = lanesOf(items);
  const points = [];
  for (const x of items) {
    const lane = lanes.index.get(lanes.key(x.f)); if (lane === undefined) continue;
    const a = isoRange(x.f.start), b = isoRange(x.f.end || x.f.start) || a;
    const when = x.f.start + (x.f.end && x.f.end !== x.f.start ? " … " + x.f.end : "");
    points.push({ value: [lane, a[0], b[1] + 864e5, when, x.role, 0], fact: x.f, key: factKey(x.f) });
  }
  const win = questionWindow(data.trace);
  const narrow = $("timeline").clientWidth < 500;
  const xs = points.flatMap((p) => [p.value[1], p.value[2]]);
  if (win) { if (win.from !== null) xs.push(win.from); if (win.to !== null) xs.push(win.to); }
  const lo = Math.min(...xs), hi = Math.max(...xs);
  const pad = Math.max(30 * 864e5, (hi - lo) * 0.04);
  const laneH = 26; const zoom = points.length > 20;
  $("timeline").style.height = Math.max(150, 70 + (zoom ? 34 : 0) + lanes.names.length * laneH) + "px";
  const marks = [];
  if (win) marks.push([{ name: "asked: " + win.text, xAxis: win.from ?? lo - pad }, { xAxis: win.to ?? hi + pad }]);
  const refs = (data.decision && data.decision.reference) || [];
  c.setOption({
    animation: false,
    grid: { left: 6, right: 16, top: 26, bottom: zoom ? 56 : 24, containLabel: true },
    tooltip: { trigger: "item", confine: true, className: "chart-tip",
      formatter: (p) => tipHtml(p.data.fact.subject_label + " · " + p.data.fact.relation_label + " · " + p.data.fact.object_label,
        p.value[3], ROLE_STYLE[p.value[4]].name) },
    xAxis: { type: "time", min: lo - pad, max: hi + pad,
      axisLabel: { hideOverlap: true, fontSize: 11,
        formatter: { year: "{yyyy}", month: "{MMM} {yyyy}", day: "{d} {MMM} {yyyy}", hour: "{d} {MMM} {yyyy}", minute: "{d} {MMM} {yyyy}" } },
      splitLine: { show: true, lineStyle: { color: "#eef0f4" } } },
    yAxis: { type: "category", data: lanes.labels, inverse: true,
      axisLabel: { interval: 0, width: narrow ? 120 : 260, overflow: "truncate", fontSize: 11, color: "#1d2330" },
      axisTick: { show: false }, splitLine: { show: true, lineStyle: { color: "#f3f4f7" } } },
    dataZoom: zoom ? [{ type: "inside", xAxisIndex: 0, filterMode: "weakFilter" },
      { type: "slider", xAxisIndex: 0, height: 18, bottom: 6, filterMode: "weakFilter", labelFormatter: "" }] : [],
    series: [{
      type: "custom", encode: { x: [1, 2], y: 0 }, clip: true,
      markArea: marks.length ? { silent: true, itemStyle: { color: "rgba(255,196,0,0.16)" },
        label: { show: !narrow, position: "insideTop", color: "#8a4b00", fontSize: 11 }, data: marks } : undefined,
      markLine: refs.length ? { silent: true, symbol: "none", lineStyle: { color: "#d9822b", type: "dashed" },
        label: { show: !narrow, position: "start", formatter: "reference", color: "#8a4b00", fontSize: 11 },  // top (the y axis is inverted)
        data: refs.map((f) => ({ xAxis: isoRange(f.start)[0] })) } : undefined,
      renderItem: (params, api) => {
        const y = api.coord([0, api.value(0)])[1];
        const x0 = api.coord([api.value(1), 0])[0], x1 = api.coord([api.value(2), 0])[0];
        const h = Math.min(14, api.size([0, 1])[1] * 0.55); const role = api.value(4); const hl = api.value(5);
        const style = { fill: ROLE_STYLE[role].fill, stroke: role === "answer" ? "#0d4d28" : role === "reference" ? "#8a4b00" : "#fff", lineWidth: role === "answer" || role === "reference" ? 1.5 : 1 };
        if (hl === 1) Object.assign(style, { stroke: HIGHLIGHT, lineWidth: 3 });  // a selected program step's fact
        else if (hl === -1) style.opacity = 0.25;
        if (x1 - x0 < 7) return { type: "circle", shape: { cx: (x0 + x1) / 2, cy: y, r: role === "answer" || role === "reference" ? 6 : 4.5 }, style };
        return { type: "rect", shape: { x: x0, y: y - h / 2, width: x1 - x0, height: h, r: 3 }, style };
      },
      data: points,
    }],
  }, true);
  c.resize();
  const roles = new Set(points.map((p) => p.value[4]));
  const legend = $("timeline-legend"); legend.replaceChildren();
  for (const r of Object.keys(ROLE_STYLE)) {
    if (!roles.has(r)) continue;
    const item = legend.appendChild(el("span", null, "key")); const sw = item.appendChild(el("span", null, "swatch"));
    sw.style.background = ROLE_STYLE[r].fill; item.append(ROLE_STYLE[r].name);
  }
  const d = data.decision;
  if (d && d.candidates && d.candidates.length) legend.appendChild(el("span", "chosen among " + plural(d.pool, "candidate fact") + (d.pool > d.candidates.length ? " (" + d.candidates.length + " drawn)" : ""), "meta"));
  $("timeline").dataset.lanes = String(lanes.names.length); $("timeline").dataset.points = String(points.length);
  timelinePoints = points; $("timeline").dataset.highlighted = "0";
}
// Mark the facts whose keys are in `keys` (a program step's facts) and dim the others; null clears.
let timelinePoints = [];
function highlightTimeline(keys) {
  const c = charts.timeline; let n = 0;
  for (const p of timelinePoints) { p.value[5] = keys ? (keys.has(p.key) ? 1 : -1) : 0; n += p.value[5] === 1 ? 1 : 0; }
  if (c && timelinePoints.length) c.setOption({ series: [{ data: timelinePoints }] });
  $("timeline").dataset.highlighted = String(n);
  const legend = $("timeline-legend"); const old = legend.querySelector(".key.step"); if (old) old.remove();
  if (keys) {
    const item = legend.appendChild(el("span", null, "key step")); const sw = item.appendChild(el("span", null, "swatch"));
    sw.style.border = "3px solid " + HIGHLIGHT; item.append("the selected step's facts (" + n + ")");
  }
  return n;
}

function drawGraph(data) {
  const c = chart("graph"); if (!c) return;
  const answers = new Set(data.answers || []);
  const nodes = new Map(); const edges = new Map();
  for (const f of (data.evidence || []).slice(0, 40)) {
    for (const [n, l] of [[f.subject, f.subject_label], [f.object, f.object_label]]) {
      if (!nodes.has(n)) nodes.set(n, { id: n, name: l, symbolSize: answers.has(l) ? 20 : 13,
        itemStyle: { color: answers.has(l) ? "#1a7f43" : "#2357c6" }, label: { formatter: () => short(l, 26) } });
    }
    const k = f.subject + "\u0001" + f.object; const e = edges.get(k) || { source: f.subject, target: f.object, facts: [] };
    e.facts.push(f.relation_label + (f.start ? " (" + f.start + ")" : "")); edges.set(k, e);
  }
  // A radial layout (no force simulation: stable on resize, no white space; starting at -45° so never all on
  // one line): the most connected entity in
  // the middle, the others on a circle around it, in the order of their first fact.
  const degree = new Map(); for (const e of edges.values()) for (const n of [e.source, e.target]) degree.set(n, (degree.get(n) || 0) + 1);
  const ids = [...nodes.keys()]; const hub = ids.reduce((a, b) => ((degree.get(b) || 0) > (degree.get(a) || 0) ? b : a), ids[0]);
  const ring = ids.filter((n) => n !== hub);
  ring.forEach((n, i) => { const a = (2 * Math.PI * i) / Math.max(1, ring.length) - Math.PI / 4; Object.assign(nodes.get(n), { x: 100 * Math.cos(a), y: 100 * Math.sin(a) }); });
  if (hub !== undefined) Object.assign(nodes.get(hub), { x: 0, y: 0 });
  const links = [...edges.values()].map((e) => ({ source: e.source, target: e.target, facts: e.facts,
    label: { show: edges.size <= 12, formatter: () => short(e.facts[0].replace(/ \(.*\)$/, ""), 18) + (e.facts.length > 1 ? " ×" + e.facts.length : "") } }));
  c.setOption({
    animation: false,
    tooltip: { confine: true, className: "chart-tip", formatter: (p) => (p.dataType === "edge" ? tipHtml(...p.data.facts.slice(0, 8)) : tipHtml(p.data.name)) },
    series: [{ type: "graph", layout: "none", roam: true, data: [...nodes.values()], links, left: "18%", right: "18%", top: 30, bottom: 30,
      label: { show: true, position: "right", fontSize: 11, color: "#1d2330", textBorderColor: "#fff", textBorderWidth: 3 },
      edgeLabel: { fontSize: 10, color: "#5d6678", textBorderColor: "#fff", textBorderWidth: 2 },
      edgeSymbol: ["none", "arrow"], edgeSymbolSize: 7, lineStyle: { color: "#9aa6bb", width: 1.2, curveness: 0.08 } }],
  }, true);
  c.off("click"); c.on("click", (p) => { if (p.dataType === "node") showNeighbors(p.data.id); });
  c.resize();
}
