import assert from "node:assert/strict";
import { noDelayOnListeners } from "./tcp_nodelay.ts";

const usable = Deno.build.os === "linux" &&
  Deno.permissions.querySync({ name: "ffi" }).state === "granted";

/** TCP_NODELAY of the accepted (not listening) sockets on local `port`, by libc. */
function acceptedNoDelay(port: number): number[] {
  const lib = Deno.dlopen("libc.so.6", {
    getsockname: { parameters: ["i32", "buffer", "buffer"], result: "i32" },
    getsockopt: { parameters: ["i32", "i32", "i32", "buffer", "buffer"], result: "i32" },
  });
  try {
    const out: number[] = [];
    const addr = new Uint8Array(128);
    const len = new Uint32Array(1);
    const v = new Int32Array(1);
    const opt = (level: number, name: number) => {
      len[0] = 4;
      const ok = lib.symbols.getsockopt(
        fd,
        level,
        name,
        new Uint8Array(v.buffer),
        new Uint8Array(len.buffer),
      );
      return ok === 0 ? v[0] : -1;
    };
    let fd = 0;
    for (; fd < 4096; fd++) {
      len[0] = addr.length;
      if (lib.symbols.getsockname(fd, addr, new Uint8Array(len.buffer)) !== 0) continue;
      // IPv4 or IPv6 (other test files share this process: Unix sockets, UDP), not listening.
      const family = addr[0] | (addr[1] << 8);
      if (family !== 2 && family !== 10) continue;
      if (((addr[2] << 8) | addr[3]) !== port || opt(1, 30) !== 0) continue; // SO_ACCEPTCONN
      const noDelay = opt(6, 1); // TCP_NODELAY; -1: not a TCP socket
      if (noDelay >= 0) out.push(noDelay);
    }
    return out;
  } finally {
    lib.close();
  }
}

Deno.test({
  name:
    "noDelayOnListeners: the listening socket and what it accepts from then on have TCP_NODELAY",
  ignore: !usable,
  fn: async () => {
    using l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = l.addr.port;
    const before = await Deno.connect({ hostname: "127.0.0.1", port });
    const a = await l.accept();
    assert.deepEqual(acceptedNoDelay(port), [0], "Nagle's algorithm by default");
    assert.equal(noDelayOnListeners(port), 1);
    const after = await Deno.connect({ hostname: "127.0.0.1", port });
    const b = await l.accept();
    assert.deepEqual(acceptedNoDelay(port).sort(), [0, 1], "accepted after: set");
    assert.equal(noDelayOnListeners(1), 0, "nothing listens on port 1");
    before.close();
    after.close();
    a.close();
    b.close();
  },
});
