/**
 * The loop `scalwsd ingress` and `scalwsd gateway` share: watch a set of Kubernetes resources,
 * build a configuration from them, write it and serve it, reload only when its text changes,
 * set pool members through the admin API's `PUT` (never a reload) and publish status. A mode
 * gives only its resources, its `build` and its `publish`; the events it logs are named after
 * it (`<mode>_reloaded`, `<mode>_config_refused`, `<mode>_members_refused`, `<mode>_sync_failed`).
 */
import YAML from "yaml";
import { dirname } from "node:path";
import { AdminListeners, createAdminApp } from "../admin/mod.ts";
import { ensureDir, writeFileAtomic } from "../src/base/mod.ts";
import { type KubeMember, KubeWatch } from "../src/discovery/mod.ts";
import { log } from "../src/observe/mod.ts";
import { Server } from "../src/server/mod.ts";
import type { KubeConnection } from "./kube_connection.ts";
import { MemberPusher } from "./kube_sync.ts";

/** What a mode builds from its watches: the configuration's text and the pools' members. */
export interface KubeBuild {
  readonly text: string;
  readonly members: ReadonlyMap<string, readonly KubeMember[]>;
}

/** The watches of a mode, by the names of its resources. */
export type KubeWatches<R> = Record<keyof R, KubeWatch>;

/** What every mode is started with (the command line gives the first four). */
export interface KubeStart {
  readonly baseConfig: string;
  readonly configOut: string;
  readonly kube: KubeConnection;
  /** Written to the status of the objects served (IPs or host names). */
  readonly publishStatusAddresses?: readonly string[];
  /** Test hook: access log setting for the server. */
  readonly accessLog?: string;
  /** How long to wait for the first lists before serving anyway; default 15 s. */
  readonly initialSyncMs?: number;
}

/** What `startKubeMode` needs. */
export interface KubeModeOptions<R extends Record<string, string>, B extends KubeBuild>
  extends KubeStart {
  /** `ingress` or `gateway`: the prefix of the events logged and the admin app's name. */
  readonly mode: string;
  /** The API paths watched, by name. */
  readonly resources: R;
  /**
   * Builds the configuration from the base configuration (`baseConfig`, parsed, not checked)
   * and the watches' objects; called once at start and after each burst of events.
   */
  // deno-lint-ignore no-explicit-any
  readonly build: (watches: KubeWatches<R>, base: any) => Promise<B>;
  /** Writes the status of the objects served, after the members are set. */
  readonly publish: (built: B, watches: KubeWatches<R>) => Promise<void>;
}

/** A running Kubernetes mode (an ingress or a Gateway API controller). */
export interface KubeMode {
  readonly server: Server;
  readonly admin: AdminListeners;
  /** Syncs done that wrote a new configuration (the first one included). */
  readonly configWrites: () => number;
  /** Waits for the pending sync, if any. */
  settled(): Promise<void>;
  /**
   * SIGHUP: reads `--base-config` again (a file that does not parse is logged and the last one
   * kept) and syncs, which reloads the server when the configuration changed.
   */
  reload(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the watches, writes the first configuration, then serves it. */
export async function startKubeMode<R extends Record<string, string>, B extends KubeBuild>(
  o: KubeModeOptions<R, B>,
): Promise<KubeMode> {
  let base = YAML.parse(await Deno.readTextFile(o.baseConfig)) ?? {};
  let server: Server | undefined;
  let admin: AdminListeners | undefined;
  // Set once the server runs; the closures above it read it.
  // deno-lint-ignore prefer-const
  let app: ReturnType<typeof createAdminApp> | undefined;
  let lastText = "";
  let writes = 0;
  let pending: Promise<void> = Promise.resolve();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const pusher = new MemberPusher(() => app!, () => server!, `${o.mode}_members_refused`);

  const watches = Object.fromEntries(
    Object.entries(o.resources).map(([k, path]) => [
      k,
      new KubeWatch({
        server: o.kube.server,
        path,
        headers: o.kube.headers,
        ...(o.kube.client ? { client: o.kube.client } : {}),
        onChange: () => schedule(),
      }),
    ]),
  ) as KubeWatches<R>;

  const sync = async () => {
    const built = await o.build(watches, base);
    if (built.text !== lastText) {
      await writeFileAtomic(o.configOut, built.text, 0o600);
      writes++;
      const r = await server!.reload();
      if (r.ok) {
        lastText = built.text;
        log("info", `${o.mode}_reloaded`, { generation: r.generationId });
      } else log("error", `${o.mode}_config_refused`, { errors: r.errors });
    }
    await pusher.push(built.members);
    await o.publish(built, watches);
  };

  function schedule(): void {
    if (server === undefined) return;
    clearTimeout(timer);
    // Events come in bursts (a rollout): one sync for a burst.
    timer = setTimeout(() => {
      pending = pending.then(sync).catch((err) =>
        log("error", `${o.mode}_sync_failed`, { error: String((err as Error)?.message ?? err) })
      );
    }, 50);
  }

  const all = Object.values(watches) as KubeWatch[];
  for (const w of all) w.start();
  const until = Date.now() + (o.initialSyncMs ?? 15_000);
  while (all.some((w) => w.lists === 0) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const first = await o.build(watches, base);
  await ensureDir(dirname(o.configOut));
  await writeFileAtomic(o.configOut, first.text, 0o600);
  writes++;
  lastText = first.text;
  try {
    server = await Server.prepare(o.configOut, o.accessLog ? { accessLog: o.accessLog } : {});
    await server.bind();
    admin = new AdminListeners(server);
    await admin.start();
  } catch (err) {
    for (const w of all) await w.stop();
    await admin?.stop().catch(() => {});
    await server?.drain().catch(() => {});
    throw err;
  }
  app = createAdminApp(server, () => o.mode);
  await pusher.push(first.members);
  await o.publish(first, watches);
  schedule();
  return {
    server,
    admin,
    configWrites: () => writes,
    settled: async () => {
      await new Promise((r) => setTimeout(r, 80));
      await pending;
    },
    reload() {
      pending = pending.then(async () => {
        try {
          base = YAML.parse(await Deno.readTextFile(o.baseConfig)) ?? {};
        } catch (err) {
          log("error", `${o.mode}_base_config_refused`, {
            file: o.baseConfig,
            error: String((err as Error)?.message ?? err),
          });
          return;
        }
        await sync();
      }).catch((err) =>
        log("error", `${o.mode}_sync_failed`, { error: String((err as Error)?.message ?? err) })
      );
      return pending;
    },
    async stop() {
      clearTimeout(timer);
      for (const w of all) await w.stop();
      await pending;
      await admin!.stop();
      await server!.drain();
      o.kube.client?.close();
    },
  };
}
