/**
 * Request headers as route policies changed them, without copying the client's: an overlay of
 * removed names and added lines over the original `Headers`. Copying a `Headers` costs about
 * 4 us; the overlay costs nothing until read, and the HTTP/1 client reads it with `forEach`
 * like the original. Names are lower case.
 */

type Each = (value: string, name: string) => void;

/** What the overlay needs of the original: a `Headers` or the front's parsed fields. */
export interface HeaderBase {
  get(name: string): string | null;
  forEach(fn: Each, thisArg?: unknown): void;
}

export class EditedHeaders {
  /** Names whose original values are hidden (removed or replaced). */
  private hidden: Set<string> | null = null;
  /** Lines added or set, in order. */
  private extra: [string, string][] = [];

  constructor(private readonly base: HeaderBase) {}

  /** Like `Headers.get`: every value of `name`, joined with ", ", or null. */
  get(name: string): string | null {
    let out = this.hidden !== null && this.hidden.has(name) ? null : this.base.get(name);
    for (const [n, v] of this.extra) {
      if (n === name) out = out === null ? v : `${out}, ${v}`;
    }
    return out;
  }

  has(name: string): boolean {
    return this.get(name) !== null;
  }

  set(name: string, value: string): void {
    this.delete(name);
    this.extra.push([name, value]);
  }

  append(name: string, value: string): void {
    this.extra.push([name, value]);
  }

  delete(name: string): void {
    (this.hidden ??= new Set()).add(name);
    if (this.extra.length > 0) this.extra = this.extra.filter(([n]) => n !== name);
  }

  forEach(fn: Each, thisArg?: unknown): void {
    const hidden = this.hidden;
    if (hidden === null) this.base.forEach(fn, thisArg);
    else {
      this.base.forEach(function (this: unknown, value, name) {
        if (!hidden.has(name)) fn.call(this, value, name);
      }, thisArg);
    }
    for (const [name, value] of this.extra) {
      fn.call(thisArg, value, name);
    }
  }

  /** A real `Headers` with the edits (for the rare paths that need one: WebSocket upgrades). */
  toHeaders(): Headers {
    const h = new Headers();
    this.forEach((v, n) => h.append(n, v));
    return h;
  }
}
