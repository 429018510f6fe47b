// tkgqa web UI, shared helpers: DOM building (text only), HTTP calls, errors in plain language, dates, and
// which evidence fact supports which answer. Loaded first; the other scripts use these globals.
"use strict";
const $ = (id) => document.getElementById(id);
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}
// Every label (entity, relation, LLM answer, run name) is text: the DOM is built with textContent, and the one
// place that takes HTML, a chart tooltip's formatter, gets escaped text only (tipHtml).
const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
function esc(text) { return String(text ?? "").replace(/[&<>"']/g, (c) => ESCAPES[c]); }
function tipHtml(...lines) { return lines.filter((x) => x !== undefined && x !== null && x !== "").map(esc).join("<br>"); }
function short(text, n) { text = String(text ?? ""); return text.length > n ? text.slice(0, n - 1) + "…" : text; }
function plural(n, word) { return Number(n).toLocaleString("en") + " " + word + (n === 1 ? "" : "s"); }

async function api(path, init) {
  let res;
  try { res = await fetch(path, init); }
  catch (e) { throw Object.assign(new Error("the server did not answer (" + e.message + ")"), { body: { type: "NetworkError" } }); }
  let body = null;
  try { body = await res.json(); } catch (_) { body = { error: res.status + " " + res.statusText, type: "HTTPError" }; }
  if (!res.ok) {
    const err = new Error((body && body.error) || ("HTTP " + res.status));
    err.body = body || {}; err.status = res.status; throw err;
  }
  return body;
}
function postJson(path, body) {
  return api(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
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

// --- errors in plain language ----------------------------------------------------------------------
const START_LLM = "start the server with an LLM: tkgqa serve --llm llamacpp:smollm2 (a local model) or " +
  "tkgqa serve --llm openai:gpt-4o-mini (with OPENAI_API_KEY set)";
function plainMessage(text) {  // library-speak → what to do with the server
  return String(text || "")
    .replace(/pass llm=['"]?([^'",)\s]+)['"]?/g, "start the server with --llm $1")
    .replace(/\bpolicy=['"]([^'"]+)['"]/g, "the method option policy=$1")
    .replace(/\bllm=None\b/g, "no LLM");
}
function errorHint(err) {
  const type = (err.body && err.body.type) || "";
  const text = String(err.message || "");
  if (type === "LLMError") return "The LLM backend failed or is unreachable: check the --llm the server was started with and its log.";
  if (type === "NetworkError") return "Is the server still running? Start it with: tkgqa serve (add --llm … for methods that use an LLM).";
  if (/\bllm\b|LLM/.test(text) && (type === "ConfigError" || type === "NotAllowed" || err.status === 400 || err.status === 403))
    return "This method needs an LLM and the server has none it may use: " + START_LLM + ".";
  if (type === "NotAllowed") return "The server's allow-list refuses this (see /api/methods); its operator can add it with tkgqa serve --allow-method ….";
  return null;
}
function errorNode(err) {
  const type = (err.body && err.body.type) || (err.name === "AbortError" ? "Cancelled" : "NetworkError");
  let head = "Error";
  if (type === "LLMError") head = "The LLM failed (HTTP " + err.status + ") — this is an error, not an abstention";
  else if (type === "Timeout") head = "No answer within the deadline";
  else if (type === "Busy") head = "The server is busy";
  else if (err.status) head = "Error " + err.status + " (" + type + ")";
  const box = el("div", null, "notice error"); box.setAttribute("role", "alert");
  box.appendChild(el("strong", head + ": ")); box.appendChild(document.createTextNode(plainMessage(err.message)));
  const sug = err.body && err.body.suggestions;
  if (sug && sug.length && !err.message.includes("did you mean")) box.appendChild(el("div", "Did you mean: " + sug.join(", "), "meta"));
  const hint = errorHint(err);
  if (hint) box.appendChild(el("div", hint, "hint"));
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

// --- which fact supports which answer (as tkgqa.api.views.evidence_cover does on the server) -------
function cites(f, answer) {
  if ([f.subject, f.object, f.subject_label, f.object_label].includes(answer)) return true;
  return [f.start, f.end].some((t) => typeof t === "string" && t && (t.startsWith(answer) || answer.startsWith(t)));
}
function coverOf(data) {
  if (data.evidence_cover) return data.evidence_cover;
  const ev = data.evidence || []; const answers = data.answers || [];
  const without = answers.filter((a) => !ev.some((f) => cites(f, a)));
  return { answers: answers.length, with_evidence: answers.length - without.length, without };
}
function factKey(f) { return [f.subject, f.relation, f.object, f.start || "", f.end || ""].join("\u0001"); }
