import assert from "node:assert/strict";
import {
  app,
  get,
  proxy,
  respond,
  scalwsYaml,
  sleep,
  startMember,
  tempDir,
} from "./_support/mod.ts";
import { freePort } from "./_support/ports.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

async function scalwsd(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", MAIN, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  return { code: out.code, stdout: d.decode(out.stdout), stderr: d.decode(out.stderr) };
}

Deno.test("scalwsd check prints ok for a valid file and every error with the file name otherwise", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  const good = `${dir}/good.yaml`;
  await Deno.writeTextFile(
    good,
    `
server:
  listeners: [{name: http, address: "127.0.0.1:8080"}]
upstreams:
  api: {members: [{address: "192.0.2.5:8080"}, {address: "192.0.2.6:8080", weight: 3}]}
tenants:
  - name: t
    applications:
      - {name: a, domains: [a.test], runtime: {type: proxy, upstream: {pool: api}}}
`,
  );
  let r = await scalwsd(["check", "--config", good]);
  assert.equal(r.code, 0);
  assert.equal(r.stdout.trim(), "ok");
  // `deno task run -- check ...` hands the `--` on: it is not a command.
  r = await scalwsd(["--", "check", "--config", good]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), "ok");

  const bad = `${dir}/bad.yaml`;
  await Deno.writeTextFile(
    bad,
    `
server:
  listeners: [{name: http, address: "127.0.0.1:8080"}]
upstreams:
  api: {members: [{address: "192.0.2.5:8080"}, {address: "192.0.2.6:8080", weight: 0}], retries: 6}
tenants:
  - name: t
    applications:
      - {name: a, domains: [a.test], runtime: {type: proxy, upstream: {pool: apii}}, colour: blue}
`,
  );
  r = await scalwsd(["check", "--config", bad]);
  assert.equal(r.code, 1);
  const lines = r.stderr.trim().split("\n");
  // FILE:LINE:COLUMN: key.path: message, the line and column of the offending value or key.
  assert.ok(
    lines.includes(`${bad}:5:84: upstreams.api.members[1].weight: must be between 1 and 1000`),
    r.stderr,
  );
  assert.ok(lines.some((l) => l.startsWith(`${bad}:5:98: upstreams.api.retries:`)), r.stderr);
  assert.ok(
    lines.some((l) =>
      l.startsWith(`${bad}:9:86: tenants[0].applications[0]`) && l.includes("colour")
    ),
    r.stderr,
  );
  assert.equal(r.stdout, "");

  r = await scalwsd(["check", "--config", `${dir}/missing.yaml`]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /missing\.yaml/);
});

Deno.test("scalwsd run serves, reloads on SIGHUP, answers ctl, and drains on SIGTERM", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  await using member = startMember("m", async (req) => {
    if (new URL(req.url).pathname === "/slow") await sleep(300);
    return new Response("member");
  });
  const port = freePort();
  const file = `${dir}/scalws.yaml`;
  const yaml = (body: string) =>
    scalwsYaml({
      server: {
        listeners: [{ name: "http", address: `127.0.0.1:${port}` }],
        admin: { socket: `${dir}/admin.sock` },
        access_log: "off",
      },
      upstreams: { dyn: { members_from: "api" } },
      apps: [app(respond(body), {
        routes: [
          { path: "/slow", runtime: { type: "proxy", upstream: `http://${member.address}` } },
          { path: "/dyn", runtime: proxy("dyn") },
        ],
      })],
    });
  await Deno.writeTextFile(file, yaml("one"));
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", MAIN, "run", "--config", file],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const events = new Response(child.stderr).text();
  const url = `http://127.0.0.1:${port}`;
  try {
    let up = false;
    for (let i = 0; i < 400 && !up; i++) {
      try {
        up = (await get(url + "/", { host: "a.test" })).text === "one";
      } catch {
        await sleep(50);
      }
    }
    assert.ok(up, "scalwsd answers");

    await Deno.writeTextFile(file, yaml("two"));
    child.kill("SIGHUP");
    let reloaded = false;
    for (let i = 0; i < 100 && !reloaded; i++) {
      reloaded = (await get(url + "/", { host: "a.test" })).text === "two";
      if (!reloaded) await sleep(50);
    }
    assert.ok(reloaded, "SIGHUP reloads");

    const sock = `${dir}/admin.sock`;
    let r = await scalwsd([
      "ctl",
      "--socket",
      sock,
      "upstreams",
      "set",
      "dyn",
      `${member.address}=3`,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      new RegExp(`${member.address.replaceAll(".", "\\.")}\\s+3\\s+0\\s+0\\s+healthy`),
    );
    r = await scalwsd(["ctl", "--socket", sock, "--json", "upstreams", "show", "dyn"]);
    assert.equal(JSON.parse(r.stdout).members[0].weight, 3);
    r = await scalwsd(["ctl", "--socket", sock, "upstreams"]);
    assert.match(r.stdout, /pool dyn/);
    r = await scalwsd(["ctl", "--socket", sock, "upstreams", "set", "dyn", `${member.address}=0`]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /400: members\[0\]\.weight: must be between 1 and 1000/);
    r = await scalwsd(["ctl", "--socket", sock, "upstreams", "show", "nope"]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /404/);
    r = await scalwsd(["ctl", "--socket", sock, "reload"]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /generation 3/);
    r = await scalwsd(["ctl", "--socket", `${dir}/nope.sock`, "upstreams"]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /cannot reach the admin socket/);
    assert.equal((await get(url + "/dyn", { host: "a.test" })).text, "member");

    // SIGTERM while a request is in flight: it finishes, then the process exits 0.
    const slow = get(url + "/slow", { host: "a.test" });
    await sleep(100);
    child.kill("SIGTERM");
    assert.equal((await slow).text, "member");
    const status = await child.status;
    assert.equal(status.code, 0);
    // The process gives memory back after bursts, with both parts (docs/operations.md, "Memory").
    const started = (await events).split("\n").filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l)).find((e) => e.event === "started");
    assert.deepEqual(started?.memory_release, ["gc", "malloc_trim"]);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* exited */ }
    await events.catch(() => {});
    await child.status;
  }
});

Deno.test("scalwsd gateway: --help, and refusals of missing or bad flags with exit 2", async () => {
  const help = await scalwsd(["gateway", "--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /--port-offset N/);
  assert.match(help.stdout, /scalwsd\.io\/gateway-controller/);
  const missing = await scalwsd(["gateway", "--config-out", "/tmp/x.yaml"]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /--base-config and --config-out are required/);
  const offset = await scalwsd([
    "gateway",
    "--base-config",
    "/tmp/b.yaml",
    "--config-out",
    "/tmp/x.yaml",
    "--port-offset=70000",
  ]);
  assert.equal(offset.code, 2);
  assert.match(offset.stderr, /--port-offset must be an integer 0\.\.65534/);
  await using tmp = await tempDir();
  const base = `${tmp.path}/base.yaml`;
  await Deno.writeTextFile(base, scalwsYaml({ server: { admin: undefined } }));
  const kube = await scalwsd([
    "gateway",
    "--base-config",
    base,
    "--config-out",
    `${tmp.path}/out.yaml`,
    "--kubeconfig",
    `${tmp.path}/none`,
  ]);
  assert.equal(kube.code, 1);
  assert.match(kube.stderr, /^scalwsd gateway: --kubeconfig \S+\/none: cannot read: No such file/);
});

Deno.test("scalwsd ctl --controller-socket scale without a count names what is missing", async () => {
  for (const args of [["scale"], ["scale", "1", "2"]]) {
    const r = await scalwsd(["ctl", "--controller-socket", "/nonexistent.sock", ...args]);
    assert.equal(r.code, 2);
    assert.equal(r.stderr.trim(), 'scalwsd ctl: scale: needs one instance count, as in "scale 3"');
  }
});

Deno.test("an unknown subcommand or flag is named, with the usage, and exits 2", async () => {
  const cases: [string[], string][] = [
    [["bogus"], 'scalwsd: unknown command "bogus"\nusage:'],
    [["--bogus"], "scalwsd: Unknown option '--bogus'\nusage:"],
    [["run", "--config", "x.yaml", "--bogus"], "scalwsd: Unknown option '--bogus'\nusage:"],
    [["ctl", "bogus"], 'scalwsd ctl: unknown command "bogus"\nusage: scalwsd ctl'],
    [["ctl", "--bogus", "upstreams"], "scalwsd ctl: Unknown option '--bogus'\nusage: scalwsd ctl"],
    [
      ["ctl", "upstreams", "set"],
      'scalwsd ctl: "upstreams set" does not fit; use upstreams set NAME ADDR[=WEIGHT]...\n',
    ],
    [
      ["ctl", "upstreams", "show"],
      'scalwsd ctl: "upstreams show" does not fit; use upstreams show NAME\n',
    ],
  ];
  for (const [args, head] of cases) {
    const r = await scalwsd(args);
    assert.equal(r.code, 2, args.join(" "));
    assert.ok(r.stderr.startsWith(head), `${args.join(" ")}: ${r.stderr.slice(0, 200)}`);
  }
});
