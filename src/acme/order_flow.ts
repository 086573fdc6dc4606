/**
 * One certificate order (RFC 8555 §7.4) with HTTP-01: account, newOrder for the domains,
 * each pending authorization's http-01 challenge answered (through `Http01Challenges`) and
 * polled to its outcome, finalize with a request for a new P-256 key, the order polled to
 * `valid`, the chain downloaded. Bounded by a deadline; a failure names the domain and the
 * server's reason.
 */
import { generateCertificateKey } from "./cert_key.ts";
import { b64url } from "./base64url.ts";
import type { AcmeClient } from "./client.ts";
import { buildCsr } from "./csr.ts";
import { AcmeProtocolError } from "./errors.ts";
import type { Http01Challenges } from "./http01.ts";
import { keyAuthorization } from "./jws.ts";
import { type Authorization, type Order, parseAuthorization, parseOrder } from "./messages.ts";
import { pollDelay } from "./poll.ts";

/** Default bound of one order, polls included (ms). */
export const ORDER_DEADLINE = 120_000;

export interface OrderOptions {
  readonly client: AcmeClient;
  readonly domains: readonly string[];
  readonly email?: string;
  readonly challenges: Http01Challenges;
  /** Wall clock (ms); default `Date.now`. */
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Default `ORDER_DEADLINE`. */
  readonly deadlineMs?: number;
}

/** What an order yields: the PEM chain (leaf first) and the PEM key of the leaf. */
export interface IssuedCertificate {
  readonly cert: string;
  readonly key: string;
}

/** An order that ended without a certificate, with the reason. */
export class OrderFailed extends Error {
  override readonly name = "OrderFailed";
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function reason(p: { type: string; detail: string } | undefined): string {
  if (p === undefined) return "no reason given";
  const t = p.type.replace("urn:ietf:params:acme:error:", "");
  return p.detail ? `${t}: ${p.detail}` : t;
}

export async function orderCertificate(o: OrderOptions): Promise<IssuedCertificate> {
  const now = o.now ?? Date.now;
  const sleep = o.sleep ?? defaultSleep;
  const deadline = now() + (o.deadlineMs ?? ORDER_DEADLINE);
  const client = o.client;
  const wait = async (retryAfter: string | null, attempt: number, what: string) => {
    const ms = pollDelay(retryAfter, now(), attempt);
    if (now() + ms > deadline) throw new OrderFailed(`${what}: no outcome before the deadline`);
    await sleep(ms);
  };

  await client.account(o.email);
  const dir = await client.directory();
  const created = await client.post(dir.newOrder, {
    identifiers: o.domains.map((value) => ({ type: "dns", value })),
  });
  const orderUrl = created.headers.get("location");
  if (orderUrl === null) throw new AcmeProtocolError(`${dir.newOrder}: no Location for the order`);
  let order: Order = parseOrder(created.text);

  const tokens: string[] = [];
  try {
    for (const authzUrl of order.authorizations) {
      let authz: Authorization = parseAuthorization((await client.post(authzUrl, null)).text);
      const domain = authz.identifier.value;
      if (authz.status === "valid") continue;
      if (authz.status !== "pending") {
        throw new OrderFailed(`${domain}: authorization is ${authz.status}`);
      }
      const ch = authz.challenges.find((c) => c.type === "http-01");
      if (ch === undefined || ch.token === undefined) {
        throw new OrderFailed(`${domain}: the server offers no http-01 challenge`);
      }
      tokens.push(ch.token);
      await o.challenges.add(domain, ch.token, keyAuthorization(ch.token, client.key));
      if (ch.status === "pending") await client.post(ch.url, {});
      for (let attempt = 0; authz.status === "pending"; attempt++) {
        const res = await client.post(authzUrl, null);
        authz = parseAuthorization(res.text);
        if (authz.status === "pending") {
          await wait(res.headers.get("retry-after"), attempt, `${domain}: authorization`);
        }
      }
      if (authz.status !== "valid") {
        const failed = authz.challenges.find((c) => c.type === "http-01");
        throw new OrderFailed(
          `${domain}: authorization ${authz.status}: ${reason(failed?.error)}`,
        );
      }
    }
  } finally {
    for (const t of tokens) await o.challenges.remove(t);
  }

  for (let attempt = 0; order.status === "pending"; attempt++) {
    const res = await client.post(orderUrl, null);
    order = parseOrder(res.text);
    if (order.status === "pending") await wait(res.headers.get("retry-after"), attempt, "order");
  }
  if (order.status === "invalid") throw new OrderFailed(`order invalid: ${reason(order.error)}`);

  // Finalize only an order this run made ready: a certificate finalized elsewhere has a key
  // this run does not hold.
  if (order.status !== "ready") {
    throw new OrderFailed(`order ${order.status} before finalize: ${reason(order.error)}`);
  }
  const key = await generateCertificateKey();
  const csr = await buildCsr(o.domains, key);
  let last = await client.post(order.finalize, { csr: b64url(csr) });
  order = parseOrder(last.text);
  for (let attempt = 0; order.status === "processing" || order.status === "ready"; attempt++) {
    await wait(last.headers.get("retry-after"), attempt, "finalize");
    last = await client.post(orderUrl, null);
    order = parseOrder(last.text);
  }
  if (order.status !== "valid") {
    throw new OrderFailed(`order ${order.status} after finalize: ${reason(order.error)}`);
  }
  const chain = await client.post(order.certificate!, null, {
    accept: "application/pem-certificate-chain",
  });
  if (!chain.text.includes("-----BEGIN CERTIFICATE-----")) {
    throw new AcmeProtocolError(`${order.certificate}: the answer holds no PEM certificate`);
  }
  return { cert: chain.text, key: key.pem };
}
