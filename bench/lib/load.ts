// The load generator: autocannon's programmatic API driven by a Traffic, which makes each
// request just before it is sent and may read its response (to follow ETags, say). The same
// Traffic can be replayed once with fetch, to probe a server before loading it.
import { request as httpRequest } from "node:http";
import autocannon, { type RawRequest, type Result } from "autocannon";

export interface Step {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Called with the response; only where a Traffic reads responses. */
  done?: (status: number, body: string) => void;
}

export interface Traffic {
  next(): Step;
  /** Whether steps carry `done`: autocannon then keeps every response body. */
  readsResponses: boolean;
  /**
   * Called after each load: a load's end leaves requests unanswered (autocannon stops with them
   * in flight), and a Traffic whose steps depend on earlier answers puts itself right here.
   */
  settle?(url: string): Promise<void>;
}

export interface Measurement {
  /** Responses completed. */
  requests: number;
  rps: number;
  /** Latency percentiles in milliseconds. */
  p50: number;
  p99: number;
  /** Responses outside 2xx, socket errors and timeouts together. */
  failures: number;
  statuses: string;
}

export interface LoadOptions {
  connections: number;
  /** Seconds. */
  duration: number;
  /** A number of requests to send instead, however long they take. */
  amount?: number;
}

/** The q-quantile of unsorted values (sorts them). */
function quantile(values: Float64Array, q: number): number {
  if (values.length === 0) return NaN;
  values.sort();
  return values[Math.min(values.length - 1, Math.floor(q * values.length))]!;
}

export async function load(url: string, traffic: Traffic, options: LoadOptions): Promise<Measurement> {
  // autocannon's own percentiles are whole milliseconds; the response events carry fractions.
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  const record = (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 300) return;
    if (count === latencies.length) {
      const grown = new Float64Array(count * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[count++] = ms;
  };
  const requests = [
    {
      setupRequest: (request: RawRequest, context: Record<string, unknown>) => {
        const { done, ...step } = traffic.next();
        context.done = done;
        // autocannon writes Content-Length into the headers it is given: a copy keeps a
        // Traffic's shared header objects from carrying one request's length into the next.
        return { ...request, ...step, headers: { ...request.headers, ...step.headers } };
      },
      ...(traffic.readsResponses
        ? { onResponse: (status: number, body: string, context: Record<string, unknown>) => (context.done as Step["done"])?.(status, body) }
        : {}),
    },
  ];
  const result = await new Promise<Result>((resolve, reject) => {
    const { connections, duration, amount } = options;
    autocannon({ url, connections, duration, amount, requests }, (error, done) => (error ? reject(error) : resolve(done))).on("response", record);
  });
  await traffic.settle?.(url);
  const measured = latencies.subarray(0, count);
  const statuses = Object.entries(result.statusCodeStats)
    .map(([code, { count }]) => `${code}×${count}`)
    .join(" ");
  return {
    requests: result.requests.total,
    rps: result.requests.total / result.duration,
    p50: quantile(measured, 0.5),
    p99: quantile(measured, 0.99),
    failures: result.non2xx + result.errors + result.timeouts,
    statuses,
  };
}

/**
 * One request on a connection of its own: a pooled keep-alive connection left idle while the
 * load runs can be answered 408 by a Node server, which would make a good server look broken.
 */
export interface Answer {
  status: number;
  /** Names in lower case, as node:http gives them. */
  headers: Record<string, string | string[] | undefined>;
  body: string;
  bytes: number;
}

export function send(url: string, method: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        const bytes = Buffer.concat(chunks);
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: bytes.toString("utf8"), bytes: bytes.byteLength });
      });
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end(body);
  });
}

/** Sends one step as the load would, and reports the response. */
export async function probe(url: string, traffic: Traffic): Promise<Answer & { step: Step }> {
  const step = traffic.next();
  const answer = await send(url + step.path, step.method, step.headers, step.body);
  step.done?.(answer.status, answer.body);
  return { step, ...answer };
}
