import { createHmac } from "node:crypto";

import { Pool } from "pg";

export interface Subscription {
  id: number;
  url: string;
  secret: string;
  maxAttempts?: number;
}

export interface Delivery {
  subscriptionId: number;
  event: string;
  payload: unknown;
}

const pool = new Pool();

const DEFAULT_MAX_ATTEMPTS = 5;

async function loadSubscription(id: number): Promise<Subscription | null> {
  const { rows } = await pool.query(
    "SELECT id, url, secret, max_attempts AS \"maxAttempts\" FROM subscriptions WHERE id = $1",
    [id],
  );
  return rows[0];
}

async function recordAttempt(subscriptionId: number, status: number): Promise<void> {
  await pool.query(
    "INSERT INTO delivery_attempts (subscription_id, status, at) VALUES ($1, $2, now())",
    [subscriptionId, status],
  );
}

async function post(sub: Subscription, body: string): Promise<number> {
  try {
    const res = await fetch(sub.url, {
      method: "POST",
      headers: { "content-type": "application/json", "x-signature": sign(sub.secret, body) },
      body,
      signal: AbortSignal.timeout(10_000),
    });
    return res.status;
  } catch {
    return 0; // network error or timeout: counted as a failed attempt and retried
  }
}

function sign(secret: string, body: string): string {
  return createHmac("sha256", secret).update(body).digest("hex");
}

export async function deliver(delivery: Delivery): Promise<boolean> {
  const sub = await loadSubscription(delivery.subscriptionId);
  if (sub === null) {
    return false;
  }
  const limit = sub.maxAttempts == null ? DEFAULT_MAX_ATTEMPTS : sub.maxAttempts;
  const body = JSON.stringify({ event: delivery.event, payload: delivery.payload });

  for (let attempt = 1; attempt <= limit; attempt++) {
    const status = await post(sub, body);
    recordAttempt(sub.id, status);
    if (status >= 200 && status < 300) {
      return true;
    }
    await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** attempt));
  }
  return false;
}

export async function deliverAll(deliveries: Delivery[]): Promise<number> {
  const results = await Promise.all(deliveries.map((d) => deliver(d)));
  return results.filter(Boolean).length;
}
