/**
 * Making a Unix socket's path free before the admin API binds it: a socket file that a process
 * which ended left behind is removed, but a socket another process still listens on is refused
 * (nginx's "address already in use"), and so is a path that is not a socket at all, or one in a
 * directory that does not exist.
 *
 * @module
 */

/** Removes a stale socket at `path`; throws saying why when the path is not free to take. */
export async function claimSocketPath(path: string): Promise<void> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(path);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    const slash = path.lastIndexOf("/");
    const dir = slash < 0 ? "." : path.slice(0, slash) || "/";
    const found = await Deno.stat(dir).then((i) => i.isDirectory, () => false);
    if (!found) {
      throw new Error(`directory "${dir}" does not exist; create it or choose another path`);
    }
    return;
  }
  if (!info.isSocket) {
    throw new Error("the path exists and is not a socket (it was left as it is)");
  }
  let live = false;
  try {
    const conn = await Deno.connect({ transport: "unix", path });
    conn.close();
    live = true;
  } catch {
    // Refused: nothing listens (the process that bound it ended). Anything else (permission
    // denied) the remove below reports.
  }
  if (live) {
    throw new Error(
      "another process listens there (a running scalwsd?); stop it or choose another path",
    );
  }
  await Deno.remove(path);
}
