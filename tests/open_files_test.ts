import assert from "node:assert/strict";
import { checkFile } from "../cli/check.ts";

Deno.test("scalwsd check warns when max_connections exceeds the open-file limit", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/c.yaml`;
    await Deno.writeTextFile(
      file,
      `server:
  listeners: [{name: http, address: "127.0.0.1:0"}]
  limits: {max_connections: 9000000}
tenants:
  - name: t
    applications:
      - {name: a, domains: [a.test], runtime: {type: respond, body: "a"}}
`,
    );
    const r = await checkFile(file);
    assert.deepEqual(r.errors, []);
    assert.equal(r.warnings.length, 1, r.warnings.join("\n"));
    assert.match(r.warnings[0], /: warning: server\.limits\.max_connections: 9000000 connections/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
