// Charts (uPlot): daily series and categories, sized to the page, destroyed on every render.

import { append, fmtInt, h } from "./dom.js";
import { state } from "./state.js";

export const COLORS = {
  searches: "#3566c7",
  searchesFill: "rgba(53, 102, 199, 0.72)",
  miss: "#c0321d",
  missFill: "rgba(192, 50, 29, 0.92)",
  created: "#2f7d4f",
  createdFill: "rgba(47, 125, 79, 0.8)",
  retired: "#7a6a55",
  retiredFill: "rgba(122, 106, 85, 0.8)",
  axis: "#4a5262",
  grid: "rgba(30, 40, 60, 0.08)",
};

// Charts (uPlot)

export function destroyCharts() {
  for (const { chart, observer } of state.charts) {
    observer.disconnect();
    chart.destroy();
  }
  state.charts = [];
}

export function chartHeight() {
  return window.matchMedia("(max-width: 600px)").matches ? 180 : 230;
}

export function mount(chartOpts, data, container) {
  if (!window.uPlot) {
    append(container, h("p", { class: "muted" }, "The chart library did not load; see the table below."));
    return;
  }
  const width = Math.max(240, container.clientWidth || 600);
  const chart = new window.uPlot({ ...chartOpts, width, height: chartHeight() }, data, container);
  let last = width;
  const observer = new ResizeObserver(() => {
    const w = Math.max(240, container.clientWidth);
    if (Math.abs(w - last) > 2) {
      last = w;
      chart.setSize({ width: w, height: chartHeight() });
    }
  });
  observer.observe(container);
  state.charts.push({ chart, observer });
}

export function countAxis(extra = {}) {
  return {
    stroke: COLORS.axis,
    grid: { stroke: COLORS.grid },
    ticks: { show: false },
    size: 44,
    values: (u, vals) => vals.map((v) => (Number.isInteger(v) ? fmtInt(v) : "")),
    ...extra,
  };
}

export function countScale() {
  return { range: (u, min, max) => [0, Math.max(4, Math.ceil((max || 0) * 1.1))] };
}

export function dayTs(day) {
  return Date.parse(`${day}T00:00:00Z`) / 1000;
}

// The legend of a daily chart: the hovered day's values, and the window's totals when no day is hovered.
export function windowTotalLabel(days) {
  return `total of ${days} days`;
}

export function dayLegendValue(rows) {
  return (u, ts, sidx, idx) => (idx == null ? windowTotalLabel(rows.length) : new Date(ts * 1000).toISOString().slice(0, 10));
}

export function countLegendValue(rows, key) {
  const total = rows.reduce((sum, r) => sum + Number(r[key] || 0), 0);
  return (u, v, sidx, idx) => fmtInt(idx == null ? total : v);
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

export function todayTs() {
  return dayTs(new Date().toISOString().slice(0, 10));
}

// The days labelled under a daily chart: counted back from the window's last day (today), so today always
// has its label, one label every `step` days with at least ~64 px for each.
export function dayTicks(xs, width) {
  if (!xs.length) return [];
  const room = Math.max(1, Math.floor((width || 600) / 64));
  const step = Math.max(1, Math.ceil(xs.length / room));
  const ticks = [];
  for (let i = xs.length - 1; i >= 0; i -= step) ticks.unshift(xs[i]);
  return ticks;
}

export function dayTickLabel(ts, today) {
  if (ts === today) return "today";
  const d = new Date(ts * 1000);
  return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
}

// A per-day bar chart: one x point per day of the window, quiet days drawn as zero.
export function dailyChart(container, rows, series, { overlay = false } = {}) {
  const xs = rows.map((r) => dayTs(r.date));
  const data = [xs, ...series.map((s) => rows.map((r) => Number(r[s.key] || 0)))];
  const many = rows.length > 60;
  const n = series.length;
  const uSeries = series.map((s, i) => ({
    label: s.label,
    value: countLegendValue(rows, s.key),
    stroke: s.stroke,
    fill: s.fill,
    width: 0,
    points: { show: false },
    paths: window.uPlot.paths.bars({
      size: overlay ? [many ? 1 : 0.72, 48] : [(many ? 1 : 0.8) / n, 24],
      align: overlay ? 0 : i === 0 ? -1 : 1,
      gap: many ? 0 : 1,
    }),
  }));
  mount(
    {
      tzDate: (ts) => window.uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
      scales: {
        x: { time: true, range: (u, min, max) => [min - 43200, max + 43200] },
        y: countScale(),
      },
      series: [{ label: "Day", value: dayLegendValue(rows) }, ...uSeries],
      axes: [
        {
          stroke: COLORS.axis,
          grid: { show: false },
          ticks: { stroke: COLORS.grid },
          splits: (u) => dayTicks(xs, u.width),
          values: (u, vals) => {
            const labels = vals.map((v) => dayTickLabel(v, todayTs()));
            container.dataset.xLabels = labels.join("|");
            return labels;
          },
        },
        countAxis(),
      ],
      cursor: { drag: { x: false, y: false }, points: { show: false } },
      legend: { live: true },
    },
    data,
    container,
  );
}

// A bar chart over named categories; each series is drawn only where it has values.
export function categoryChart(container, labels, series, shortLabels = labels) {
  const xs = labels.map((_, i) => i);
  mount(
    {
      scales: { x: { time: false, range: [-0.6, labels.length - 0.4] }, y: countScale() },
      series: [
        { label: "Bucket", value: (u, v) => (v == null ? "—" : labels[v]) },
        ...series.map((s) => ({
          label: s.label,
          stroke: s.stroke,
          fill: s.fill,
          width: 0,
          points: { show: false },
          paths: window.uPlot.paths.bars({ size: [0.62, 90], gap: 2 }),
        })),
      ],
      axes: [
        {
          stroke: COLORS.axis,
          grid: { show: false },
          ticks: { show: false },
          splits: () => xs,
          values: (u, vals) => {
            const names = u.width / labels.length < 72 ? shortLabels : labels;
            return vals.map((v) => names[v] ?? "");
          },
        },
        countAxis(),
      ],
      cursor: { drag: { x: false, y: false }, points: { show: false } },
      legend: { show: false },
    },
    [xs, ...series.map((s) => s.values)],
    container,
  );
}
