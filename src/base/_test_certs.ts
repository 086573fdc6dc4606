/**
 * Test helper: a throwaway CA and server certificates made with `openssl` in a temporary
 * directory (EC P-256, valid two days). Tests only.
 */

export interface Issued {
  /** Paths of the PEM files. */
  readonly cert: string;
  readonly key: string;
}

export interface TestPki {
  readonly dir: string;
  /** The CA certificate, PEM text. */
  readonly ca: string;
  readonly caFile: string;
  /**
   * A certificate for `names` (DNS names, or IP addresses) signed by the CA: a server
   * certificate, or with `clientAuth` a client certificate whose subject CN is `names[0]`.
   * The key is EC P-256, or RSA-2048 with `rsa`.
   */
  issue(
    file: string,
    names: readonly string[],
    options?: { clientAuth?: boolean; rsa?: boolean },
  ): Promise<Issued>;
  close(): Promise<void>;
}

async function openssl(dir: string, args: string[]): Promise<void> {
  const out = await new Deno.Command("openssl", { args, cwd: dir, stdout: "null", stderr: "piped" })
    .output();
  if (!out.success) {
    throw new Error(`openssl ${args[0]} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
}

const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
const RSA = ["-newkey", "rsa:2048", "-nodes"];

/** Signs `<file>.csr` in `dir` with the test CA into `<file>.crt` (extensions from `ext`). */
async function signCsr(dir: string, file: string, ext: string | null): Promise<void> {
  await openssl(dir, [
    "x509",
    "-req",
    "-in",
    `${file}.csr`,
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    `${file}.crt`,
    "-days",
    "2",
    ...(ext === null ? [] : ["-extfile", ext]),
  ]);
}

/** Creates the CA; `issue` then signs server certificates with it. */
export async function makePki(): Promise<TestPki> {
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-pki-" });
  await openssl(dir, [
    "req",
    "-x509",
    ...EC,
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
    "-days",
    "2",
    "-subj",
    "/CN=scalwsd test CA",
  ]);
  const ca = await Deno.readTextFile(`${dir}/ca.crt`);
  return {
    dir,
    ca,
    caFile: `${dir}/ca.crt`,
    async issue(file, names, options = {}) {
      const san = names.map((n) => (/^[\d.]+$|:/.test(n) ? `IP:${n}` : `DNS:${n}`)).join(",");
      const usage = options.clientAuth ? "clientAuth" : "serverAuth";
      await Deno.writeTextFile(
        `${dir}/${file}.ext`,
        `subjectAltName=${san}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=${usage}\n`,
      );
      await openssl(dir, [
        "req",
        ...(options.rsa ? RSA : EC),
        "-keyout",
        `${file}.key`,
        "-out",
        `${file}.csr`,
        "-subj",
        `/CN=${names[0]}`,
      ]);
      await signCsr(dir, file, `${file}.ext`);
      return { cert: `${dir}/${file}.crt`, key: `${dir}/${file}.key` };
    },
    close: () => Deno.remove(dir, { recursive: true }).catch(() => {}),
  };
}

/**
 * An X.509 v1 certificate for subject CN `cn`, signed by `pki`'s CA: what a bare `openssl x509
 * -req` without `-extfile` makes (no extensions, so no subject alternative names either).
 */
export async function issueV1(pki: TestPki, file: string, cn: string): Promise<Issued> {
  await openssl(
    pki.dir,
    ["req", ...EC, "-keyout", `${file}.key`, "-out", `${file}.csr`, "-subj"]
      .concat([`/CN=${cn}`]),
  );
  await signCsr(pki.dir, file, null);
  return { cert: `${pki.dir}/${file}.crt`, key: `${pki.dir}/${file}.key` };
}
