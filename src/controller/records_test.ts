import assert from "node:assert/strict";
import { type InstanceRecord, RecordStore, slotIndex } from "./records.ts";

function record(id: string, pid: number): InstanceRecord {
  return {
    id,
    pid,
    start_time: 1234,
    executable: "/usr/bin/scalwsd",
    cpus: [0],
    generation: 1,
    state: "active",
    wanted: true,
    metrics: "127.0.0.1:19100",
    admin_socket: "/s/sockets/web-0.sock",
    log_file: "/s/logs/web-0.log",
    started_at: "2026-01-01T00:00:00.000Z",
    state_since: "2026-01-01T00:00:01.000Z",
    updated_at: "2026-01-01T00:00:01.000Z",
    failures: [],
    gave_up: false,
  };
}

Deno.test("slotIndex reads web-N ids only", () => {
  assert.equal(slotIndex("web-0"), 0);
  assert.equal(slotIndex("web-12"), 12);
  assert.equal(slotIndex("web-"), undefined);
  assert.equal(slotIndex("web-1.tmp"), undefined);
  assert.equal(slotIndex("db-1"), undefined);
});

Deno.test("RecordStore writes 0600 records and reads them back in slot order, skipping junk", async () => {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-records-" });
  try {
    const store = new RecordStore(dir);
    await store.init();
    await store.write(record("web-10", 30));
    await store.write(record("web-2", 20));
    await Deno.writeTextFile(`${dir}/instances/web-3.json`, "{not json");
    await Deno.writeTextFile(
      `${dir}/instances/web-4.json`,
      '{"id":"web-5","pid":1,"state":"active"}',
    );
    await Deno.writeTextFile(`${dir}/instances/notes.txt`, "x");
    const bad: string[] = [];
    const all = await store.readAll((f) => bad.push(f));
    assert.deepEqual(all.map((r) => [r.id, r.pid]), [["web-2", 20], ["web-10", 30]]);
    assert.deepEqual(bad.sort(), ["web-3.json", "web-4.json"]);
    assert.equal((await Deno.stat(store.path("web-2"))).mode! & 0o777, 0o600);
    assert.deepEqual(all[0], record("web-2", 20));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
