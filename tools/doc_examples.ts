/**
 * The YAML examples of a Markdown page: every fenced block whose info string starts with
 * `yaml`. `tests/docs_examples_test.ts` runs `scalwsd check` on each, so the docs cannot drift
 * from the loader. A block fenced ```yaml fragment is a part of a file and is not checked; one
 * fenced ```yaml controller is a controller file (`scalwsd controller --config`), one fenced
 * ```yaml kubernetes holds Kubernetes manifests.
 */

/** One fenced YAML block. */
export interface YamlBlock {
  /** 1-based line of the opening fence. */
  readonly line: number;
  /**
   * `config` (a scalwsd file), `controller` (a controller file), `kubernetes` (Kubernetes
   * manifests, checked by the tests that use them) or `fragment` (not checked).
   */
  readonly kind: "config" | "controller" | "kubernetes" | "fragment";
  /** The block's text, without the fences and the indentation of the opening fence. */
  readonly text: string;
}

const OPEN = /^( *)(`{3,}|~{3,})\s*([^\s`]*)(.*)$/;

/** The YAML blocks of `markdown`, in order. */
export function yamlBlocks(markdown: string): YamlBlock[] {
  const lines = markdown.split("\n");
  const blocks: YamlBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = OPEN.exec(lines[i]);
    if (m === null) continue;
    const [, indent, fence, lang, rest] = m;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const t = lines[j].trimStart();
      if (t.startsWith(fence) && t.slice(fence.length).trim() === "") break;
      body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j].trimStart());
    }
    if (lang.toLowerCase() === "yaml" || lang.toLowerCase() === "yml") {
      const words = rest.trim().split(/\s+/);
      const kind = words.includes("fragment")
        ? "fragment"
        : words.includes("controller")
        ? "controller"
        : words.includes("kubernetes")
        ? "kubernetes"
        : "config";
      blocks.push({ line: i + 1, kind, text: body.join("\n") + "\n" });
    }
    i = j;
  }
  return blocks;
}
