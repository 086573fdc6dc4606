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
