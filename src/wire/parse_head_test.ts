/**
 * Unit tests of the shared head scanning (`parse_head.ts`): `findHeadEnd`'s stale-buffer guard,
 * the field-line spans and fault codes, the Content-Length grammar's codes, `ListCursor` and
 * `CommonNames`. The fuzz slice (`fuzz_test.ts`) compares the same code with a reference.
 */

import assert from "node:assert/strict";
import {
  CommonNames,
  FIELD_BLANK_CR,
  FIELD_FOLDED,
  FIELD_NAME,
  FIELD_NAME_EMPTY,
  FIELD_TOO_MANY,
  FIELD_VALUE_BYTE,
  FIELD_VALUE_CR,
  FieldLines,
  findHeadEnd,
  LENGTH_DIFFERENT,
  LENGTH_INVALID,
  LENGTH_TOO_LONG,
  ListCursor,
  readContentLength,
  scanFieldLines,
} from "./mod.ts";
import { bytesOf as bytes } from "../../tests/_support/bytes.ts";

Deno.test("findHeadEnd never reads past `end` (stale bytes of an earlier message)", () => {
  const buf = bytes("X: 1\r\n\r\n\r\n");
  assert.equal(findHeadEnd(buf, 0, 4), ~3);
  assert.equal(findHeadEnd(buf, 6, 6), ~6);
  assert.equal(findHeadEnd(buf, 0, buf.length), 8);
});

Deno.test("scanFieldLines records trimmed spans and the end", () => {
  const text = "Host: a\r\nx-y:\t v 1 \nZ:\r\n\r\nrest";
  const lines = new FieldLines(4);
  assert.equal(scanFieldLines(bytes(text), 0, lines), 3);
  const got = [];
  for (let i = 0; i < 3; i++) {
    const s = lines.spans;
    got.push([
      text.slice(s[i * 4], s[i * 4 + 1]),
      text.slice(s[i * 4 + 2], s[i * 4 + 3]),
    ]);
  }
  assert.deepEqual(got, [["Host", "a"], ["x-y", "v 1"], ["Z", ""]]);
  assert.equal(lines.end, text.length - 4);
  assert.ok(lines.high < 0x80);
  assert.ok(scanFieldLines(bytes("X: caf\xe9\r\n\r\n"), 0, lines) === 1 && lines.high >= 0x80);
});

Deno.test("scanFieldLines names the first fault", () => {
  const cases: [string, number][] = [
    [" X: a\r\n\r\n", FIELD_FOLDED],
    [": a\r\n\r\n", FIELD_NAME_EMPTY],
    ["X a\r\n\r\n", FIELD_NAME],
    ["X : a\r\n\r\n", FIELD_NAME],
    ["X: a\rb\r\n\r\n", FIELD_VALUE_CR],
    ["X: a\x00\r\n\r\n", FIELD_VALUE_BYTE],
    ["X: a\r\n\rX", FIELD_BLANK_CR],
    ["A: 1\r\nB: 2\r\nC: 3\r\n\r\n", FIELD_TOO_MANY],
  ];
  for (const [text, code] of cases) {
    assert.equal(scanFieldLines(bytes(text), 0, new FieldLines(2)), code, JSON.stringify(text));
  }
});

Deno.test("readContentLength tells invalid, too long and different apart", () => {
  assert.equal(readContentLength(" 12 , 12 "), 12);
  assert.equal(readContentLength("1x"), LENGTH_INVALID);
  assert.equal(readContentLength("1234567890123456"), LENGTH_TOO_LONG);
  assert.equal(readContentLength("1, 2"), LENGTH_DIFFERENT);
});

Deno.test("ListCursor walks elements without OWS and skips empty ones", () => {
  const value = " a ,, b\t,c ,";
  const c = new ListCursor().reset(value);
  const got = [];
  while (c.next()) got.push(value.slice(c.from, c.to));
  assert.deepEqual(got, ["a", "b", "c"]);
  assert.equal(new ListCursor().reset("").next(), false);
});

Deno.test("CommonNames hands out the interned name in any case, and nothing else", () => {
  const names = new CommonNames(["host", "content-type"]);
  const b = bytes("HoSt Content-Type hosts");
  assert.equal(names.find(b, 0, 4), "host");
  assert.equal(names.find(b, 5, 12), "content-type");
  assert.equal(names.find(b, 18, 5), undefined);
});
