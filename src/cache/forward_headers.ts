/**
 * The request headers a revalidation sends to the member: the client's, without its own
 * conditional and range headers, plus the stored entry's validators.
 */

/** Client headers never passed on with the cache's own validators. */
const REPLACED = new Set([
  "if-none-match",
  "if-modified-since",
  "if-match",
  "if-unmodified-since",
  "if-range",
  "range",
]);

type Each = (value: string, name: string) => void;

/** A source of header pairs walked like `Headers.forEach` (a `Headers` or the front's head). */
interface Walkable {
  forEach(fn: (value: string, name: string) => void, thisArg?: unknown): void;
}

/** A `Headers.forEach` source: `base` filtered, then `extra`. */
export class ForwardHeaders {
  constructor(
    private readonly base: Walkable,
    private readonly extra: readonly [string, string][],
  ) {}

  forEach(fn: Each, thisArg?: unknown): void {
    this.base.forEach(function (this: unknown, value, name) {
      if (!REPLACED.has(name)) fn.call(this, value, name);
    }, thisArg);
    for (const [name, value] of this.extra) fn.call(thisArg, value, name);
  }
}
