import assert from "node:assert/strict";
import { decodeMappings, inlineMap, sourceLine } from "./source_map.ts";

Deno.test("decodeMappings applies relative fields across segments and lines", () => {
  // "AAAA" = [0,0,0,0]; "IAAI" = [4,0,0,4]; "AACA" = [0,0,1,0]; "gBAAf" = [16,0,0,-15].
  const lines = decodeMappings("AAAA,IAAI;;AACA,gBAAf");
  assert.deepEqual(lines, [
    [{ genCol: 0, source: 0, line: 0, col: 0 }, { genCol: 4, source: 0, line: 0, col: 4 }],
    [],
    [{ genCol: 0, source: 0, line: 1, col: 4 }, { genCol: 16, source: 0, line: 1, col: -11 }],
  ]);
});

Deno.test("decodeMappings reads multi-digit values", () => {
  // "2HAAA" = genCol 123 (a continuation digit), line 0.
  assert.deepEqual(decodeMappings("2HAAA"), [[{ genCol: 123, source: 0, line: 0, col: 0 }]]);
});

Deno.test("sourceLine takes the last segment at or before the column", () => {
  const lines = decodeMappings("AAAA,UAAE;AAGA,UACA");
  assert.equal(sourceLine(lines, 0, 0), 0);
  assert.equal(sourceLine(lines, 0, 20), 0);
  assert.equal(sourceLine(lines, 1, 3), 3);
  assert.equal(sourceLine(lines, 1, 10), 4);
  assert.equal(sourceLine(lines, 5, 0), -1);
});

Deno.test("inlineMap decodes a base64 data URL source map", () => {
  const map = btoa(JSON.stringify({ version: 3, sources: ["a.ts"], mappings: "AAAA;AAEA" }));
  const code = `let a = 1;\nlet b = 2;\n//# sourceMappingURL=data:application/json;base64,${map}\n`;
  assert.equal(sourceLine(inlineMap(code)!, 1, 0), 2);
  assert.equal(inlineMap("let a = 1;\n"), undefined);
});
