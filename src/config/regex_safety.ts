/**
 * RE2-like safety for `rewrite.regex`: JavaScript's backtracking engine can take exponential
 * time on patterns such as `(a+)+$`, so a pattern is parsed here first and refused unless it
 * stays within a subset that cannot backtrack catastrophically: anchored with `^` (an
 * unanchored search multiplies the work by the path length), no backreferences, no lookaround,
 * no quantifier on a group that itself holds a quantifier or an alternation, at most 2
 * unbounded quantifiers, counted repeats up to 100, at most 256 characters. What is left can
 * still be quadratic in the subject (`^/(.*)/(.*)$`), so the rewrite only runs it on paths of
 * at most `MAX_SUBJECT` bytes (measured: 2 ms there, 150 ms at 8 KiB).
 */

/** Longest pattern accepted. */
export const MAX_PATTERN_LENGTH = 256;
/** Most `*`, `+` and `{n,}` in one pattern (each adds a polynomial factor). */
export const MAX_UNBOUNDED = 2;
/** Longest path a `rewrite.regex` is run on; longer ones get 414. */
export const MAX_SUBJECT = 1024;
/** Largest bound of a counted repeat (`{n,m}`). */
export const MAX_REPEAT = 100;

/** What a safe pattern holds. */
export interface PatternInfo {
  /** Capturing groups (`$1` .. `$N` in a replacement). */
  readonly groups: number;
}

class Refused extends Error {}

interface Node {
  /** Contains a quantifier somewhere inside. */
  quantified: boolean;
  /** Contains an alternation somewhere inside. */
  alternation: boolean;
}

/**
 * Checks `pattern`; returns its group count, or an error message saying why it is refused.
 * The pattern is also compiled by `new RegExp` so that its own syntax errors are reported.
 */
export function checkPattern(pattern: string): PatternInfo | string {
  if (pattern.length === 0) return "must not be empty";
  if (pattern.length > MAX_PATTERN_LENGTH) {
    return `pattern is longer than ${MAX_PATTERN_LENGTH} characters`;
  }
  if (pattern[0] !== "^") return 'pattern refused: it must be anchored with "^"';
  try {
    new RegExp(pattern);
  } catch (e) {
    return `invalid regular expression: ${(e as Error).message}`;
  }
  const p = new Parser(pattern);
  try {
    p.alternation();
    if (p.i < pattern.length) throw new Refused(`unexpected "${pattern[p.i]}"`);
  } catch (e) {
    if (e instanceof Refused) return `pattern refused: ${e.message}`;
    throw e;
  }
  if (p.unbounded > MAX_UNBOUNDED) {
    return `pattern refused: more than ${MAX_UNBOUNDED} unbounded repeats (*, +, {n,})`;
  }
  return { groups: p.groups };
}

class Parser {
  i = 0;
  groups = 0;
  unbounded = 0;
  constructor(readonly s: string) {}

  alternation(): Node {
    const node: Node = { quantified: false, alternation: false };
    for (;;) {
      const seq = this.sequence();
      node.quantified ||= seq.quantified;
      node.alternation ||= seq.alternation;
      if (this.s[this.i] !== "|") return node;
      node.alternation = true;
      this.i++;
    }
  }

  sequence(): Node {
    const node: Node = { quantified: false, alternation: false };
    const s = this.s;
    while (this.i < s.length && s[this.i] !== "|" && s[this.i] !== ")") {
      const atom = this.atom();
      if (this.quantifier(atom)) node.quantified = true;
      node.quantified ||= atom.quantified;
      node.alternation ||= atom.alternation;
    }
    return node;
  }

  atom(): Node {
    const s = this.s;
    const c = s[this.i];
    const plain: Node = { quantified: false, alternation: false };
    if (c === "(") {
      this.i++;
      if (s[this.i] === "?") {
        const next = s[this.i + 1];
        if (next === ":") this.i += 2;
        else if (next === "<" && s[this.i + 2] !== "=" && s[this.i + 2] !== "!") {
          const close = s.indexOf(">", this.i);
          if (close < 0) throw new Refused("unterminated group name");
          this.i = close + 1;
          this.groups++;
        } else throw new Refused("lookaround and other (?...) groups are not supported");
      } else this.groups++;
      const inner = this.alternation();
      if (s[this.i] !== ")") throw new Refused("unbalanced parenthesis");
      this.i++;
      return inner;
    }
    if (c === "[") {
      this.i++;
      if (s[this.i] === "^") this.i++;
      if (s[this.i] === "]") this.i++;
      while (this.i < s.length && s[this.i] !== "]") {
        if (s[this.i] === "\\") this.i++;
        this.i++;
      }
      if (this.i >= s.length) throw new Refused("unterminated character class");
      this.i++;
      return plain;
    }
    if (c === "\\") {
      const e = s[this.i + 1];
      if (e === undefined) throw new Refused("pattern ends with a backslash");
      if (/[1-9]/.test(e) || (e === "k" && s[this.i + 2] === "<")) {
        throw new Refused("backreferences are not supported");
      }
      if (e === "b" || e === "B") throw new Refused("word boundaries are not supported");
      this.i += 2;
      if (e === "u" || e === "x") {
        while (/[0-9a-fA-F{}]/.test(s[this.i] ?? "")) this.i++;
      }
      return plain;
    }
    if (c === "*" || c === "+" || c === "?" || c === "{") {
      throw new Refused(`nothing to repeat before "${c}"`);
    }
    this.i++;
    return plain;
  }

  /** Reads a quantifier after `atom`, if any; refuses a repeat of a repeat or of alternatives. */
  quantifier(atom: Node): boolean {
    const s = this.s;
    const c = s[this.i];
    let unbounded = false;
    let repeats = false;
    if (c === "*" || c === "+") {
      unbounded = repeats = true;
      this.i++;
    } else if (c === "?") {
      this.i++;
    } else if (c === "{") {
      const m = /^\{([0-9]+)(,([0-9]*))?\}/.exec(s.slice(this.i));
      if (m === null) return false;
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
      if (min > MAX_REPEAT || (max !== Infinity && max > MAX_REPEAT)) {
        throw new Refused(`counted repeats above ${MAX_REPEAT} are not supported`);
      }
      unbounded = max === Infinity;
      repeats = max > 1;
      this.i += m[0].length;
    } else return false;
    if (s[this.i] === "?") this.i++; // lazy: the same cost
    if (s[this.i] === "*" || s[this.i] === "+" || s[this.i] === "{") {
      throw new Refused("a quantifier cannot follow another quantifier");
    }
    if (repeats && (atom.quantified || atom.alternation)) {
      throw new Refused(
        "a repeated group may not contain a quantifier or an alternation " +
          "(nested repeats can backtrack catastrophically)",
      );
    }
    if (unbounded) this.unbounded++;
    return true;
  }
}
