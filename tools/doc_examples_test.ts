import assert from "node:assert/strict";
import { yamlBlocks } from "./doc_examples.ts";

Deno.test("yamlBlocks: yaml blocks with their line and kind; other languages skipped", () => {
  const md = [
    "# Title", //                       1
    "```yaml", //                       2
    "server: {}", //                    3
    "```", //                           4
    "```sh", //                         5
    "```yaml inside sh is text", //     6
    "```", //                           7
    "- item", //                        8
    "  ```yaml fragment", //            9
    "  runtime: { type: static }", //   10
    "    root: x", //                   11
    "  ```", //                         12
    "```yaml controller", //            13
    "state_dir: /run/x", //             14
    "```", //                           15
  ].join("\n");
  assert.deepEqual(yamlBlocks(md), [
    { line: 2, kind: "config", text: "server: {}\n" },
    { line: 9, kind: "fragment", text: "runtime: { type: static }\n  root: x\n" },
    { line: 13, kind: "controller", text: "state_dir: /run/x\n" },
  ]);
});

Deno.test("yamlBlocks: an unclosed block runs to the end", () => {
  assert.deepEqual(yamlBlocks("```yaml\na: 1"), [{ line: 1, kind: "config", text: "a: 1\n" }]);
});
