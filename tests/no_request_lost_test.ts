import assert from "node:assert/strict";
import { adminFetch, startMember, startScalwsd } from "./_harness.ts";

Deno.test("steady load loses no request while members are replaced every 100 ms and the config reloads", async () => {
  const members = Array.from({ length: 6 }, (_, i) => startMember(`m${i}`));
  const yaml = (retries: number) => `
server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
  admin: {socket: "{{dir}}/admin.sock"}
  default_host: a.test
upstreams:
  dyn:
    members_from: api
    balance: round_robin
    retries: ${retries}
    members: [{address: "${members[0].address}"}]
  steady:
    members: [{address: "${members[4].address}"}, {address: "${members[5].address}"}]
tenants:
  - name: t
    applications:
      - name: a
        domains: [a.test]
        runtime: {type: proxy, upstream: {pool: dyn}}
        routes:
          - {path: /steady, runtime: {type: proxy, upstream: {pool: steady}}}
`;
  const s = await startScalwsd(yaml(1));
  const sock = `${s.dir}/admin.sock`;
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
      await new Promise((r) => setTimeout(r, 100));
    }
    stop = true;
    await Promise.all(loops);
    assert.deepEqual(failures, []);
    assert.ok(ok > 100, `only ${ok} requests`);
    const view = await (await adminFetch(sock, "/v1/upstreams/dyn")).json();
    assert.deepEqual(view.members.map((m: { address: string }) => m.address), last);
  } finally {
    stop = true;
    await s.close();
    for (const m of members) await m.close();
  }
});
