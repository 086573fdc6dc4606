import assert from "node:assert/strict";
import { contentType, TYPES } from "./mime.ts";

const NGINX_TYPES = "/etc/nginx/mime.types";

/** `extension -> type` from an nginx `types { ... }` file. */
function parseNginxTypes(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const body = text.slice(text.indexOf("{") + 1, text.lastIndexOf("}"));
  for (const statement of body.split(";")) {
    const [type, ...extensions] = statement.trim().split(/\s+/);
    if (type === "" || type === undefined) continue;
    for (const ext of extensions) out.set(ext, type);
  }
  return out;
}

function mediaType(contentType: string): string {
  const semi = contentType.indexOf(";");
  return semi < 0 ? contentType : contentType.slice(0, semi);
}

Deno.test("contentType: the common web types are nginx 1.22's", () => {
  const cases: [string, string][] = [
    ["/wp-includes/js/underscore.min.js", "application/javascript"],
    ["/app.mjs", "application/javascript"],
    ["/fonts/icons.eot", "application/vnd.ms-fontobject"],
    ["/fonts/a.woff", "font/woff"],
    ["/fonts/a.woff2", "font/woff2"],
    ["/fonts/a.ttf", "font/ttf"],
    ["/fonts/a.otf", "font/otf"],
    ["/logo.svg", "image/svg+xml"],
    ["/logo.svgz", "image/svg+xml"],
    ["/a.png", "image/png"],
    ["/a.JPG", "image/jpeg"],
    ["/a.gif", "image/gif"],
    ["/a.webp", "image/webp"],
    ["/a.avif", "image/avif"],
    ["/favicon.ico", "image/x-icon"],
    ["/a.bmp", "image/x-ms-bmp"],
    ["/m.wasm", "application/wasm"],
    ["/d.json", "application/json"],
    ["/feed.xml", "text/xml"],
    ["/feed.rss", "application/rss+xml"],
    ["/feed.atom", "application/atom+xml"],
    ["/index.html", "text/html; charset=utf-8"],
    ["/style.css", "text/css; charset=utf-8"],
    ["/robots.txt", "text/plain; charset=utf-8"],
    ["/doc.pdf", "application/pdf"],
    ["/a.zip", "application/zip"],
    ["/x/.hidden", "application/octet-stream"],
    ["/x.d/README", "application/octet-stream"],
    ["/x/archive.tar.gz", "application/gzip"],
    ["/x/unknown.qqq", "application/octet-stream"],
  ];
  for (const [path, type] of cases) assert.equal(contentType(path), type, path);
});

Deno.test({
  name: "contentType: every extension of nginx's mime.types has nginx's type",
  ignore: (() => {
    try {
      Deno.statSync(NGINX_TYPES);
      return false;
    } catch {
      return true;
    }
  })(),
  fn() {
    const nginx = parseNginxTypes(Deno.readTextFileSync(NGINX_TYPES));
    assert.ok(nginx.size > 100, `${nginx.size} extensions read`);
    for (const [ext, type] of nginx) {
      assert.equal(mediaType(contentType(`/f.${ext}`)), type, ext);
      assert.equal(mediaType(contentType(`/f.${ext.toUpperCase()}`)), type, ext);
    }
    // Only text types that carry no encoding of their own get a charset.
    for (const [ext, type] of Object.entries(TYPES)) {
      if (type.includes("charset")) {
        assert.match(type, /^text\/(html|css|plain|markdown|csv);/, ext);
      }
    }
  },
});
