import assert from "node:assert/strict";
import { startScalwsd } from "./scalwsd.ts";
import { startMember, startMembers } from "./members.ts";
import { adminFetch, get } from "./http.ts";
import { members, proxy, scalwsYaml } from "./yaml.ts";

async function refused(port: number): Promise<boolean> {
  try {
    (await Deno.connect({ hostname: "127.0.0.1", port })).close();
    return false;
  } catch (err) {
    return err instanceof Deno.errors.ConnectionRefused;
  }
}

Deno.test("startScalwsd with await using: serves from scalwsYaml, then disposing closes all", async () => {
  let url: URL, dir: string, memberPorts: number[];
  {
    await using ms = startMembers(["a", "b"]);
    await using s = await startScalwsd(scalwsYaml({
      upstreams: { p: { members: members(...ms) } },
      apps: [{ name: "a", domains: ["a.test"], runtime: proxy("p") }],
    }));
    url = new URL(s.url);
    dir = s.dir;
    memberPorts = ms.map((m) => m.port);
    const seen = [
      (await get(s.url, { host: "a.test" })).text,
      (await get(s.url, { host: "a.test" })).text,
    ];
    assert.deepEqual(seen.sort(), ["a", "b"]);
    assert.equal((await adminFetch(s.adminSocket, "/livez")).status, 200);
  }
  assert.ok(await refused(Number(url.port)), "scalwsd's listener is closed");
  for (const p of memberPorts) assert.ok(await refused(p), `member on ${p} is closed`);
  await assert.rejects(() => Deno.stat(dir), Deno.errors.NotFound);
});

Deno.test("a member counts its requests and close() may come before disposing", async () => {
  await using m = startMember("a", (_req, self) => new Response(`#${self.count}`));
  await using s = await startScalwsd(scalwsYaml({
    server: { admin: undefined },
    apps: [{
      name: "a",
      domains: ["a.test"],
      runtime: { type: "proxy", upstream: `http://${m.address}` },
    }],
  }));
  assert.equal((await get(s.url, { host: "a.test" })).text, "#1");
  assert.equal((await get(s.url, { host: "a.test" })).text, "#2");
  await s.close();
  assert.equal(m.count, 2);
});

// Issue 12: every scalwsd a test starts is closed by `await using`, whether the test passed or
// not. A `const`/`let` holding one fails here, naming the line.
Deno.test("no end-to-end test holds a started scalwsd without await using", () => {
  const held = /^\s*(?:const|let)\s+[\w{}\s,]+=\s*await\s+startScalwsd(?:Process)?\(/;
  const found: string[] = [];
  const dir = new URL("../", import.meta.url);
  for (const e of Deno.readDirSync(dir)) {
    if (!e.isFile || !e.name.endsWith(".ts")) continue;
    Deno.readTextFileSync(new URL(e.name, dir)).split("\n").forEach((l, i) => {
      if (held.test(l)) found.push(`tests/${e.name}:${i + 1}: ${l.trim()}`);
    });
  }
  assert.deepEqual(found, [], "hold it with `await using`");
});
