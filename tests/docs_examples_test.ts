/**
 * Every YAML example of README.md and docs/ (and every file in examples/) passes what
 * `scalwsd check` does, so the docs cannot drift from the loader. Blocks fenced ```yaml fragment
 * are parts of a file and skipped; ```yaml controller blocks are controller files.
 */
import assert from "node:assert/strict";
import { checkFile } from "../cli/check.ts";
import { loadConfig } from "../src/config/load.ts";
import { loadControllerConfig } from "../src/controller/config.ts";
import YAML from "yaml";
import { yamlBlocks } from "../tools/doc_examples.ts";
import { tempDir } from "./_support/mod.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** README.md and every Markdown file under docs/, as paths relative to the repository. */
function pages(): string[] {
  const found = ["README.md"];
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(ROOT + dir)) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) walk(path);
      else if (e.name.endsWith(".md")) found.push(path);
    }
  };
  walk("docs");
  return found.sort();
}

/**
 * The docs describe a server's directories (`root: /srv/www`), not this machine's: every
 * `root` and `cwd` counts as an existing directory; everything else is checked as `check` does.
 */
const SERVER_DIRS = { stat: () => ({ isDirectory: true }) };

async function problemsOf(file: string, kind: "config" | "controller"): Promise<string[]> {
  if (kind === "config") return [...(await checkFile(file, SERVER_DIRS)).errors];
  try {
    await loadControllerConfig(file);
    return [];
  } catch (e) {
    return [e instanceof Error ? e.message : String(e)];
  }
}

Deno.test("docs: every yaml example in README.md and docs/ passes scalwsd check", async () => {
  await using dir = await tempDir("scalwsd-docs-");
  const failures: string[] = [];
  let checked = 0;
  for (const page of pages()) {
    const blocks = yamlBlocks(await Deno.readTextFile(ROOT + page));
    for (const b of blocks) {
      if (b.kind === "fragment") continue;
      if (b.kind === "kubernetes") {
        // Manifests: each document parses and names its apiVersion, kind and name.
        for (const doc of YAML.parseAllDocuments(b.text)) {
          const o = doc.toJS();
          if (doc.errors.length > 0 || !o?.apiVersion || !o?.kind || !o?.metadata?.name) {
            failures.push(`${page}:${b.line}: a kubernetes block needs apiVersion, kind, name`);
          }
        }
        continue;
      }
      const file = `${dir.path}/${page.replaceAll("/", "_")}_${b.line}.yaml`;
      await Deno.writeTextFile(file, b.text);
      const problems = await problemsOf(file, b.kind);
      checked++;
      if (problems.length > 0) {
        failures.push(
          `${page}:${b.line}: the yaml block fails scalwsd check (fence it as \`\`\`yaml fragment ` +
            `if it is only part of a file):\n  ${problems.join("\n").replaceAll("\n", "\n  ")}`,
        );
      }
    }
  }
  if (failures.length > 0) assert.fail(failures.join("\n"));
  assert.ok(checked >= 5, `only ${checked} complete yaml examples found`);
});

Deno.test("docs: every yaml file in examples/ passes scalwsd check", async () => {
  const failures: string[] = [];
  for (const e of Deno.readDirSync(ROOT + "examples")) {
    if (!e.isFile || !e.name.endsWith(".yaml")) continue;
    const { errors } = await checkFile(`${ROOT}examples/${e.name}`, SERVER_DIRS);
    if (errors.length > 0) failures.push(`examples/${e.name}:\n  ${errors.join("\n  ")}`);
  }
  if (failures.length > 0) assert.fail(failures.join("\n"));
});

Deno.test("examples/multi-site.yaml holds every part of the multi-site example", async () => {
  const { config } = await loadConfig(`${ROOT}examples/multi-site.yaml`);
  const apps = config.tenants.flatMap((t) => t.applications);
  const json = JSON.stringify(apps);
  const has = (what: string, ok: boolean) => assert.ok(ok, `multi-site.yaml lacks ${what}`);
  has("a static site", json.includes('"type":"static"'));
  has("a PHP site", json.includes('"type":"php"'));
  has("basic authentication", json.includes('"policy":"basic_auth"'));
  has("an address list", json.includes('"policy":"allow"'));
  has("CORS", json.includes('"policy":"cors"'));
  has("a cached API", apps.some((a) => a.cache !== undefined));
  const pools = Object.values(config.upstreams);
  has("a pool with health checks", pools.some((p) => p.health_check !== undefined));
  has("sticky sessions", pools.some((p) => p.sticky !== undefined));
  has(
    "http -> https",
    config.server.listeners.some((l) => l.redirect?.to.startsWith("https://") === true),
  );
  has("a TLS listener", config.server.listeners.some((l) => l.tls !== undefined));
});

Deno.test("README.md opens with the two commands, start and test (issue 2)", async () => {
  const lines = (await Deno.readTextFile(ROOT + "README.md")).split("\n");
  // The title, then the commands as the first lines of text.
  assert.equal(lines[0], "# scalwsd");
  const first = lines.slice(1).filter((l) => l.trim() !== "" && !l.startsWith("```"));
  assert.match(first[0], /^npx -y deno@2\.9\.6 task start\b/);
  assert.match(first[1], /^npx -y deno@2\.9\.6 task test\b/);
});
