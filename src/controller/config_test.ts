import assert from "node:assert/strict";
import { ConfigError } from "../config/errors.ts";
import { parseControllerConfig, parseCpuList } from "./config.ts";

const twoCpus = () => [0, 1];

function errorsOf(text: string): readonly string[] {
  try {
    parseControllerConfig(text, "/etc/scalws/controller.yaml", twoCpus);
  } catch (e) {
    if (e instanceof ConfigError) return e.errors;
    throw e;
  }
  assert.fail("expected a ConfigError");
}

Deno.test("parseControllerConfig: state_dir defaults to ADR-0035's /run/scalws-controller", () => {
  const c = parseControllerConfig("config: /etc/scalws/scalws.yaml\n", "/etc/c.yaml", twoCpus);
  assert.equal(c.state_dir, "/run/scalws-controller");
  assert.equal(c.socket, "/run/scalws-controller/control.sock");
});

Deno.test("parseControllerConfig applies the documented defaults", () => {
  const c = parseControllerConfig(
    "state_dir: /run/scalws-controller\nconfig: scalws.yaml\n",
    "/etc/scalws/controller.yaml",
    twoCpus,
  );
  assert.equal(c.state_dir, "/run/scalws-controller");
  assert.equal(c.config, "/etc/scalws/scalws.yaml");
  assert.equal(c.socket, "/run/scalws-controller/control.sock");
  assert.deepEqual(c.instances, { min: 1, max: 4, initial: 1 });
  assert.deepEqual(c.cpus, [0, 1]);
  assert.equal(c.cpus_per_instance, 1);
  assert.deepEqual(c.metrics_base, { hostname: "127.0.0.1", port: 19100 });
  assert.equal(c.drain_timeout, 30_000);
  assert.equal(c.kill_grace, 5_000);
  assert.equal(c.start_timeout, 30_000);
  assert.equal(c.max_restarts, 5);
  assert.equal(c.restart_window, 300_000);
  assert.equal(c.autoscaling, true);
  assert.equal(c.scale_out_above, 0.75);
  assert.equal(c.scale_in_below, 0.30);
  assert.equal(c.scale_out_after, 3_000);
  assert.equal(c.scale_in_after, 60_000);
  assert.equal(c.cooldown, 30_000);
  assert.equal(c.lag_saturated, 5);
  assert.equal(c.inflight_per_loop, 256);
  assert.equal(c.p99_target, undefined);
  assert.equal(c.liveness_timeout, 10_000);
  assert.deepEqual(c.reserved_cpus, []);
  assert.equal(c.max_instances, undefined);
  assert.equal(c.min_free_ram, 0);
  assert.ok(Object.isFrozen(c) && Object.isFrozen(c.instances));
});

Deno.test("parseControllerConfig: host limits max_instances, reserved_cpus, min_free_ram", () => {
  const parse = (more: string, host = () => [0, 1, 2, 3]) =>
    parseControllerConfig(`state_dir: /s\nconfig: /c.yaml\n${more}`, "/etc/ctl.yaml", host);
  const c = parse("max_instances: 2\nreserved_cpus: 0\nmin_free_ram: 512MiB\n");
  assert.deepEqual(c.instances, { min: 1, max: 2, initial: 1 }, "max defaults to the cap");
  assert.deepEqual(c.cpus, [1, 2, 3]);
  assert.deepEqual(c.reserved_cpus, [0]);
  assert.equal(c.min_free_ram, 512 * 1024 * 1024);
  assert.deepEqual(parse("max_instances: 8\n").instances, { min: 1, max: 8, initial: 1 });
  assert.deepEqual(
    parse("min_instances: 2\nmax_instances: 3\n").instances,
    { min: 2, max: 3, initial: 2 },
    "min_instances is instances.min",
  );
  assert.deepEqual(
    errorsOf("state_dir: /s\nconfig: /c.yaml\nmin_instances: 2\ninstances: {min: 1}\n"),
    ["min_instances: differs from instances.min (1); set one"],
  );
  assert.deepEqual(
    errorsOf(`state_dir: /s
config: /c.yaml
max_instances: 2
instances: {max: 3}
cpus: "0-1"
reserved_cpus: "1-3"
min_free_ram: 10m
`),
    [
      'min_free_ram: invalid size "10m": use bytes or a unit B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, like 512, 64KiB or 10MiB',
    ],
  );
  assert.deepEqual(
    errorsOf(`state_dir: /s
config: /c.yaml
max_instances: 2
instances: {max: 3}
cpus: "0-1"
reserved_cpus: "1-3"
`),
    [
      "instances.max: must be at most max_instances (2)",
      "cpus: 1 also in reserved_cpus: instances never use those",
    ],
  );
  assert.deepEqual(
    errorsOf("state_dir: /s\nconfig: /c.yaml\nmax_instances: 1\ninstances: {min: 2}\n"),
    ["instances.min: must be at most max_instances (1)"],
  );
  assert.deepEqual(errorsOf("state_dir: /s\nconfig: /c.yaml\nreserved_cpus: 0-1\n"), [
    "reserved_cpus: leaves no CPU for instances",
  ]);
});

Deno.test("parseControllerConfig reads every key", () => {
  const c = parseControllerConfig(
    `
state_dir: /var/lib/ctl
config: /etc/scalws/scalws.yaml
socket: /run/ctl.sock
instances: {min: 2, max: 3, initial: 3}
cpus: "0-1"
metrics_base: "127.0.0.1:20000"
drain_timeout: 10s
kill_grace: 2s
start_timeout: 5s
max_restarts: 2
restart_window: 1m
probe_interval: 100ms
autoscaling: off
scale_out_above: 0.8
scale_in_below: 0.2
scale_out_after: 5s
scale_in_after: 2m
cooldown: 10s
lag_saturated: 10ms
inflight_per_loop: 100
p99_target: 250ms
evaluation_interval: 2s
`,
    "/x/c.yaml",
    twoCpus,
  );
  assert.deepEqual(c.instances, { min: 2, max: 3, initial: 3 });
  assert.equal(c.socket, "/run/ctl.sock");
  assert.equal(c.autoscaling, false);
  assert.equal(c.drain_timeout, 10_000);
  assert.equal(c.probe_interval, 100);
  assert.equal(c.scale_in_after, 120_000);
  assert.equal(c.p99_target, 250);
  assert.equal(c.lag_saturated, 10);
  assert.deepEqual(c.metrics_base, { hostname: "127.0.0.1", port: 20000 });
});

Deno.test("parseControllerConfig accepts autoscaling as on/off or a boolean", () => {
  const one = (v: string) =>
    parseControllerConfig(`state_dir: /s\nconfig: /c\nautoscaling: ${v}\n`, "/c.yaml", twoCpus)
      .autoscaling;
  assert.equal(one("on"), true);
  assert.equal(one("off"), false);
  assert.equal(one("true"), true);
  assert.equal(one("false"), false);
});

Deno.test("parseControllerConfig reports every error with its path", () => {
  assert.deepEqual(
    errorsOf(`
config: /c
instances: {min: 3, max: 2}
autoscaling: maybe
scale_out_above: 0.3
scale_in_below: 0.5
drain_timeout: 10x
extra: 1
`),
    [
      'drain_timeout: invalid duration "10x": write a number and a unit (d, h, m, s, ms), like 10s, 500ms or 1h30m',
      "autoscaling: must be on or off",
      '(root): unknown key "extra"',
    ],
  );
  assert.deepEqual(
    errorsOf(
      "state_dir: /s\nconfig: /c\ninstances: {min: 3, max: 2}\nscale_out_above: 0.3\nscale_in_below: 0.5\n",
    ),
    [
      "instances.max: must be at least instances.min (3)",
      "instances.initial: must be between instances.min (3) and instances.max (2)",
      "scale_in_below: must be lower than scale_out_above (0.3)",
    ],
  );
  assert.deepEqual(errorsOf("state_dir: /s\nconfig: /c\ncpus: [0]\ncpus_per_instance: 2\n"), [
    "cpus_per_instance: must be at most the number of cpus (1)",
  ]);
  assert.deepEqual(errorsOf(`state_dir: /${"d".repeat(100)}\nconfig: /c\n`), [
    `socket: path "/${"d".repeat(100)}/control.sock" is longer than 107 bytes`,
    `state_dir: path "/${"d".repeat(100)}" is too long for the instances' admin sockets`,
  ]);
  assert.deepEqual(errorsOf('state_dir: /s\nconfig: /c\nmetrics_base: "127.0.0.1:65530"\n'), [
    "metrics_base: port must leave room for 9 instances below 65536",
  ]);
});

Deno.test("parseCpuList reads ranges and lists, sorted and distinct", () => {
  assert.deepEqual(parseCpuList("0-2,6,1"), [0, 1, 2, 6]);
  assert.deepEqual(parseCpuList([3, 1, 3]), [1, 3]);
  assert.deepEqual(parseCpuList(2), [2]);
  assert.throws(() => parseCpuList("3-1"), /invalid CPU range "3-1": must go upwards/);
  assert.throws(() => parseCpuList("a"), /invalid CPU list "a"/);
  assert.throws(() => parseCpuList([]), /must name at least one CPU/);
});
