/**
 * The read-only Upstreams console: one self-contained page that polls `GET /v1/upstreams`,
 * `GET /v1/history/upstreams` (per pool, requests per second and p99 per member over 15 minutes,
 * drawn as inline SVG line charts with member changes, ejections and recoveries marked; for pools
 * with `health_check`, each member's last probe, its result and its consecutive passes and fails) and
 * `GET /v1/cache` (the Cache panel: objects, bytes, hit ratio per application) every 2 seconds. Served by the admin app only (loopback admin HTTP listener, remote listener, socket).
 */
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>scalwsd · Upstreams</title>
<style>
  :root { font-family: system-ui, sans-serif; color: #1d2430; background: #f6f7f9; }
  body { margin: 0; padding: 1rem; }
  h1 { font-size: 1.25rem; margin: 0 0 .25rem; }
  .crumbs { color: #5b6675; font-size: .8rem; margin-bottom: .15rem; }
  .meta { color: #5b6675; font-size: .85rem; margin-bottom: 1rem; }
  section { background: #fff; border: 1px solid #dde1e6; border-radius: 8px; margin-bottom: 1rem; padding: .75rem; }
  h2 { font-size: 1.05rem; margin: 0 0 .5rem; }
  .settings { color: #5b6675; font-size: .8rem; margin-bottom: .5rem; }
  .scroll { overflow-x: auto; }
  table { border-collapse: collapse; width: 100%; font-size: .85rem; }
  th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #eef0f3; white-space: nowrap; }
  th { color: #5b6675; font-weight: 600; }
  .state { font-weight: 600; border-radius: 4px; padding: .05rem .4rem; }
  .healthy { background: #e3f6e8; color: #17692f; }
  .probation { background: #fff4d6; color: #7a5a00; }
  .ejected, .down { background: #fde4e4; color: #9b1c1c; }
  .empty { color: #9b1c1c; }
  .charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(260px, 1fr)); gap: .5rem; margin: .5rem 0; }
  .chart h3 { font-size: .8rem; color: #5b6675; margin: 0 0 .2rem; font-weight: 600; }
  .chart svg { width: 100%; height: auto; display: block; background: #fbfcfd; border: 1px solid #eef0f3; border-radius: 4px; }
  .chart text { font-size: 10px; fill: #5b6675; }
  .legend { font-size: .75rem; color: #5b6675; display: flex; flex-wrap: wrap; gap: .25rem .75rem; margin-bottom: .4rem; }
  .legend i { display: inline-block; width: .7rem; height: .7rem; border-radius: 2px; margin-right: .25rem; vertical-align: -1px; }
</style>
</head>
<body>
<nav class="crumbs" aria-label="Section">Monitor › Upstreams</nav>
<h1>Upstreams</h1>
<div class="meta" id="meta">loading…</div>
<div id="pools"></div>
<section id="cache"><h2>Cache</h2><div id="cache-body">loading…</div></section>
<script>
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({"&":"&amp;","<":"&lt;",">":"&gt;","\\"":"&quot;"}[c]));
const COLORS = ["#2563eb", "#d97706", "#059669", "#db2777", "#7c3aed", "#0891b2", "#65a30d", "#dc2626"];
const EVENT_COLORS = { added: "#111827", removed: "#6b7280", ejected: "#dc2626", restored: "#16a34a" };
const W = 600, H = 140, PAD = 18;
// One small line chart per metric: a path per member, event markers on the same time axis.
function chart(kind, pool, hist, members, title, unit) {
  if (!hist) return "";
  const end = hist.now, start = end - hist.window_ms;
  const samples = hist.samples.filter((s) => s.t >= start);
  const x = (t) => ((t - start) / hist.window_ms * (W - 2 * PAD) + PAD).toFixed(1);
  let max = 0;
  for (const s of samples) for (const a in s.members) max = Math.max(max, s.members[a][kind] ?? 0);
  const top = max > 0 ? max * 1.1 : 1;
  const y = (v) => (H - PAD - v / top * (H - 2 * PAD)).toFixed(1);
  const paths = members.map((addr, i) => {
    let d = "", pen = "M";
    for (const s of samples) {
      const v = s.members[addr] ? s.members[addr][kind] : null;
      if (v === null || v === undefined) { pen = "M"; continue; }
      d += pen + x(s.t) + " " + y(v) + " ";
      pen = "L";
    }
    return d === "" ? "" : '<path data-member="' + esc(addr) + '" d="' + d + '" fill="none" stroke="' +
      COLORS[i % COLORS.length] + '" stroke-width="1.5"/>';
  }).join("");
  const marks = hist.events.filter((e) => e.t >= start).map((e) =>
    '<line data-event="' + esc(e.kind) + '" x1="' + x(e.t) + '" x2="' + x(e.t) + '" y1="' + PAD + '" y2="' + (H - PAD) +
    '" stroke="' + (EVENT_COLORS[e.kind] || "#6b7280") + '" stroke-dasharray="3 2"><title>' + esc(e.kind + " " + e.member + " " +
    new Date(e.t).toLocaleTimeString()) + '</title></line>').join("");
  return '<div class="chart"><h3>' + esc(title) + '</h3><svg data-chart="' + kind + '" data-pool="' + esc(pool) +
    '" viewBox="0 0 ' + W + ' ' + H + '" role="img" aria-label="' + esc(title) + '">' +
    '<line x1="' + PAD + '" x2="' + (W - PAD) + '" y1="' + (H - PAD) + '" y2="' + (H - PAD) + '" stroke="#dde1e6"/>' +
    '<text x="' + PAD + '" y="12">' + (max > 0 ? (max < 10 ? max.toFixed(2) : Math.round(max)) + " " + unit : "no traffic") + '</text>' +
    '<text x="' + PAD + '" y="' + (H - 4) + '">-' + (hist.window_ms >= 60000 ? Math.round(hist.window_ms / 60000) + ' min' : Math.round(hist.window_ms / 1000) + ' s') + '</text>' +
    '<text x="' + (W - PAD) + '" y="' + (H - 4) + '" text-anchor="end">now</text>' + marks + paths + '</svg></div>';
}
function charts(p, hist) {
  if (!hist) return "";
  const seen = new Set(p.members.map((m) => m.address));
  for (const s of hist.samples) for (const a in s.members) seen.add(a);
  const members = [...seen];
  const legend = members.map((a, i) => '<span><i style="background:' + COLORS[i % COLORS.length] + '"></i>' + esc(a) + '</span>').join("") +
    Object.entries(EVENT_COLORS).map(([k, c]) => '<span><i style="background:' + c + '"></i>' + k + '</span>').join("");
  return '<div class="charts">' + chart("rps", p.name, hist, members, "Requests per second", "req/s") +
    chart("p99_ms", p.name, hist, members, "p99 latency", "ms") + '</div><div class="legend">' + legend + '</div>';
}
// Active health checks, next to the passive state: the last probe, its result, and the
// consecutive passes and failures (pools with health_check only).
function probeCells(m) {
  const a = m.active_health;
  if (!a) return "";
  const result = a.last_result === true ? "pass" : a.last_result === false ? "fail" : "-";
  return '<td data-probe="last">' + (a.last_probe ? esc(a.last_probe) : '-') + '</td><td data-probe="result">' + result +
    '</td><td data-probe="passes">' + a.passes + '</td><td data-probe="fails">' + a.fails + '</td>';
}
let history = null;
function render(data) {
  const root = document.getElementById("pools");
  const byPool = {};
  if (history) for (const h of history.pools) byPool[h.name] = { ...h, now: history.now, window_ms: history.window_ms };
  root.innerHTML = data.upstreams.map((p) => {
    const rows = p.members.map((m) => '<tr data-member="' + esc(m.address) + '">' +
      '<td>' + esc(m.address) + '</td><td><span class="state ' + esc(m.state) + '">' + esc(m.state) + '</span></td>' +
      '<td>' + m.weight + '</td><td>' + m.in_flight + '</td><td>' + m.failures + '</td>' +
      '<td>' + (m.ejected_until ? esc(m.ejected_until) : '-') + '</td>' +
      '<td>' + m.requests["2xx"] + '</td><td>' + m.requests["3xx"] + '</td><td>' + m.requests["4xx"] + '</td>' +
      '<td>' + m.requests["5xx"] + '</td><td>' + m.requests.error + '</td>' + probeCells(m) + '</tr>').join("");
    const probed = p.members.some((m) => m.active_health);
    return '<section data-pool="' + esc(p.name) + '"><h2>' + esc(p.name) + '</h2>' +
      '<div class="settings">' + esc(p.balance) + ' · members from ' + esc(p.members_from) + ' · retries ' + p.retries +
      ' · ' + p.members.length + ' members' + (p.source ? ' · source ' + esc(p.source) : '') +
      (p.last_error ? ' · last error ' + esc(p.last_error) : '') + '</div>' + charts(p, byPool[p.name]) +
      (p.members.length === 0 ? '<div class="empty">No members: requests get 503</div>' :
      '<div class="scroll"><table><thead><tr><th>Member</th><th>State</th><th>Weight</th><th>In flight</th>' +
      '<th>Failures</th><th>Ejected until</th><th>2xx</th><th>3xx</th><th>4xx</th><th>5xx</th><th>Errors</th>' +
      (probed ? '<th>Last probe</th><th>Probe result</th><th>Passes</th><th>Fails</th>' : '') + '</tr></thead>' +
      '<tbody>' + rows + '</tbody></table></div>') + '</section>';
  }).join("") || "<p>No pools configured.</p>";
}
const size = (n) => n >= 1048576 ? (n / 1048576).toFixed(1) + " MiB" : n >= 1024 ? (n / 1024).toFixed(1) + " KiB" : n + " B";
const pct = (r) => (r * 100).toFixed(1) + "%";
function renderCache(c) {
  const rows = c.applications.map((a) => '<tr data-app="' + esc(a.tenant + "/" + a.app) + '"><td>' + esc(a.tenant) + '</td><td>' + esc(a.app) +
    '</td><td>' + a.objects + '</td><td>' + size(a.bytes) + '</td><td>' + pct(a.hit_ratio) + '</td></tr>').join("");
  document.getElementById("cache-body").innerHTML =
    '<div class="settings">' + c.objects + ' objects · ' + size(c.bytes) + ' of ' + size(c.max_size) +
    ' · ' + c.evictions + ' evictions · hit ratio ' + pct(c.hit_ratio) + '</div>' +
    (rows === "" ? "<p>No application uses the cache.</p>" :
    '<div class="scroll"><table><thead><tr><th>Tenant</th><th>Application</th><th>Objects</th><th>Bytes</th><th>Hit ratio</th></tr></thead>' +
    '<tbody>' + rows + '</tbody></table></div>');
}
async function refresh() {
  try {
    const h = await fetch("../v1/history/upstreams", { cache: "no-store" });
    if (h.ok) history = await h.json();
    const r = await fetch("../v1/upstreams", { cache: "no-store" });
    render(await r.json());
    const c = await fetch("../v1/cache", { cache: "no-store" });
    renderCache(await c.json());
    document.getElementById("meta").textContent = "Updated " + new Date().toLocaleTimeString() + " · refreshes every 2 s";
  } catch (e) {
    document.getElementById("meta").textContent = "Cannot reach the admin API: " + e;
  }
}
refresh();
setInterval(refresh, 2000);
</script>
</body>
</html>
`;

export function consolePage(): string {
  return PAGE;
}
