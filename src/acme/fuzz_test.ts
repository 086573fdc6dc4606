/**
 * Seeded fuzzer of the ACME answer parsers (`messages.ts`): valid directories, orders and
 * authorizations, and mutations of their JSON text (bytes flipped, dropped, inserted; values
 * swapped for other types). A parser must read every valid one exactly and, for a mutation,
 * either refuse it with `AcmeProtocolError` or return an object whose fields have the types
 * it promises. `SCALWS_FUZZ_CASES` sets the cases (the suite runs a slice; `deno task fuzz`
 * 100k).
 */
import assert from "node:assert/strict";
import { type Random, seeded } from "../base/random.ts";
import { AcmeProtocolError } from "./errors.ts";
import { parseAuthorization, parseDirectory, parseOrder } from "./messages.ts";

const CASES = Number(Deno.env.get("SCALWS_FUZZ_CASES") ?? "1500");
const CA = "https://ca.test:14000";

function pick<T>(rnd: Random, list: readonly T[]): T {
  return list[Math.floor(rnd() * list.length)];
}

function validObject(rnd: Random): { kind: number; value: Record<string, unknown> } {
  const id = Math.floor(rnd() * 1e6);
  switch (Math.floor(rnd() * 3)) {
    case 0:
      return {
        kind: 0,
        value: {
          newNonce: `${CA}/nonce-plz`,
          newAccount: `${CA}/sign-me-up`,
          newOrder: `${CA}/order-plz`,
          meta: { externalAccountRequired: rnd() < 0.5 },
        },
      };
    case 1: {
      const status = pick(rnd, ["pending", "ready", "processing", "valid", "invalid"]);
      return {
        kind: 1,
        value: {
          status,
          authorizations: [`${CA}/authZ/${id}`, `${CA}/authZ/${id + 1}`],
          finalize: `${CA}/finalize-order/${id}`,
          ...(status === "valid" ? { certificate: `${CA}/certZ/${id}` } : {}),
          ...(status === "invalid" ? { error: { type: "x", detail: "y" } } : {}),
        },
      };
    }
    default:
      return {
        kind: 2,
        value: {
          status: pick(rnd, ["pending", "valid", "invalid", "deactivated", "expired", "revoked"]),
          identifier: { type: "dns", value: `h${id}.test` },
          challenges: [
            { type: "http-01", url: `${CA}/chalZ/${id}`, status: "pending", token: `t${id}_-` },
          ],
        },
      };
  }
}

function mutateText(rnd: Random, text: string): string {
  const b = [...text];
  const n = 1 + Math.floor(rnd() * 3);
  for (let i = 0; i < n; i++) {
    const at = Math.floor(rnd() * b.length);
    switch (Math.floor(rnd() * 3)) {
      case 0:
        b[at] = String.fromCharCode(32 + Math.floor(rnd() * 95));
        break;
      case 1:
        b.splice(at, 1);
        break;
      default:
        b.splice(at, 0, pick(rnd, ['"', "{", "}", "[", "]", ",", ":", "0", "null"]));
    }
  }
  return b.join("");
}

const WEIRD = [null, 0, -1, true, "", "x", [], {}, ["x"], { type: 1 }, "https://", "ftp://a/"];

function mutateValue(rnd: Random, v: Record<string, unknown>): string {
  const copy = structuredClone(v) as Record<string, unknown>;
  const keys = Object.keys(copy);
  const k = pick(rnd, keys);
  if (rnd() < 0.3) delete copy[k];
  else copy[k] = pick(rnd, WEIRD);
  return JSON.stringify(copy);
}

const PARSERS = [parseDirectory, parseOrder, parseAuthorization] as const;

function checkShape(kind: number, r: Record<string, unknown>, where: string): void {
  const isUrl = (s: unknown) => typeof s === "string" && URL.canParse(s);
  if (kind === 0) {
    for (const k of ["newNonce", "newAccount", "newOrder"]) assert.ok(isUrl(r[k]), where);
    assert.equal(typeof r.externalAccountRequired, "boolean", where);
  } else if (kind === 1) {
    assert.ok(Array.isArray(r.authorizations) && r.authorizations.every(isUrl), where);
    assert.ok(isUrl(r.finalize), where);
    if (r.status === "valid") assert.ok(isUrl(r.certificate), where);
  } else {
    const id = r.identifier as Record<string, unknown>;
    assert.ok(typeof id.type === "string" && typeof id.value === "string", where);
    for (const c of r.challenges as Record<string, unknown>[]) {
      assert.ok(isUrl(c.url) && typeof c.type === "string", where);
      if (c.token !== undefined) assert.match(c.token as string, /^[A-Za-z0-9_-]+$/, where);
    }
  }
}

/** Runs `cases` cases from `seed`; throws on the first case a parser gets wrong. */
export function fuzzAcme(seed: number, cases: number) {
  const rnd = seeded(seed);
  const stats = { exact: 0, accepted: 0, refused: 0 };
  for (let i = 0; i < cases; i++) {
    const { kind, value } = validObject(rnd);
    const parse = PARSERS[kind];
    const where = `seed ${seed} case ${i}`;
    if (rnd() < 0.2) {
      checkShape(kind, parse(JSON.stringify(value)) as unknown as Record<string, unknown>, where);
      stats.exact++;
      continue;
    }
    const text = rnd() < 0.5 ? mutateText(rnd, JSON.stringify(value)) : mutateValue(rnd, value);
    let r;
    try {
      r = parse(text);
    } catch (err) {
      if (!(err instanceof AcmeProtocolError)) throw new Error(`${where}: ${err}`);
      stats.refused++;
      continue;
    }
    checkShape(kind, r as unknown as Record<string, unknown>, where);
    stats.accepted++;
  }
  return stats;
}

Deno.test("acme parsers: seeded fuzzing refuses with AcmeProtocolError or returns typed objects", () => {
  for (const seed of [1, 2, 3]) {
    const s = fuzzAcme(seed, CASES);
    assert.ok(s.exact > CASES / 10, JSON.stringify(s));
    assert.ok(s.refused > CASES / 4, JSON.stringify(s));
  }
});
