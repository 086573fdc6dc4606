/**
 * Every relative link of README.md and docs/ leads to a file that exists and, with `#anchor`,
 * to a heading of that file (GitHub's slugs), so moving a section cannot leave links dangling.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url).pathname;

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as `-`. */
export function slug(heading: string): string {
  return heading.toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replaceAll(" ", "-");
}

function pages(): string[] {
  const found = ["README.md"];
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(ROOT + dir)) {
      if (e.isDirectory) walk(`${dir}/${e.name}`);
      else if (e.name.endsWith(".md")) found.push(`${dir}/${e.name}`);
    }
  };
  walk("docs");
  return found;
}

function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.trimStart().startsWith("```")) fenced = !fenced;
    const m = fenced ? null : /^#{1,6} (.*)$/.exec(line);
    if (m !== null) out.add(slug(m[1].trim()));
  }
  return out;
}

Deno.test("slug: as GitHub makes heading anchors", () => {
  assert.equal(slug("HTTP/2 limits"), "http2-limits");
  assert.equal(slug("Automatic certificates (ACME)"), "automatic-certificates-acme");
  assert.equal(slug("`runtime.app`, `runtime.node`"), "runtimeapp-runtimenode");
  assert.equal(slug("Health: passive, active"), "health-passive-active");
});

Deno.test("docs: relative links of README.md and docs/ lead to files and headings", () => {
  const problems: string[] = [];
  for (const page of pages()) {
    const text = Deno.readTextFileSync(ROOT + page);
    const dir = page.includes("/") ? page.slice(0, page.lastIndexOf("/") + 1) : "";
    for (const [i, line] of text.split("\n").entries()) {
      for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1];
        if (/^[a-z]+:/.test(target)) continue; // https:, mailto:
        const [file, anchor] = target.split("#");
        const path = file === "" ? page : new URL(dir + file, "file:///").pathname.slice(1);
        let stat: Deno.FileInfo;
        try {
          stat = Deno.statSync(ROOT + path);
        } catch {
          problems.push(`${page}:${i + 1}: ${target}: no file ${path}`);
          continue;
        }
        if (anchor === undefined || !stat.isFile) continue;
        if (!anchors(Deno.readTextFileSync(ROOT + path)).has(anchor)) {
          problems.push(`${page}:${i + 1}: ${target}: no heading #${anchor} in ${path}`);
        }
      }
    }
  }
  if (problems.length > 0) assert.fail(problems.join("\n"));
});

Deno.test("README.md: at most 300 lines, linking every docs page an operator needs", () => {
  const readme = Deno.readTextFileSync(ROOT + "README.md");
  const lines = readme.trimEnd().split("\n").length;
  assert.ok(lines <= 300, `README.md has ${lines} lines; move detail into docs/`);
  const pages = [
    "configuration",
    "operations",
    "admin",
    "tls",
    "php",
    "apps",
    "controller",
    "kubernetes",
    "performance",
    "architecture",
    "from-nginx",
  ];
  for (const p of pages) assert.ok(readme.includes(`](docs/${p}.md`), `README.md: no link to ${p}`);
  assert.ok(readme.includes("](examples/multi-site.yaml)"), "README.md: no multi-site example");
  assert.ok(readme.includes("npx -y deno@2.9.6 task test"), "README.md: no test command");
});
