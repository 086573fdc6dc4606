/** Test PKI made with openssl in a temporary directory: a CA, a server and a client certificate. */

async function openssl(dir: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("openssl", { args, cwd: dir, stdout: "null", stderr: "piped" })
    .output();
  if (!out.success) {
    throw new Error(`openssl ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
}

export interface Pki {
  readonly dir: string;
  readonly caCert: string;
  /** Signs a certificate for `cn` with the given subjectAltName list; returns [cert, key] paths. */
  issue(name: string, cn: string, san: string, clientAuth?: boolean): Promise<[string, string]>;
}

export async function makePki(dir: string, caName = "ca"): Promise<Pki> {
  await openssl(
    dir,
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    `${caName}.key`,
    "-out",
    `${caName}.pem`,
    "-days",
    "2",
    "-subj",
    `/CN=${caName} test CA`,
  );
  return {
    dir,
    caCert: `${dir}/${caName}.pem`,
    async issue(name, cn, san, clientAuth = false) {
      await openssl(
        dir,
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        `${name}.key`,
        "-out",
        `${name}.csr`,
        "-subj",
        `/CN=${cn}/O=scalwsd tests`,
      );
      await Deno.writeTextFile(
        `${dir}/${name}.ext`,
        `subjectAltName=${san}\nextendedKeyUsage=${clientAuth ? "clientAuth" : "serverAuth"}\n` +
          "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\n",
      );
      await openssl(
        dir,
        "x509",
        "-req",
        "-in",
        `${name}.csr`,
        "-CA",
        `${caName}.pem`,
        "-CAkey",
        `${caName}.key`,
        "-CAcreateserial",
        "-out",
        `${name}.pem`,
        "-days",
        "2",
        "-extfile",
        `${name}.ext`,
      );
      return [`${dir}/${name}.pem`, `${dir}/${name}.key`];
    },
  };
}
