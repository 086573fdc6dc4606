import assert from "node:assert/strict";
import type { Config } from "../config/types.ts";
import { ControlError } from "./control_error.ts";
import type { AdminRequest } from "./probe.ts";
import { MemberSync, type MemberTarget } from "./member_sync.ts";

// deno-lint-ignore no-explicit-any
const config = { upstreams: { api: { members_from: "api", scheme: "http" } } } as any as Config;

const target = (id: string, pid: number, state = "active"): MemberTarget => ({
  rec: { id, pid, generation: 1, state, admin_socket: `/run/${id}.sock` },
});

/** A fake admin transport: answers per socket, records every request. */
function fakeTransport(
  answer: (socket: string, req: AdminRequest) => { status: number; body: string },
) {
  const seen: { socket: string; req: AdminRequest }[] = [];
  const transport = (socket: string, req: AdminRequest) => {
    seen.push({ socket, req });
    return Promise.resolve(answer(socket, req));
  };
  return { seen, transport };
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-sync-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("MemberSync.set checks like an instance, records, and fans out with per-instance results", () =>
  withDir(async (dir) => {
    const { seen, transport } = fakeTransport((socket, req) => {
      if (socket === "/run/web-1.sock") throw new Error("connection refused");
      if (socket === "/run/web-2.sock") {
        return { status: 409, body: JSON.stringify({ error: "not under this controller" }) };
      }
      return { status: 200, body: JSON.stringify({ name: "api", echoed: req.body }) };
    });
    const sync = new MemberSync({ stateDir: dir, now: () => 0, transport });
    const targets = [
      target("web-0", 10),
      target("web-1", 11, "ready"),
      target("web-2", 12, "active"),
      target("web-3", 13, "draining"),
      // Its admin socket is not up before it is ready: it gets the lists before activation.
      target("web-4", 14, "warming"),
    ];
    const put = (name: string, text: string) =>
      sync.set({ name, text, config: () => Promise.resolve(config), targets: () => targets });
    await assert.rejects(put("nope", "{}"), (e) => e instanceof ControlError && e.status === 404);
    await assert.rejects(put("api", "{"), (e) => e instanceof ControlError && e.status === 400);
    assert.equal(seen.length, 0, "refused before anything is sent");

    const r = await put("api", JSON.stringify({ members: [{ address: "127.0.0.1:1" }] }));
    assert.equal(sync.members.version, 1);
    assert.deepEqual(seen.map((x) => x.socket), [
      "/run/web-0.sock",
      "/run/web-1.sock",
      "/run/web-2.sock",
    ]);
    assert.equal(seen[0].req.method, "PUT");
    assert.equal(seen[0].req.path, "/v1/upstreams/api");
    assert.equal(seen[0].req.headers?.["x-scalws-controller"], "1");
    assert.deepEqual(JSON.parse(seen[0].req.body!), {
      members: [{ address: "127.0.0.1:1", weight: 1 }],
    });
    assert.equal(r.name, "api");
    assert.deepEqual(r.instances, [
      { id: "web-0", generation: 1, state: "active", applied: true, status: 200 },
      { id: "web-1", generation: 1, state: "ready", applied: false, error: "connection refused" },
      {
        id: "web-2",
        generation: 1,
        state: "active",
        applied: false,
        status: 409,
        error: "not under this controller",
      },
    ]);
    // web-0 was in sync at version 0 (nothing set) and applied: it holds version 1.
    assert.equal(sync.inSync(targets[0]), true);
    assert.equal(sync.inSync(targets[1]), false);
  }));

Deno.test("MemberSync.sync brings an instance up to every list; 404 and 409 count as held", () =>
  withDir(async (dir) => {
    let status = 500;
    const { seen, transport } = fakeTransport(() => ({ status, body: "boom" }));
    const sync = new MemberSync({ stateDir: dir, now: () => 0, transport });
    const t = target("web-0", 10);
    assert.equal(await sync.sync(t), true, "nothing to hold yet");
    await sync.members.set("api", [{ address: "127.0.0.1:1", weight: 1 }] as never);
    await sync.members.set("b", [{ address: "127.0.0.1:2", weight: 1 }] as never);
    assert.equal(await sync.sync(t), false, "a 500 is not held");
    assert.equal(seen.length, 1, "stops at the first failure");
    status = 404;
    assert.equal(await sync.sync(t), true);
    assert.deepEqual(seen.slice(1).map((x) => x.req.path), [
      "/v1/upstreams/api",
      "/v1/upstreams/b",
    ]);
    assert.equal(await sync.sync(t), true);
    assert.equal(seen.length, 3, "an instance in sync is not sent anything");
    sync.prune([]);
    assert.equal(sync.inSync(t), false, "an ended process is forgotten");
    // Another process in the same slot does not inherit what the first held.
    status = 409;
    assert.equal(sync.inSync(target("web-0", 11)), false);
    assert.equal(await sync.sync(target("web-0", 11)), true);
  }));

Deno.test("MemberSync.view says whether the instances agree with the recorded lists", () =>
  withDir(async (dir) => {
    const pools = (a: string) => ({
      upstreams: [{ name: "api", members_from: "api", members: [{ address: a, weight: 1 }] }],
    });
    const { transport } = fakeTransport((socket) =>
      socket === "/run/web-1.sock"
        ? { status: 200, body: JSON.stringify(pools("127.0.0.1:9")) }
        : { status: 200, body: JSON.stringify(pools("127.0.0.1:1")) }
    );
    const sync = new MemberSync({ stateDir: dir, now: () => 0, transport });
    await sync.members.set("api", [{ address: "127.0.0.1:1", weight: 1 }] as never);
    const live = [target("web-0", 10), target("web-1", 11, "ready")];
    const v = await sync.view({
      id: "web-0",
      generation: 1,
      body: JSON.stringify(pools("127.0.0.1:1")),
    }, live);
    assert.equal(v.instance, "web-0");
    assert.equal(v.agree, false);
    assert.deepEqual(v.instances, [
      { id: "web-0", generation: 1, state: "active", agree: true, members_in_sync: false },
      { id: "web-1", generation: 1, state: "ready", agree: false, members_in_sync: false },
    ]);
    assert.deepEqual(
      (v.pools as { name: string; agree: boolean }[]).map((p) => [p.name, p.agree]),
      [
        ["api", false],
      ],
    );
  }));
