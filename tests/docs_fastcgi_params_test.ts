/**
 * README.md's table of FastCGI parameters names every param `src/handlers/php_params.ts` sets,
 * and docs/php.md's table (when it has one) names the same ones.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);

/** First-column names of the table rows that follow `heading` (or of every table, if absent). */
function tableNames(markdown: string, heading?: string): Set<string> {
  let text = markdown;
  if (heading !== undefined) {
    const start = markdown.indexOf(heading);
    if (start < 0) return new Set();
    const next = markdown.indexOf("\n## ", start + heading.length);
    text = markdown.slice(start, next < 0 ? undefined : next);
  }
  const names = new Set<string>();
  for (const m of text.matchAll(/^\| `([A-Z_*]+)`/gm)) names.add(m[1]);
  return names;
}

async function sourceParams(): Promise<Set<string>> {
  const src = await Deno.readTextFile(new URL("src/handlers/php_params.ts", ROOT));
  const names = new Set([...src.matchAll(/\.add\("([A-Z_]+)"/g)].map((m) => m[1]));
  names.add("HTTP_*"); // one per request header
  return names;
}

Deno.test("README.md's FastCGI parameter table names every param php_params.ts sets", async () => {
  const readme = tableNames(
    await Deno.readTextFile(new URL("README.md", ROOT)),
    "## FastCGI parameters",
  );
  assert.deepEqual([...readme].sort(), [...(await sourceParams())].sort());
});

Deno.test("docs/php.md's parameter table, when there is one, names the same params", async () => {
  const php = tableNames(await Deno.readTextFile(new URL("docs/php.md", ROOT)));
  const params = [...php].filter((n) => n === "HTTP_*" || /^[A-Z]+_[A-Z_]+$|^HTTPS$/.test(n));
  if (!params.includes("SCRIPT_FILENAME")) return; // the prose list only, so far
  assert.deepEqual(params.sort(), [...(await sourceParams())].sort());
});
