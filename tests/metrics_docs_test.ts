/**
 * docs/operations.md's Metrics section lists every family a live scalwsd exports on /metrics,
 * and nothing it does not export. Adding a family means adding its row there.
 */
import assert from "node:assert/strict";
import { app, respond, scalwsYaml, startScalwsd } from "./_support/mod.ts";

const DOC = new URL("../docs/operations.md", import.meta.url);

/** The family names written in backquotes in the doc's `## Metrics` section. */
function documented(): Set<string> {
  const text = Deno.readTextFileSync(DOC);
  const start = text.indexOf("\n## Metrics");
  assert.ok(start >= 0, "docs/operations.md has no ## Metrics section");
  const end = text.indexOf("\n## ", start + 1);
  const section = text.slice(start, end < 0 ? text.length : end);
  return new Set(
    [...section.matchAll(/`((?:scalws|process)_[a-z0-9_]+)`/g)].map((m) => m[1]),
  );
}

Deno.test("metrics docs: every family of /metrics is listed in docs/operations.md, and only those", async () => {
  await using s = await startScalwsd(scalwsYaml({
    server: { metrics: { address: "127.0.0.1:0" } },
    apps: [app(respond("ok"))],
  }));
  const port = s.admin.bound.get("metrics")!.port;
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const live = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));
  assert.ok(live.has("process_cpu_seconds_total") && live.has("scalws_config_generation"));
  assert.match(text, /^process_open_fds [1-9]\d*$/m);
  assert.match(text, /^process_max_fds [1-9]\d*$/m);
  assert.match(text, /^process_start_time_seconds 1\d{9}(\.\d+)?$/m);
  const docs = documented();
  const undocumented = [...live].filter((f) => !docs.has(f));
  assert.deepEqual(
    undocumented,
    [],
    `metric families exported on /metrics but missing from docs/operations.md's Metrics table: ${
      undocumented.join(", ")
    } (add a row for each: name and labels)`,
  );
  // process_open_fds and process_max_fds need Linux and --allow-ffi (the test runner has both).
  const gone = [...docs].filter((f) => !live.has(f));
  assert.deepEqual(
    gone,
    [],
    `docs/operations.md's Metrics section names families /metrics does not export: ${
      gone.join(", ")
    }`,
  );
});
