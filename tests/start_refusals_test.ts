/**
 * What a newcomer meets when `scalwsd run` cannot start: each refusal exits 1 and names what
 * was wrong and where. A listener whose port is taken names the file, line and column of its
 * address; a port below 1024 refused for want of permission says what grants it; an admin
 * socket another scalwsd still serves is refused (it used to be removed and taken over, leaving
 * the running instance unreachable by `scalwsd ctl`), and a path that is not a socket is left;
 * a missing directory of the admin socket or of the access log file is named.
 */
import assert from "node:assert/strict";
import { adminFetch, app, respond, scalwsYaml, startScalwsd } from "./_support/mod.ts";
import { MAIN, RUN_FLAGS } from "./_support/controller.ts";
import { bindHint } from "../src/server/bind_hint.ts";

/** Runs `scalwsd run` on `yaml` written to `dir/scalws.yaml`; at most 20 s. */
async function runFails(dir: string, yaml: string): Promise<{ code: number; err: string }> {
  const file = `${dir}/scalws.yaml`;
  await Deno.writeTextFile(file, yaml);
  const out = await new Deno.Command(Deno.execPath(), {
    args: [...RUN_FLAGS, MAIN, "run", "--config", file],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
    signal: AbortSignal.timeout(20_000),
  }).output();
  return { code: out.code, err: new TextDecoder().decode(out.stderr) };
}

Deno.test("a listener whose port is taken names the file, line and column of its address", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-refusal-" });
  using busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (busy.addr as Deno.NetAddr).port;
  try {
    const yaml = [
      "server:",
      "  listeners:",
      `    - { name: web, address: "127.0.0.1:${port}" }`,
      "tenants:",
      "  - name: t",
      "    applications:",
      '      - { name: a, domains: [a.test], runtime: { type: respond, body: "x" } }',
      "",
    ].join("\n");
    const { code, err } = await runFails(dir, yaml);
    assert.equal(code, 1, err);
    assert.ok(
      err.includes(
        `${dir}/scalws.yaml:3:29: server.listeners[0].address: listener "web" on ` +
          `127.0.0.1:${port}: Address already in use`,
      ),
      err,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a port below 1024 refused for want of permission says what grants it", () => {
  const denied = new Deno.errors.PermissionDenied("Permission denied (os error 13)");
  assert.match(bindHint(denied, 80), /port below 1024 needs root or the CAP_NET_BIND_SERVICE/);
  assert.equal(bindHint(denied, 8080), "");
  assert.equal(bindHint(new Deno.errors.AddrInUse("in use"), 80), "");
});

Deno.test("an admin socket another scalwsd serves is refused and keeps serving it", async () => {
  await using s = await startScalwsd(scalwsYaml({ apps: [app(respond("a"))] }));
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-refusal-" });
  try {
    const { code, err } = await runFails(
      dir,
      scalwsYaml({ server: { admin: { socket: s.adminSocket } }, apps: [app(respond("b"))] }),
    );
    assert.equal(code, 1, err);
    assert.ok(
      err.includes(`admin socket ${s.adminSocket}: another process listens there`),
      err,
    );
    const live = await adminFetch(s.adminSocket, "/livez");
    assert.equal(live.status, 200);
    await live.body?.cancel();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an admin socket path that is not a socket is refused and left as it is", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-refusal-" });
  try {
    const path = `${dir}/scalws.yaml.bak`;
    await Deno.writeTextFile(path, "keep me");
    const { code, err } = await runFails(
      dir,
      scalwsYaml({ server: { admin: { socket: path } }, apps: [app(respond("b"))] }),
    );
    assert.equal(code, 1, err);
    assert.ok(err.includes(`admin socket ${path}: the path exists and is not a socket`), err);
    assert.equal(await Deno.readTextFile(path), "keep me");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an admin socket in a directory that does not exist names the directory", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-refusal-" });
  try {
    const { code, err } = await runFails(
      dir,
      scalwsYaml({
        server: { admin: { socket: `${dir}/run/admin.sock` } },
        apps: [app(respond("b"))],
      }),
    );
    assert.equal(code, 1, err);
    assert.ok(
      err.includes(`admin socket ${dir}/run/admin.sock: directory "${dir}/run" does not exist`),
      err,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an access log in a directory that does not exist is refused by check and at start, placed", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-refusal-" });
  try {
    const yaml = [
      "server:",
      '  listeners: [{ name: http, address: "127.0.0.1:0" }]',
      "  access_log: logs/access.log",
      "tenants:",
      "  - name: t",
      "    applications:",
      '      - { name: a, domains: [a.test], runtime: { type: respond, body: "x" } }',
      "",
    ].join("\n");
    const want =
      `${dir}/scalws.yaml:3:15: server.access_log: directory "${dir}/logs" does not exist`;
    const started = await runFails(dir, yaml);
    assert.equal(started.code, 1, started.err);
    assert.ok(started.err.includes(want), started.err);
    const checked = await new Deno.Command(Deno.execPath(), {
      args: [...RUN_FLAGS, MAIN, "check", "--config", `${dir}/scalws.yaml`],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(checked.stdout) +
      new TextDecoder().decode(checked.stderr);
    assert.equal(checked.code, 1, text);
    assert.ok(text.includes(want), text);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the demo of deno task start, its member's port taken, says so in one line", async () => {
  // Held here when free; when another program (a running demo) holds it, the same is expected.
  let held: Deno.Listener | undefined;
  try {
    held = Deno.listen({ hostname: "127.0.0.1", port: 9101 });
  } catch { /* taken already */ }
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [...RUN_FLAGS, new URL("../examples/demo.ts", import.meta.url).pathname],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
      signal: AbortSignal.timeout(20_000),
    }).output();
    const err = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 1, err);
    assert.match(
      err,
      /^demo: member a cannot listen on 127\.0\.0\.1:9101: Address already in use/m,
    );
    assert.doesNotMatch(err, /Uncaught/);
  } finally {
    held?.close();
  }
});

Deno.test("a metrics address that is taken names the file, line and column of the key", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-refusal-" });
  using busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (busy.addr as Deno.NetAddr).port;
  try {
    const yaml = [
      "server:",
      '  listeners: [{ name: http, address: "127.0.0.1:0" }]',
      `  metrics: { address: "127.0.0.1:${port}" }`,
      "tenants:",
      "  - name: t",
      "    applications:",
      '      - { name: a, domains: [a.test], runtime: { type: respond, body: "x" } }',
      "",
    ].join("\n");
    const { code, err } = await runFails(dir, yaml);
    assert.equal(code, 1, err);
    assert.ok(
      err.includes(
        `${dir}/scalws.yaml:3:23: server.metrics.address: metrics listener 127.0.0.1:${port}: ` +
          "Address already in use",
      ),
      err,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
