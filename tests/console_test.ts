import assert from "node:assert/strict";
import {
  ADMIN_SOCKET,
  adminFetch,
  app,
  get,
  proxy,
  scalwsYaml,
  startMember,
  startScalwsd,
  tempDir,
} from "./_support/mod.ts";
import { CHROMIUM, dumpDom, screenshot } from "./_support/chromium.ts";

Deno.test({
  name: "the Upstreams console renders every pool and member in a real browser",
  ignore: CHROMIUM === undefined,
  async fn() {
    await using a = startMember("a");
    await using s = await startScalwsd(scalwsYaml({
      server: {
        admin: { ...ADMIN_SOCKET, http: { address: "127.0.0.1:0" } },
        metrics: { address: "127.0.0.1:0" },
      },
      upstreams: {
        web: { members: [{ address: a.address, weight: 3 }, { address: "127.0.0.1:9" }] },
        canary: { members_from: "api" },
      },
      apps: [app(proxy("web"))],
    }));
    await using profileDir = await tempDir("scalwsd-chromium-");
    const profile = profileDir.path;
    const outDir = new URL("./out/", import.meta.url).pathname;
    await Deno.mkdir(outDir, { recursive: true });
    await adminFetch(s.adminSocket, "/v1/upstreams/canary", {
      method: "PUT",
      body: JSON.stringify({ members: [{ address: "127.0.0.1:10", weight: 7 }] }),
    });
    const port = s.admin.bound.get("http")!.port;
    const url = `http://127.0.0.1:${port}/console/`;
    // The DOM and a phone-sized screenshot from one Chromium start.
    const shot = `${outDir}console.png`;
    const html = await dumpDom(profile, url, 3000, { size: "390,844", file: shot });
    // Where the guide puts it: Monitor, Upstreams.
    assert.match(html, /<nav class="crumbs" aria-label="Section">Monitor › Upstreams<\/nav>/);
    assert.match(html, /<section data-pool="web">/);
    assert.match(html, /<section data-pool="canary">/);
    const row = (addr: string, weight: number) =>
      new RegExp(
        `<tr data-member="${addr}"><td>${addr}</td><td><span class="state healthy">healthy</span></td><td>${weight}</td>`,
      );
    assert.match(html, row(a.address, 3));
    assert.match(html, row("127.0.0.1:9", 1));
    assert.match(html, row("127.0.0.1:10", 7));
    assert.match(html, /Updated .* refreshes every 2 s/);

    assert.ok((await Deno.stat(shot)).size > 1000, "a phone-sized screenshot was written");

    const metricsPort = s.admin.bound.get("metrics")!.port;
    assert.equal(
      await fetch(`http://127.0.0.1:${metricsPort}/console/`).then(async (
        r,
      ) => (await r.body?.cancel(), r.status)),
      404,
    );
  },
});

Deno.test({
  name: "the console's Cache panel shows objects, bytes and hit ratio per application",
  ignore: CHROMIUM === undefined,
  async fn() {
    await using a = startMember(
      "a",
      () => new Response("cached body", { headers: { "cache-control": "max-age=60" } }),
    );
    await using s = await startScalwsd(`
server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
  admin:
    socket: "{{dir}}/admin.sock"
    http: {address: "127.0.0.1:0"}
upstreams:
  web: {members: [{address: "${a.address}"}]}
tenants:
  - name: t
    applications:
      - {name: a, domains: [a.test], runtime: {type: proxy, upstream: {pool: web}}, cache: {}}
`);
    for (let i = 0; i < 4; i++) await get(s.url + "/page", { host: "a.test" });
    await using profileDir = await tempDir("scalwsd-chromium-");
    const port = s.admin.bound.get("http")!.port;
    const html = await dumpDom(profileDir.path, `http://127.0.0.1:${port}/console/`);
    assert.match(html, /<section id="cache"><h2>Cache<\/h2>/);
    assert.match(html, /1 objects · \d+ B of 256\.0 MiB · 0 evictions · hit ratio 75\.0%/);
    assert.match(
      html,
      /<tr data-app="t\/a"><td>t<\/td><td>a<\/td><td>1<\/td><td>\d+ B<\/td><td>75\.0%<\/td><\/tr>/,
    );
  },
});

Deno.test({
  name:
    "the console charts requests per second and p99 per member with member changes, ejections and recoveries, on a phone and a desktop",
  ignore: CHROMIUM === undefined,
  async fn() {
    await using a = startMember("a");
    // b fails its first two answers (ejected, then ejected again on probation), then recovers.
    await using b = startMember(
      "b",
      (_req, m) => new Response("b", { status: m.count <= 2 ? 502 : 200 }),
    );
    await using s = await startScalwsd(
      scalwsYaml({
        server: { admin: { ...ADMIN_SOCKET, http: { address: "127.0.0.1:0" } } },
        upstreams: {
          web: {
            members_from: "api",
            members: [{ address: a.address }],
            passive_health: { failures: 1, cooldown: "150ms" },
            retries: 0,
          },
        },
        apps: [app(proxy("web"))],
      }),
      { historyIntervalMs: 500 },
    );
    await adminFetch(s.adminSocket, "/v1/upstreams/web", {
      method: "PUT",
      body: JSON.stringify({
        members: [{ address: a.address }, { address: b.address, weight: 2 }],
      }),
    });
    const until = Date.now() + 2_000;
    while (Date.now() < until || b.count < 3) {
      await get(s.url + "/", { host: "a.test" });
      await new Promise((r) => setTimeout(r, 10));
    }
    await new Promise((r) => setTimeout(r, 250));
    const h = await (await adminFetch(s.adminSocket, "/v1/history/upstreams")).json();
    assert.equal(h.interval_ms, 500);
    assert.equal(h.window_ms, 45_000);
    const web = h.pools.find((p: { name: string }) => p.name === "web");
    assert.deepEqual(
      web.events.map((e: { kind: string; member: string }) => `${e.kind} ${e.member}`),
      [
        `added ${b.address}`,
        `ejected ${b.address}`,
        `ejected ${b.address}`,
        `restored ${b.address}`,
      ],
    );
    assert.ok(web.samples.length >= 3 && web.samples.length <= 90, `${web.samples.length} samples`);
    assert.ok(
      web.samples.some((x: { members: Record<string, { rps: number }> }) =>
        x.members[a.address]?.rps > 0
      ),
    );

    // A trickle of requests while the browser looks, so the charts run up to "now" (bounded).
    let looking = true;
    const trickle = (async () => {
      for (let i = 0; looking && i < 3_000; i++) {
        await get(s.url + "/", { host: "a.test" });
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await using profileDir = await tempDir("scalwsd-chromium-");
    const url = `http://127.0.0.1:${s.admin.bound.get("http")!.port}/console/`;
    const outDir = new URL("./out/", import.meta.url).pathname;
    await Deno.mkdir(outDir, { recursive: true });
    // The DOM and the phone screenshot from one Chromium start; the desktop one after.
    const shots = [["phone", "390,844"], ["desktop", "1280,900"]]
      .map(([name, size]) => ({ name, size, file: `${outDir}console-charts-${name}.png` }));
    const html = await dumpDom(profileDir.path, url, 3000, shots[0]);
    for (const kind of ["rps", "p99_ms"]) {
      const svg = new RegExp(`<svg data-chart="${kind}" data-pool="web"[^>]*>(.*?)</svg>`, "s")
        .exec(html);
      assert.ok(svg, `the ${kind} chart of pool web`);
      assert.match(svg[1], new RegExp(`<path data-member="${a.address}" d="M[0-9.]+ [0-9.]+ L`));
      assert.match(svg[1], new RegExp(`<path data-member="${b.address}" d="M`));
      for (const e of ["added", "ejected", "restored"]) {
        assert.match(svg[1], new RegExp(`<line data-event="${e}"`), `${kind}: ${e} marked`);
      }
    }
    assert.match(html, /source api/);

    await screenshot(profileDir.path, url, shots[1].size, shots[1].file);
    for (const { name, file } of shots) {
      assert.ok((await Deno.stat(file)).size > 5_000, `a ${name} screenshot was written`);
    }
    looking = false;
    await trickle;
  },
});

Deno.test({
  name:
    "the console shows active health checks next to passive state: last probe, result, passes, fails",
  ignore: CHROMIUM === undefined,
  async fn() {
    await using a = startMember("a");
    await using s = await startScalwsd(scalwsYaml({
      server: { admin: { ...ADMIN_SOCKET, http: { address: "127.0.0.1:0" } } },
      upstreams: {
        checked: {
          members: [{ address: a.address }, { address: "127.0.0.1:9" }],
          health_check: { interval: "100ms", rise: 1, fall: 1 },
        },
        later: { members: [{ address: a.address }], health_check: { interval: "1h" } },
        plain: { members: [{ address: a.address }] },
      },
      apps: [app(proxy("checked"))],
    }));
    // Before its first probe a member's result is null (not left out), and the console says "-".
    const later = await (await adminFetch(s.adminSocket, "/v1/upstreams/later")).json();
    assert.deepEqual(later.members[0].active_health, {
      up: true,
      last_probe: null,
      last_result: null,
      passes: 0,
      fails: 0,
    });
    await using profileDir = await tempDir("scalwsd-chromium-");
    const port = s.admin.bound.get("http")!.port;
    const html = await dumpDom(profileDir.path, `http://127.0.0.1:${port}/console/`, 3000);
    const section = (name: string) =>
      html.match(new RegExp(`<section data-pool="${name}">.*?</section>`, "s"))![0];
    const checked = section("checked");
    assert.match(
      checked,
      /<th>Errors<\/th><th>Last probe<\/th><th>Probe result<\/th><th>Passes<\/th><th>Fails<\/th>/,
    );
    const cells = (addr: string) =>
      checked.match(new RegExp(`<tr data-member="${addr}">.*?</tr>`, "s"))![0];
    assert.match(
      cells(a.address),
      /<td data-probe="last">\d{4}-\d\d-\d\dT[\d:.]+Z<\/td><td data-probe="result">pass<\/td><td data-probe="passes">[1-9]\d*<\/td><td data-probe="fails">0<\/td>/,
    );
    assert.match(cells("127.0.0.1:9"), /<span class="state down">down<\/span>/);
    assert.match(
      cells("127.0.0.1:9"),
      /<td data-probe="result">fail<\/td><td data-probe="passes">0<\/td><td data-probe="fails">[1-9]\d*<\/td>/,
    );
    assert.match(
      section("later"),
      /<td data-probe="last">-<\/td><td data-probe="result">-<\/td><td data-probe="passes">0<\/td>/,
    );
    // A pool without health_check has no probe columns.
    assert.doesNotMatch(section("plain"), /Last probe|data-probe/);
  },
});
