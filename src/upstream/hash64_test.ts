import assert from "node:assert/strict";
import { drawHigh, hash64, hashString64, unitFromHashes } from "./hash64.ts";

Deno.test("hashString64 gives the same fixed values in every process", () => {
  // Instances must agree on hash-balanced members: these values may never change.
  const out = new Uint32Array(2);
  const want: [string, number, number][] = [
    ["", 0xd2868fe1, 0x39a8d5f1],
    ["a", 0xa4572e58, 0xc7c46f60],
    ["10.0.0.1:8080", 0x136193a7, 0x7ce2fdb1],
    ["user-42", 0x9b37269e, 0x1f6a0e35],
  ];
  for (const [s, hi, lo] of want) {
    hashString64(s, out);
    assert.deepEqual([out[0], out[1]], [hi, lo], JSON.stringify(s));
  }
  assert.equal(hash64("user-42", "10.0.0.1:8080"), 0.06752599849144103);
  assert.equal(hash64("1.2.3.4", "[2001:db8::5]:8080"), 0.35266967646235015);
});

Deno.test("unitFromHashes stays strictly inside (0, 1) at the extremes", () => {
  let lo = 1;
  let hi = 0;
  for (const a of [0, 1, 0x7fffffff, 0x80000000, 0xffffffff]) {
    for (const b of [0, 1, 0xffffffff]) {
      for (const c of [0, 0xffffffff]) {
        for (const d of [0, 12345, 0xffffffff]) {
          const u = unitFromHashes(a, b, c, d);
          lo = Math.min(lo, u);
          hi = Math.max(hi, u);
        }
      }
    }
  }
  assert.ok(lo > 0 && hi < 1);
  // The largest and smallest possible values are representable and not 0 or 1.
  assert.ok((4503599627370495 + 0.5) / 4503599627370496 < 1);
  assert.ok(0.5 / 4503599627370496 > 0);
});

Deno.test("hash64 spreads similar keys uniformly over (0, 1)", () => {
  const buckets = new Array(50).fill(0);
  const n = 100_000;
  for (let i = 0; i < n; i++) buckets[Math.floor(hash64(`user-${i}`, "10.0.0.1:80") * 50)]++;
  let chi = 0;
  for (const c of buckets) chi += (c - n / 50) ** 2 / (n / 50);
  // 49 degrees of freedom: 99.9 % of uniform samples stay below 86.
  assert.ok(chi < 86, `chi-square ${chi}`);
});

Deno.test("hashString64 flips about half of the output bits when one input bit changes", () => {
  const a = new Uint32Array(2);
  const b = new Uint32Array(2);
  const perBit = new Array(64).fill(0);
  const trials = 4000;
  for (let t = 0; t < trials; t++) {
    const s = `10.0.${t & 255}.${t >> 8}:8080`;
    const pos = t % s.length;
    const s2 = s.slice(0, pos) + String.fromCharCode(s.charCodeAt(pos) ^ (1 << (t % 7))) +
      s.slice(pos + 1);
    hashString64(s, a);
    hashString64(s2, b);
    for (let k = 0; k < 32; k++) {
      perBit[k] += ((a[0] ^ b[0]) >>> k) & 1;
      perBit[32 + k] += ((a[1] ^ b[1]) >>> k) & 1;
    }
  }
  for (let k = 0; k < 64; k++) {
    const p = perBit[k] / trials;
    assert.ok(p > 0.45 && p < 0.55, `bit ${k}: ${p}`);
  }
});

Deno.test("hash64 depends on which string is the key and which the member", () => {
  let same = 0;
  for (let i = 0; i < 1000; i++) if (hash64(`a${i}`, `b${i}`) === hash64(`b${i}`, `a${i}`)) same++;
  assert.equal(same, 0);
});

Deno.test("drawHigh orders draws like unitFromHashes", () => {
  const out = new Uint32Array(2);
  let prevU = -1;
  let prevY = 0;
  for (let i = 0; i < 5000; i++) {
    hashString64(`k${i}`, out);
    const u = unitFromHashes(out[0], out[1], 0x12345678, 0x9abcdef0);
    const y = drawHigh(out[0], out[1], 0x12345678, 0x9abcdef0);
    // The high 32 bits of the 52-bit draw, with the sign bit flipped.
    assert.equal(y, (Math.floor(u * 2 ** 32) ^ -2147483648) | 0);
    if (prevU >= 0 && y !== prevY) assert.equal(y > prevY, u > prevU);
    prevU = u;
    prevY = y;
  }
});

Deno.test("unitFromHashes flips about half of the draw's bits when one bit of either hash changes", () => {
  const rnd = (() => {
    let s = 1;
    return () => (s = Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
  })();
  const bits = (u: number) => Math.floor(u * 2 ** 52);
  for (let input = 0; input < 128; input += 5) {
    let flips = 0;
    const trials = 600;
    for (let t = 0; t < trials; t++) {
      const v = [rnd(), rnd(), rnd(), rnd()];
      const a = bits(unitFromHashes(v[0], v[1], v[2], v[3]));
      v[input >> 5] = (v[input >> 5] ^ (1 << (input & 31))) >>> 0;
      const b = bits(unitFromHashes(v[0], v[1], v[2], v[3]));
      // Count differing bits of two 52-bit integers.
      let d = 0;
      let x = a;
      let y = b;
      for (let k = 0; k < 52; k++) {
        if (x % 2 !== y % 2) d++;
        x = Math.floor(x / 2);
        y = Math.floor(y / 2);
      }
      flips += d;
    }
    const mean = flips / trials / 52;
    assert.ok(mean > 0.47 && mean < 0.53, `input bit ${input}: ${mean}`);
  }
});
