/* mmtasks run viewer: plain JS, no build step, nothing loaded from outside this folder.
 *
 * Data: index.js, then per task <data>/t<i>/rows.js (the table) and, when a document is opened,
 * its chunk <data>/t<i>/c<k>.js. Each is a script calling MMV.load(key, data), so the page works
 * opened from disk (file://), where fetch is refused, and from any static server.
 *
 * Safety rule: every string from the data (replies, judge replies, prompts, ids, names) reaches the
 * DOM through textContent, createTextNode or setAttribute of a non-URL attribute - never innerHTML.
 * Image sources are checked against the site's own img/ names before they are set.
 */
(function () {
  "use strict";

  const PAGE_SIZE = 50;
  const MISSING = "\u2013";
  const IMG_SRC = /^img\/[0-9a-f]{24}\.[tl]\.jpg$/;
  const DATA_DIR = /^d-[0-9]{14}-[0-9a-f]{6}$/;
  const KIND_LABELS = {
    request_failure: "request failure", context_overflow: "context overflow", truncated: "truncated", unparsed: "unparsed",
    judge_failure: "judge failure", guessed: "guessed", kept_as_text: "kept as text", scored_wrong: "scored wrong",
  };
  // the record policy's treatments (coverage[task]: reason -> count), as the results table names them
  const TREATMENTS = [["excluded", "excluded"], ["kept_as_text", "kept as text"], ["scored_wrong", "scored wrong"]];

  // ---- loading data scripts -----------------------------------------------------------------

  const loaded = new Map();
  const waiting = new Map();
  Object.defineProperty(window, "MMV", {
    value: Object.freeze({
      load(key, data) {
        if (typeof key !== "string") return;
        loaded.set(key, data);
        const w = waiting.get(key);
        if (w) { waiting.delete(key); w.resolve(data); }
      },
    }),
    writable: false, configurable: false,
  });

  function loadScript(key, src) {
    if (loaded.has(key)) return Promise.resolve(loaded.get(key));
    if (waiting.has(key)) return waiting.get(key).promise;
    let resolve, reject;
    const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
    waiting.set(key, { promise, resolve, reject });
    const tag = document.createElement("script");
    tag.src = src;
    tag.onerror = () => { waiting.delete(key); reject(new Error("cannot load " + src)); };
    tag.onload = () => {
      tag.remove();
      if (waiting.has(key)) { waiting.delete(key); reject(new Error(src + " holds no data for " + key)); }
    };
    document.head.appendChild(tag);
    return promise;
  }

  // ---- DOM helpers ----------------------------------------------------------------------------

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.appendChild(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
    }
    return node;
  }

  function text(value) {
    if (value === null || value === undefined) return "";
    return typeof value === "string" ? value : JSON.stringify(value, null, 1);
  }

  function isNum(v) { return typeof v === "number" && Number.isFinite(v); }
  function own(obj, key) { return obj !== null && typeof obj === "object" && Object.prototype.hasOwnProperty.call(obj, key); }
  function fmt(v) { return isNum(v) ? (Number.isInteger(v) ? String(v) : v.toFixed(2)) : MISSING; }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }
  function $(id) { return document.getElementById(id); }

  function setStatus(message, isError) {
    const status = $("status");
    status.textContent = message || "";
    status.classList.toggle("error", !!isError);
    status.hidden = !message;
  }

  // ---- state ----------------------------------------------------------------------------------

  const state = {
    index: null, task: null, table: null, nRuns: 1,
    metric: null, scoreRun: 0, sort: "doc", page: 0,
    dims: {}, kind: "", min: "", max: "", search: "", disagree: false,
    doc: null, fullText: null, fullTextTask: null, fullTextDone: 0,
    filtered: [],
  };

  function runBase(r) { return 3 + 3 * r; }
  function rowMetrics(row, r) { return row[runBase(r)]; }
  function rowKinds(row, r) { return row[runBase(r) + 1] || 0; }
  function rowParsed(row, r) { return row[runBase(r) + 2]; }
  function rowDisagree(row) { return state.nRuns > 1 ? row[runBase(state.nRuns)] === 1 : false; }

  function score(row, r) {
    const m = rowMetrics(row, r);
    const i = state.table.metrics.indexOf(state.metric);
    return Array.isArray(m) && i >= 0 && isNum(m[i]) ? m[i] : null;
  }

  // ---- start ----------------------------------------------------------------------------------

  async function start() {
    let index;
    try {
      index = await loadScript("index", "index.js");
    } catch (err) {
      setStatus("No view data next to this page. Build it with: mmtasks view RUN --out DIR", true);
      return;
    }
    if (!index || typeof index !== "object" || !DATA_DIR.test(String(index.data)) || !Array.isArray(index.tasks)) {
      setStatus("index.js is not a view's index", true);
      return;
    }
    state.index = index;
    state.nRuns = Array.isArray(index.runs) && index.runs.length === 2 ? 2 : 1;
    renderRuns();
    renderTaskNav();
    window.addEventListener("hashchange", route);
    document.addEventListener("keydown", e => { if (e.key === "Escape") closeOverlay(); });
    $("overlay").addEventListener("click", closeOverlay);
    await route();
  }

  function parseHash() {
    const out = {};
    for (const part of location.hash.replace(/^#/, "").split("&")) {
      const [k, v] = part.split("=");
      if (k && v !== undefined && /^[0-9]+$/.test(v)) out[k] = Number(v);
    }
    return out;
  }

  async function route() {
    const h = parseHash();
    const tasks = state.index.tasks;
    const t = own(h, "t") && h.t < tasks.length ? h.t : 0;
    if (state.task !== tasks[t]) await openTask(t);
    if (own(h, "d") && h.d < state.table.rows.length) await openDoc(h.d);
    else { state.doc = null; clear($("doc")); }
  }

  function go(t, d) {
    const hash = "#t=" + t + (d === null || d === undefined ? "" : "&d=" + d);
    if (location.hash !== hash) location.hash = hash; else route();
  }

  // ---- header and task navigation -------------------------------------------------------------

  function renderRuns() {
    const box = clear($("runs"));
    for (const run of state.index.runs) {
      const details = [];
      if (run.run_name && run.model) details.push(run.model);
      if (run.strategy) details.push(run.strategy);
      if (run.judge) details.push("judge " + run.judge);
      if (run.date) details.push(String(run.date).replace("T", " ").replace("Z", " UTC"));
      box.appendChild(el("p", { class: "run run-" + run.label },
        state.nRuns > 1 ? el("span", { class: "run-label" }, run.label) : null,
        el("span", { class: "run-name" }, text(run.name)),
        details.length ? el("span", { class: "run-details" }, details.join(" \u00b7 ")) : null,
        run.card && run.card.length ? el("details", { class: "run-card" }, el("summary", {}, "run card"),
          el("ul", {}, ...run.card.map(line => el("li", {}, text(line))))) : null));
    }
  }

  /** The task list, grouped by benchmark (the folder that holds each task; an index written before
   * tasks named theirs puts each task in a group of its own name), groups in first-seen order. Each
   * group folds; the open task's group is open (and every group while there are few tasks). */
  function renderTaskNav() {
    const nav = clear($("tasks"));
    const groups = [];
    const byKey = new Map();
    state.index.tasks.forEach((task, i) => {
      const key = typeof task.benchmark === "string" && task.benchmark ? task.benchmark : task.name;
      if (!byKey.has(key)) {
        const group = { key, title: typeof task.benchmark_title === "string" && task.benchmark_title ? task.benchmark_title : key, tasks: [] };
        byKey.set(key, group);
        groups.push(group);
      }
      byKey.get(key).tasks.push([task, i]);
    });
    const few = state.index.tasks.length <= 12;
    for (const group of groups) {
      const n = group.tasks.reduce((sum, [task]) => sum + (Number.isInteger(task.n) ? task.n : 0), 0);
      const details = el("details", { class: "task-group", "data-benchmark": group.key },
        el("summary", {}, el("span", { class: "group-title" }, text(group.title)),
          el("span", { class: "count" }, group.tasks.length + (group.tasks.length === 1 ? " task, " : " tasks, ") + n + " documents")),
        el("div", { class: "group-tasks" }, ...group.tasks.map(([task, i]) => {
          const button = el("button", { type: "button", class: "task-tab", "data-task": i },
            text(task.name), el("span", { class: "count" }, String(task.n)));
          button.addEventListener("click", () => go(i, null));
          return button;
        })));
      if (few) details.open = true;
      nav.appendChild(details);
    }
  }

  async function openTask(t) {
    const task = state.index.tasks[t];
    setStatus("Loading " + task.name + "…");
    let table;
    try {
      table = await loadScript(task.dir + "/rows", state.index.data + "/" + task.dir + "/rows.js");
    } catch (err) {
      setStatus(String(err.message || err), true);
      return;
    }
    state.task = task;
    state.taskIndex = t;
    state.table = table;
    state.metric = task.default_metric && table.metrics.includes(task.default_metric) ? task.default_metric : (table.metrics[0] || null);
    state.dims = {}; state.kind = ""; state.min = ""; state.max = ""; state.search = ""; state.disagree = false;
    state.sort = "doc"; state.page = 0; state.scoreRun = 0;
    state.fullText = null; state.fullTextTask = null; state.fullTextDone = 0;
    for (const b of document.querySelectorAll(".task-tab")) b.classList.toggle("active", b.getAttribute("data-task") === String(t));
    const open = document.querySelector('.task-tab[data-task="' + t + '"]');
    if (open && open.closest("details")) open.closest("details").open = true;  // the open task's group shows it
    setStatus("");
    renderSummary();
    renderFilters();
    applyFilters();
  }

  function renderSummary() {
    const box = clear($("summary"));
    const task = state.task;
    box.appendChild(el("h2", {}, text(task.name)));
    if (task.description) box.appendChild(el("p", { class: "description" }, text(task.description)));
    const runs = Array.isArray(task.runs) ? task.runs : [];
    const names = new Set();
    for (const r of runs) for (const k of Object.keys((r && r.metrics) || {})) if (!/_(stderr|all|micro|macro)$/.test(k)) names.add(k);
    const ordered = [...names].sort((a, b) => (b === task.primary) - (a === task.primary));
    if (ordered.length) {
      const head = el("tr", {}, el("th", {}, "metric"), state.index.runs.map(r => el("th", {}, state.nRuns > 1 ? r.label : "value")));
      const body = ordered.slice(0, 24).map(name => el("tr", { "data-metric": name }, el("td", {}, name),
        runs.map(r => {
          const m = (r && r.metrics) || {};
          const se = m[name + "_stderr"];
          return el("td", { class: "num" }, fmt(m[name]), isNum(se) ? el("span", { class: "stderr" }, " \u00b1" + fmt(se)) : null);
        })));
      box.appendChild(el("table", { class: "results" }, el("thead", {}, head), el("tbody", {}, body)));
    }
    if (task.configs_differ) {
      box.appendChild(el("p", { class: "configs-differ" }, "The runs used different definitions of this task (config hashes " +
        runs.map((r, i) => state.index.runs[i].label + " " + text(r && r.config_hash)).join(", ") + "): compare their scores with care."));
    }
    const paired = task.paired;
    if (paired && isNum(paired.difference)) {
      const sign = v => (v >= 0 ? "+" : "\u2212") + fmt(Math.abs(v));
      const test = isNum(paired.mcnemar_p) ? "; McNemar p=" + paired.mcnemar_p.toPrecision(2) : "";
      const others = paired.only_a || paired.only_b ? " (" + paired.only_a + " only in " + state.index.runs[0].label +
        ", " + paired.only_b + " only in " + state.index.runs[1].label + ")" : "";
      const failed = paired.failed_a || paired.failed_b ? " (failed: " + (paired.failed_a || 0) + " in " + state.index.runs[0].label +
        ", " + (paired.failed_b || 0) + " in " + state.index.runs[1].label + ", " +
        (paired.failures === "wrong" ? "counted as wrong" : "left out") + ")" : "";
      box.appendChild(el("p", { class: "paired" }, "Paired over the " + paired.n + " documents both runs " + (failed ? "hold" + failed : "scored") + others + ": " +
        state.index.runs[1].label + " \u2212 " + state.index.runs[0].label + " on " + text(paired.metric) + " = " +
        sign(paired.difference) + " [" + sign(paired.low) + ", " + sign(paired.high) + "] (95% paired bootstrap" + test + "), " +
        (paired.significant ? "significant" : "not significant") + "."));
    }
    const turnTable = perTurnTable(runs, ordered[0]);
    if (turnTable) box.appendChild(turnTable);
    runs.forEach((r, i) => {
      const problems = Object.entries((r && r.problems) || {}).filter(([, n]) => n > 0);
      const cov = r && r.coverage;
      const parts = [];
      if (cov && isNum(cov.percent)) parts.push("coverage " + cov.percent.toFixed(1) + "% (" + cov.scored + " of " + cov.total + " " + (cov.unit || "documents")
        + (isNum(cov.unparsed) && cov.unparsed > 0 ? ", " + cov.unparsed + " of them unparsed, scored as wrong" : "") + ")");
      const byReason = new Set();
      for (const [key, label] of TREATMENTS) {
        const reasons = cov && cov[key] && typeof cov[key] === "object" ? Object.entries(cov[key]) : [];
        if (reasons.length) byReason.add(key);
        for (const [reason, n] of reasons) if (isNum(n)) parts.push(label + ": " + text(reason) + " " + n);
      }
      for (const [k, n] of problems) if (!byReason.has(k)) parts.push(k + " " + n);
      const rep = r && r.replies;
      if (rep && isNum(rep.n) && rep.n > 0) {
        const cut = rep.finish_reasons && isNum(rep.finish_reasons.length) ? rep.finish_reasons.length : 0;
        if (cut) parts.push("at the token limit " + (100 * cut / rep.n).toFixed(1) + "% (" + cut + " of " + rep.n + " replies)");
        if (rep.reasoning && isNum(rep.reasoning.mean)) parts.push("reasoning " + Math.round(rep.reasoning.mean) + " " + text(rep.reasoning.unit) + " on average (" + rep.reasoning.n + " replies)");
      }
      for (const [name, x] of Object.entries((r && r.variants) || {})) {
        const m = x && x.metrics && typeof x.metrics === "object" ? x.metrics : {};
        const head = ordered[0];
        if (head && head in m) parts.push("variant " + text(name) + ": " + text(head) + " " + fmt(m[head]));
      }
      if (parts.length) box.appendChild(el("p", { class: "problems" }, state.nRuns > 1 ? state.index.runs[i].label + ": " : "", parts.join(" \u00b7 ")));
    });
  }

  // a multi-turn task's headline per turn (results.json's "turn" breakdown), a column per run
  function perTurnTable(runs, metric) {
    const labels = [];
    for (const r of runs) for (const k of Object.keys((r && r.turns && typeof r.turns === "object") ? r.turns : {})) if (!labels.includes(k)) labels.push(k);
    if (!labels.length || !metric) return null;
    labels.sort((a, b) => Number(a) - Number(b));
    const head = el("tr", {}, el("th", {}, "turn"), runs.map((r, i) => el("th", {}, (state.nRuns > 1 ? state.index.runs[i].label + " " : "") + metric)));
    const body = labels.map(label => el("tr", { "data-turn": label }, el("td", {}, label), runs.map(r => {
      const row = r && r.turns && r.turns[label];
      return el("td", { class: "num" }, row ? fmt(row[metric]) : MISSING, row && isNum(row.n) ? el("span", { class: "stderr" }, " n=" + row.n) : null);
    })));
    return el("details", { class: "per-turn", open: labels.length <= 12 }, el("summary", {}, metric + " per turn"),
      el("table", { class: "results per-turn" }, el("thead", {}, head), el("tbody", {}, body)));
  }

  // ---- filters --------------------------------------------------------------------------------

  function labelled(label, control) { return el("label", { class: "control" }, el("span", {}, label), control); }

  function renderFilters() {
    const box = clear($("filters"));
    const table = state.table;
    table.dims.forEach((dim, d) => {
      const select = el("select", { "data-filter": "dim", "data-dim": d },
        el("option", { value: "" }, "all"),
        (table.dim_values[d] || []).map((v, i) => el("option", { value: String(i) }, text(v))));
      select.addEventListener("change", () => { state.dims[d] = select.value; state.page = 0; applyFilters(); });
      box.appendChild(labelled(text(dim), select));
    });
    const kind = el("select", { id: "filter-kind" },
      el("option", { value: "" }, "any"), el("option", { value: "ok" }, "no failure"), el("option", { value: "failed" }, "any failure"),
      (state.index.kinds || []).map(k => el("option", { value: k }, KIND_LABELS[k] || text(k))));
    kind.addEventListener("change", () => { state.kind = kind.value; state.page = 0; applyFilters(); });
    box.appendChild(labelled("failure", kind));
    const metric = el("select", { id: "filter-metric" }, table.metrics.map(m => el("option", { value: m, selected: m === state.metric }, text(m))));
    metric.addEventListener("change", () => { state.metric = metric.value; state.page = 0; applyFilters(); });
    box.appendChild(labelled("score", metric));
    if (state.nRuns > 1) {
      const which = el("select", { id: "filter-score-run" }, state.index.runs.map((r, i) => el("option", { value: String(i) }, "of " + r.label)));
      which.addEventListener("change", () => { state.scoreRun = Number(which.value); state.page = 0; applyFilters(); });
      box.appendChild(which);
    }
    const min = el("input", { id: "filter-min", type: "number", step: "any", placeholder: "min", size: 5 });
    const max = el("input", { id: "filter-max", type: "number", step: "any", placeholder: "max", size: 5 });
    min.addEventListener("input", () => { state.min = min.value; state.page = 0; applyFilters(); });
    max.addEventListener("input", () => { state.max = max.value; state.page = 0; applyFilters(); });
    box.appendChild(labelled("from", min));
    box.appendChild(labelled("to", max));
    const sort = el("select", { id: "sort" }, el("option", { value: "doc" }, "document order"),
      el("option", { value: "desc" }, "score, high first"), el("option", { value: "asc" }, "score, low first"));
    sort.addEventListener("change", () => { state.sort = sort.value; state.page = 0; applyFilters(); });
    box.appendChild(labelled("sort", sort));
    const search = el("input", { id: "filter-search", type: "search", placeholder: "text in the document", size: 24 });
    let timer = null;
    search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        state.search = search.value.trim().toLowerCase();
        state.page = 0;
        if (state.search) indexFullText();  // starts reading the chunks; filters again as they arrive
        applyFilters();
      }, 150);
    });
    box.appendChild(labelled("search", search));
    if (state.nRuns > 1) {
      const disagree = el("input", { id: "filter-disagree", type: "checkbox" });
      disagree.addEventListener("change", () => { state.disagree = disagree.checked; state.page = 0; applyFilters(); });
      box.appendChild(el("label", { class: "control check" }, disagree, el("span", {}, "where they disagree")));
    }
    box.appendChild(el("span", { id: "filter-count", class: "filter-count" }));
  }

  function kindMatch(row) {
    if (!state.kind) return true;
    const runs = state.nRuns > 1 ? [0, 1] : [0];
    const kinds = state.index.kinds || [];
    const any = runs.map(r => rowKinds(row, r)).reduce((a, b) => a | b, 0);
    if (state.kind === "ok") return any === 0;
    if (state.kind === "failed") return any !== 0;
    const bit = kinds.indexOf(state.kind);
    return bit >= 0 && (any & (1 << bit)) !== 0;
  }

  function textMatch(row, pos) {
    const q = state.search;
    if (!q) return true;
    if (state.fullText && state.fullText[pos] !== undefined) return state.fullText[pos].includes(q);
    const shorts = [row[0], row[2]];
    for (let r = 0; r < state.nRuns; r++) shorts.push(rowParsed(row, r));
    return shorts.some(s => typeof s === "string" && s.toLowerCase().includes(q));
  }

  function applyFilters() {
    const rows = state.table.rows;
    const min = state.min === "" ? null : Number(state.min);
    const max = state.max === "" ? null : Number(state.max);
    const dimFilters = Object.entries(state.dims).filter(([, v]) => v !== "").map(([d, v]) => [Number(d), Number(v)]);
    const out = [];
    for (let pos = 0; pos < rows.length; pos++) {
      const row = rows[pos];
      if (dimFilters.length) {
        const dims = row[1] || [];
        if (!dimFilters.every(([d, v]) => dims.some(p => p[0] === d && p[1] === v))) continue;
      }
      if (!kindMatch(row)) continue;
      if (min !== null || max !== null) {
        const s = score(row, state.scoreRun);
        if (s === null || (min !== null && s < min) || (max !== null && s > max)) continue;
      }
      if (state.disagree && !rowDisagree(row)) continue;
      if (!textMatch(row, pos)) continue;
      out.push(pos);
    }
    if (state.sort !== "doc") {
      const dir = state.sort === "desc" ? -1 : 1;
      const scores = new Map(out.map(pos => [pos, score(rows[pos], state.scoreRun)]));
      out.sort((a, b) => {
        const x = scores.get(a), y = scores.get(b);
        if (x === null && y === null) return a - b;
        if (x === null) return 1;   // documents without a score last, either way
        if (y === null) return -1;
        return x === y ? a - b : dir * (x - y);
      });
    }
    state.filtered = out;
    const pages = Math.max(1, Math.ceil(out.length / PAGE_SIZE));
    if (state.page >= pages) state.page = pages - 1;
    renderTable();
  }

  // ---- full-text search: loads the task's chunks once, on the first search ------------------

  function collectText(value, parts) {
    if (typeof value === "string") parts.push(value);
    else if (Array.isArray(value)) for (const v of value) collectText(v, parts);
    else if (value && typeof value === "object") {
      if (value.type === "image" && own(value, "name")) { parts.push(String(value.name)); return; }
      for (const v of Object.values(value)) collectText(v, parts);
    }
    return parts;
  }

  async function indexFullText() {
    const task = state.task;
    if (state.fullTextTask === task) return;
    state.fullTextTask = task;
    state.fullText = [];
    state.fullTextDone = 0;
    const chunk = state.index.chunk;
    const PARALLEL = 6;
    for (let start = 0; start < task.chunks; start += PARALLEL) {
      const ks = [];
      for (let k = start; k < Math.min(task.chunks, start + PARALLEL); k++) ks.push(k);
      const loaded = await Promise.all(ks.map(k => loadChunk(task, k).catch(() => null)));
      if (state.task !== task) return;
      loaded.forEach((docs, j) => {
        if (!Array.isArray(docs)) return;  // a chunk that cannot be read: its documents match on the table's fields only
        docs.forEach((doc, i) => { state.fullText[ks[j] * chunk + i] = collectText(doc, []).join("\n").toLowerCase(); });
      });
      state.fullTextDone = ks[ks.length - 1] + 1;
      if (state.search && (start % 60 === 0 || state.fullTextDone === task.chunks)) applyFilters();
    }
  }

  function loadChunk(task, k) {
    return loadScript(task.dir + "/c" + k, state.index.data + "/" + task.dir + "/c" + k + ".js");
  }

  // ---- the table ------------------------------------------------------------------------------

  function kindBadges(mask) {
    const kinds = state.index.kinds || [];
    return kinds.filter((k, bit) => mask & (1 << bit)).map(k => el("span", { class: "badge kind-" + k, "data-kind": k }, KIND_LABELS[k] || text(k)));
  }

  function renderTable() {
    const wrap = clear($("table-wrap"));
    const rows = state.table.rows;
    const total = state.filtered.length;
    const from = state.page * PAGE_SIZE;
    const shown = state.filtered.slice(from, from + PAGE_SIZE);
    const count = $("filter-count");
    const searching = state.search && state.fullTextTask === state.task;
    count.textContent = total + " of " + rows.length + " documents" +
      (searching && state.fullTextDone < state.task.chunks
        ? " (searching all text: " + state.fullTextDone + " of " + state.task.chunks + " chunks read)" : "");
    if (searching) count.setAttribute("data-searched", state.fullTextDone + "/" + state.task.chunks);
    else count.removeAttribute("data-searched");
    const runs = state.nRuns > 1 ? [0, 1] : [0];
    const head = el("tr", {}, el("th", {}, "#"), el("th", {}, "document"), el("th", {}, "breakdown"), el("th", {}, "target"),
      runs.map(r => [el("th", {}, (state.nRuns > 1 ? state.index.runs[r].label + " " : "") + "answer"),
        el("th", {}, (state.nRuns > 1 ? state.index.runs[r].label + " " : "") + (state.metric || "score")),
        el("th", {}, (state.nRuns > 1 ? state.index.runs[r].label + " " : "") + "problems")]));
    const body = el("tbody", {});
    for (const pos of shown) {
      const row = rows[pos];
      const dims = (row[1] || []).map(([d, v]) => text(state.table.dims[d]) + ": " + text((state.table.dim_values[d] || [])[v])).join(", ");
      const tr = el("tr", { "data-pos": pos, class: (state.doc === pos ? "selected" : "") + (rowDisagree(row) ? " disagree" : ""), tabindex: 0 },
        el("td", { class: "num" }, String(pos + 1)),
        el("td", { class: "doc-id" }, text(row[0])),
        el("td", { class: "dims" }, dims),
        el("td", { class: "short" }, row[2] === null ? MISSING : text(row[2])),
        runs.map(r => {
          const present = Array.isArray(rowMetrics(row, r));
          return [el("td", { class: "short parsed" }, present ? (rowParsed(row, r) === null ? MISSING : text(rowParsed(row, r))) : "absent"),
            el("td", { class: "num score" }, present ? fmt(score(row, r)) : MISSING),
            el("td", { class: "kinds" }, kindBadges(rowKinds(row, r)))];
        }));
      tr.addEventListener("click", () => go(state.taskIndex, pos));
      tr.addEventListener("keydown", e => { if (e.key === "Enter") go(state.taskIndex, pos); });
      body.appendChild(tr);
    }
    wrap.appendChild(el("table", { class: "docs", id: "docs" }, el("thead", {}, head), body));
    const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
    const prev = el("button", { type: "button", id: "page-prev", disabled: state.page === 0 }, "\u2190 previous");
    const next = el("button", { type: "button", id: "page-next", disabled: state.page >= pages - 1 }, "next \u2192");
    prev.addEventListener("click", () => { state.page--; renderTable(); });
    next.addEventListener("click", () => { state.page++; renderTable(); });
    wrap.appendChild(el("div", { class: "pager" }, prev, el("span", { id: "page-info" }, "page " + (state.page + 1) + " of " + pages), next));
  }

  // ---- one document ---------------------------------------------------------------------------

  async function openDoc(pos) {
    const task = state.task;
    const k = Math.floor(pos / state.index.chunk);
    let docs;
    try {
      docs = await loadChunk(task, k);
    } catch (err) {
      setStatus(String(err.message || err), true);
      return;
    }
    if (state.task !== task) return;
    state.doc = pos;
    for (const tr of document.querySelectorAll("#docs tbody tr")) tr.classList.toggle("selected", tr.getAttribute("data-pos") === String(pos));
    const entry = docs[pos % state.index.chunk] || {};
    const box = clear($("doc"));
    const row = state.table.rows[pos];
    box.appendChild(el("h2", { class: "doc-title" }, "Document ", el("span", { class: "doc-id" }, text(row[0])),
      rowDisagree(row) ? el("span", { class: "badge disagree-badge" }, "the runs disagree") : null));
    const columns = el("div", { class: "doc-columns runs-" + state.nRuns });
    state.index.runs.forEach((run, r) => {
      const sample = entry[run.label];
      const col = el("div", { class: "doc-run", "data-run": run.label },
        state.nRuns > 1 ? el("h3", { class: "doc-run-title" }, run.label + ": ", el("span", { class: "run-name" }, text(run.name))) : null);
      if (!sample || typeof sample !== "object") col.appendChild(el("p", { class: "absent" }, "This run has no sample of this document."));
      else renderSample(col, sample);
      columns.appendChild(col);
    });
    box.appendChild(columns);
    box.scrollIntoView({ block: "start" });
  }

  function section(title, cls, ...children) {
    return el("section", { class: "part " + (cls || "") }, el("h4", {}, title), children);
  }

  function renderSample(col, s) {
    const extra = own(s, "extra") && s.extra && typeof s.extra === "object" ? s.extra : {};
    const facts = [];
    const breakdown = own(s, "breakdown") && s.breakdown && typeof s.breakdown === "object" ? Object.entries(s.breakdown) : [];
    if (breakdown.length) facts.push(breakdown.map(([k, v]) => k + ": " + text(v)).join(", "));
    if (isNum(s.doc_index)) facts.push("index " + s.doc_index);
    if (facts.length) col.appendChild(el("p", { class: "facts" }, facts.join(" \u00b7 ")));
    col.appendChild(metricsTable(s.metrics));
    col.appendChild(problemsBox(s));
    const used = new Set();
    if (Array.isArray(extra.turns)) { renderTurns(col, s, extra); used.add("turns"); }
    else if (Array.isArray(extra.questions)) { renderProbe(col, s, extra); ["questions", "notes", "final_note"].forEach(k => used.add(k)); }
    else renderSingle(col, s);
    const rest = Object.keys(extra).filter(k => !used.has(k));
    if (rest.length) {
      const obj = {};
      for (const k of rest) obj[k] = extra[k];
      col.appendChild(el("details", { class: "part extra" }, el("summary", {}, "other record fields (" + rest.join(", ") + ")"),
        el("pre", { class: "text" }, JSON.stringify(obj, null, 1))));
    }
  }

  function metricsTable(metrics) {
    const entries = metrics && typeof metrics === "object" ? Object.entries(metrics) : [];
    if (!entries.length) return el("p", { class: "metrics none" }, "no per-document metrics");
    return el("table", { class: "metrics" }, el("tbody", {}, entries.map(([k, v]) =>
      el("tr", { "data-metric": k }, el("th", {}, text(k)), el("td", { class: "num" }, isNum(v) ? fmt(v) : MISSING)))));
  }

  function problemsBox(s) {
    const items = [];
    for (const f of Array.isArray(s.failures) ? s.failures : []) {
      const kind = failureKind(f);
      items.push(el("li", { class: "failure" }, el("span", { class: "badge kind-" + kind }, KIND_LABELS[kind]), " ", text(f)));
    }
    if (isNum(s.unparsed) && s.unparsed > 0) items.push(el("li", {}, el("span", { class: "badge kind-unparsed" }, "unparsed"),
      " " + s.unparsed + " answer(s) could not be parsed, re-asks included"));
    if (isNum(s.judge_failures) && s.judge_failures > 0) items.push(el("li", {}, el("span", { class: "badge kind-judge_failure" }, "judge failure"),
      " " + s.judge_failures + " judge call(s) gave no verdict"));
    const guessed = isNum(s.guessed) ? s.guessed : (s.extra && isNum(s.extra.guessed) ? s.extra.guessed : 0);
    if (guessed > 0) items.push(el("li", {}, el("span", { class: "badge kind-guessed" }, "guessed"), " the answer is the parser's random fallback"));
    const irregular = s.irregular && typeof s.irregular === "object" ? s.irregular : {};
    for (const [key, label] of TREATMENTS) {
      if (typeof irregular[key] === "string") items.push(el("li", {}, el("span", { class: "badge kind-" + key }, label),
        " " + text(irregular[key]) + " (the task's record policy)"));
    }
    return items.length ? el("ul", { class: "problems-list" }, items) : el("span", {});
  }

  // a failure's kind, read as results.json's problems read it: the earliest of the kinds its error names
  function failureKind(f) {
    if (typeof f !== "string") return "request_failure";
    let best = "request_failure", at = Infinity;
    for (const kind of ["context_overflow", "truncated"]) {
      const i = f.indexOf(kind + ":");
      if (i >= 0 && i < at) { best = kind; at = i; }
    }
    return best;
  }

  // a message: role, then its parts in order (text as text, images as thumbnails in place)
  function message(m, cls) {
    const role = m && typeof m === "object" ? text(m.role) : "";
    const content = m && typeof m === "object" ? m.content : m;
    return el("div", { class: "msg role-" + role.replace(/[^a-z]/g, "") + (cls ? " " + cls : "") },
      el("div", { class: "role" }, role || "message"), parts(content));
  }

  function parts(content) {
    if (typeof content === "string") return [el("span", { class: "text" }, content)];
    if (!Array.isArray(content)) return [el("span", { class: "text" }, text(content))];
    return content.map(p => {
      if (p && typeof p === "object" && p.type === "image") return image(p);
      if (p && typeof p === "object" && p.type === "text") return el("span", { class: "text" }, text(p.text));
      return el("span", { class: "text" }, text(p));
    });
  }

  function image(p) {
    const name = text(p.name);
    if (typeof p.thumb !== "string" || !IMG_SRC.test(p.thumb)) {
      return el("span", { class: "img-missing", title: text(p.missing) }, "[image " + name + ": " + text(p.missing || "not shown") + "]");
    }
    const img = el("img", { class: "thumb", alt: name, title: name + (isNum(p.w) ? " (" + p.w + "\u00d7" + p.h + ")" : "") + " \u2013 click to enlarge",
      loading: "lazy", tabindex: 0 });
    img.src = p.thumb;
    const large = typeof p.large === "string" && IMG_SRC.test(p.large) ? p.large : p.thumb;
    img.addEventListener("click", () => enlarge(large, name));
    img.addEventListener("keydown", e => { if (e.key === "Enter") enlarge(large, name); });
    return img;
  }

  function enlarge(src, name) {
    const overlay = clear($("overlay"));
    const img = el("img", { class: "large", alt: name });
    img.src = src;
    overlay.appendChild(el("figure", {}, img, el("figcaption", {}, name)));
    overlay.hidden = false;
  }

  function closeOverlay() { const o = $("overlay"); o.hidden = true; clear(o); }

  // a reply: its answer, then its reasoning folded under it, and why it ended when not "stop"
  function reply(textValue, label, cls, reasoning, finish) {
    const hasReasoning = typeof reasoning === "string" && reasoning.length > 0;
    const noAnswer = hasReasoning ? "(no answer: the reply was truncated)" : "(no reply: the request failed)";
    return el("div", { class: "msg role-assistant " + (cls || "") }, el("div", { class: "role" }, label || "assistant",
      typeof finish === "string" && finish !== "stop" ? el("span", { class: "finish finish-" + finish.replace(/[^a-z_]/g, "") },
        finish === "length" ? " · hit the token limit" : " · ended: " + finish) : null),
      textValue === null || textValue === undefined ? el("span", { class: "text failed" }, noAnswer)
        : el("span", { class: "text answer-text" }, text(textValue)),
      hasReasoning ? el("details", { class: "reasoning" }, el("summary", {}, "reasoning (" + reasoning.length + " characters)"),
        el("pre", { class: "text" }, reasoning)) : null);
  }

  function at(list, i) { return Array.isArray(list) ? list[i] : undefined; }

  function answerBox(parsed, target, readBy) {
    return el("dl", { class: "answer" }, el("dt", {}, "parsed"), el("dd", { class: "parsed" }, parsed === null || parsed === undefined ? "(none)" : text(parsed)),
      typeof readBy === "string" ? el("dt", {}, "read by") : null,
      typeof readBy === "string" ? el("dd", { class: "read-by" }, text(readBy)) : null,
      el("dt", {}, "target"), el("dd", { class: "target" }, target === null || target === undefined ? MISSING : text(target)));
  }

  // the task's scoring variants on this reply (extra.variants: name -> read_by, unparsed, metrics),
  // each marked where its scores differ from the task's own
  function variantsBox(v, own) {
    if (!v || typeof v !== "object" || !Object.keys(v).length) return null;
    const rows = Object.entries(v).filter(([, x]) => x && typeof x === "object").map(([name, x]) => {
      const m = x.metrics && typeof x.metrics === "object" ? x.metrics : {};
      const differs = Object.keys(m).some(k => (own && own[k]) !== m[k]);
      const scores = Object.entries(m).map(([k, val]) => k + " " + (val === null ? "unscored" : fmt(val))).join(", ");
      return el("li", { class: differs ? "variant differs" : "variant" }, text(name) + ": " + (x.unparsed ? "read nothing" : "read by " + text(x.read_by)) +
        "; " + scores + (differs ? " (differs from the task's own)" : ""));
    });
    return el("section", { class: "part variants" }, el("h4", {}, "scoring variants"), el("ul", {}, rows));
  }

  // the LLM answer matcher's call (extra.matcher): its prompt, its reply and the option it read
  function matcherBox(m) {
    if (!m || typeof m !== "object") return null;
    const prompt = Array.isArray(m.prompt) && m.prompt.length
      ? el("details", { class: "matcher-prompt" }, el("summary", {}, "matcher prompt"), m.prompt.map(x => message(x))) : null;
    return el("section", { class: "part matcher" }, el("h4", {}, "answer matcher"),
      el("p", { class: "matcher-read" }, "read: " + (m.read === null || m.read === undefined ? "(no option)" : text(m.read))),
      m.error ? el("p", { class: "error" }, "error: " + text(m.error)) : null, prompt,
      m.reply === null || m.reply === undefined ? null : el("pre", { class: "text" }, text(m.reply)));
  }

  function judgeBox(j, title) {
    if (!j || typeof j !== "object") return null;
    const ok = j.fields !== null && j.fields !== undefined;
    const verdict = ok ? el("table", { class: "verdict" }, el("tbody", {}, Object.entries(j.fields).map(([k, v]) =>
      el("tr", {}, el("th", {}, text(k)), el("td", {}, text(v)))))) : el("p", { class: "badge kind-judge_failure" }, "judge failure");
    const replies = (Array.isArray(j.replies) ? j.replies : []).map((r, i, all) =>
      el("div", { class: "judge-reply" }, el("div", { class: "role" }, all.length > 1 ? "judge reply, attempt " + (i + 1) + (i < all.length - 1 ? " (re-asked: no verdict)" : "") : "judge reply"),
        r === null ? el("span", { class: "text failed" }, "(no reply: the judge request failed)") : el("pre", { class: "text" }, text(r))));
    const prompt = Array.isArray(j.prompt) && j.prompt.length
      ? el("details", { class: "judge-prompt" }, el("summary", {}, "judge prompt"), j.prompt.map(m => message(m)))
      : el("p", { class: "hint" }, "(this run did not record the judge prompt)");
    return el("section", { class: "part judge" + (ok ? "" : " judge-failed") }, el("h4", {}, title || "judge"),
      el("div", { class: "verdict-box" }, el("span", { class: "verdict-label" }, "verdict"), verdict),
      j.error ? el("p", { class: "error" }, "error: " + text(j.error)) : null, prompt, replies);
  }

  function renderSingle(col, s) {
    const prompt = Array.isArray(s.prompt) ? s.prompt : [];
    col.appendChild(section("prompt", "prompt", prompt.map(m => message(m))));
    const responses = Array.isArray(s.responses) ? s.responses : [];
    const replies = responses.map((r, i) => reply(r, responses.length > 1 ? "reply, attempt " + (i + 1) +
      (i < responses.length - 1 && r !== null ? " (re-asked: could not be parsed)" : "") : "reply", i < responses.length - 1 ? "reasked" : "",
      at(s.reasoning, i), at(s.finish_reasons, i)));
    col.appendChild(section("model", "replies", replies.length ? replies : el("p", {}, "no reply")));
    col.appendChild(answerBox(s.parsed, s.target, s.read_by));
    const matched = s.extra && typeof s.extra === "object" ? matcherBox(s.extra.matcher) : null;
    if (matched) col.appendChild(matched);
    const scoredOtherwise = s.extra && typeof s.extra === "object" ? variantsBox(s.extra.variants, s.metrics) : null;
    if (scoredOtherwise) col.appendChild(scoredOtherwise);
    (Array.isArray(s.judge) ? s.judge : []).forEach((j, i, all) => col.appendChild(judgeBox(j, all.length > 1 ? "judge call " + (i + 1) : "judge")));
  }

  function renderTurns(col, s, extra) {
    const prompt = Array.isArray(s.prompt) ? s.prompt : [];
    const system = prompt.filter(m => m && m.role === "system");
    const users = prompt.filter(m => m && m.role !== "system");
    const judges = Array.isArray(s.judge) ? s.judge : [];
    if (system.length) col.appendChild(section("system", "prompt", system.map(m => message(m))));
    extra.turns.forEach((t, k) => {
      const rec = t && typeof t === "object" ? t : {};
      const turnNo = isNum(rec.turn) ? rec.turn : k + 1;
      const responses = Array.isArray(s.responses) ? s.responses : [];
      const answer = own(rec, "response") ? rec.response : responses[k];
      const notes = [];
      if (rec.status) notes.push("status: " + text(rec.status));
      if (rec.after_failure) notes.push("after an earlier failed turn");
      if (isNum(rec.dropped_turns) && rec.dropped_turns > 0) notes.push(rec.dropped_turns + " oldest exchange(s) dropped to fit");
      const j = judges.find(x => x && x.turn === turnNo);
      col.appendChild(el("section", { class: "part turn", "data-turn": turnNo }, el("h4", {}, "turn " + turnNo),
        users[k] ? message(users[k]) : null,
        reply(answer, "assistant", "", at(s.reasoning, k), at(s.finish_reasons, k)),
        rec.error ? el("p", { class: "error" }, "error: " + text(rec.error)) : null,
        own(rec, "reference") ? el("details", { class: "reference" }, el("summary", {}, "reference answer"), el("pre", { class: "text" }, text(rec.reference))) : null,
        notes.length ? el("p", { class: "facts" }, notes.join(" \u00b7 ")) : null,
        j ? judgeBox(j, "judge of turn " + turnNo) : null));
    });
  }

  function renderProbe(col, s, extra) {
    const prompt = Array.isArray(s.prompt) ? s.prompt : [];
    const setting = [];
    for (const k of ["history", "probe", "n_turns"]) if (own(extra, k)) setting.push(k + " " + text(extra[k]));
    col.appendChild(section("replayed conversation", "prompt", setting.length ? el("p", { class: "facts" }, setting.join(" \u00b7 ")) : null,
      prompt.map(m => message(m, m && m.role === "assistant" ? "replayed" : ""))));
    if (Array.isArray(extra.notes)) {
      col.appendChild(section("notes", "notes", extra.notes.map((n, i) => {
        const rec = n && typeof n === "object" ? n : {};
        return el("div", { class: "note" }, el("div", { class: "role" }, "note after turn " + (isNum(rec.turn) ? rec.turn : i + 1)),
          el("pre", { class: "text" }, text(rec.note)),
          rec.error ? el("p", { class: "error" }, "error: " + text(rec.error)) : null,
          own(rec, "reply") ? el("details", {}, el("summary", {}, "note taker's reply"), el("pre", { class: "text" }, text(rec.reply))) : null);
      }), own(extra, "final_note") ? el("div", { class: "note final" }, el("div", { class: "role" }, "final note"), el("pre", { class: "text" }, text(extra.final_note))) : null));
    }
    const judges = Array.isArray(s.judge) ? s.judge : [];
    extra.questions.forEach((q, k) => {
      const rec = q && typeof q === "object" ? q : {};
      const index = isNum(rec.index) ? rec.index : k;
      const label = "probe " + (index + 1) + (rec.ability ? " \u00b7 " + text(rec.ability) : "") + (rec.format ? " \u00b7 " + text(rec.format) : "");
      const options = rec.options && typeof rec.options === "object"
        ? el("ul", { class: "options" }, Object.entries(rec.options).map(([o, v]) => el("li", {}, o + ". " + text(v)))) : null;
      const j = judges.find(x => x && x.question === index);
      col.appendChild(el("section", { class: "part probe", "data-probe": index }, el("h4", {}, label),
        el("div", { class: "msg role-user" }, el("div", { class: "role" }, "user (probe)"), el("span", { class: "text" }, text(rec.question)), options),
        reply(rec.response, "assistant", "", rec.reasoning),
        answerBox(rec.parsed, own(rec, "reference") ? rec.reference : rec.answer),
        metricsTable(rec.metrics),
        rec.judge_error ? el("p", { class: "error" }, "judge: " + text(rec.judge_error)) : null,
        j ? judgeBox(j, "judge of probe " + (index + 1)) : null));
    });
  }

  start();
})();
