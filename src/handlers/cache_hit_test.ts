import assert from "node:assert/strict";
import { entryForTest } from "../cache/_entry_for_test.ts";
import { FrontAnswer } from "../front/answer.ts";
import { testExchange } from "../../tests/_support/test_exchange.ts";
import { hitAnswer } from "./cache_hit.ts";

function exchange(raw: boolean, headers: Record<string, string>, method = "GET") {
  return testExchange("/x", { host: "a.test", raw, headers, method });
}

const fields = (a: { headers: Headers | [string, string][] }) =>
  a.headers instanceof Headers ? Object.fromEntries(a.headers) : Object.fromEntries(a.headers);

Deno.test("hitAnswer: whole, 304 on a matching ETag, ranges with If-Range, HEAD", async () => {
  const e = entryForTest({
    size: 10,
    etag: '"v1"',
    headers: [["content-type", "text/plain"], ["etag", '"v1"']],
  });
  for (const raw of [true, false]) {
    const whole = hitAnswer(exchange(raw, {}), e, 7, "scalwsd; hit; ttl=53");
    assert.equal(whole instanceof FrontAnswer, raw);
    assert.equal(whole.status, 200);
    assert.equal(fields(whole).age, "7");
    assert.equal(fields(whole)["cache-status"], "scalwsd; hit; ttl=53");

    const ex304 = exchange(raw, { "if-none-match": '"v1"' });
    const nm = hitAnswer(ex304, e, 7, "s");
    assert.equal(nm.status, 304);
    assert.equal(nm.body, null);
    assert.equal(fields(nm).etag, '"v1"');
    assert.equal(fields(nm)["content-type"], undefined, "a 304 carries only its own fields");
    assert.equal(ex304.status, 304);

    const part = hitAnswer(exchange(raw, { range: "bytes=2-4", "if-range": '"v1"' }), e, 0, "s");
    assert.equal(part.status, 206);
    assert.equal(fields(part)["content-range"], "bytes 2-4/10");
    // A weak or other validator in If-Range: the whole answer.
    const other = hitAnswer(exchange(raw, { range: "bytes=2-4", "if-range": '"v2"' }), e, 0, "s");
    assert.equal(other.status, 200);
    const past = hitAnswer(exchange(raw, { range: "bytes=20-" }), e, 0, "s");
    assert.equal(past.status, 416);
    assert.equal(fields(past)["content-range"], "bytes */10");

    const exHead = exchange(raw, {}, "HEAD");
    const head = hitAnswer(exHead, e, 0, "s");
    assert.equal(head.body, null);
    assert.equal(fields(head)["content-length"], "10");
    assert.equal(exHead.bytes, 0);
  }
  const r = hitAnswer(exchange(false, { range: "bytes=2-4" }), e, 0, "s") as Response;
  assert.equal((await r.bytes()).length, 3);
});

Deno.test("hitAnswer: If-Modified-Since without Last-Modified or Date compares the time received", () => {
  // Received at 1_000_500 ms: the second 1_000_000 (an HTTP date has whole seconds).
  const e = entryForTest({ t: 1_000_500 });
  e.dateValue = NaN;
  const at = (ms: number) => new Date(ms).toUTCString();
  assert.equal(
    hitAnswer(exchange(true, { "if-modified-since": at(1_003_000) }), e, 0, "s").status,
    304,
  );
  assert.equal(
    hitAnswer(exchange(true, { "if-modified-since": at(1_000_000) }), e, 0, "s").status,
    304,
  );
  assert.equal(
    hitAnswer(exchange(true, { "if-modified-since": at(999_000) }), e, 0, "s").status,
    200,
  );
});
