import assert from "node:assert/strict";
import YAML from "yaml";
import { app, members, proxy, respond, scalwsYaml } from "./yaml.ts";

Deno.test("scalwsYaml gives one http listener, the admin socket and tenant t by default", () => {
  const doc = YAML.parse(scalwsYaml({
    upstreams: { p: { members: members("127.0.0.1:1", { address: "127.0.0.1:2" }), retries: 1 } },
    apps: [app(proxy("p", { response_timeout: "1s" })), app(respond("b"), { name: "b" })],
  }));
  assert.deepEqual(doc, {
    server: {
      listeners: [{ name: "http", address: "127.0.0.1:0" }],
      admin: { socket: "{{dir}}/admin.sock" },
    },
    upstreams: {
      p: { members: [{ address: "127.0.0.1:1" }, { address: "127.0.0.1:2" }], retries: 1 },
    },
    tenants: [{
      name: "t",
      applications: [{
        name: "a",
        domains: ["a.test"],
        runtime: { type: "proxy", upstream: { pool: "p" }, response_timeout: "1s" },
      }, { name: "b", domains: ["a.test"], runtime: { type: "respond", body: "b" } }],
    }],
  });
});

Deno.test("scalwsYaml merges server keys, leaves out undefined ones, and keeps other sections", () => {
  const doc = YAML.parse(scalwsYaml({
    server: { admin: undefined, default_host: "a.test" },
    tenants: [{ name: "x", applications: [{ name: "b", runtime: respond("hi") }] }],
    apps: [{ name: "ignored" }],
    runtime: { gc: "off" },
  }));
  assert.deepEqual(doc, {
    server: { listeners: [{ name: "http", address: "127.0.0.1:0" }], default_host: "a.test" },
    tenants: [{
      name: "x",
      applications: [{ name: "b", runtime: { type: "respond", body: "hi" } }],
    }],
    runtime: { gc: "off" },
  });
});
