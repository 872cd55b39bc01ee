// What the metrics endpoint (METRICS_ENDPOINT) reports of this process: requests by resource,
// endpoint, method and status, their latency, database failures, open streams and requests in
// flight. Built only when the endpoint is on, so a service without it records nothing
// (docs/contracts.md §7). Each instance reports its own; Prometheus adds them up.
import { Counter, expose, Gauge, Histogram } from "./exposition.ts";

/** Methods reported by name; any other (a client may send anything) as OTHER, so labels stay few. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** Prometheus' default latency buckets, in seconds. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface MetricSources {
  openStreams(): number;
  inFlight(): number;
}

export type DatabaseErrorSource = "request" | "readiness";

export class ServiceMetrics {
  private readonly requests = new Counter("everest_http_requests_total", "HTTP requests answered, by resource, endpoint kind, method and status.", ["resource", "endpoint", "method", "status"]);
  private readonly latency = new Histogram("everest_http_request_duration_seconds", "Time from a request's arrival to its response's headers, in seconds.", ["resource", "endpoint", "method"], BUCKETS);
  private readonly databaseErrors = new Counter("everest_database_errors_total", "Database operations that failed because the database was unavailable, by where they were made.", ["source"]);
  private readonly metrics;

  constructor(sources: MetricSources) {
    this.metrics = [
      this.requests,
      this.latency,
      this.databaseErrors,
      new Gauge("everest_open_streams", "Event streams open now.", sources.openStreams),
      new Gauge("everest_http_requests_in_flight", "Requests being answered now.", sources.inFlight),
    ];
  }

  /** One answered request; `resource` is "" for endpoints that are not a resource's. */
  observe(resource: string, endpoint: string, method: string, status: number, seconds: number): void {
    const name = METHODS.has(method) ? method : "OTHER";
    this.requests.inc([resource, endpoint, name, String(status)]);
    this.latency.observe([resource, endpoint, name], seconds);
  }

  databaseError(source: DatabaseErrorSource): void {
    this.databaseErrors.inc([source]);
  }

  text(): string {
    return expose(this.metrics);
  }
}
