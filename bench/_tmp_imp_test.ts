import { parseConfig } from "/work/main/src/config/load.ts";
Deno.test("x", () => { parseConfig("server: {listeners: [{name: h, address: '127.0.0.1:1'}]}\n", "x.yaml"); });
