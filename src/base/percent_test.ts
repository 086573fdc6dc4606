import assert from "node:assert/strict";
import { decodeUnreserved } from "./percent.ts";

Deno.test("decodeUnreserved decodes letters, digits and -._~ only", () => {
  const cases: [string, string][] = [
    ["/admin", "/admin"],
    ["/%61dmin", "/admin"],
    ["/%41%5a%30%39%2D%2e%5F%7e", "/AZ09-._~"],
    ["/a%2Fb", "/a%2Fb"],
    ["/a%2fb%20c", "/a%2fb%20c"],
    ["/%2561", "/%2561"],
    ["/%", "/%"],
    ["/%6", "/%6"],
    ["/%zz%61", "/%zza"],
    ["/x%61", "/xa"],
    ["%61%62%63", "abc"],
  ];
  for (const [input, want] of cases) assert.equal(decodeUnreserved(input), want, input);
});
