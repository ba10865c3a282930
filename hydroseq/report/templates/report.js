// hydroseq report: fills the bokeh charts from the page's data when a station is selected (map or table),
// sorts and filters the station table. Text from the data is only ever set as text (textContent, canvas).
(function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("hydroseq-data").textContent);
  const state = {selected: -1, lead: 0, doc: null, legendItems: null};
  const hydroseq = window.hydroseq = {state: state, data: DATA};

  const model = (name) => state.doc.get_model_by_name(name);
  const numbers = (values) => (values || []).map((v) => (v === null ? NaN : v));
  const finite = (values) => values.filter((v) => Number.isFinite(v));
  const element = (tag, text, className) => {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (className) node.className = className;
    return node;
  };
  const format = (v) => (Number.isFinite(v) ? (Math.abs(v) >= 1000 ? Math.round(v).toLocaleString("en") : v.toPrecision(3)) : "-");
  const THRESHOLD_COLOURS = ["#D55E00", "#CC79A7", "#882255", "#009E73"];

  function start() {
    const ready = window.Bokeh && Bokeh.documents.length && Bokeh.documents[0].get_model_by_name("stations");
    if (!ready) { requestAnimationFrame(start); return; }
    state.doc = Bokeh.documents[0];
    model("stations").data = DATA.map;
    const legend = model("legend");
    state.legendItems = legend ? legend.items.slice() : [];
    setUpTable();
    setUpLead();
    sortBy(DATA.sortColumn, "descending");
    const first = document.querySelector("#stations tbody tr:not([hidden])");
    if (first) select(Number(first.dataset.index), "start");
    whenIdle(() => { window.hydroseqReady = performance.now(); });
  }

  function whenIdle(done) {
    if (state.doc.is_idle === false) { requestAnimationFrame(() => whenIdle(done)); return; }
    requestAnimationFrame(done);
  }

  // ---- selection -------------------------------------------------------------------------------
  hydroseq.fromMap = function (indices) {
    if (indices.length && indices[0] !== state.selected) select(indices[0], "map");
  };

  function select(index, origin) {
    state.selected = index;
    const rows = document.querySelectorAll("#stations tbody tr");
    rows.forEach((row) => row.classList.toggle("picked", Number(row.dataset.index) === index));
    const row = document.querySelector(`#stations tbody tr[data-index="${index}"]`);
    if (row && origin === "map") row.scrollIntoView({block: "nearest"});
    const stations = model("stations");
    if (stations.selected.indices[0] !== index) stations.selected.indices = [index];
    if (DATA.kind === "forecast") showForecast(index); else showHindcast(index);
  }
  hydroseq.select = select;

  // ---- hydrographs -----------------------------------------------------------------------------
  function showForecast(i) {
    const st = DATA.stations[i];
    const x = DATA.forecastT, none = x.map(() => NaN);
    const band = (name, k) => (st.bands && st.bands[name] ? numbers(st.bands[name][k]) : none);
    model("forecast_data").data = {x: x, median: numbers(st.median), low90: band("90", 0), high90: band("90", 1),
                              low50: band("50", 0), high50: band("50", 1)};
    model("observed_data").data = st.observed ? {x: DATA.observedT, y: numbers(st.observed)} : {x: [], y: []};
    model("previous_data").data = st.previous ? {x: DATA.previousT, y: numbers(st.previous)} : {x: [], y: []};
    model("members_data").data = st.members ? {xs: st.members.map(() => x), ys: st.members.map(numbers)} : {xs: [], ys: []};
    const shown = drawThresholds(st);
    setLegend({"observed": !!st.observed, "forecast median": true, "50 % band": !!(st.bands && st.bands["50"]),
               "90 % band": !!(st.bands && st.bands["90"]), "members": !!st.members,
               "previous forecast": !!st.previous, "thresholds": shown.length > 0});
    const values = [].concat(numbers(st.median), st.observed ? numbers(st.observed) : [],
                             st.previous ? numbers(st.previous) : [], band("90", 1), band("50", 1),
                             ...(st.members || []).map(numbers));
    scaleAxes(st, values, shown);
    model("hydrograph").visible = finite(values).length > 0;  // nothing to draw: the notes say why, no empty chart
    details(st, forecastDetails(st, shown));
  }

  function showHindcast(i) {
    const st = DATA.stations[i], k = state.lead;
    const offset = DATA.leads[k] * DATA.stepMs;
    const x = DATA.issueT.map((t) => t + offset), none = x.map(() => NaN);
    const band = st.band ? st.band[k] : null;
    model("forecast_data").data = {x: x, median: numbers(st.median[k]), low90: band ? numbers(band[0]) : none,
                              high90: band ? numbers(band[1]) : none, low50: none, high50: none};
    model("observed_data").data = st.observed ? {x: DATA.observedT, y: numbers(st.observed)} : {x: [], y: []};
    const shown = drawThresholds(st);
    setLegend({"observed": !!st.observed, "forecast median": true, "90 % band": !!band, "thresholds": shown.length > 0});
    scaleAxes(st, [].concat(numbers(st.median[k]), st.observed ? numbers(st.observed) : [],
                            band ? numbers(band[1]) : []), shown);
    details(st, hindcastDetails(st));
  }

  function drawThresholds(st) {
    const levels = DATA.thresholdLabels || [], values = numbers(st.thresholds);
    const shown = levels.map((level, k) => ({level: level, value: values[k], colour: THRESHOLD_COLOURS[k % 4]}))
      .filter((item) => Number.isFinite(item.value));
    model("thresholds_data").data = {y: shown.map((t) => t.value), colour: shown.map((t) => t.colour),
                                label: shown.map((t) => `${t.level} ${format(t.value)} ${st.unit}`)};
    return shown;
  }

  function setLegend(visible) {
    const legend = model("legend");
    if (!legend) return;
    legend.items = state.legendItems.filter((item) => visible[item.name.replace("legend ", "")]);
  }

  function scaleAxes(st, values, thresholds) {
    const top = Math.max(1e-6, ...finite(values));
    const lowest = thresholds.length ? Math.min(...thresholds.map((t) => t.value)) : Infinity;
    const end = (lowest <= 2.5 * top ? Math.max(top, lowest) : top) * 1.12;
    const range = model("y_range");
    range.start = 0; range.end = end;
    model("y_axis").axis_label = `discharge (${st.unit})`;
    const depth = model("depth_axis");
    depth.visible = !!st.second;
    if (st.second) depth.axis_label = st.second[0];
    syncDepth();
    const plot = model("hydrograph");
    document.getElementById("station-title").textContent = `${st.name || st.station} (${st.station})`;
    const x = model("forecast_data").data.x, observedX = model("observed_data").data.x;
    const times = finite([].concat(observedX, x, model("previous_data").data.x));
    if (times.length) {
      const pad = DATA.stepMs;
      plot.x_range.start = Math.min(...times) - pad; plot.x_range.end = Math.max(...times) + pad;
    }
  }

  function syncDepth() {
    if (state.selected < 0 || !state.doc) return;
    const st = DATA.stations[state.selected], range = model("y_range"), depth = model("depth_range");
    const factor = st.second ? st.second[1] : 1;
    depth.start = range.start * factor; depth.end = range.end * factor;
  }
  hydroseq.syncDepth = syncDepth;

  // ---- the selected station's details (text only) ---------------------------------------------
  function details(st, parts) {
    const box = document.getElementById("station-details");
    box.replaceChildren(...parts);
  }

  function forecastDetails(st, thresholds) {
    const parts = [];
    const notes = [];
    if (st.note) notes.push(st.note);
    if (st.state === "ungauged") notes.push("Ungauged: the forecast is drawn without observations.");
    else if (!st.observed && st.state !== "skipped") notes.push("No observations are shown for this station.");
    if (DATA.thresholdLabels.length && !thresholds.length) notes.push("This station has no thresholds.");
    if (st.thresholdNote) notes.push(`No return-period flow: ${st.thresholdNote}.`);
    if (!st.bands && !st.members) notes.push("Deterministic model: the forecast is drawn without a band.");
    notes.forEach((note) => parts.push(element("p", note, "note")));
    if (st.state === "skipped") return parts;
    const table = element("table", undefined, "skill");
    const head = ["lead", `median (${st.unit})`].concat(st.bands && st.bands["90"] ? ["90 % band"] : [],
                                                         st.skill ? ["NSE model", "NSE persistence"] : []);
    table.append(rowOf("th", head));
    DATA.leadText.forEach((lead, k) => {
      const cells = [lead, format(numbers(st.median)[k])];
      if (st.bands && st.bands["90"]) cells.push(`${format(numbers(st.bands["90"][0])[k])} to ${format(numbers(st.bands["90"][1])[k])}`);
      if (st.skill) cells.push(nse(st.skill.model, k), nse(st.skill.persistence, k));
      table.append(rowOf("td", cells));
    });
    parts.push(table);
    if (st.skill) parts.push(element("p", `Skill: NSE over the hindcast ${DATA.skillPeriod}.`));
    else if (DATA.skillPeriod) parts.push(element("p", "This station was not scored in the hindcast."));
    if (st.thresholdIntervals) parts.push(thresholdFits(st));
    const above = thresholds.filter((t) => t.value > model("y_range").end);
    if (above.length) {
      parts.push(element("p", "Above the chart: " + above.map((t) => `${t.level} ${format(t.value)} ${st.unit}`).join(", ") + "."));
    }
    return parts;
  }

  function thresholdFits(st) {
    // derived return-period flows: each with its confidence interval and the water years it was fitted to
    const [lower, upper] = st.thresholdIntervals.map(numbers), values = numbers(st.thresholds);
    const share = `${Math.round(DATA.thresholdConfidence * 1000) / 10} %`;
    const fits = DATA.thresholdLabels.map((label, k) => (Number.isFinite(lower[k]) && Number.isFinite(upper[k])
      ? `${label} ${format(values[k])} ${st.unit} (${share} interval ${format(lower[k])} to ${format(upper[k])}, ` +
        `${st.thresholdYears[k]} water years)` : null)).filter((text) => text);
    return element("p", fits.join("; ") + ".", "thresholds");
  }

  function hindcastDetails(st) {
    const table = element("table", undefined, "skill");
    table.append(rowOf("th", ["lead", "NSE model", "NSE persistence", "NSE climatology"]));
    DATA.leadText.forEach((lead, k) => {
      table.append(rowOf("td", [lead, nse(st.nse.model, k), nse(st.nse.persistence, k), nse(st.nse.climatology, k)]));
    });
    const notes = st.observed ? [] : [element("p", "No observations of this station in the data file.", "note")];
    return notes.concat([table]);
  }

  const nse = (values, k) => (values && values[k] !== null && values[k] !== undefined ? values[k].toFixed(2) : "-");

  function rowOf(tag, cells) {
    const row = document.createElement("tr");
    cells.forEach((text) => row.append(element(tag, text)));
    return row;
  }

  // ---- the station table: sort, filter, select -------------------------------------------------
  function setUpTable() {
    document.querySelectorAll("#stations thead th").forEach((th) => {
      const toggle = () => sortBy(th.dataset.key, th.getAttribute("aria-sort") === "descending" ? "ascending" : "descending");
      th.addEventListener("click", toggle);
      th.addEventListener("keydown", (event) => { if (event.key === "Enter") toggle(); });
    });
    const body = document.querySelector("#stations tbody");
    body.addEventListener("click", (event) => {
      const row = event.target.closest("tr");
      if (row) select(Number(row.dataset.index), "table");
    });
    body.addEventListener("keydown", (event) => {
      const row = event.target.closest("tr");
      if (row && (event.key === "Enter" || event.key === " ")) { event.preventDefault(); select(Number(row.dataset.index), "table"); }
    });
    const filter = document.getElementById("filter");
    filter.addEventListener("input", () => applyFilter(filter.value));
    applyFilter("");
  }

  function sortBy(key, direction) {
    const th = document.querySelector(`#stations thead th[data-key="${key}"]`);
    if (!th) return;
    document.querySelectorAll("#stations thead th").forEach((other) => other.setAttribute("aria-sort", "none"));
    th.setAttribute("aria-sort", direction);
    const numeric = th.dataset.sort === "number", sign = direction === "descending" ? -1 : 1;
    const body = document.querySelector("#stations tbody");
    const column = Array.from(th.parentNode.children).indexOf(th);
    const keyed = Array.from(body.rows, (row) => {
      const text = row.cells[column].dataset.value;
      return {row: row, value: text === "" ? null : (numeric ? Number(text) : text)};
    });
    keyed.sort((a, b) => {
      if (a.value === null || b.value === null) return (a.value === null) - (b.value === null);  // unknown last
      return sign * (numeric ? a.value - b.value : a.value.localeCompare(b.value));
    });
    body.append(...keyed.map((item) => item.row));
  }
  hydroseq.sortBy = sortBy;

  function applyFilter(text) {
    const wanted = text.trim().toLowerCase();
    const rows = Array.from(document.querySelectorAll("#stations tbody tr"));
    let shown = 0;
    rows.forEach((row) => {
      const station = DATA.stations[Number(row.dataset.index)];
      const match = !wanted || (station.name || "").toLowerCase().includes(wanted) || station.station.toLowerCase().includes(wanted);
      row.hidden = !match;
      shown += match ? 1 : 0;
    });
    document.getElementById("shown").textContent = `${shown} of ${rows.length} stations`;
  }

  // ---- the verification page's lead -------------------------------------------------------------
  function setUpLead() {
    const choice = document.getElementById("lead");
    if (!choice) return;
    const apply = () => {
      state.lead = Number(choice.value);
      const skill = DATA.skill[state.lead], stations = model("stations");
      stations.data = Object.assign({}, stations.data, {colour: skill.colour, summary: skill.summary});
      const pit = model("pit");
      if (pit && DATA.pit) pit.data = Object.assign({}, pit.data, {count: DATA.pit[state.lead]});
      showLeadColumns();
      if (state.selected >= 0) showHindcast(state.selected);
    };
    choice.addEventListener("change", apply);
    state.applyLead = apply;
    apply();
  }

  // the station table shows the selected lead's columns only; a sort on a score of another lead moves to the
  // same score of this one; each row's swatch takes the map's colour at this lead
  function showLeadColumns() {
    const lead = String(state.lead);
    document.querySelectorAll("#stations [data-lead]").forEach((cell) => {
      cell.classList.toggle("other-lead", cell.dataset.lead !== lead);
    });
    const sorted = document.querySelector('#stations thead th[aria-sort="ascending"], #stations thead th[aria-sort="descending"]');
    if (sorted && sorted.dataset.lead !== undefined && sorted.dataset.lead !== lead) {
      sortBy(sorted.dataset.key.replace(/_\d+$/, `_${lead}`), sorted.getAttribute("aria-sort"));
    }
    const colours = DATA.skill[state.lead].colour;
    document.querySelectorAll("#stations tbody tr").forEach((row) => {
      const swatch = row.querySelector(".swatch");
      if (swatch) swatch.style.background = colours[Number(row.dataset.index)];
    });
  }

  start();
})();
