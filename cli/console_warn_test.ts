import assert from "node:assert/strict";
import { setLogSink } from "../src/observe/log.ts";
import { silenced, warningsToEventLog } from "./console_warn.ts";

Deno.test("console warnings: Deno's legacy-abort notice is dropped, any other is a deno_warning event", () => {
  // Deno 2.9.6's text (ext/http/00_serve.ts); a new wording shows up as a deno_warning again.
  const notice =
    "Deno.serve: request.signal aborts on successful responses (legacy behavior). To detect when a request has been fully delivered use the `completed` promise on the handler's info argument. Move cleanup to the handler's return path, or opt in to the new behavior with --unstable-no-legacy-abort. See https://docs.deno.com/go/unstable-no-legacy-abort";
  assert.equal(silenced(notice), true);
  const lines: string[] = [];
  const before = console.warn;
  setLogSink((l) => lines.push(l));
  try {
    warningsToEventLog();
    console.warn(notice);
    console.warn("something", "else");
  } finally {
    console.warn = before;
    setLogSink(null);
  }
  assert.equal(lines.length, 1);
  const e = JSON.parse(lines[0]);
  assert.deepEqual([e.level, e.event, e.message], ["warn", "deno_warning", "something else"]);
});
