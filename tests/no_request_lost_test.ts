import assert from "node:assert/strict";
import {
  adminFetch,
  app,
  members as memberList,
  proxy,
  scalwsYaml,
  sleep,
  startMembers,
  startScalwsd,
} from "./_support/mod.ts";

Deno.test("steady load loses no request while members are replaced every 100 ms and the config reloads", async () => {
  await using members = startMembers(Array.from({ length: 6 }, (_, i) => `m${i}`));
  const yaml = (retries: number) =>
    scalwsYaml({
      server: { default_host: "a.test" },
      upstreams: {
        dyn: {
          members_from: "api",
          balance: "round_robin",
          retries,
          members: memberList(members[0]),
        },
        steady: { members: memberList(members[4], members[5]) },
      },
      apps: [app(proxy("dyn"), { routes: [{ path: "/steady", runtime: proxy("steady") }] })],
    });
  await using s = await startScalwsd(yaml(1));
  const sock = s.adminSocket;
  let stop = false;
  let ok = 0;
  const failures: string[] = [];
  const deadline = Date.now() + 10_000;
  const load = async (path: string) => {
    while (!stop && Date.now() < deadline) {
      try {
        const r = await fetch(s.url + path);
        const text = await r.text();
        if (r.status === 200 && text.startsWith("m")) ok++;
        else failures.push(`${r.status} ${text}`);
      } catch (err) {
        failures.push(String(err));
      }
    }
  };
  try {
    const loops = [load("/"), load("/"), load("/"), load("/steady")];
    let last: string[] = [];
    for (let i = 0; i < 20; i++) {
      // Every PUT keeps at least one member and moves the rest around.
      const pick = members.slice(0, 4).filter((_, j) => j === i % 4 || (i + j) % 3 === 0);
      last = pick.map((m) => m.address);
      const r = await adminFetch(sock, "/v1/upstreams/dyn", {
        method: "PUT",
        body: JSON.stringify({ members: pick.map((m) => ({ address: m.address })) }),
      });
      assert.equal(r.status, 200);
      if (i % 5 === 4) {
        await s.write(yaml(i % 10 === 4 ? 2 : 1));
        assert.equal((await adminFetch(sock, "/v1/reload", { method: "POST" })).status, 200);
      }
      await sleep(100);
    }
    stop = true;
    await Promise.all(loops);
    assert.deepEqual(failures, []);
    assert.ok(ok > 100, `only ${ok} requests`);
    const view = await (await adminFetch(sock, "/v1/upstreams/dyn")).json();
    assert.deepEqual(view.members.map((m: { address: string }) => m.address), last);
  } finally {
    stop = true;
  }
});
