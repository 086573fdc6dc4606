import assert from "node:assert/strict";
import bcrypt from "bcryptjs";
import { request, startScalwsd } from "./_support/mod.ts";
import { type Echo, echoMember, HOST, oneApp } from "./_support/policies.ts";

const basic = (user: string, password: string) => ({
  ...HOST,
  authorization: `Basic ${btoa(`${user}:${password}`)}`,
});

/** htpasswd lines with bcrypt cost 4 (tests only); `$2y$` as `htpasswd -B` writes it. */
function htpasswd(users: Record<string, string>): string {
  return Object.entries(users)
    .map(([u, p]) => `${u}:$2y$${bcrypt.hashSync(p, 4).slice(4)}`)
    .join("\n") + "\n";
}

Deno.test("basic_auth: 401 with the realm, bcrypt users, Authorization removed unless passed on", async () => {
  const m = echoMember();
  const dir = await Deno.makeTempDir();
  const users = `${dir}/users.htpasswd`;
  await Deno.writeTextFile(users, htpasswd({ alice: "wonder", bob: "b0b" }));
  await using s = await startScalwsd(oneApp(
    `{type: proxy, upstream: "http://${m.address}"}`,
    `        routes:
          - path: /admin
            policies: [{basic_auth: {realm: "Admin area", users_file: "${users}"}}]
          - path: /pass
            policies: [{basic_auth: {users_file: "${users}", pass_credentials: true}}]`,
  ));
  try {
    const none = await request(`${s.url}/admin`, { headers: HOST });
    assert.equal(none.status, 401);
    assert.equal(none.headers.get("www-authenticate"), 'Basic realm="Admin area"');
    const wrong = await request(`${s.url}/admin`, { headers: basic("alice", "nope") });
    assert.equal(wrong.status, 401);
    const unknown = await request(`${s.url}/admin`, { headers: basic("eve", "wonder") });
    assert.equal(unknown.status, 401);
    for (let i = 0; i < 2; i++) {
      const ok = await request(`${s.url}/admin/x`, { headers: basic("alice", "wonder") });
      assert.equal(ok.status, 200);
      assert.equal((JSON.parse(ok.text) as Echo).headers["authorization"], undefined);
    }
    const passed = await request(`${s.url}/pass`, { headers: basic("bob", "b0b") });
    assert.equal(passed.status, 200);
    const realm = await request(`${s.url}/pass`, { headers: HOST });
    assert.equal(realm.headers.get("www-authenticate"), 'Basic realm="Restricted"');
    assert.equal(
      (JSON.parse(passed.text) as Echo).headers["authorization"],
      `Basic ${btoa("bob:b0b")}`,
    );
    assert.equal(m.count, 3);
    assert.ok(s.logs.some((l) => l.includes('"basic_auth_failed"') && l.includes('"alice"')));

    // users_file is read again on reload.
    await Deno.writeTextFile(users, htpasswd({ alice: "changed" }));
    assert.equal((await s.server.reload()).ok, true);
    const old = await request(`${s.url}/admin`, { headers: basic("alice", "wonder") });
    assert.equal(old.status, 401);
    const now = await request(`${s.url}/admin`, { headers: basic("alice", "changed") });
    assert.equal(now.status, 200);
  } finally {
    await m.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("basic_auth: a burst of wrong passwords from one address is held back with 429", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/users`, htpasswd({ alice: "wonder" }));
  await using s = await startScalwsd(oneApp(
    `{type: respond, body: ok}`,
    `        policies: [{basic_auth: {realm: r, users_file: "${dir}/users"}}]`,
  ));
  await Deno.remove(dir, { recursive: true });
  const statuses: number[] = [];
  for (let i = 0; i < 11; i++) {
    statuses.push((await request(`${s.url}/`, { headers: basic("alice", `x${i}`) })).status);
  }
  assert.deepEqual(statuses, [401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 429]);
  // Held back: even the right password waits until the source may try again.
  const held = await request(`${s.url}/`, { headers: basic("alice", "wonder") });
  assert.equal(held.status, 429);
  assert.ok(Number(held.headers.get("retry-after")) >= 1);
  assert.ok(s.logs.some((l) => l.includes('"basic_auth_failed"') && l.includes('"held":true')));
});

Deno.test("basic_auth: {SHA}, MD5 and plain-text users_file entries are refused clearly", async () => {
  const { parseConfig } = await import("../src/config/load.ts");
  const { ConfigError } = await import("../src/config/errors.ts");
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/users`,
      "# users\nsha:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\nmd5:$apr1$x$y\nplain:secret\n",
    );
    parseConfig(
      oneApp(`{type: respond}`, `        policies: [{basic_auth: {users_file: users}}]`),
      `${dir}/scalws.yaml`,
    );
    assert.fail("accepted");
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    const P = "tenants[0].applications[0].policies[0].basic_auth.users_file";
    assert.deepEqual(e.errors, [
      `${P}: "users" line 2: user "sha": {SHA} hashes (unsalted SHA-1) are refused; use bcrypt (htpasswd -B)`,
      `${P}: "users" line 3: user "md5": MD5 hashes are refused; use bcrypt (htpasswd -B)`,
      `${P}: "users" line 4: user "plain": not a bcrypt hash ($2y$ or $2b$); use bcrypt (htpasswd -B)`,
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
