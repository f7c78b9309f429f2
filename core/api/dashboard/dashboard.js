// lode's dashboard: polls /api/summary and /api/history and draws them.
// A token (for control, or a lode listening beyond loopback) comes from the
// page's address: http://HOST:PORT/#token=TOKEN (it stays in the browser).
// lode tf gets its own view: the elements of class tf-only are shown and
// those of class mining-only (hashrate and share cards, the shares chart,
// pools) hidden; chart-status says which view is drawn (data-view).
"use strict";
(function () {
  const token = (new URLSearchParams(location.hash.slice(1))).get("token");
  const palette = ["#58a6ff", "#3fb950", "#d29922", "#f778ba", "#a371f7", "#39c5cf", "#ff7b72", "#e3b341"];
  const status = document.getElementById("chart-status");
  let unit = "H/s";

  function headers() {
    return token ? { "Authorization": "Bearer " + token } : {};
  }
  async function get(path) {
    const r = await fetch(path, { headers: headers(), cache: "no-store" });
    if (!r.ok) throw new Error(path + ": HTTP " + r.status);
    return r.json();
  }
  async function post(path, body) {
    const h = headers();
    h["Content-Type"] = "application/json";
    const r = await fetch(path, { method: "POST", headers: h, body: JSON.stringify(body || {}) });
    if (!r.ok) alert(path + ": " + ((await r.json().catch(() => ({}))).error || r.status));
    refresh();
  }

  // Three significant digits and an SI prefix, as lode's own lines write
  // rates (core/base/text.h): "8.11 GH/s", "86.3 G candidates/s".
  function digits3(v) {
    if (v === 0) return "0";
    const e = Math.floor(Math.log10(Math.abs(Number(v.toPrecision(3)))));
    return v.toFixed(Math.max(0, 2 - e));
  }
  function rate(v) {
    if (v === null || v === undefined) return "-";
    const p = ["", "k", "M", "G", "T", "P", "E"];
    let i = 0;
    while (Math.abs(Number(v.toPrecision(3))) >= 1000 && i < p.length - 1) { v /= 1000; i++; }
    const word = /^[a-z]/.test(unit); // "candidates/s" takes its prefix after a space
    return digits3(v) + " " + p[i] + (word && i ? " " : "") + unit;
  }
  function ghzd(v) { return v === null || v === undefined ? "-" : v.toFixed(2); }
  function duration(s) {
    s = Math.max(0, Math.floor(s));
    const d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60);
    if (d) return d + "d " + h + "h";
    if (h) return h + "h " + m + "m";
    return m + "m " + (s % 60) + "s";
  }
  function text(v, suffix) { return v === undefined || v === null ? "-" : v.toFixed(0) + suffix; }
  // Energy per unit of work, three significant digits: "53.2 J/GH", "1130 GHz-days/kWh".
  function energy(d) {
    const v = d.energy_per_unit;
    return v === undefined || v === null ? "-" : (v >= 100 ? v.toFixed(0) : v.toPrecision(3)) + " " + d.energy_unit;
  }
  function el(tag, cls, content) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (content !== undefined) e.textContent = content;
    return e;
  }

  Chart.defaults.color = "#8a99a8";
  Chart.defaults.borderColor = "#263241";
  Chart.defaults.font.size = 11;
  function chart(id, yFormat) {
    return new Chart(document.getElementById(id), {
      type: "line",
      data: { datasets: [] },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false, parsing: false, normalized: true,
        interaction: { mode: "nearest", axis: "x", intersect: false },
        elements: { point: { radius: 0 }, line: { borderWidth: 2, tension: 0.25 } },
        scales: {
          x: { type: "linear", ticks: { maxTicksLimit: 7, maxRotation: 0,
               callback: function (v) { // seconds only on a short span
                 const short = this.max - this.min < 600000;
                 return new Date(v).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", hour12: false,
                                                             second: short ? "2-digit" : undefined });
               } } },
          y: { beginAtZero: true, ticks: { callback: yFormat } },
        },
        plugins: { legend: { labels: { boxWidth: 12 } },
                   tooltip: { callbacks: { title: items => new Date(items[0].parsed.x).toLocaleTimeString(),
                                           label: c => c.dataset.label + ": " + yFormat(c.parsed.y) } } },
      },
    });
  }
  const charts = {
    rate: chart("ch-rate", v => rate(v)),
    shares: chart("ch-shares", v => String(v)),
    temp: chart("ch-temp", v => v.toFixed(0) + " °C"),
    power: chart("ch-power", v => v.toFixed(0) + " W"),
    ghzd: chart("ch-ghzd", v => ghzd(v)),
  };

  // Shows the elements of one view and hides the other's.
  function setView(tf) {
    for (const e of document.querySelectorAll(".tf-only")) e.hidden = !tf;
    for (const e of document.querySelectorAll(".mining-only")) e.hidden = tf;
    document.getElementById("rate-title").textContent = tf ? "Candidates/s per device" : "Hashrate per device";
    status.dataset.view = tf ? "tf" : "mining";
  }

  // Replaces a chart's series; returns how many points it draws.
  function draw(name, series) {
    const c = charts[name];
    c.data.datasets = series.map((s, i) => ({
      label: s.label, data: s.points.map(p => ({ x: p[0], y: p[1] })),
      borderColor: s.color || palette[i % palette.length], backgroundColor: (s.color || palette[i % palette.length]) + "33",
      fill: !!s.fill,
    }));
    const n = series.reduce((a, s) => a + s.points.length, 0);
    c.options.scales.x.display = c.options.scales.y.display = n > 0; // no empty axes
    const xs = series.flatMap(s => s.points.map(p => p[0]));
    c.options.scales.x.min = n ? Math.min(...xs) : undefined; // the time axis spans the data exactly
    c.options.scales.x.max = n ? Math.max(...xs) : undefined;
    c.update("none");
    document.getElementById("e-" + name).style.display = n ? "none" : "flex";
    status.dataset[name + "Points"] = String(n);
    return n;
  }

  function renderDevices(s, tf) {
    const body = document.getElementById("devices");
    body.replaceChildren();
    const control = s.control && token;
    for (const d of s.devices) {
      const tr = el("tr");
      tr.append(el("td", "", d.id), el("td", "dim", d.name + (d.variant ? " (" + d.variant + ")" : "")));
      const st = el("td"); st.append(el("span", "state s-" + d.state, d.state)); tr.append(st);
      if (tf) // a minute's candidates/s beside the credit they earn
        tr.append(el("td", "num", rate(d.hashrate_60s)), el("td", "num", ghzd(d.ghz_days_per_day)),
                  el("td", "num", String(d.proof_entries)), el("td", "num", String(d.factors)));
      else
        tr.append(el("td", "num", rate(d.hashrate_10s)), el("td", "num", rate(d.hashrate_60s)),
                  el("td", "num", rate(d.hashrate_15m)), el("td", "num", String(d.hits)),
                  el("td", "num", String(d.hits_dropped)));
      tr.append(el("td", "num", String(d.hardware_errors)), el("td", "num", text(d.temperature_c, " °C")),
                el("td", "num", text(d.power_w, " W")), el("td", "num energy", energy(d)),
                el("td", "num", text(d.fan_percent, " %")),
                el("td", "num", text(d.sm_clock_mhz, " MHz")));
      const act = el("td");
      if (control) {
        const paused = d.state === "paused";
        const b = el("button", "", paused ? "resume" : "pause");
        b.onclick = () => post(paused ? "api/resume" : "api/pause", { device: d.id });
        act.append(b);
      }
      tr.append(act);
      body.append(tr);
    }
  }

  function renderPools(s) {
    const control = s.control && token;
    const acc = s.pools.reduce((a, p) => a + p.accepted, 0);
    const rej = s.pools.reduce((a, p) => a + p.rejected, 0), stale = s.pools.reduce((a, p) => a + p.stale, 0);
    document.getElementById("c-acc").textContent = s.pools.length ? acc : "-";
    document.getElementById("c-rej").textContent = s.pools.length ? rej + " / " + stale : "-";
    document.getElementById("pools-section").hidden = !s.pools.length;
    const pools = document.getElementById("pools");
    pools.replaceChildren();
    for (const p of s.pools) {
      const tr = el("tr");
      tr.append(el("td", "", String(p.index)), el("td", "", p.url));
      const st = el("td"); st.append(el("span", "state s-" + p.state, p.state)); tr.append(st);
      tr.append(el("td", "num", String(p.accepted)), el("td", "num", String(p.rejected)),
                el("td", "num", String(p.stale)), el("td", "num", String(p.dropped)),
                el("td", "num", String(p.unanswered)),
                el("td", "num", p.difficulty === null ? "-" : String(+p.difficulty.toPrecision(4))),
                el("td", "dim", p.last_reject || ""));
      pools.append(tr);
    }
    const next = document.getElementById("next-pool");
    next.style.display = control && s.pools.length > 1 ? "" : "none";
    next.onclick = () => post("api/pool/next", {});
  }

  // The TF view: the assignment, class progress, ETA, credit, factors, and
  // the PrimeNet client ("not used" without one).
  function renderTf(s) {
    const t = s.tf, pn = s.primenet || { enabled: false };
    const set = (id, v) => { document.getElementById(id).textContent = v; };
    set("t-assignment", t.running ? t.assignment : "idle");
    set("t-classes", t.running ? t.classes_done + " of " + t.classes_total : "-");
    document.getElementById("t-bar").style.width = (t.running ? 100 * t.progress : 0) + "%";
    set("t-eta", t.running && t.eta_s !== null ? duration(t.eta_s) : "-");
    set("t-ghzd", t.running ? ghzd(t.ghz_days_per_day) : "-");
    set("t-factors", String(t.factors_found));
    set("t-results", pn.enabled ? pn.results_sent + " / " + pn.results_queued
                                : "not used (" + t.assignments_done + " written)");
    set("t-primenet", pn.enabled ? pn.state : "not used");
    set("t-up", duration(s.uptime_s));
    document.title = "lode · " + (t.running ? t.assignment + " · " + ghzd(s.total.ghz_days_per_day) + " GHz-d/d"
                                            : "tf idle");
    document.getElementById("primenet-off").hidden = pn.enabled;
    document.getElementById("primenet-table").hidden = !pn.enabled;
    set("primenet-off", "not used: this lode tf runs without its PrimeNet client; " + t.assignments_done +
        " result(s) written to its results file");
    const body = document.getElementById("primenet");
    body.replaceChildren();
    if (pn.enabled) {
      const tr = el("tr");
      tr.append(el("td", "", pn.state), el("td", "num", String(pn.results_sent)),
                el("td", "num", String(pn.results_queued)), el("td", "num", String(pn.assignments_queued)),
                el("td", "num", pn.next_contact_s === null ? "-" : duration(pn.next_contact_s)),
                el("td", "dim", pn.last_error || ""));
      body.append(tr);
    }
  }

  function renderSummary(s) {
    unit = s.unit || "H/s";
    const tf = !!s.tf;
    setView(tf);
    document.getElementById("meta").textContent =
      "v" + s.version + " · " + s.algorithm + " · " + s.source.kind + (s.source.url ? " " + s.source.url : "");
    renderDevices(s, tf);
    if (tf) {
      renderTf(s);
      return;
    }
    document.title = "lode · " + rate(s.total.hashrate_60s);
    document.getElementById("c-rate").textContent = rate(s.total.hashrate_60s);
    document.getElementById("c-rate15").textContent = rate(s.total.hashrate_15m);
    const mining = s.devices.filter(d => d.state === "mining").length;
    document.getElementById("c-dev").textContent = mining + " of " + s.devices.length;
    document.getElementById("c-up").textContent = duration(s.uptime_s);
    renderPools(s);
  }

  function renderHistory(h) {
    draw("rate", h.devices.map(d => ({ label: d.id, points: d.hashrate })));
    draw("temp", h.devices.filter(d => d.temperature_c.length).map(d => ({ label: d.id, points: d.temperature_c })));
    draw("power", h.devices.filter(d => d.power_w.length).map(d => ({ label: d.id, points: d.power_w })));
    draw("ghzd", h.devices.filter(d => d.ghz_days_per_day).map(d => ({ label: d.id, points: d.ghz_days_per_day })));
    const sh = h.shares;
    draw("shares", sh.length ? [
      { label: "accepted", color: "#3fb950", fill: true, points: sh.map(p => [p[0], p[1]]) },
      { label: "rejected", color: "#f85149", points: sh.map(p => [p[0], p[2]]) },
      { label: "stale", color: "#d29922", points: sh.map(p => [p[0], p[3]]) },
    ] : []);
  }

  let updates = 0;
  async function refresh() {
    const conn = document.getElementById("conn");
    try {
      const [s, h] = await Promise.all([get("api/summary"), get("api/history")]);
      renderSummary(s);
      renderHistory(h);
      updates++;
      status.dataset.updates = String(updates);
      conn.className = "ok";
      conn.textContent = "● live";
    } catch (e) {
      conn.className = "bad";
      conn.textContent = "● " + e.message;
      status.dataset.error = e.message;
    }
  }
  refresh();
  setInterval(refresh, 2000);
})();
