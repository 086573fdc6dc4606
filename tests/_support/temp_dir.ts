/** A temporary directory removed, with everything in it, when the test ends. */
export interface TempDir extends AsyncDisposable {
  readonly path: string;
}

/** Makes a temporary directory: `await using dir = await tempDir();` */
export async function tempDir(prefix = "scalwsd-test-"): Promise<TempDir> {
  const path = await Deno.makeTempDir({ prefix });
  return {
    path,
    [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }).catch(() => {}),
  };
}
