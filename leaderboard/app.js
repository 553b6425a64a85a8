/* mmtasks leaderboard page: plain JS, no build step, no network beyond this folder.
 *
 * Data: leaderboard.json (fetched when served over http/https) or window.LEADERBOARD
 * (set by leaderboard.js, for pages opened from file://). Schema: docs/leaderboard-schema.md.
 *
 * Safety rule: every string that comes from the data reaches the DOM through
 * textContent, createTextNode or setAttribute - never innerHTML.
 */
(function () {
  "use strict";

  const SCHEMA_VERSION = 2;
  const SVG_NS = "http://www.w3.org/2000/svg";
  const PALETTE = ["#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#65a30d",
                   "#475569", "#9333ea", "#ea580c", "#0d9488", "#be123c", "#4f46e5", "#a16207", "#15803d"];
  const MISSING = "\u2013";
  // the record policy's treatments (coverage[task]: reason -> count), named as the results table and the viewer name them
  const TREATMENTS = [["excluded", "excluded"], ["kept_as_text", "kept as text"], ["scored_wrong", "scored wrong"]];

  // the overview's groups, in this order (leaderboard.yaml's category); benchmarks without one last
  const CATEGORIES = [["multi-image", "Multi-image"], ["multi-turn", "Multi-turn"], ["video", "Video"],
                      ["single-image", "Single-image"], ["reasoning", "Reasoning"], ["documents", "Documents"]];
  const OTHER_CATEGORY = ["other", "Other"];
  const OVERVIEW = "overview";

  const state = {
    data: null,
    benchId: null,     // null: the overview
    variant: "",       // "" : each benchmark's own rule (the headline); else a scoring variant's name
    overviewSort: { key: "avg_rank", dir: "asc" },
    showPaper: true,
    showStderr: true,
    sort: {},          // benchmark id -> {key, dir}
    chartOption: {},   // benchmark id + chart id -> option index
  };

  // ---- DOM helpers -------------------------------------------------------------------

  /** An element; attrs set with setAttribute, children appended as nodes or text nodes. */
  function el(tag, attrs, ...children) {
    return build(document.createElement(tag), attrs, children);
  }

  function svg(tag, attrs, ...children) {
    return build(document.createElementNS(SVG_NS, tag), attrs, children);
  }

  function build(node, attrs, children) {
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.appendChild(typeof child === "string" || typeof child === "number"
        ? document.createTextNode(String(child)) : child);
    }
    return node;
  }

  function own(obj, key) {
    return obj !== null && typeof obj === "object" && Object.prototype.hasOwnProperty.call(obj, key);
  }

  function get(obj, ...keys) {
    let cur = obj;
    for (const key of keys) {
      if (!own(cur, key)) return undefined;
      cur = cur[key];
    }
    return cur;
  }

  function isNum(v) {
    return typeof v === "number" && Number.isFinite(v);
  }

  // ---- loading -----------------------------------------------------------------------

  async function loadData() {
    if (location.protocol === "http:" || location.protocol === "https:") {
      try {
        const response = await fetch("leaderboard.json", { cache: "no-cache" });
        if (response.ok) return await response.json();
      } catch (err) {
        // fall back to leaderboard.js below
      }
    }
    if (window.LEADERBOARD && typeof window.LEADERBOARD === "object") return window.LEADERBOARD;
    throw new Error("No leaderboard data next to this page. Build it with: mmtasks leaderboard build RUN_DIR... --out DIR");
  }

  function start() {
    loadData().then(init).catch(function (err) {
      const status = document.getElementById("status");
      status.textContent = String(err && err.message ? err.message : err);
      status.classList.add("error");
    });
  }

  function init(data) {
    state.data = data;
    const status = document.getElementById("status");
    if (data.schema_version !== SCHEMA_VERSION) {
      status.textContent = "This page reads leaderboard schema v" + SCHEMA_VERSION +
        "; the data is v" + String(data.schema_version) + ". Some parts may not show.";
      status.classList.add("warning");
    } else {
      status.textContent = "";
      status.hidden = true;
    }
    renderMeta(data);
    const benchmarks = Array.isArray(data.benchmarks) ? data.benchmarks : [];
    renderTabs(benchmarks);
    route();
    window.addEventListener("hashchange", route);
  }

  /** The page the link's #fragment names: a benchmark's id, else the overview. */
  function route() {
    const id = hashId();
    const found = (state.data.benchmarks || []).some(b => b.id === id) ? id : null;
    if (found !== state.benchId || !document.getElementById("panel").firstChild) selectBenchmark(found, false);
  }

  // The tab named by the link's #fragment; a fragment that is not valid percent-encoding
  // ("#%", "#%E0%A4%A") names no tab (the first one shows) instead of failing the page.
  function hashId() {
    const raw = location.hash.replace(/^#/, "");
    try {
      return decodeURIComponent(raw);
    } catch (err) {
      return raw;
    }
  }

  function renderMeta(data) {
    const meta = document.getElementById("meta");
    const parts = [];
    if (data.generated_at) parts.push("Generated " + formatDate(data.generated_at, true));
    if (data.mmtasks_version) parts.push("mmtasks " + data.mmtasks_version);
    parts.push("schema v" + String(data.schema_version));
    meta.replaceChildren(parts.join(" \u00b7 "), " \u00b7 ", el("a", { href: "leaderboard.json" }, "leaderboard.json"));
  }

  function formatDate(iso, withTime) {
    if (typeof iso !== "string") return "";
    const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(iso);
    if (!match) return iso;
    return withTime ? match[1] + " " + match[2] + " UTC" : match[1];
  }

  // ---- tabs --------------------------------------------------------------------------

  /** The benchmarks grouped by category, in CATEGORIES' order: [[key, label, [bench...]], ...]. */
  function byCategory(benchmarks) {
    const known = new Set(CATEGORIES.map(c => c[0]));
    const groups = CATEGORIES.concat([OTHER_CATEGORY]).map(([key, label]) => [key, label, []]);
    for (const bench of benchmarks) {
      const key = known.has(bench.category) ? bench.category : OTHER_CATEGORY[0];
      groups.find(g => g[0] === key)[2].push(bench);
    }
    return groups.filter(g => g[2].length > 0);
  }

  /** The navigation: the overview, then one line per category with its benchmarks' pages. */
  function renderTabs(benchmarks) {
    const tabs = document.getElementById("tabs");
    const overview = el("button", { type: "button", role: "tab", class: "tab tab-overview", id: "tab-overview",
      "data-bench": "", "aria-selected": "false", "aria-controls": "panel" }, "Overview");
    overview.addEventListener("click", () => selectBenchmark(null, true));
    const groups = byCategory(benchmarks).map(function ([key, label, members]) {
      return el("div", { class: "nav-group", "data-category": key },
        el("span", { class: "nav-category" }, label),
        members.map(function (bench) {
          const runs = (bench.entries || []).filter(e => e.source === "run").length;
          const button = el("button", {
            type: "button", role: "tab", class: "tab", id: "tab-" + bench.id,
            "data-bench": bench.id, "aria-selected": "false", "aria-controls": "panel",
          }, bench.title, el("span", { class: "tab-count", title: runs + " model(s) run by mmtasks" }, String(runs)));
          button.addEventListener("click", () => selectBenchmark(bench.id, true));
          return button;
        }));
    });
    tabs.replaceChildren(el("div", { class: "nav-group nav-home" }, overview), ...groups);
  }

  /** Show a benchmark's page (id) or the overview (null). */
  function selectBenchmark(id, updateHash) {
    state.benchId = id;
    for (const tab of document.querySelectorAll(".tab")) {
      tab.setAttribute("aria-selected", tab.getAttribute("data-bench") === (id || "") ? "true" : "false");
    }
    if (updateHash) history.replaceState(null, "", "#" + (id === null ? OVERVIEW : encodeURIComponent(id)));
    document.body.classList.toggle("wide", id === null);  // the overview's columns take the window's width
    if (id === null) renderOverview(); else renderPanel();
    if (updateHash) window.scrollTo(0, 0);
  }

  function currentBench() {
    return (state.data.benchmarks || []).find(b => b.id === state.benchId);
  }

  // ---- panel -------------------------------------------------------------------------

  function rerender() {
    if (state.benchId === null) renderOverview(); else renderPanel();
  }

  function renderPanel() {
    const bench = currentBench();
    const panel = document.getElementById("panel");
    panel.setAttribute("aria-labelledby", "tab-" + bench.id);
    const entries = colouredEntries(bench).filter(e => state.showPaper || e.entry.source !== "paper");
    // parts a benchmark lacks (no citation, no radar) are null: left out, never a "null" text
    panel.replaceChildren(...[
      el("div", { class: "bench-head" },
        el("div", {},
          el("h2", {}, bench.title),
          el("p", { class: "description" }, bench.description || ""),
          detectableNote(bench)),
        renderControls(bench)),
      el("div", { class: "card table-card" }, renderTable(bench, entries)),
      renderCitation(bench),
      renderVariantTable(bench),
      renderRadars(bench, entries),
      renderCharts(bench, entries),
    ].filter(part => part !== null && part !== undefined));
  }

  /** Entries with a stable colour each (by position in the data, so toggles keep colours). */
  function colouredEntries(bench) {
    return (bench.entries || []).map((entry, i) => ({ entry, colour: PALETTE[i % PALETTE.length] }));
  }

  function renderControls(bench) {
    const hasPaper = (bench.entries || []).some(e => e.source === "paper");
    const paper = el("input", { type: "checkbox", id: "toggle-paper", checked: state.showPaper, disabled: !hasPaper });
    paper.addEventListener("change", () => { state.showPaper = paper.checked; renderPanel(); });
    const stderr = el("input", { type: "checkbox", id: "toggle-stderr", checked: state.showStderr });
    stderr.addEventListener("change", () => { state.showStderr = stderr.checked; renderPanel(); });
    return el("div", { class: "controls" },
      variantPicker(bench.variants || []),
      el("label", { class: "toggle" }, paper, " Show paper results"),
      el("label", { class: "toggle" }, stderr, " Show \u00b1 stderr"));
  }

  // ---- scoring variants -----------------------------------------------------------------

  /** The scoring picker: each benchmark's own rule, or one of the variants (the same replies scored
   * another harness's way); null when there is none to choose. The choice is kept across pages. */
  function variantPicker(variants) {
    if (!variants.length) return null;
    const select = el("select", { id: "variant-select", "aria-label": "Scoring" },
      el("option", { value: "", selected: state.variant === "" }, "headline (the benchmark's own rule)"),
      variants.map(v => el("option", { value: v.name, selected: state.variant === v.name, title: v.description || "" },
        v.name + (v.count ? " (" + v.count + " benchmark" + (v.count > 1 ? "s" : "") + ")" : ""))));
    select.addEventListener("change", function () {
      state.variant = select.value;
      rerender();
      const again = document.getElementById("variant-select");
      if (again) again.focus();
    });
    return el("label", { class: "picker" }, "Scoring ", select);
  }

  /** The cell shown for a column: the chosen variant's when the entry has it, else the headline's.
   * {cell, variant: true when it is the variant's, absent: true when a variant is chosen the cell lacks}. */
  function shownCell(entry, key) {
    const own = get(entry, "values", key) || {};
    if (!state.variant) return { cell: own, variant: false, absent: false };
    const other = get(entry, "variants", state.variant, key);
    if (other) return { cell: other, variant: true, absent: false };
    return { cell: own, variant: false, absent: true };
  }

  /** Per benchmark: each run row's headline by the benchmark's own rule beside each variant's, and
   * what each variant changes and where its rule comes from. */
  function renderVariantTable(bench) {
    const variants = bench.variants || [];
    if (!variants.length) return null;
    const column = (bench.columns || []).find(c => c.key === bench.headline);
    const rows = (bench.entries || []).filter(e => e.source === "run");
    const head = el("tr", {}, el("th", { scope: "col" }, "Model"),
      el("th", { scope: "col", class: "num" }, "Headline"),
      variants.map(v => el("th", { scope: "col", class: "num", "data-variant": v.name, title: v.description || v.name }, v.name)));
    const body = rows.map(function (entry) {
      const own = get(entry, "values", bench.headline);
      const base = own && isNum(own.value) ? own.value : null;
      return el("tr", { "data-entry": entry.id }, el("td", { class: "model-col" }, entry.model),
        el("td", { class: "num" }, base === null ? MISSING : formatValue(base, column)),
        variants.map(function (v) {
          const cell = get(entry, "variants", v.name, bench.headline);
          if (!cell || !isNum(cell.value)) {
            return el("td", { class: "num missing", "data-variant": v.name,
              title: "no " + v.name + " value for the headline (the variant covers " + (v.tasks || []).join(", ") + ")" }, MISSING);
          }
          const delta = base === null ? "" : " (" + signed(cell.value - base) + ")";
          return el("td", { class: "num", "data-variant": v.name, "data-value": String(cell.value) },
            formatValue(cell.value, column) + delta);
        }));
    });
    return el("section", { class: "section card variants-card", id: "variants-" + bench.id },
      el("h3", {}, "Why the numbers differ: scoring variants"),
      el("p", { class: "hint" }, "The same replies scored each variant's way; the headline is the benchmark's own rule. " +
        "In brackets: the variant minus the headline."),
      el("div", { class: "table-scroll" }, el("table", { class: "board variants" }, el("thead", {}, head), el("tbody", {}, body))),
      el("ul", { class: "variant-notes" }, variants.map(v => el("li", { "data-variant": v.name },
        el("strong", {}, v.name), ": ", v.description || "", v.source ? el("span", { class: "source" }, " \u00b7 source: " + v.source) : null))));
  }

  // ---- the overview: models x benchmark headlines ----------------------------------------

  /** Every scoring variant of the benchmarks, by name, with how many benchmarks have it. */
  function allVariants(benchmarks) {
    const found = new Map();
    for (const bench of benchmarks) {
      for (const v of bench.variants || []) {
        if (!found.has(v.name)) found.set(v.name, { name: v.name, description: v.description, count: 0 });
        found.get(v.name).count += 1;
      }
    }
    return Array.from(found.values()).sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Ranks of values (1 = best; equal values share the mean of their places). */
  function ranksOf(items, higherIsBetter) {
    const sorted = items.slice().sort((a, b) => higherIsBetter ? b.value - a.value : a.value - b.value);
    const ranks = new Map();
    for (let i = 0; i < sorted.length;) {
      let j = i;
      while (j + 1 < sorted.length && sorted[j + 1].value === sorted[i].value) j++;
      for (let k = i; k <= j; k++) ranks.set(sorted[k].key, (i + j) / 2 + 1);
      i = j + 1;
    }
    return ranks;
  }

  /** The overview's data: the benchmarks with a run row (in category order), one row per model
   * configuration (Entry.model_id) with its headline cell per benchmark, its ranks, average rank
   * and coverage. A chance-judge row's value shows but takes no rank. */
  function overviewModel() {
    const groups = byCategory((state.data.benchmarks || []).filter(b => (b.entries || []).some(e => e.source === "run")));
    const benches = groups.flatMap(g => g[2]);
    const models = new Map();
    for (const bench of benches) {
      const column = (bench.columns || []).find(c => c.key === bench.headline) || {};
      const items = [];
      for (const entry of bench.entries || []) {
        if (entry.source !== "run") continue;
        const key = entry.model_id || entry.id;
        if (!models.has(key)) models.set(key, { key, entry, cells: {}, ranks: {} });
        const model = models.get(key);
        const shown = shownCell(entry, bench.headline);
        const value = isNum(shown.cell.value) ? shown.cell.value : null;
        const cell = { entry, value, column, ranked: isRanked(entry), variant: shown.variant, absent: shown.absent };
        // a ranked row with a value wins over a chance-judge row of the same model, which wins over no value
        const order = c => (c.value === null ? 2 : c.ranked ? 0 : 1);
        const previous = model.cells[bench.id];
        if (!previous || order(cell) < order(previous)) model.cells[bench.id] = cell;
        if (isRanked(entry) && !isRanked(model.entry)) model.entry = entry;
      }
      for (const model of models.values()) {
        const cell = model.cells[bench.id];
        if (cell && cell.ranked && cell.value !== null) items.push({ key: model.key, value: cell.value });
      }
      const ranks = ranksOf(items, column.higher_is_better !== false);
      for (const [key, rank] of ranks) models.get(key).ranks[bench.id] = rank;
    }
    const rows = Array.from(models.values());
    for (const row of rows) {
      const ranks = Object.values(row.ranks);
      row.coverage = ranks.length;
      row.avgRank = ranks.length ? ranks.reduce((a, b) => a + b, 0) / ranks.length : null;
    }
    return { groups, benches, rows };
  }

  function sortOverview(rows) {
    const { key, dir } = state.overviewSort;
    const sign = dir === "asc" ? 1 : -1;
    const byName = (a, b) => a.entry.model.localeCompare(b.entry.model);
    const byRank = function (a, b) {
      if (a.avgRank === null && b.avgRank === null) return b.coverage - a.coverage || byName(a, b);
      if (a.avgRank === null) return 1;
      if (b.avgRank === null) return -1;
      return a.avgRank - b.avgRank || b.coverage - a.coverage || byName(a, b);
    };
    return rows.slice().sort(function (a, b) {
      if (key === "model") return sign * byName(a, b);
      if (key === "coverage") return sign * (a.coverage - b.coverage) || byRank(a, b);
      if (key === "avg_rank") {
        if (a.avgRank === null || b.avgRank === null) return byRank(a, b);
        return sign * (a.avgRank - b.avgRank) || b.coverage - a.coverage || byName(a, b);
      }
      const va = a.cells[key] ? a.cells[key].value : null, vb = b.cells[key] ? b.cells[key].value : null;
      if (va === null && vb === null) return byRank(a, b);
      if (va === null) return 1;
      if (vb === null) return -1;
      return sign * (va - vb) || byRank(a, b);
    });
  }

  function overviewHeader(key, label, title, extraClass) {
    const sort = state.overviewSort;
    const active = sort.key === key;
    const button = el("button", { type: "button", class: "sort", title: title },
      label, el("span", { class: "arrow", "aria-hidden": "true" }, active ? (sort.dir === "asc" ? "\u25b2" : "\u25bc") : "\u2195"));
    button.addEventListener("click", function () {
      if (sort.key === key) sort.dir = sort.dir === "asc" ? "desc" : "asc";
      else state.overviewSort = { key, dir: key === "avg_rank" || key === "model" ? "asc" : "desc" };
      renderOverview();
      const again = document.querySelector('#overview th[data-key="' + CSS.escape(key) + '"] button');
      if (again) again.focus();
    });
    return el("th", { scope: "col", class: extraClass, "data-key": key, rowspan: "2",
      "aria-sort": active ? (sort.dir === "asc" ? "ascending" : "descending") : "none" }, button);
  }

  function renderOverview() {
    const panel = document.getElementById("panel");
    panel.setAttribute("aria-labelledby", "tab-overview");
    const { groups, benches, rows } = overviewModel();
    const variants = allVariants(state.data.benchmarks || []);
    const head1 = el("tr", {},
      el("th", { scope: "col", class: "rank", rowspan: "2" }, "#"),
      overviewHeader("model", "Model", "Sort by model name", "model-col"),
      overviewHeader("avg_rank", "Avg. rank", "Mean of the model's ranks over the benchmarks it has (1 = best on each; ties share the mean place)", "num avg-rank"),
      overviewHeader("coverage", "Cov.", "How many of the " + benches.length + " benchmarks the model has a ranked headline on", "num coverage-col"),
      groups.map(([key, label, members]) => el("th", { scope: "colgroup", class: "category", colspan: String(members.length),
        "data-category": key }, label)));
    const head2 = el("tr", {}, benches.map(function (bench) {
      const column = (bench.columns || []).find(c => c.key === bench.headline) || {};
      const has = !state.variant || (bench.variants || []).some(v => v.name === state.variant);
      const sort = state.overviewSort;
      const button = el("button", { type: "button", class: "sort bench-sort", title: "Sort by " + bench.title, "aria-label": "Sort by " + bench.title },
        el("span", { class: "arrow", "aria-hidden": "true" }, sort.key === bench.id ? (sort.dir === "asc" ? "\u25b2" : "\u25bc") : "\u2195"));
      button.addEventListener("click", function () {
        if (sort.key === bench.id) sort.dir = sort.dir === "asc" ? "desc" : "asc";
        else state.overviewSort = { key: bench.id, dir: column.higher_is_better === false ? "asc" : "desc" };
        renderOverview();
      });
      return el("th", { scope: "col", class: "num bench-col" + (has ? "" : " no-variant"), "data-bench": bench.id,
        "data-category": bench.category || OTHER_CATEGORY[0],
        title: bench.title + ": " + (column.title || bench.headline) + (has ? "" : " (no " + state.variant + " variant: the headline)") },
        el("a", { class: "bench-link", href: "#" + encodeURIComponent(bench.id) }, bench.title), button);
    }));
    const body = el("tbody", {});
    let place = 0;
    for (const row of sortOverview(rows)) {
      const entry = row.entry;
      const badges = [];
      if (benches.some(b => row.cells[b.id] && row.cells[b.id].entry.official_judge === false)) {
        badges.push(el("span", { class: "badge badge-judge", title: "Some benchmark was scored by a judge other than its " +
          "official one (marked \u2020 on the value)" }, "non-official judge"));
      }
      if (benches.some(b => row.cells[b.id] && row.cells[b.id].entry.official_protocol === false)) {
        badges.push(el("span", { class: "badge badge-unofficial" }, "not official protocol"));
      }
      if (benches.some(b => row.cells[b.id] && !row.cells[b.id].ranked)) {
        badges.push(el("span", { class: "badge badge-chance", title: "Some values come from the chance-level random judge: " +
          "shown, never ranked" }, "chance judge"));
      }
      body.appendChild(el("tr", { class: "run-row", "data-model": row.key },
        el("td", { class: "rank" }, row.avgRank === null ? MISSING : String(++place)),
        el("td", { class: "model-col", title: entryTooltip(entry) },
          el("div", { class: "model-line" }, el("span", { class: "model-name" }, entry.model), badges)),
        el("td", { class: "num avg-rank", "data-key": "avg_rank", "data-value": row.avgRank === null ? null : String(row.avgRank) },
          row.avgRank === null ? MISSING : row.avgRank.toFixed(2)),
        el("td", { class: "num coverage-col", "data-key": "coverage", "data-value": String(row.coverage),
          title: row.coverage + " of " + benches.length + " benchmarks" }, row.coverage + "/" + benches.length),
        benches.map(bench => overviewCell(bench, row))));
    }
    if (!rows.length) {
      body.appendChild(el("tr", {}, el("td", { class: "empty", colspan: String(benches.length + 4) },
        "No run of any benchmark yet: the benchmarks' pages show the papers' numbers.")));
    }
    panel.replaceChildren(
      el("div", { class: "bench-head" },
        el("div", {},
          el("h2", {}, "Overview"),
          el("p", { class: "description" }, "Each benchmark's headline for every model configuration run by mmtasks, " +
            "grouped by kind. A model's rank on a benchmark is its place among these rows (1 = best; equal values share " +
            "the mean place); the average rank is over the benchmarks it has, and coverage counts them. A benchmark's " +
            "name opens its page, with every column, the papers' rows and the breakdowns.")),
        el("div", { class: "controls" }, variantPicker(variants))),
      el("div", { class: "card table-card" }, el("div", { class: "table-scroll" },
        el("table", { class: "board overview", id: "overview" }, el("thead", {}, head1, head2), body))),
      el("p", { class: "legend-note" }, "\u2020 scored by a judge other than the benchmark's official one. " +
        "Grey: from the chance-level random judge, not ranked. Italic: the chosen scoring variant's value."),
      renderWhyTable(benches));
  }

  function overviewCell(bench, row) {
    const cell = row.cells[bench.id];
    if (!cell || cell.value === null) {
      return el("td", { class: "num missing", "data-bench": bench.id,
        title: bench.title + ": " + (cell ? "no headline value" : "not run") }, MISSING);
    }
    const classes = ["num"];
    const tip = [bench.title + ": " + formatValue(cell.value, cell.column)];
    if (cell.variant) { classes.push("variant"); tip.push("scored the " + state.variant + " way"); }
    if (cell.absent) { classes.push("no-variant"); tip.push("no " + state.variant + " variant: the benchmark's own rule"); }
    const rank = row.ranks[bench.id];
    if (rank !== undefined) tip.push("rank " + rank);
    if (rank === 1) classes.push("best");
    if (!cell.ranked) { classes.push("chance"); tip.push("chance-level random judge: not ranked"); }
    const parts = [el("span", { class: "value" }, overviewNumber(cell.value, cell.column))];
    if (cell.entry.official_judge === false) {
      classes.push("unofficial-judge");
      const official = Object.values(cell.entry.official_judges || {});
      tip.push("judged by " + (cell.entry.judge || "another judge") + ", not the official " + (official.join(", ") || "judge"));
      parts.push(el("span", { class: "judge-mark", "aria-label": "non-official judge" }, "\u2020"));
    }
    const td = el("td", { class: classes.join(" "), "data-bench": bench.id, "data-value": String(cell.value),
      "data-rank": rank === undefined ? null : String(rank), title: tip.join(", ") }, parts);
    const span = ((cell.column.scale_max - cell.column.scale_min) || 1);
    td.style.setProperty("--heat", String(Math.max(0, Math.min(1, (cell.value - (cell.column.scale_min || 0)) / span))));
    return td;
  }

  /** One decimal at most: 40 columns must fit. */
  function overviewNumber(value, column) {
    const decimals = Math.min(1, Number.isInteger(column.decimals) ? column.decimals : 1);
    return value.toFixed(decimals) + (column.unit || "");
  }

  /** Per benchmark and variant: what the variant changes, whose rule, and the headline beside it
   * (means over the run rows that have both). */
  function renderWhyTable(benches) {
    const lines = [];
    for (const bench of benches) {
      const column = (bench.columns || []).find(c => c.key === bench.headline) || {};
      for (const v of bench.variants || []) {
        const pairs = (bench.entries || []).filter(e => e.source === "run" && isRanked(e)).map(e => [
          get(e, "values", bench.headline, "value"), get(e, "variants", v.name, bench.headline, "value")])
          .filter(([a, b]) => isNum(a) && isNum(b));
        const mean = xs => xs.reduce((a, b) => a + b, 0) / xs.length;
        const base = pairs.length ? mean(pairs.map(p => p[0])) : null;
        const other = pairs.length ? mean(pairs.map(p => p[1])) : null;
        lines.push(el("tr", { "data-bench": bench.id, "data-variant": v.name },
          el("td", {}, el("a", { href: "#" + encodeURIComponent(bench.id) }, bench.title)),
          el("td", {}, el("code", {}, v.name)),
          el("td", { class: "why-description" }, v.description || ""),
          el("td", { class: "why-source" }, v.source || MISSING),
          el("td", { class: "num" }, String(pairs.length)),
          el("td", { class: "num why-headline" }, base === null ? MISSING : formatValue(base, column)),
          el("td", { class: "num why-variant" }, other === null ? MISSING : formatValue(other, column)),
          el("td", { class: "num why-delta" }, base === null ? MISSING : signed(other - base))));
      }
    }
    const body = lines.length ? lines
      : [el("tr", {}, el("td", { class: "empty", colspan: "8" }, "No run of these benchmarks has scoring variants."))];
    return el("section", { class: "section card why-card", id: "why-differ" },
      el("h3", {}, "Why the numbers differ"),
      el("p", { class: "hint" }, "Each benchmark's headline is its authors' rule; a scoring variant scores the same " +
        "replies the way another harness does (docs/scoring-variants.md). Means over the ranked run rows that have both."),
      el("div", { class: "table-scroll" }, el("table", { class: "board why", id: "why-table" },
        el("thead", {}, el("tr", {}, ["Benchmark", "Variant", "What it changes", "Source", "Rows", "Headline", "Variant",
          "\u0394"].map((h, i) => el("th", { scope: "col", class: i >= 4 ? "num" : null }, h)))),
        el("tbody", {}, body))));
  }

  function renderCitation(bench) {
    if (!bench.citation || !state.showPaper || !(bench.entries || []).some(e => e.source === "paper")) return null;
    const text = el("span", {}, bench.citation.text);
    const link = bench.citation.url && /^https?:\/\//.test(bench.citation.url)
      ? el("a", { href: bench.citation.url, rel: "noopener noreferrer" }, bench.citation.url) : null;
    return el("p", { class: "citation" },
      el("span", { class: "badge badge-paper" }, "paper"), " rows: reported by ", text, link ? ". " : "", link);
  }

  // ---- table -------------------------------------------------------------------------

  function sortState(bench) {
    if (!state.sort[bench.id]) state.sort[bench.id] = { key: bench.headline, dir: "desc" };
    return state.sort[bench.id];
  }

  function cellValue(entry, key) {
    const cell = shownCell(entry, key).cell;
    return cell && isNum(cell.value) ? cell.value : null;
  }

  /** Rows not ranked (judged by the chance-level judge) come after every ranked row, whatever the sort. */
  function isRanked(entry) {
    return entry.ranked !== false;
  }

  /** The lowest coverage percent over the entry's tasks, or null when none is reported. */
  function lowestCoverage(entry) {
    const percents = Object.values(entry.coverage || {}).map(c => c && c.percent).filter(isNum);
    return percents.length ? Math.min(...percents) : null;
  }

  function formatPercent(p) {
    return (p >= 99.95 && p < 100 ? "99.9" : p.toFixed(p >= 10 ? 0 : 1)) + "%";
  }

  function sortEntries(bench, rows) {
    const { key, dir } = sortState(bench);
    const sign = dir === "asc" ? 1 : -1;
    const byName = (a, b) => a.entry.model.localeCompare(b.entry.model);
    return rows.slice().sort(function (a, b) {
      const ra = isRanked(a.entry), rb = isRanked(b.entry);
      if (ra !== rb) return ra ? -1 : 1;
      if (key === "model") return sign * byName(a, b);
      const va = cellValue(a.entry, key), vb = cellValue(b.entry, key);
      if (va === null && vb === null) return byName(a, b);
      if (va === null) return 1;   // missing values last, whatever the direction
      if (vb === null) return -1;
      return va === vb ? byName(a, b) : sign * (va - vb);
    });
  }

  function onSort(bench, key) {
    const current = sortState(bench);
    if (current.key === key) current.dir = current.dir === "asc" ? "desc" : "asc";
    else state.sort[bench.id] = { key, dir: key === "model" ? "asc" : "desc" };
    renderPanel();
    const header = document.querySelector('th[data-key="' + CSS.escape(key) + '"] button');
    if (header) header.focus();
  }

  function headerCell(bench, key, label, title, extraClass) {
    const sort = sortState(bench);
    const active = sort.key === key;
    const button = el("button", { type: "button", class: "sort", title: title || label },
      label, el("span", { class: "arrow", "aria-hidden": "true" }, active ? (sort.dir === "asc" ? "\u25b2" : "\u25bc") : "\u2195"));
    button.addEventListener("click", () => onSort(bench, key));
    return el("th", {
      scope: "col", class: extraClass, "data-key": key,
      "aria-sort": active ? (sort.dir === "asc" ? "ascending" : "descending") : "none",
    }, button);
  }

  function renderTable(bench, rows) {
    const columns = bench.columns || [];
    const head = el("tr", {},
      el("th", { scope: "col", class: "rank" }, "#"),
      headerCell(bench, "model", "Model", "Sort by model name", "model-col"),
      columns.map(c => headerCell(bench, c.key, c.label, c.title,
        "num" + (c.key === bench.headline ? " headline" : ""))));
    const best = bestValues(columns, rows);
    const body = el("tbody", {});
    const sorted = sortEntries(bench, rows);
    let rank = 0;
    sorted.forEach(function (row) {
      const entry = row.entry;
      const classes = [entry.source === "paper" ? "paper-row" : "run-row"];
      if (!isRanked(entry)) classes.push("unranked-row");
      const coverage = lowestCoverage(entry);
      if (coverage !== null && coverage < 100) classes.push("partial-coverage");
      const rankCell = isRanked(entry)
        ? el("td", { class: "rank" }, String(++rank))
        : el("td", { class: "rank", title: "Not ranked" }, MISSING);
      const tr = el("tr", { class: classes.join(" "), "data-entry": entry.id },
        rankCell,
        modelCell(entry, row.colour, bench),
        columns.map(c => valueCell(bench, entry, c, best[c.key], c.key === bench.headline)));
      body.appendChild(tr);
    });
    if (!sorted.length) {
      body.appendChild(el("tr", {}, el("td", { class: "empty", colspan: String(columns.length + 2) },
        "No results for this benchmark yet.")));
    }
    return el("div", { class: "table-scroll" },
      el("table", { class: "board", id: "board-" + bench.id }, el("thead", {}, head), body));
  }

  function bestValues(columns, rows) {
    const best = {};
    for (const c of columns) {
      const values = rows.filter(r => isRanked(r.entry)).map(r => cellValue(r.entry, c.key)).filter(v => v !== null);
      // a column without a direction (higher_is_better null, e.g. a yes ratio) has no best value
      if (values.length > 1 && c.higher_is_better !== null) {
        best[c.key] = c.higher_is_better === false ? Math.min(...values) : Math.max(...values);
      }
    }
    return best;
  }

  /** The headline difference this benchmark's documents can detect (80% power), or null. */
  function detectableNote(bench) {
    if (!isNum(bench.minimum_detectable_effect)) return null;
    return el("p", { class: "mde", title: "From the run rows' median standard error, two-sided 5% test, 80% power, " +
      "the two models' errors taken as independent (a paired comparison of correlated models detects less)." },
      "Differences under " + bench.minimum_detectable_effect.toFixed(1) + " points are not reliably detectable " +
      "on these documents; rows marked \u2248 are not significantly apart from the row below.");
  }

  function signed(value) { return (value >= 0 ? "+" : "\u2212") + Math.abs(value).toFixed(2); }

  /** The tied marker: this row and the ranked run row below it are not significantly apart. */
  function tieBadge(entry, bench) {
    const tie = entry.tie;
    if (!tie || !tie.tied) return null;
    const other = (bench.entries || []).find(e => e.id === tie.below);
    const name = other ? other.model : "the row below";
    const test = isNum(tie.mcnemar_p) ? "; McNemar p=" + tie.mcnemar_p.toPrecision(2) : "";
    return el("span", { class: "badge badge-tie",
      title: "Tied with " + name + ": difference " + signed(tie.difference) + " [" + signed(tie.low) + ", " +
        signed(tie.high) + "] over " + tie.documents + " documents (paired, 95%)" + test + ". Not significant." },
      "\u2248 " + name);
  }

  function modelCell(entry, colour, bench) {
    const swatch = el("span", { class: "swatch", "aria-hidden": "true" });
    swatch.style.backgroundColor = colour;
    const name = el("span", { class: "model-name" }, entry.model);
    const badges = [];
    if (entry.source === "paper") {
      badges.push(el("span", { class: "badge badge-paper", title: "Reported by the paper, not run by mmtasks" }, "paper"));
    }
    if (entry.strategy) badges.push(el("span", { class: "badge badge-strategy" }, entry.strategy));
    const tie = bench ? tieBadge(entry, bench) : null;
    if (tie) badges.push(tie);
    if (entry.chance_judge) {
      badges.push(el("span", { class: "badge badge-chance",
        title: "Scored by the chance-level random judge: these numbers exercise the pipeline and say nothing " +
          "about the model. Not ranked." }, "chance judge"));
    }
    if (entry.official_judge === false) {
      const official = Object.entries(entry.official_judges || {}).map(([task, judge]) => judge + " (" + task + ")");
      badges.push(el("span", { class: "badge badge-judge",
        title: "Judged by " + (entry.judge || "another judge") + ", not the official judge " +
          (official.join(", ") || "its tasks declare") + ": not comparable with the official judgement." },
        "non-official judge"));
    }
    if (entry.official_protocol === false) {
      badges.push(el("span", { class: "badge badge-unofficial",
        title: "The run changed the benchmark's generation settings (--gen-kwargs, named beside the model): " +
          "not the official protocol, so not comparable with the paper's numbers." }, "not official protocol"));
    }
    const coverage = lowestCoverage(entry);
    if (coverage !== null && coverage < 100) {
      badges.push(el("span", { class: "badge badge-coverage", title: coverageTooltip(entry) },
        "coverage " + formatPercent(coverage)));
    }
    const details = [];
    if (entry.source === "paper") {
      details.push(entry.citation && entry.citation.text ? shortCitation(entry.citation.text) : "reported by the paper");
    } else {
      // a named run shows what ran beside its name
      if (entry.run_name && entry.model_spec) details.push(entry.model_spec);
      const args = formatArgs(entry.model_args);
      if (args) details.push(args);
      if (entry.judge) details.push("judge " + entry.judge);
      if (entry.date) details.push(formatDate(entry.date, false));
    }
    const td = el("td", { class: "model-col" },
      el("div", { class: "model-line" }, swatch, name, badges),
      details.length ? el("div", { class: "model-details" }, details.join(" \u00b7 ")) : null,
      viewLinks(entry));
    td.setAttribute("title", entryTooltip(entry));
    return td;
  }

  /** Links to the views of the entry's runs published beside the page (views/<run>/index.html). */
  function viewLinks(entry) {
    const links = [];
    for (const run of entry.runs || []) {
      if (typeof run.run !== "string" || run.view !== "views/" + run.run + "/index.html") continue;
      if (run.run === "." || run.run === ".." || run.run.includes("/") || run.run.includes("\\")) continue;
      links.push(el("a", { class: "view-link", href: "views/" + encodeURIComponent(run.run) + "/index.html",
        title: "every answer of run " + run.run + ": " + (run.tasks || []).join(", ") },
        (entry.runs.length > 1 ? "answers: " + run.run : "answers")));
    }
    return links.length ? el("div", { class: "model-views" }, links) : null;
  }

  function coverageTooltip(entry) {
    const lines = ["Part of the data was not scored:"];
    for (const [task, c] of Object.entries(entry.coverage || {})) {
      if (!c) continue;
      const treated = treatments(c);
      const partial = isNum(c.percent) && c.percent < 100;
      if (!partial && !treated.length) continue;
      const why = Object.entries(c.unscored || {}).filter(([, n]) => n > 0).map(([kind, n]) => kind + " " + n);
      lines.push(task + ": " + c.scored + " of " + c.total + " " + (c.unit || "documents") + " scored" +
        (why.length ? " (" + why.join(", ") + ")" : "") + (treated.length ? "; " + treated.join(", ") : ""));
    }
    return lines.join("\n");
  }

  /** A coverage record's record-policy counts, one "excluded: output missing 3" per reason. */
  function treatments(c) {
    const out = [];
    for (const [key, label] of TREATMENTS) {
      const reasons = c && c[key] && typeof c[key] === "object" ? Object.entries(c[key]) : [];
      for (const [reason, n] of reasons) if (isNum(n) && n > 0) out.push(label + ": " + reason + " " + n);
    }
    return out;
  }

  /** The tasks a column stands on: its own, or those of the columns it is the mean of. */
  function columnTasks(bench, column) {
    if (column.task) return [column.task];
    const byKey = new Map((bench.columns || []).map(c => [c.key, c]));
    const tasks = [];
    for (const key of column.mean_of || []) {
      const part = byKey.get(key);
      if (part && part.task && !tasks.includes(part.task)) tasks.push(part.task);
    }
    return tasks;
  }

  function shortCitation(text) {
    const table = /Table\s+\d+[^,;]*$/.exec(text);
    const first = text.split(",")[0];
    return table ? first + ", " + table[0] : first;
  }

  function formatArgs(args) {
    if (typeof args === "string") return args;
    if (!args || typeof args !== "object") return "";
    return Object.keys(args).map(k => k + "=" + (typeof args[k] === "string" ? args[k] : JSON.stringify(args[k]))).join(", ");
  }

  function entryTooltip(entry) {
    const lines = [entry.model];
    if (entry.source === "paper") {
      lines.push("Reported by the paper: " + (entry.citation ? entry.citation.text : ""));
      return lines.join("\n");
    }
    if (entry.model_spec) lines.push("spec: " + entry.model_spec);
    const args = formatArgs(entry.model_args);
    if (args) lines.push("args: " + args);
    if (entry.judge) lines.push("judge: " + entry.judge);
    if (entry.mmtasks_version) lines.push("mmtasks " + entry.mmtasks_version);
    for (const run of entry.runs || []) {
      lines.push("run " + run.run + " (" + formatDate(run.date, true) + "): " + (run.tasks || []).join(", "));
      if (run.model_revision) lines.push("  weights: " + run.model_revision);
      for (const [task, rev] of Object.entries(run.data_revisions || {})) lines.push("  data " + task + ": " + rev);
      if (run.hardware) lines.push("  hardware: " + run.hardware);
    }
    return lines.join("\n");
  }

  function formatValue(value, column) {
    const decimals = Number.isInteger(column.decimals) ? column.decimals : 2;
    return value.toFixed(decimals) + (column.unit || "");
  }

  /** Two significant digits: 1.0, 0.025, 12. */
  function formatStderr(se) {
    return se >= 10 ? se.toFixed(0) : se.toPrecision(2);
  }

  function valueCell(bench, entry, column, best, headline) {
    const shown = shownCell(entry, column.key);
    const cell = shown.cell;
    const classes = ["num"];
    if (headline) classes.push("headline");
    if (shown.variant) classes.push("variant");
    if (shown.absent && (bench.variants || []).some(v => v.name === state.variant)) classes.push("no-variant");
    if (!isNum(cell.value)) {
      classes.push("missing");
      return el("td", { class: classes.join(" "), "data-key": column.key,
        title: cell.missing || "missing", "aria-label": "missing" }, MISSING);
    }
    if (best !== undefined && cell.value === best && isRanked(entry)) classes.push("best");
    const parts = [el("span", { class: "value" }, formatValue(cell.value, column))];
    if (state.showStderr && isNum(cell.stderr)) {
      parts.push(el("span", { class: "stderr" }, "\u00b1" + formatStderr(cell.stderr)));
    }
    const partial = isNum(cell.coverage) && cell.coverage < 100;
    if (partial) {
      classes.push("partial");
      parts.push(el("span", { class: "coverage" }, formatPercent(cell.coverage)));
    }
    const tip = [column.label + ": " + formatValue(cell.value, column)];
    if (shown.variant) tip.push("scored the " + state.variant + " way");
    if (isNum(cell.stderr)) tip.push("stderr " + cell.stderr);
    if (Number.isInteger(cell.n)) tip.push("n = " + cell.n);
    if (isNum(cell.coverage)) tip.push("coverage " + cell.coverage.toFixed(1) + "% of the data scored");
    const tasks = columnTasks(bench, column);
    for (const task of tasks) {
      const treated = treatments(get(entry, "coverage", task));
      if (treated.length) tip.push((tasks.length > 1 ? task + " " : "") + treated.join(", "));
    }
    const td = el("td", { class: classes.join(" "), "data-key": column.key, "data-value": String(cell.value),
      title: tip.join(", ") }, parts);
    const span = (column.scale_max - column.scale_min) || 1;
    td.style.setProperty("--heat", String(Math.max(0, Math.min(1, (cell.value - column.scale_min) / span))));
    return td;
  }

  // ---- radar charts --------------------------------------------------------------------

  function renderRadars(bench, rows) {
    const axes = (bench.columns || []).filter(c => c.radar);
    if (axes.length < 3) return null;
    const cards = rows
      .filter(row => axes.some(c => cellValue(row.entry, c.key) !== null))
      .map(row => radarCard(axes, row));
    if (!cards.length) return null;
    return el("section", { class: "section" },
      el("h3", {}, "Abilities per model"),
      el("p", { class: "hint" }, "One radar per model over the " + axes.length +
        " ability columns, on the benchmark's full scale. Missing values leave a gap."),
      el("div", { class: "radar-grid" }, cards));
  }

  function radarCard(axes, row) {
    const entry = row.entry;
    const width = 320, height = 250, cx = width / 2, cy = height / 2 + 2, radius = 86;
    const angle = k => -Math.PI / 2 + (2 * Math.PI * k) / axes.length;
    const point = (k, frac) => [cx + radius * frac * Math.cos(angle(k)), cy + radius * frac * Math.sin(angle(k))];
    const root = svg("svg", { viewBox: "0 0 " + width + " " + height, class: "radar", role: "img",
      "aria-label": "Radar chart of " + entry.model });
    for (const level of [0.25, 0.5, 0.75, 1]) {
      const ring = axes.map((_, k) => point(k, level).map(v => v.toFixed(1)).join(",")).join(" ");
      root.appendChild(svg("polygon", { points: ring, class: "radar-ring" }));
    }
    axes.forEach(function (column, k) {
      const [x, y] = point(k, 1);
      root.appendChild(svg("line", { x1: cx, y1: cy, x2: x.toFixed(1), y2: y.toFixed(1), class: "radar-spoke" }));
      const [lx, ly] = point(k, 1.16);
      const anchor = Math.abs(lx - cx) < 6 ? "middle" : lx > cx ? "start" : "end";
      // "Retr. easy" -> two lines, so long labels fit beside the chart
      const words = column.label.length > 6 && column.label.includes(" ")
        ? [column.label.slice(0, column.label.indexOf(" ")), column.label.slice(column.label.indexOf(" ") + 1)]
        : [column.label];
      const top = ly + 4 - (words.length - 1) * 6.5;
      root.appendChild(svg("text", { x: lx.toFixed(1), y: top.toFixed(1), "text-anchor": anchor, class: "radar-label" },
        words.map((word, i) => svg("tspan", { x: lx.toFixed(1), dy: i === 0 ? null : "13" }, word))));
    });
    const scale = axes[0];
    const fracs = axes.map(c => {
      const v = cellValue(entry, c.key);
      return v === null ? null : Math.max(0, Math.min(1, (v - c.scale_min) / ((c.scale_max - c.scale_min) || 1)));
    });
    const dashed = entry.source === "paper" ? "5 3" : null;
    if (fracs.every(f => f !== null)) {
      const pts = fracs.map((f, k) => point(k, f).map(v => v.toFixed(1)).join(",")).join(" ");
      root.appendChild(svg("polygon", { points: pts, fill: row.colour, "fill-opacity": "0.18", stroke: row.colour,
        "stroke-width": "2", "stroke-dasharray": dashed, "stroke-linejoin": "round" }));
    } else {
      // draw only runs of consecutive present axes (wrapping round), so a missing value is a gap
      axes.forEach(function (_, k) {
        const next = (k + 1) % axes.length;
        if (fracs[k] === null || fracs[next] === null) return;
        const [x1, y1] = point(k, fracs[k]);
        const [x2, y2] = point(next, fracs[next]);
        root.appendChild(svg("line", { x1: x1.toFixed(1), y1: y1.toFixed(1), x2: x2.toFixed(1), y2: y2.toFixed(1),
          stroke: row.colour, "stroke-width": "2", "stroke-dasharray": dashed }));
      });
    }
    fracs.forEach(function (f, k) {
      if (f === null) return;
      const [x, y] = point(k, f);
      const value = cellValue(entry, axes[k].key);
      root.appendChild(svg("circle", { cx: x.toFixed(1), cy: y.toFixed(1), r: "3", fill: row.colour },
        svg("title", {}, axes[k].label + ": " + formatValue(value, axes[k]))));
    });
    const missing = axes.filter((c, k) => fracs[k] === null).map(c => c.label);
    const swatch = el("span", { class: "swatch", "aria-hidden": "true" });
    swatch.style.backgroundColor = row.colour;
    return el("figure", { class: "card radar-card" + (entry.source === "paper" ? " paper-card" : "") },
      el("figcaption", {}, swatch, el("span", { class: "model-name" }, entry.model),
        entry.source === "paper" ? el("span", { class: "badge badge-paper" }, "paper") : null,
        entry.chance_judge ? el("span", { class: "badge badge-chance" }, "chance judge") : null,
        entry.strategy ? el("span", { class: "badge badge-strategy" }, entry.strategy) : null),
      root,
      el("p", { class: "radar-note" }, "Scale " + scale.scale_min + "\u2013" + scale.scale_max + (scale.unit || "") +
        (missing.length ? " \u00b7 missing: " + missing.join(", ") : "")));
  }

  // ---- breakdown charts ---------------------------------------------------------------

  function renderCharts(bench, rows) {
    const sections = (bench.charts || []).map(chart => chartSection(bench, chart, rows)).filter(Boolean);
    if (!sections.length) {
      return el("section", { class: "section" }, el("h3", {}, "Breakdowns"),
        el("p", { class: "hint" }, "No breakdowns in these runs."));
    }
    return el("div", { class: "charts" }, sections);
  }

  function seriesFor(chart, option, rows) {
    const series = [];
    for (const row of rows) {
      const buckets = get(row.entry, "breakdowns", option.task, chart.dimension);
      if (!buckets) continue;
      const points = chart.buckets.map(b => {
        const v = get(buckets, b, option.metric);
        const n = get(buckets, b, "n");
        return isNum(v) ? { value: v, n: isNum(n) ? n : null } : null;
      });
      if (points.some(p => p !== null)) series.push({ row, points });
    }
    return series;
  }

  function chartSection(bench, chart, rows) {
    const buckets = chart.buckets || [];
    if (!buckets.length) return null;
    const options = (chart.options || []).map((option, index) => ({ option, index }))
      .filter(o => seriesFor(chart, o.option, rows).length > 0);
    if (!options.length) return null;
    const stateKey = bench.id + "/" + chart.id;
    let chosen = options.find(o => o.index === state.chartOption[stateKey]) || options[0];
    const holder = el("div", { class: "chart-holder" });
    const draw = function () {
      const series = seriesFor(chart, chosen.option, rows);
      holder.replaceChildren(chart.style === "bars"
        ? barChart(chart, chosen.option, series) : lineChart(chart, chosen.option, series), legend(series));
    };
    let picker = null;
    if (options.length > 1) {
      const select = el("select", { "aria-label": "Metric for " + chart.title },
        options.map(o => el("option", { value: String(o.index), selected: o === chosen }, o.option.label)));
      select.addEventListener("change", function () {
        chosen = options.find(o => String(o.index) === select.value) || options[0];
        state.chartOption[stateKey] = chosen.index;
        draw();
      });
      picker = el("label", { class: "picker" }, "Metric ", select);
    }
    draw();
    return el("section", { class: "section card chart-card", id: "chart-" + bench.id + "-" + chart.id },
      el("div", { class: "chart-head" }, el("h3", {}, chart.title), picker),
      holder);
  }

  const CHART = { width: 960, height: 300, left: 52, right: 16, top: 16, bottom: 48 };

  /** Whether the chart's bucket labels are tilted: when the longest would overlap its neighbours
   * (category names such as a benchmark's task types). */
  function tilted(buckets) {
    const slot = (CHART.width - CHART.left - CHART.right) / Math.max(1, buckets.length);
    return Math.max(0, ...buckets.map(b => Math.min(24, String(b).length))) * 6.5 > slot - 6;
  }

  function chartFrame(chart, option) {
    // tilted labels need room under the axis: the plot keeps its height, the figure grows
    const extra = tilted(chart.buckets || []) ? 52 : 0;
    const height = CHART.height + extra;
    const root = svg("svg", { viewBox: "0 0 " + CHART.width + " " + height, class: "chart", role: "img",
      "aria-label": chart.title + ": " + option.label });
    const plotH = CHART.height - CHART.top - CHART.bottom;
    const y = v => CHART.top + plotH * (1 - (v - option.scale_min) / ((option.scale_max - option.scale_min) || 1));
    for (let k = 0; k <= 5; k++) {
      const v = option.scale_min + (k / 5) * (option.scale_max - option.scale_min);
      root.appendChild(svg("line", { x1: CHART.left, x2: CHART.width - CHART.right, y1: y(v).toFixed(1), y2: y(v).toFixed(1),
        class: k === 0 ? "axis" : "gridline" }));
      root.appendChild(svg("text", { x: CHART.left - 8, y: (y(v) + 4).toFixed(1), "text-anchor": "end", class: "tick" },
        Number.isInteger(v) ? String(v) : v.toFixed(1)));
    }
    root.appendChild(svg("text", { x: 14, y: CHART.top + plotH / 2, class: "axis-label", "text-anchor": "middle",
      transform: "rotate(-90 14 " + (CHART.top + plotH / 2) + ")" }, chart.y_label));
    root.appendChild(svg("text", { x: (CHART.left + CHART.width - CHART.right) / 2, y: height - 6,
      class: "axis-label", "text-anchor": "middle" }, chart.x_label));
    return { root, y };
  }

  function bucketX(index, count) {
    const plotW = CHART.width - CHART.left - CHART.right;
    return CHART.left + plotW * (index + 0.5) / count;
  }

  /** Bucket labels under the axis; tilted (see tilted()), shortened past 24 characters. */
  function xLabels(root, buckets) {
    const tilt = tilted(buckets);
    buckets.forEach(function (bucket, i) {
      const x = bucketX(i, buckets.length), y = CHART.height - CHART.bottom + (tilt ? 12 : 18);
      const text = String(bucket);
      const label = svg("text", { x: x.toFixed(1), y: y.toFixed(1), "text-anchor": tilt ? "end" : "middle", class: "tick",
        transform: tilt ? "rotate(-20 " + x.toFixed(1) + " " + y.toFixed(1) + ")" : null },
        text.length > 24 ? text.slice(0, 23) + "\u2026" : text);
      if (text.length > 24) label.appendChild(svg("title", {}, text));
      root.appendChild(label);
    });
  }

  function pointTitle(entry, bucket, point, option) {
    return entry.model + " \u00b7 " + bucket + ": " + point.value.toFixed(2) + " " + option.label +
      (point.n !== null ? " (n = " + point.n + ")" : "");
  }

  function lineChart(chart, option, series) {
    const { root, y } = chartFrame(chart, option);
    const buckets = chart.buckets;
    xLabels(root, buckets);
    for (const s of series) {
      // a missing bucket breaks the line
      let segment = [];
      const flush = function () {
        if (segment.length > 1) {
          root.appendChild(svg("polyline", { points: segment.join(" "), fill: "none", stroke: s.row.colour,
            "stroke-width": "2.2", "stroke-linejoin": "round", "stroke-linecap": "round" }));
        }
        segment = [];
      };
      s.points.forEach(function (p, i) {
        if (p === null) { flush(); return; }
        segment.push(bucketX(i, buckets.length).toFixed(1) + "," + y(p.value).toFixed(1));
      });
      flush();
      s.points.forEach(function (p, i) {
        if (p === null) return;
        root.appendChild(svg("circle", { cx: bucketX(i, buckets.length).toFixed(1), cy: y(p.value).toFixed(1), r: "3.5",
          fill: "#fff", stroke: s.row.colour, "stroke-width": "2" },
          svg("title", {}, pointTitle(s.row.entry, buckets[i], p, option))));
      });
    }
    return root;
  }

  function barChart(chart, option, series) {
    const { root, y } = chartFrame(chart, option);
    const buckets = chart.buckets;
    xLabels(root, buckets);
    const slot = (CHART.width - CHART.left - CHART.right) / buckets.length;
    const width = Math.min(28, (slot * 0.75) / Math.max(1, series.length));
    series.forEach(function (s, k) {
      s.points.forEach(function (p, i) {
        if (p === null) return;
        const x = bucketX(i, buckets.length) + (k - (series.length - 1) / 2) * width - width / 2;
        const top = y(p.value), base = y(option.scale_min);
        root.appendChild(svg("rect", { x: x.toFixed(1), y: top.toFixed(1), width: (width - 2).toFixed(1),
          height: Math.max(0, base - top).toFixed(1), fill: s.row.colour, rx: "2" },
          svg("title", {}, pointTitle(s.row.entry, buckets[i], p, option))));
      });
    });
    return root;
  }

  function legend(series) {
    return el("ul", { class: "legend" }, series.map(function (s) {
      const swatch = el("span", { class: "swatch", "aria-hidden": "true" });
      swatch.style.backgroundColor = s.row.colour;
      return el("li", {}, swatch, el("span", { class: "model-name" }, s.row.entry.model));
    }));
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
