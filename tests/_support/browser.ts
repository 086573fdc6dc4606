/**
 * A small browser for the real-application tests: `fetch` with a cookie jar (name=value per
 * name, no domain or path matching: one site per browser) and redirects not followed, so each
 * step sees the application's own answer.
 */

export interface Page {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

export class Browser {
  readonly cookies = new Map<string, string>();

  constructor(readonly base: string, readonly host?: string) {}

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = { ...extra };
    if (this.host !== undefined) h.host = this.host;
    if (this.cookies.size > 0) {
      h.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    }
    return h;
  }

  private keep(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const pair = c.split(";")[0];
      const eq = pair.indexOf("=");
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      // An expired or emptied cookie is dropped, as a browser does.
      if (value === "" || value === "deleted" || /expires=Thu, 01 Jan 1970/i.test(c)) {
        this.cookies.delete(name);
      } else this.cookies.set(name, value);
    }
  }

  /** The URL of `path` (a path or an absolute URL of the site). */
  url(path: string): string {
    return /^https?:/.test(path) ? path : this.base + path;
  }

  async fetch(
    path: string,
    init: { method?: string; body?: BodyInit; headers?: Record<string, string> } = {},
  ): Promise<Page> {
    const res = await fetch(this.url(path), {
      method: init.method ?? (init.body === undefined ? "GET" : "POST"),
      body: init.body,
      headers: this.headers(init.headers),
      redirect: "manual",
    });
    this.keep(res);
    return { status: res.status, headers: res.headers, text: await res.text() };
  }

  get(path: string, headers?: Record<string, string>): Promise<Page> {
    return this.fetch(path, { headers });
  }

  /** POSTs a form (`application/x-www-form-urlencoded`, or multipart for `FormData`). */
  post(path: string, form: Record<string, string> | FormData): Promise<Page> {
    return this.fetch(path, {
      method: "POST",
      body: form instanceof FormData ? form : new URLSearchParams(form),
    });
  }

  /** The bytes at `path`, with the status. */
  async bytes(path: string): Promise<{ status: number; headers: Headers; body: Uint8Array }> {
    const res = await fetch(this.url(path), { headers: this.headers(), redirect: "manual" });
    return {
      status: res.status,
      headers: res.headers,
      body: new Uint8Array(await res.arrayBuffer()),
    };
  }
}

/** The first capture of `re` in `text`, or a thrown error naming `what`. */
export function extract(text: string, re: RegExp, what: string): string {
  const m = re.exec(text);
  if (m === null) throw new Error(`${what} not found in the page: ${text.slice(0, 500)}`);
  return m[1];
}
