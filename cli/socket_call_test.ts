import assert from "node:assert/strict";
import { callSocket, SocketCallError } from "./socket_call.ts";

const HINT = "is scalwsd running with server.admin.socket set? use --socket PATH";

async function refusal(path: string): Promise<string> {
  const err = await callSocket(path, "the admin socket", HINT, "GET", "/v1/upstreams").then(
    () => undefined,
    (e) => e,
  );
  assert.ok(err instanceof SocketCallError, String(err));
  return err.message;
}

Deno.test("callSocket: a socket nobody listens on is reported as refused, not 'fetch failed'", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // A socket file left behind by a process that ended (Deno removes the path it listened on,
    // not a second link to it).
    const path = `${dir}/admin.sock`;
    const listener = Deno.listen({ transport: "unix", path: `${dir}/live.sock` });
    await Deno.link(`${dir}/live.sock`, path);
    listener.close();
    assert.equal(
      await refusal(path),
      `cannot reach the admin socket ${path}: connection refused (nothing listens there: ${HINT})`,
    );
    const file = `${dir}/plain`;
    await Deno.writeTextFile(file, "");
    assert.equal(
      await refusal(file),
      `cannot reach the admin socket ${file}: not a socket (${HINT})`,
    );
    assert.equal(
      await refusal(`${dir}/none.sock`),
      `cannot reach the admin socket ${dir}/none.sock: no such file (${HINT})`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
