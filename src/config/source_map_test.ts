import assert from "node:assert/strict";
import { parsePath, placeProblem, SourceMap } from "./source_map.ts";

const TEXT = `server:
  listeners:
    - name: http
      address: "127.0.0.1:8080"
upstreams:
  api:
    balanse: round_robin
    members: [{address: "127.0.0.1:9000", weight: 5000}]
    headers: {X-A.b: "1"}
`;

Deno.test("parsePath splits a formatted path and refuses other text", () => {
  assert.deepEqual(parsePath("upstreams.api.members[1].weight"), [
    "upstreams",
    "api",
    "members",
    1,
    "weight",
  ]);
  assert.deepEqual(parsePath("(root)"), []);
  assert.deepEqual(parsePath("tenants[0][2]"), ["tenants", 0, 2]);
  assert.equal(parsePath("line 3, column 1"), undefined);
  assert.equal(parsePath("cannot read file"), undefined);
  assert.equal(parsePath("a..b"), undefined);
});

Deno.test("SourceMap.locate gives the line and column of a value, a key, or the mapping that lacks a key", () => {
  const map = SourceMap.of(TEXT);
  assert.deepEqual(map.locate(["server", "listeners", 0, "address"]), { line: 4, col: 16 });
  assert.deepEqual(map.locate(["upstreams", "api", "members", 0, "weight"]), { line: 8, col: 51 });
  // An unknown key: the key itself.
  assert.deepEqual(map.locate(["upstreams", "api"], "balanse"), { line: 7, col: 5 });
  // A required key that is missing: the mapping that lacks it.
  assert.deepEqual(map.locate(["server", "listeners", 0, "tls"]), { line: 3, col: 7 });
  // More than the last key missing: no place rather than a wrong one.
  assert.equal(map.locate(["tenants", 0, "name"]), undefined);
  // A key with a dot in it.
  assert.deepEqual(map.locate(["upstreams", "api", "headers", "X-A", "b"]), { line: 9, col: 22 });
});

Deno.test("placeProblem writes FILE:LINE:COLUMN: PATH: MESSAGE, or FILE: when the place is unknown", () => {
  const map = SourceMap.of(TEXT);
  assert.equal(
    placeProblem("a.yaml", 'upstreams.api: unknown key "balanse"; did you mean "balance"?', map),
    'a.yaml:7:5: upstreams.api: unknown key "balanse"; did you mean "balance"?',
  );
  assert.equal(
    placeProblem("a.yaml", "upstreams.api.members[0].weight: must be between 1 and 1000", map),
    "a.yaml:8:51: upstreams.api.members[0].weight: must be between 1 and 1000",
  );
  assert.equal(
    placeProblem("a.yaml", "line 3, column 1: Tabs are not allowed as indentation", map),
    "a.yaml:3:1: Tabs are not allowed as indentation",
  );
  assert.equal(
    placeProblem("a.yaml", "cannot read file: gone", map),
    "a.yaml: cannot read file: gone",
  );
  assert.equal(placeProblem("a.yaml", "x.y: bad", undefined), "a.yaml: x.y: bad");
  assert.equal(
    placeProblem("a.yaml", "upstreams.api.members[0].weight: odd", map, "warning: "),
    "a.yaml:8:51: warning: upstreams.api.members[0].weight: odd",
  );
});
