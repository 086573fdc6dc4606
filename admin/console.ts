/**
 * The read-only Upstreams console: one self-contained page that polls `GET /v1/upstreams` and
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
</style>
</head>
<body>
<h1>Upstreams</h1>
<div class="meta" id="meta">loading…</div>
<div id="pools"></div>
<section id="cache"><h2>Cache</h2><div id="cache-body">loading…</div></section>
<script>
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({"&":"&amp;","<":"&lt;",">":"&gt;","\\"":"&quot;"}[c]));
function render(data) {
  const root = document.getElementById("pools");
  root.innerHTML = data.upstreams.map((p) => {
    const rows = p.members.map((m) => '<tr data-member="' + esc(m.address) + '">' +
      '<td>' + esc(m.address) + '</td><td><span class="state ' + esc(m.state) + '">' + esc(m.state) + '</span></td>' +
      '<td>' + m.weight + '</td><td>' + m.in_flight + '</td><td>' + m.failures + '</td>' +
      '<td>' + (m.ejected_until ? esc(m.ejected_until) : '-') + '</td>' +
      '<td>' + m.requests["2xx"] + '</td><td>' + m.requests["3xx"] + '</td><td>' + m.requests["4xx"] + '</td>' +
      '<td>' + m.requests["5xx"] + '</td><td>' + m.requests.error + '</td></tr>').join("");
    return '<section data-pool="' + esc(p.name) + '"><h2>' + esc(p.name) + '</h2>' +
      '<div class="settings">' + esc(p.balance) + ' · members from ' + esc(p.members_from) + ' · retries ' + p.retries +
      ' · ' + p.members.length + ' members</div>' +
      (p.members.length === 0 ? '<div class="empty">No members: requests get 503</div>' :
      '<div class="scroll"><table><thead><tr><th>Member</th><th>State</th><th>Weight</th><th>In flight</th>' +
      '<th>Failures</th><th>Ejected until</th><th>2xx</th><th>3xx</th><th>4xx</th><th>5xx</th><th>Errors</th></tr></thead>' +
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
