/**
 * `server.state_dir`: the members an accepted `PUT` set survive a SIGKILL of the process; a
 * corrupt state file is reported and the pool starts from the configuration.
 */
import assert from "node:assert/strict";
import {
  adminFetch,
  get,
  members,
  proxy,
  scalwsYaml,
  startMembers,
  startScalwsd,
  waitUntil,
} from "./_support/mod.ts";
import { freePort } from "./_support/ports.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

/** scalwsd as a child process; `events` is its event log once it has exited. */
function spawn(file: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", MAIN, "run", "--config", file],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const events = new Response(child.stderr).text();
  return {
    child,
    events,
    async kill(): Promise<string> {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
      await child.status;
      return await events;
    },
  };
}

Deno.test("an api pool serves the list of the last PUT after scalwsd was killed with SIGKILL", async () => {
  await using ms = startMembers(["a", "b"]);
  const [a, b] = ms;
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-state-e2e-" });
  const port = freePort();
  const file = `${dir}/scalws.yaml`;
  const sock = `${dir}/admin.sock`;
  await Deno.writeTextFile(
    file,
    scalwsYaml({
      server: {
        listeners: [{ name: "http", address: `127.0.0.1:${port}` }],
        admin: { socket: sock },
        state_dir: `${dir}/state`,
        access_log: "off",
      },
      upstreams: { dyn: { members_from: "api", members: members(a) } },
      apps: [{ name: "a", domains: ["a.test"], runtime: proxy("dyn") }],
    }),
  );
  const url = `http://127.0.0.1:${port}/`;
  const answer = async () => {
    try {
      return (await get(url, { host: "a.test" })).text;
    } catch {
      return "";
    }
  };
  let proc = spawn(file);
  try {
    await waitUntil(async () => (await answer()) === "a", {
      what: "scalwsd serving",
      timeoutMs: 20_000,
      intervalMs: 50,
    });
    const put = await adminFetch(sock, "/v1/upstreams/dyn", {
      method: "PUT",
      body: JSON.stringify({ members: [{ address: b.address, weight: 2 }] }),
    });
    assert.equal(put.status, 200);
    // Killed the moment the answer arrived: the list must already be on disk.
    await proc.kill();
    const stored = JSON.parse(await Deno.readTextFile(`${dir}/state/upstreams/dyn.json`));
    assert.deepEqual(stored.members, [{ address: b.address, weight: 2 }]);
    assert.equal((await Deno.stat(`${dir}/state/upstreams/dyn.json`)).mode! & 0o777, 0o600);

    proc = spawn(file);
    await waitUntil(async () => (await answer()) !== "", {
      what: "restarted scalwsd serving",
      timeoutMs: 20_000,
      intervalMs: 50,
    });
    for (let i = 0; i < 4; i++) assert.equal(await answer(), "b");
    const view = await (await adminFetch(sock, "/v1/upstreams/dyn")).json();
    assert.deepEqual(view.members.map((m: { address: string }) => m.address), [b.address]);
    assert.equal(view.source, "api");
    assert.equal(view.updated_at, stored.updated, "the time of the PUT, read back");
    assert.equal(view.last_error, null);
    let events = await proc.kill();
    assert.match(events, /"event":"member_state_loaded","pool":"dyn","members":1/);

    // A corrupt state file is reported and ignored: the pool starts from the file's members.
    await Deno.writeTextFile(`${dir}/state/upstreams/dyn.json`, '{"pool": "dyn", "members": [');
    proc = spawn(file);
    await waitUntil(async () => (await answer()) !== "", {
      what: "restarted scalwsd serving",
      timeoutMs: 20_000,
      intervalMs: 50,
    });
    assert.equal(await answer(), "a");
    events = await proc.kill();
    assert.match(events, /"event":"member_state_ignored","pool":"dyn".*"error":"invalid JSON"/);
  } finally {
    await proc.kill();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a PUT whose list cannot be recorded answers 500 and changes nothing", async () => {
  await using ms = startMembers(["a", "b"]);
  const [a, b] = ms;
  // The state directory is the configuration file itself: no directory can be made there.
  await using s = await startScalwsd(scalwsYaml({
    server: { state_dir: "{{dir}}/scalws.yaml" },
    upstreams: { dyn: { members_from: "api", members: members(a) } },
    apps: [{ name: "a", domains: ["a.test"], runtime: proxy("dyn") }],
  }));
  const put = await adminFetch(s.adminSocket, "/v1/upstreams/dyn", {
    method: "PUT",
    body: JSON.stringify({ members: [{ address: b.address }] }),
  });
  assert.equal(put.status, 500);
  assert.match((await put.json()).error, /^cannot record the members: /);
  assert.equal((await get(s.url + "/", { host: "a.test" })).text, "a");
});

Deno.test("an api pool that a reload brings back starts from its recorded list, as a restart would", async () => {
  await using ms = startMembers(["a", "b"]);
  const [a, b] = ms;
  const yaml = (withPool: boolean) =>
    scalwsYaml({
      server: { state_dir: "{{dir}}/state" },
      upstreams: withPool
        ? { dyn: { members_from: "api", members: members(a) } }
        : { other: { members: members(a) } },
      apps: [{
        name: "a",
        domains: ["a.test"],
        runtime: proxy(withPool ? "dyn" : "other"),
      }],
    });
  await using s = await startScalwsd(yaml(true));
  const put = await adminFetch(s.adminSocket, "/v1/upstreams/dyn", {
    method: "PUT",
    body: JSON.stringify({ members: [{ address: b.address }] }),
  });
  assert.equal(put.status, 200);
  for (const withPool of [false, true]) {
    await s.write(yaml(withPool));
    const r = await adminFetch(s.adminSocket, "/v1/reload", { method: "POST" });
    assert.equal(r.status, 200, await r.text());
  }
  const pool = await (await adminFetch(s.adminSocket, "/v1/upstreams/dyn")).json();
  assert.deepEqual(pool.members.map((m: { address: string }) => m.address), [b.address]);
  assert.equal((await get(s.url + "/", { host: "a.test" })).text, "b");
});

Deno.test("under the controller an instance refuses a PUT with 409 naming the control socket, takes the controller's", async () => {
  await using ms = startMembers(["a", "b"]);
  const [a, b] = ms;
  await using s = await startScalwsd(
    scalwsYaml({
      server: { state_dir: "{{dir}}/state" },
      upstreams: { dyn: { members_from: "api", members: members(a) } },
      apps: [{ name: "a", domains: ["a.test"], runtime: proxy("dyn") }],
    }),
    { controllerSocket: "/run/scalws-controller/control.sock" },
  );
  const body = JSON.stringify({ members: [{ address: b.address }] });
  const refused = await adminFetch(s.adminSocket, "/v1/upstreams/dyn", { method: "PUT", body });
  assert.equal(refused.status, 409);
  assert.equal(
    (await refused.json()).error,
    "run-time members are set through the controller: PUT /v1/upstreams/dyn on its control socket /run/scalws-controller/control.sock",
  );
  const fromController = await adminFetch(s.adminSocket, "/v1/upstreams/dyn", {
    method: "PUT",
    body,
    headers: { "x-scalws-controller": "1" },
  });
  assert.equal(fromController.status, 200);
  assert.equal((await fromController.json()).source, "api");
  const ingress = await adminFetch(s.adminSocket, "/v1/upstreams/dyn", {
    method: "PUT",
    body,
    headers: { "x-scalws-controller": "1", "x-scalws-source": "kubernetes" },
  });
  assert.equal((await ingress.json()).source, "kubernetes");
  assert.equal((await get(s.url + "/", { host: "a.test" })).text, "b");
  // The controller records the lists; the instance writes no state of its own.
  await assert.rejects(Deno.stat(`${s.dir}/state/upstreams/dyn.json`), Deno.errors.NotFound);
});
