// tkgqa web UI, a program step's facts: which of the facts the timeline draws (evidence, candidates,
// reference events) each step of the symbolic program yields, so selecting a step in the program tree marks
// its facts on the timeline. Computed over what is drawn: match steps by their pattern (a name or its label;
// `?`/`*` any entity; `~rel` read backwards; `<->` either direction; `a|b` any of them), time filters by their
// window, first/last by the earliest/latest start, `??` by the alternative that found facts, exclude by
// dropping the facts whose entities are all excluded.
"use strict";
const TIME_OPS = new Set(["in", "before", "after", "starts", "ends", "during", "overlaps"]);
function sameName(arg, name, label) { return arg === "?" || arg === "*" || arg === name || arg === label; }
function matchStep(node, facts) {
  if (node.args.length !== 3) return [];
  const [s, rel, o] = node.args; const parts = rel.split("|");
  const direct = parts.filter((p) => !p.startsWith("~") && p !== "<->");
  const inverse = parts.filter((p) => p.startsWith("~")).map((p) => p.slice(1));
  const both = parts.includes("<->");
  const relIs = (f, names) => names.some((r) => r === "*" || r === f.relation || r === f.relation_label);
  const ends = (f, swap) => swap ? sameName(s, f.object, f.object_label) && sameName(o, f.subject, f.subject_label)
    : sameName(s, f.subject, f.subject_label) && sameName(o, f.object, f.object_label);
  return facts.filter((f) => (relIs(f, direct) && (ends(f, false) || (both && ends(f, true)))) || (relIs(f, inverse) && ends(f, true)));
}
function startDay(f) { const r = isoRange(f.start); return r ? r[0] : null; }
function timeWindow(node, data) {  // the filter's reference: a date argument, else the reference event read
  const arg = node.args.length ? isoRange(node.args[node.args.length - 1]) : null;
  if (arg) return arg;
  const ref = ((data.decision && data.decision.reference) || [])[0];
  if (!ref) return null;
  const a = isoRange(ref.start), b = isoRange(ref.end || ref.start) || a;
  return a ? [a[0], b[1]] : null;
}
function inWindow(op, f, win) {
  const a = isoRange(f.start); if (!a) return false;
  const b = isoRange(f.end || f.start) || a; const [lo, hi] = win;
  switch (op) {
    case "before": return a[0] < lo;
    case "after": return a[0] > hi;
    case "starts": return a[0] >= lo && a[0] <= hi;
    case "ends": return b[1] >= lo && b[1] <= hi;
    case "during": return a[0] >= lo && b[1] <= hi;
    default: return a[0] <= hi && b[1] >= lo;  // in, overlaps
  }
}
function stepFacts(node, facts, data) {
  const rows = (node.children || []).filter((c) => c.op !== "value" && c.op !== "time");
  const inner = () => (rows.length ? stepFacts(rows[0], facts, data) : []);
  if (node.op === "match") return matchStep(node, facts);
  if (node.op === "??") {
    const [a, b] = node.children;
    const first = a ? stepFacts(a, facts, data) : [];
    return first.length || !b || a.facts ? first : stepFacts(b, facts, data);
  }
  if (TIME_OPS.has(node.op)) { const win = timeWindow(node, data); return win ? inner().filter((f) => inWindow(node.op, f, win)) : []; }
  if (node.op === "first" || node.op === "last") {
    const pool = inner().filter((f) => startDay(f) !== null); if (!pool.length) return [];
    const days = pool.map(startDay); const pick = node.op === "first" ? Math.min(...days) : Math.max(...days);
    return pool.filter((f) => startDay(f) === pick);
  }
  if (node.op === "exclude") {
    const drop = new Set(node.args);
    const out = (name, label) => drop.has(name) || drop.has(label);  // the answer side is the one not excluded
    return inner().filter((f) => !(out(f.subject, f.subject_label) && out(f.object, f.object_label)));
  }
  if (node.op === "time") {
    const refs = new Set(((data.decision && data.decision.reference) || []).map(factKey));
    return inner().filter((f) => refs.has(factKey(f)));
  }
  return inner();  // entities, times
}
