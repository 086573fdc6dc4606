/**
 * docs/configuration.md documents every key of the configuration file, and no key the loader
 * does not take: its tables (a heading naming a mapping in backticks, then rows whose first
 * cell is a key in backticks) are compared with the zod schemas (`tools/config_keys.ts`).
 * docs/controller.md's example controller file names every key of the controller file.
 */
import assert from "node:assert/strict";
import { configKeys, controllerKeys } from "../tools/config_keys.ts";
import { yamlBlocks } from "../tools/doc_examples.ts";

const DOCS = new URL("../docs/", import.meta.url);

/**
 * Section -> keys in its tables, from headings such as "### `server.limits`"; a heading may
 * name several sections that share its table (`groups`: section -> the sections of its heading).
 */
function documentedKeys(
  markdown: string,
  groups = new Map<string, string[]>(),
): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  let sections: string[] = [];
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.trimStart().startsWith("```")) fenced = !fenced;
    if (fenced) continue;
    if (/^#+ /.test(line)) {
      sections = [...line.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
      for (const s of sections) {
        if (!out.has(s)) out.set(s, new Set());
        groups.set(s, sections);
      }
      continue;
    }
    const row = /^\|\s*`([^`]+)`/.exec(line);
    if (row !== null) { for (const s of sections) out.get(s)!.add(row[1]); }
  }
  return out;
}

Deno.test("documentedKeys: keys of tables under headings that name sections", () => {
  const md = "### `a`, `b`\n\n| Key | T |\n| --- | - |\n| `x` | t |\n## Other\n| `y` | t |\n" +
    "### `c`\n```\n| `z` | t |\n```\n| `w` | t |\n";
  assert.deepEqual(
    documentedKeys(md),
    new Map([["a", new Set(["x"])], ["b", new Set(["x"])], ["c", new Set(["w"])]]),
  );
});

Deno.test("docs/configuration.md documents every key of the schema, and only those", async () => {
  const groups = new Map<string, string[]>();
  const doc = documentedKeys(await Deno.readTextFile(new URL("configuration.md", DOCS)), groups);
  const schema = configKeys();
  const problems: string[] = [];
  for (const [section, keys] of schema) {
    const have = doc.get(section);
    if (have === undefined) {
      problems.push(
        `no section for \`${section}\` (keys ${keys.join(", ")}): add a heading ` +
          `### \`${section}\` and a table | Key | Type | Default | Example | with a row per key`,
      );
      continue;
    }
    for (const k of keys) {
      if (!have.has(k)) {
        problems.push(
          `\`${section}\`: key \`${k}\` is not documented: add a row | \`${k}\` | type | default | example |`,
        );
      }
    }
    const anyOfGroup = (groups.get(section) ?? [section]).flatMap((g) => schema.get(g) ?? []);
    for (const k of have) {
      if (!anyOfGroup.includes(k)) {
        problems.push(`\`${section}\`: \`${k}\` is documented but no such key`);
      }
    }
  }
  if (problems.length > 0) assert.fail(`docs/configuration.md:\n  ${problems.join("\n  ")}`);
});

Deno.test("docs/controller.md: the example controller file names every key", async () => {
  const blocks = yamlBlocks(await Deno.readTextFile(new URL("controller.md", DOCS)))
    .filter((b) => b.kind === "controller");
  assert.ok(blocks.length >= 1, "docs/controller.md has no ```yaml controller block");
  const text = blocks.map((b) => b.text).join("\n");
  const missing: string[] = [];
  for (const [section, keys] of controllerKeys()) {
    for (const k of keys) {
      if (!new RegExp(`(^|[\\s{,])${k}:`, "m").test(text)) missing.push(`${section}.${k}`);
    }
  }
  assert.deepEqual(missing, [], `docs/controller.md: keys missing from the example: ${missing}`);
});
