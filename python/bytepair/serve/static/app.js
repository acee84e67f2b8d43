// bytepair serve: the page's script (no libraries; everything comes from this server).
"use strict";

const $ = (sel) => document.querySelector(sel);
const state = { info: null, pending: 0, timer: null, seq: 0, trace: null, traceBytes: null, step: 0 };
window.bytepair = { idle: () => state.pending === 0 && state.timer === null, state };

// ------------------------------------------------------------------ helpers

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("data-") || k.startsWith("aria-")) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) e.append(c);
  return e;
}

function showError(msg) {
  const box = $("#error");
  box.textContent = msg || "";
  box.hidden = !msg;
}

async function api(path, body) {
  state.pending += 1;
  try {
    const opts = body === undefined ? {} : {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    };
    const r = await fetch(path, opts);
    const isJson = (r.headers.get("content-type") || "").includes("json");
    if (!r.ok) {
      const data = isJson ? await r.json() : { error: r.statusText };
      throw new Error(data.error || `${r.status} ${r.statusText}`);
    }
    return body !== undefined && path === "/api/train" ? await r.blob() : await r.json();
  } finally {
    state.pending -= 1;
  }
}

const hexToBytes = (h) => Uint8Array.from(h.match(/../g) || [], (x) => parseInt(x, 16));
const bytesToHex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
const strict = new TextDecoder("utf-8", { fatal: true });

function decodeOrNull(bytes) {
  try { return strict.decode(bytes); } catch (e) { return null; }
}

// token bytes as text: whole UTF-8 characters as themselves, other bytes as \xNN (like Python's backslashreplace)
function showBytes(bytes) {
  let out = "";
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    const n = b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : b >= 0xf0 && b < 0xf5 ? 4 : 0;
    const ch = n && i + n <= bytes.length ? decodeOrNull(bytes.subarray(i, i + n)) : null;
    if (ch === null) { out += "\\x" + b.toString(16).padStart(2, "0"); i += 1; } else { out += ch; i += n; }
  }
  return out;
}

const visibleWs = (s) => s.replace(/ /g, "\u00b7").replace(/\n/g, "\\n").replace(/\t/g, "\\t").replace(/\r/g, "\\r");

// text with spaces, tabs and newlines made visible (newlines still break the line)
function textNodes(s, showWs) {
  if (!showWs) return [document.createTextNode(s)];
  const out = [];
  let buf = "";
  const flush = () => { if (buf) { out.push(document.createTextNode(buf)); buf = ""; } };
  for (const ch of s) {
    const mark = ch === " " ? "\u00b7" : ch === "\t" ? "\u2192" : ch === "\n" ? "\u21b5\n" : ch === "\r" ? "\u240d" : null;
    if (mark === null) { buf += ch; continue; }
    flush();
    out.push(el("span", { class: "ws", text: mark }));
  }
  flush();
  return out;
}

// a superword token holds two or more runs of non-whitespace bytes, so it crosses the space
// between them (" of the", ", and"): bytepair.superword.superword_tokens' rule, ASCII whitespace
function isSuperword(bytes) {
  let runs = 0;
  let inRun = false;
  for (const b of bytes) {
    const ws = b === 32 || (b >= 9 && b <= 13);
    if (!ws && !inRun) runs += 1;
    inRun = !ws;
  }
  return runs >= 2;
}

// one span per token; runs of partial-character tokens are grouped under the characters they make
function renderTokens(container, tokens, showWs, extra) {
  container.replaceChildren();
  let group = [];
  let acc = [];
  const span = (t, k) => {
    const bytes = t.bytes;
    const text = t.complete ? decodeOrNull(bytes) : null;
    const cls = ["tok", "c" + (k % 5)];
    if (text === null) cls.push("partial");
    const superword = isSuperword(bytes);
    if (superword) cls.push("superword");
    if (extra && extra(t, k)) cls.push("new");
    const s = el("span", { class: cls.join(" "), "data-hex": bytesToHex(bytes) });
    if (t.id !== undefined) s.setAttribute("data-id", String(t.id));
    if (text === null) s.textContent = showWs ? visibleWs(showBytes(bytes)) : showBytes(bytes);
    else s.append(...textNodes(text, showWs));
    const idPart = t.id !== undefined ? `id ${t.id} · ` : "";
    s.title = `#${k} · ${idPart}bytes ${bytesToHex(bytes).replace(/(..)(?!$)/g, "$1 ")}` +
      (text === null ? " · partial UTF-8: part of a character" : "") +
      (superword ? " · superword: crosses a space" : "");
    return s;
  };
  tokens.forEach((t, k) => {
    if (group.length === 0 && t.complete) { container.append(span(t, k)); return; }
    group.push([t, k]);
    acc.push(...t.bytes);
    const chars = decodeOrNull(Uint8Array.from(acc));
    if (chars !== null) {
      const rt = el("rt");
      for (const [g, gk] of group) rt.append(span(g, gk));
      const ruby = el("ruby", { class: "group", title: `${group.length} tokens make ${chars}` },
        ...textNodes(chars, showWs), rt);
      container.append(ruby);
      group = []; acc = [];
    }
  });
  if (group.length) for (const [g, gk] of group) container.append(span(g, gk));
}

// ------------------------------------------------------------------ tabs and share links

function selectTab(name) {
  for (const b of document.querySelectorAll("nav button")) {
    const on = b.dataset.panel === name;
    b.setAttribute("aria-selected", on ? "true" : "false");
    $("#panel-" + b.dataset.panel).hidden = !on;
  }
  state.tab = name;
  updateHash();
}

function chosen(fieldset) {
  return Array.from(document.querySelectorAll(`${fieldset} input:checked`), (x) => x.value);
}

function updateHash() {
  const p = new URLSearchParams();
  if (state.tab && state.tab !== "tokens") p.set("tab", state.tab);
  const text = $("#tokens-text").value;
  if (text) p.set("text", text);
  p.set("tok", chosen("#tokens-choices").join(","));
  const url = location.pathname + "#" + p.toString();
  history.replaceState(null, "", url);
  $("#tokens-link").value = location.href;
}

function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  return { tab: p.get("tab"), text: p.get("text"), tok: p.get("tok") };
}

// ------------------------------------------------------------------ Tokens tab

function scheduleEncode() {
  if (state.timer !== null) clearTimeout(state.timer);
  state.timer = setTimeout(() => { state.timer = null; encodeNow(); }, 120);
  updateHash();
}

async function encodeNow() {
  const text = $("#tokens-text").value;
  const names = chosen("#tokens-choices");
  const seq = ++state.seq;
  try {
    const data = await api("/api/encode", { text, tokenizers: names });
    if (seq !== state.seq) return; // a newer request is on its way
    showError("");
    renderEncoding(text, data);
  } catch (e) {
    if (seq === state.seq) showError(e.message);
  }
}

function renderEncoding(text, data) {
  const out = $("#tokens-out");
  const showWs = $("#tokens-ws").checked;
  out.replaceChildren();
  for (const r of data.results) {
    const tokens = r.tokens.map((t) => ({ id: t.id, bytes: hexToBytes(t.hex), complete: t.complete }));
    const view = el("div", { class: "view" });
    renderTokens(view, tokens, showWs);
    const stats = el("div", { class: "stats" },
      el("b", { class: "stat-count", text: r.count.toLocaleString("en") }), " tokens · ",
      el("b", { class: "stat-bpt", text: r.bytes_per_token.toFixed(2) }), " bytes/token · ",
      el("b", { class: "stat-cpt", text: r.chars_per_token.toFixed(2) }), " chars/token · ",
      el("b", { class: "stat-partial", text: String(r.partial) }), " partial-character tokens · ",
      el("b", { class: "stat-superword", text: String(tokens.filter((t) => isSuperword(t.bytes)).length) }),
      " superword tokens · ",
      `${data.bytes.toLocaleString("en")} bytes, ${data.chars.toLocaleString("en")} characters`);
    out.append(el("div", { class: "col", "data-tokenizer": r.tokenizer, "data-count": String(r.count) },
      el("h2", { text: r.tokenizer }), stats, view));
  }
  out.dataset.text = text;
}

// ------------------------------------------------------------------ Train tab

async function runTrace() {
  const text = $("#train-text").value;
  const merges = parseInt($("#train-merges").value, 10);
  const pattern = $("#train-pattern").value;
  try {
    const data = await api("/api/trace", { text, merges, pattern });
    showError("");
    state.trace = data;
    state.traceText = text;
    state.traceBody = { text, merges, pattern };
    state.traceBytes = new TextEncoder().encode(text);
    const steps = data.steps.length;
    $("#train-step").max = String(steps);
    $("#train-stepper").hidden = false;
    $("#train-download").disabled = false;
    const body = $("#train-steps tbody");
    body.replaceChildren();
    const code = (o) => el("code", { class: "b", text: visibleWs(showBytes(hexToBytes(o.hex))) });
    data.steps.forEach((s) => {
      const tr = el("tr", { "data-merge": String(s.merge) },
        el("td", { class: "num", text: String(s.merge) }), el("td", { class: "num", text: String(s.id) }),
        el("td", {}, code(s.left), " + ", code(s.right)), el("td", {}, code(s.token)),
        el("td", { class: "num", text: String(s.count) }), el("td", { class: "num", text: String(s.num_tokens) }));
      tr.addEventListener("click", () => showStep(s.merge));
      body.append(tr);
    });
    showStep(steps);
  } catch (e) {
    showError(e.message);
  }
}

function showStep(k) {
  const t = state.trace;
  if (!t) return;
  k = Math.max(0, Math.min(t.steps.length, k));
  state.step = k;
  $("#train-step").value = String(k);
  const s = k > 0 ? t.steps[k - 1] : null;
  const n = s ? s.num_tokens : t.num_bytes;
  $("#train-label").textContent = s
    ? `after merge ${k} of ${t.steps.length}: "${visibleWs(s.left.text)}" + "${visibleWs(s.right.text)}" → ` +
      `"${visibleWs(s.token.text)}" ` +
      `(seen ${s.count}×) · ${n} tokens`
    : `before any merge · ${n} tokens (one per byte) · ${t.steps.length} merges`;
  $("#train-label").dataset.tokens = String(n);
  for (const tr of document.querySelectorAll("#train-steps tbody tr")) {
    tr.classList.toggle("current", Number(tr.dataset.merge) === k);
  }
  const view = $("#train-view");
  if (t.removed === null) {
    view.replaceChildren(el("p", { class: "hint",
      text: `The text after each merge is shown for corpora up to ${t.view_limit.toLocaleString("en")} bytes.` }));
    return;
  }
  const b = state.traceBytes;
  const tokens = [];
  let start = 0;
  const fresh = [];
  for (let c = 1; c <= b.length; c++) {
    const r = c < b.length ? t.removed[c - 1] : null;
    if (c < b.length && r !== null && r <= k) {
      if (r === k) fresh.push(tokens.length);
      continue;
    }
    const bytes = b.slice(start, c);
    tokens.push({ bytes, complete: decodeOrNull(bytes) !== null });
    start = c;
  }
  const isNew = new Set(fresh);
  renderTokens(view, tokens, true, (_, idx) => isNew.has(idx));
  view.dataset.step = String(k);
  view.dataset.tokens = String(tokens.length);
}

async function downloadTrained() {
  try {
    const blob = await api("/api/train", state.traceBody);
    const a = el("a", { href: URL.createObjectURL(blob), download: "tokenizer.bytepair.json" });
    document.body.append(a);
    a.click();
    a.remove();
  } catch (e) {
    showError(e.message);
  }
}

// ------------------------------------------------------------------ Compare tab

const SAMPLES = [
  ["English", "The library opens at nine in the morning and closes at six in the evening."],
  ["Korean", "도서관은 아침 아홉 시에 문을 열고 저녁 여섯 시에 문을 닫습니다."],
  ["Japanese", "図書館は朝九時に開き、夕方六時に閉まります。"],
  ["Chinese", "图书馆早上九点开门，晚上六点关门。"],
  ["German", "Die Bibliothek öffnet um neun Uhr morgens und schließt um sechs Uhr abends."],
  ["Russian", "Библиотека открывается в девять утра и закрывается в шесть вечера."],
  ["Hindi", "पुस्तकालय सुबह नौ बजे खुलता है और शाम छह बजे बंद होता है।"],
  ["Arabic", "تفتح المكتبة في التاسعة صباحًا وتغلق في السادسة مساءً."],
];

function addCompareText(label, text) {
  const row = el("div", { class: "ctext" },
    el("input", { value: label, "aria-label": "label" }),
    el("textarea", { value: text, rows: 1, spellcheck: false, "aria-label": "text" }),
    el("button", { type: "button", text: "remove", onclick: () => row.remove() }));
  $("#compare-texts").append(row);
}

async function runCompare() {
  const texts = Array.from(document.querySelectorAll("#compare-texts .ctext"), (row) => ({
    label: row.querySelector("input").value, text: row.querySelector("textarea").value,
  })).filter((t) => t.text);
  try {
    const data = await api("/api/compare", { texts, tokenizers: chosen("#compare-choices") });
    showError("");
    renderCompare(data);
  } catch (e) {
    showError(e.message);
  }
}

function renderCompare(data) {
  const chart = $("#compare-chart");
  chart.replaceChildren();
  const maxRatio = Math.max(...data.rows.map((r) => r.ratio_to_first), 1);
  for (const name of data.tokenizers) {
    const box = el("div", { class: "chart", "data-tokenizer": name }, el("h3", { text: `${name}: tokens relative to "${data.texts[0]}"` }));
    for (const r of data.rows.filter((x) => x.tokenizer === name)) {
      const bar = el("div", { class: "bar" + (r.text === data.texts[0] ? " first" : ""),
        "data-text": r.text, "data-tokenizer": name, "data-ratio": String(r.ratio_to_first),
        "data-tokens": String(r.tokens), title: `${r.tokens} tokens, ${r.bytes_per_token.toFixed(2)} bytes/token` });
      bar.style.width = `${(100 * r.ratio_to_first / maxRatio).toFixed(1)}%`;
      box.append(el("div", { class: "barrow" }, el("span", { text: r.text }), el("div", { class: "track" }, bar),
        el("span", { class: "ratio", text: `${r.ratio_to_first.toFixed(2)}× (${r.tokens})` })));
    }
    chart.append(box);
  }
  const table = $("#compare-table");
  const head = el("tr", {}, el("th", { text: "text" }), ...data.tokenizers.map((n) => el("th", { text: `${n} tokens` })));
  const rows = data.texts.map((t) => el("tr", {}, el("td", { text: t }),
    ...data.tokenizers.map((n) => {
      const r = data.rows.find((x) => x.text === t && x.tokenizer === n);
      return el("td", { class: "num", text: String(r.tokens) });
    })));
  table.replaceChildren(el("thead", {}, head), el("tbody", {}, ...rows));
}

// ------------------------------------------------------------------ start

async function start() {
  for (const b of document.querySelectorAll("nav button")) b.addEventListener("click", () => selectTab(b.dataset.panel));
  try {
    state.info = await api("/api/info");
  } catch (e) {
    showError("cannot reach the bytepair server: " + e.message);
    return;
  }
  $("#version").textContent = `bytepair ${state.info.version} · ${state.info.tokenizers.length} tokenizers`;
  const h = readHash();
  const wanted = h.tok ? h.tok.split(",") : null;
  for (const [fs, pick] of [["#tokens-choices", wanted], ["#compare-choices", null]]) {
    for (const t of state.info.tokenizers) {
      const on = pick ? pick.includes(t.name) : true;
      const box = el("input", { type: "checkbox", value: t.name, checked: on });
      $(fs).append(el("label", { title: `${t.n_vocab.toLocaleString("en")} tokens, pattern ${t.pattern}` }, box, " " + t.name));
    }
  }
  for (const p of state.info.patterns) $("#train-pattern").append(el("option", { value: p, text: p }));
  $("#train-merges").max = String(state.info.limits.merges);
  $("#tokens-text").value = h.text !== null ? h.text : "Tokenizers cut text into pieces. 토크나이저는 글을 조각으로 나눕니다.";
  $("#tokens-text").addEventListener("input", scheduleEncode);
  $("#tokens-choices").addEventListener("change", scheduleEncode);
  $("#tokens-ws").addEventListener("change", scheduleEncode);
  $("#tokens-share").addEventListener("click", async () => {
    updateHash();
    $("#tokens-link").select();
    try { await navigator.clipboard.writeText(location.href); } catch (e) { /* the link stays selected */ }
  });
  $("#train-run").addEventListener("click", runTrace);
  $("#train-download").addEventListener("click", downloadTrained);
  $("#train-step").addEventListener("input", () => showStep(parseInt($("#train-step").value, 10)));
  $("#train-first").addEventListener("click", () => showStep(0));
  $("#train-prev").addEventListener("click", () => showStep(state.step - 1));
  $("#train-next").addEventListener("click", () => showStep(state.step + 1));
  $("#train-last").addEventListener("click", () => showStep(state.trace ? state.trace.steps.length : 0));
  $("#train-file").addEventListener("change", async () => {
    const f = $("#train-file").files[0];
    if (!f) return;
    if (f.size > state.info.limits.trace_text) {
      showError(`${f.name} is ${f.size.toLocaleString("en")} bytes; the limit is ${state.info.limits.trace_text.toLocaleString("en")}`);
      return;
    }
    $("#train-text").value = await f.text();
  });
  for (const [label, text] of SAMPLES) addCompareText(label, text);
  $("#compare-add").addEventListener("click", () => addCompareText(`text ${document.querySelectorAll(".ctext").length + 1}`, ""));
  $("#compare-run").addEventListener("click", runCompare);
  selectTab(["tokens", "train", "compare"].includes(h.tab) ? h.tab : "tokens");
  encodeNow();
  runCompare();
}

document.addEventListener("DOMContentLoaded", start);
