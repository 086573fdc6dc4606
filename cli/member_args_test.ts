import assert from "node:assert/strict";
import { parseMemberArg, parseMemberArgs } from "./member_args.ts";

Deno.test("parseMemberArg reads addr and addr=weight; a weight that is no integer is named", () => {
  assert.deepEqual(parseMemberArg("127.0.0.1:8080"), { address: "127.0.0.1:8080" });
  assert.deepEqual(parseMemberArg("[::1]:80=3"), { address: "[::1]:80", weight: 3 });
  assert.equal(
    parseMemberArg("a:1=x"),
    'invalid weight in "a:1=x": expected ADDR=WEIGHT with an integer weight',
  );
});

Deno.test("parseMemberArgs reads every argument or answers the first bad one's message", () => {
  assert.deepEqual(parseMemberArgs(["a:1", "b:2=5"]), [
    { address: "a:1" },
    { address: "b:2", weight: 5 },
  ]);
  assert.deepEqual(parseMemberArgs([]), []);
  assert.equal(
    parseMemberArgs(["a:1", "b:2=1.5", "c:3=x"]),
    'invalid weight in "b:2=1.5": expected ADDR=WEIGHT with an integer weight',
  );
});
