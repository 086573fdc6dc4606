import assert from "node:assert/strict";
import {
  missingPackages,
  packagePlan,
  PACKAGES_FILE,
  parsePackages,
  plan,
  SERIAL,
} from "./test.ts";

Deno.test("test plan: the suite in parallel, then the memory tests alone; named files as given", () => {
  const whole = plan([]);
  assert.equal(whole.length, 2);
  assert.ok(whole[0].includes("--parallel"));
  for (const f of SERIAL) {
    assert.ok(whole[0].includes(`--ignore=${f}`));
    assert.ok(whole[1].includes(f));
  }
  assert.ok(!whole[1].includes("--parallel"));
  const one = plan(["tests/front_test.ts", "--filter", "x"]);
  assert.deepEqual(one.length, 1);
  assert.deepEqual(one[0].slice(-3), ["tests/front_test.ts", "--filter", "x"]);
  assert.ok(!one[0].includes("--parallel"));
  // Flags alone still mean the whole suite.
  assert.equal(plan(["--fail-fast"]).length, 2);
});

Deno.test("the serial files exist and read the process's memory", async () => {
  for (const f of SERIAL) {
    const text = await Deno.readTextFile(new URL(`../${f}`, import.meta.url));
    assert.match(text, /memoryUsage\(\)/, f);
  }
});

const LIST = parsePackages(`# comment
php-fpm | ls /usr/sbin/php-fpm* | tests/php_test.ts

pebble | command -v pebble | tests/acme_test.ts
`);

Deno.test("parsePackages: package, check and reason per line; comments and blanks skipped", () => {
  assert.deepEqual(LIST, [
    { name: "php-fpm", check: "ls /usr/sbin/php-fpm*", why: "tests/php_test.ts" },
    { name: "pebble", check: "command -v pebble", why: "tests/acme_test.ts" },
  ]);
  assert.throws(() => parsePackages("a | b"), /test_packages.txt:1: expected/);
});

Deno.test("packagePlan: nothing missing, nothing to do", () => {
  assert.deepEqual(packagePlan([], { aptGet: false, root: false, sudo: false }), { kind: "ok" });
});

Deno.test("packagePlan: root installs the missing packages with apt-get and says which", () => {
  const p = packagePlan(LIST, { aptGet: true, root: true, sudo: false });
  assert.equal(p.kind, "install");
  if (p.kind !== "install") return;
  assert.match(
    p.say,
    /installing the Debian packages the tests need:\n {2}php-fpm: tests\/php_test.ts\n {2}pebble: tests\/acme_test.ts\n/,
  );
  assert.equal(p.commands.length, 2);
  assert.deepEqual(p.commands[0].slice(0, 1), ["apt-get"]);
  assert.ok(p.commands[0].includes("update"));
  assert.deepEqual(p.commands[1].slice(0, 2), ["apt-get", "install"]);
  assert.deepEqual(p.commands[1].slice(-2), ["php-fpm", "pebble"]);
  assert.ok(p.commands[1].includes("-y") && p.commands[1].includes("--no-install-recommends"));
});

Deno.test("packagePlan: a user with password-less sudo installs through sudo -n", () => {
  const p = packagePlan(LIST, { aptGet: true, root: false, sudo: true });
  assert.equal(p.kind, "install");
  if (p.kind !== "install") return;
  for (const c of p.commands) assert.deepEqual(c.slice(0, 3), ["sudo", "-n", "apt-get"]);
});

Deno.test("packagePlan: neither root nor sudo: stop, naming the one command to run", () => {
  const p = packagePlan(LIST, { aptGet: true, root: false, sudo: false });
  assert.equal(p.kind, "stop");
  assert.match(p.kind === "stop" ? p.say : "", /not root and cannot use sudo without a password/);
  const last = p.kind === "stop" ? p.say.split("\n").at(-1) : "";
  assert.equal(
    last,
    "  sudo apt-get update && sudo apt-get install -y --no-install-recommends php-fpm pebble",
  );
});

Deno.test("packagePlan: no apt-get: stop, naming the Debian command and --skip-packages", () => {
  const p = packagePlan(LIST.slice(1), { aptGet: false, root: true, sudo: false });
  assert.equal(p.kind, "stop");
  const say = p.kind === "stop" ? p.say : "";
  assert.match(say, /This machine has no apt-get/);
  assert.match(say, /apt-get update && apt-get install -y --no-install-recommends pebble\n/);
  assert.match(say, /--skip-packages/);
  assert.match(say, /pebble: tests\/acme_test.ts/);
});

Deno.test("the package list parses, and .ci/run reads it rather than keeping its own", async () => {
  const list = parsePackages(await Deno.readTextFile(PACKAGES_FILE));
  assert.ok(list.length >= 9);
  for (const name of ["php-fpm", "pebble", "chromium", "prometheus", "python3-uvicorn"]) {
    assert.ok(list.some((p) => p.name === name), name);
  }
  const ci = await Deno.readTextFile(new URL("../.ci/run", import.meta.url));
  assert.match(ci, /deno task test/);
  for (const p of list) {
    assert.ok(!new RegExp(`\\b${p.name}\\b`).test(ci), `.ci/run names ${p.name}`);
  }
});

Deno.test("missingPackages: the packages whose check command fails", async () => {
  const list = parsePackages(
    "a | true | x\nb | exit 3 | y\nc | command -v no-such-program-here | z\n",
  );
  assert.deepEqual((await missingPackages(list)).map((p) => p.name), ["b", "c"]);
});

/** `runuser -u nobody` when this test runs as root and the host has it: a user without sudo. */
async function asNobody(): Promise<string[] | null> {
  const ok = async (cmd: string, args: string[]) => {
    try {
      return (await new Deno.Command(cmd, { args, stdout: "null", stderr: "null" }).output())
        .success;
    } catch {
      return false;
    }
  };
  if (!(await ok("sh", ["-c", 'test "$(id -u)" = 0 && command -v runuser && id nobody']))) {
    return null;
  }
  // nobody must not have password-less sudo (the script would install), and must read the script.
  if (await ok("runuser", ["-u", "nobody", "--", "sudo", "-n", "true"])) return null;
  const script = new URL("./test.ts", import.meta.url).pathname;
  if (!(await ok("runuser", ["-u", "nobody", "--", "test", "-r", script]))) return null;
  return ["runuser", "-u", "nobody", "--"];
}

Deno.test("deno task test as a user who cannot install stops at once, naming the command", async (t) => {
  const prefix = await asNobody();
  if (prefix === null) {
    await t.step({
      name: "needs root, runuser, and a nobody user who can read tools/test.ts",
      ignore: true,
      fn: () => {},
    });
    return;
  }
  const dir = await Deno.makeTempDir({ prefix: "scalwsd-test-packages-" });
  try {
    await Deno.chmod(dir, 0o755);
    const list = `${dir}/packages.txt`;
    await Deno.writeTextFile(
      list,
      "no-such-package-a | command -v no-such-program-a | tests/a_test.ts\nsh | true | x\n",
    );
    await Deno.chmod(list, 0o644);
    const script = new URL("./test.ts", import.meta.url).pathname;
    const started = performance.now();
    const out = await new Deno.Command(prefix[0], {
      args: [
        ...prefix.slice(1),
        "env",
        `HOME=${dir}`,
        `DENO_DIR=${dir}/deno`,
        "PATH=/usr/local/bin:/usr/bin:/bin",
        Deno.execPath(),
        "run",
        "--allow-run",
        "--allow-read",
        script,
        "--packages-file",
        list,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const seconds = (performance.now() - started) / 1000;
    const err = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 1, err);
    assert.ok(seconds < 10, `took ${seconds.toFixed(1)} s`);
    assert.match(err, /no-such-package-a: tests\/a_test.ts/);
    assert.ok(!err.includes("  sh:"), err);
    assert.ok(
      err.trimEnd().endsWith(
        "  sudo apt-get update && sudo apt-get install -y --no-install-recommends no-such-package-a",
      ),
      err,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
