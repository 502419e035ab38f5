#!/usr/bin/env node
// A leader elector on etcd in JavaScript (Node.js 18 or later, nothing to install), for
// `verify conform --client "node examples/clients/etcd_elector.mjs --variant unfenced"`
// on the lease protocols: the client protocol is JSON lines, whatever the language.
//
// It speaks etcd's JSON gateway (/v3/lease/grant, /v3/kv/txn, /v3/lease/keepalive) with
// fetch. Acquiring is a lease grant, then a put-if-absent transaction on `leader_key`; the
// token is the put's revision. The check before a write is its own copy of the lease,
// counted on its monotonic clock from the grant or the last renewal.
//
// --variant fenced: the write is one transaction the storage refuses when it already
// accepted a higher token. --variant unfenced (the bug): it writes what it decided.

import { createInterface } from "node:readline";
import { randomUUID } from "node:crypto";

const config = JSON.parse(process.env.LEADERCHECK_CONFIG);
const fenced = !process.argv.includes("unfenced");
const timeoutMs = 1000 * Number(config.timeout ?? 2);
const b64 = (text) => Buffer.from(text).toString("base64");
const padded = (token) => String(token).padStart(20, "0");
const now = () => Number(process.hrtime.bigint() / 1000000n) / 1000;

async function call([host, port], path, body) {
  const reply = await fetch(`http://${host}:${port}/v3/${path}`, {
    method: "POST",
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!reply.ok) throw new Error(`etcd answered ${reply.status} to ${path}`);
  return reply.json();
}

const state = { lease: null, token: 0, renewedAt: 0, pending: 0 };
const leads = () => state.token > 0 && now() - state.renewedAt < config.ttl_seconds;

const ops = {
  async grant() {
    const reply = await call(config.store, "lease/grant", { TTL: config.ttl_seconds });
    state.lease = reply.ID;
    return { lease: reply.ID };
  },
  async acquire() {
    const key = b64(config.leader_key);
    const reply = await call(config.store, "kv/txn", {
      compare: [{ key, result: "EQUAL", target: "CREATE", create_revision: "0" }],
      success: [{ request_put: { key, value: b64(config.name), lease: state.lease } }],
    });
    if (!reply.succeeded) return { granted: false };
    state.token = Number(reply.header.revision);
    state.renewedAt = now();
    return { granted: true, token: state.token };
  },
  async renew() {
    const reply = await call(config.store, "lease/keepalive", { ID: state.lease });
    const ttl = Number(reply.result?.TTL ?? -1);
    if (ttl > 0) state.renewedAt = now();
    return { renewed: ttl > 0 };
  },
  async check() {
    state.pending = leads() ? state.token : 0;
    return { believes_leader: leads(), token: state.token };
  },
  async write() {
    const token = state.pending;
    state.pending = 0;
    const value = b64(padded(token));
    const entry = { request_put: { key: b64(config.storage_log_prefix + randomUUID()), value } };
    if (!fenced) {
      await call(config.storage, "kv/txn", { success: [entry] });
      return { accepted: true, token };
    }
    const hiKey = b64(config.storage_hi_key);
    const reply = await call(config.storage, "kv/txn", {
      compare: [{ key: hiKey, result: "GREATER", target: "VALUE", value }],
      failure: [{ request_put: { key: hiKey, value } }, entry],
    });
    return { accepted: !reply.succeeded, token };
  },
  async belief() {
    return { leader: leads(), token: leads() ? state.token : null };
  },
};

const say = (reply) => process.stdout.write(JSON.stringify(reply) + "\n");
say({ ok: true, result: { ready: process.pid, background: null } });
for await (const line of createInterface({ input: process.stdin })) {
  const request = JSON.parse(line);
  const op = ops[request.op];
  try {
    if (!op) throw new Error(`no operation ${request.op}`);
    say({ ok: true, result: await op(request.args ?? {}) });
  } catch (error) {
    // a failed call: the harness compares it as no reply (a cut link, a lost reply)
    say({ ok: false, error: `${error.name}: ${error.message}`.slice(0, 300) });
  }
}
