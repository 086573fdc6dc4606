import assert from "node:assert/strict";
import { ConfigError } from "./errors.ts";
import { configFromData, loadConfig, parseConfig } from "./load.ts";
import { base, COMPLETE_EXAMPLE } from "./_load_test_doc.ts";

Deno.test("a 10,000-member pool is checked without a quadratic blow-up", () => {
  const doc = base();
  doc.upstreams.api.members = Array.from({ length: 10_000 }, (_, i) => ({
    address: `10.0.${i >> 8}.${i & 255}:8080`,
    weight: (i % 10) + 1,
  }));
  const started = performance.now();
  const { config } = configFromData(doc, "big.yaml");
  const elapsed = performance.now() - started;
  const members = config.upstreams.api.members;
  assert.equal(members.length, 10_000);
  assert.deepEqual([members[9_999].address, members[9_999].weight], ["10.0.39.15:8080", 10]);
  assert.ok(Object.isFrozen(members[9_999]));
  // About 30 ms on an idle 2-core box. Speed is measured by benches, not here: this bound only
  // catches a quadratic blow-up (seconds), never a busy machine.
  assert.ok(elapsed < 5_000, `took ${elapsed.toFixed(0)} ms`);
});

Deno.test("a YAML file with a 10,000-member pool loads", () => {
  let text = 'server:\n  listeners: [{name: http, address: "127.0.0.1:8080"}]\n' +
    "upstreams:\n  big:\n    members:\n";
  for (let i = 0; i < 10_000; i++) {
    text += `      - address: "10.0.${i >> 8}.${i & 255}:8080"\n        weight: ${(i % 10) + 1}\n`;
  }
  const started = performance.now();
  const { config } = parseConfig(text, "big.yaml");
  const elapsed = performance.now() - started;
  assert.equal(config.upstreams.big.members.length, 10_000);
  // 0.2-0.5 s on an idle 2-core box, nearly all in the yaml package's parser; the bound only
  // catches a quadratic blow-up, never a busy machine (3.6 s was seen at a load of 15).
  assert.ok(elapsed < 20_000, `took ${elapsed.toFixed(0)} ms`);
});

Deno.test("loadConfig reads a file and names it; an unreadable file is a ConfigError", async () => {
  const file = await Deno.makeTempFile({ suffix: ".yaml" });
  try {
    await Deno.writeTextFile(file, COMPLETE_EXAMPLE);
    const { config } = await loadConfig(file);
    assert.equal(config.file, file);
    assert.equal(config.tenants[0].applications.length, 2);
    await Deno.writeTextFile(file, "server: {listeners: []}\n");
    await assert.rejects(() => loadConfig(file), (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.equal(e.message, `${file}:1:21: server.listeners: at least one listener is required`);
      return true;
    });
  } finally {
    await Deno.remove(file);
  }
  const missing = `${file}.missing`;
  await assert.rejects(() => loadConfig(missing), (e: unknown) => {
    assert.ok(e instanceof ConfigError);
    assert.equal(e.errors.length, 1);
    assert.match(e.errors[0], /^cannot read file: /);
    return true;
  });
});
