// The part of autocannon's programmatic API the bench uses (the package ships no types).
declare module "autocannon" {
  export interface RawRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }
  export interface RequestSpec extends RawRequest {
    setupRequest?: (request: RawRequest, context: Record<string, unknown>) => RawRequest;
    onResponse?: (status: number, body: string, context: Record<string, unknown>) => void;
  }
  export interface Options {
    url: string;
    connections?: number;
    duration?: number;
    /** Requests to send; overrides duration. */
    amount?: number;
    pipelining?: number;
    timeout?: number;
    requests?: RequestSpec[];
  }
  export interface Histogram {
    average: number;
    total: number;
  }
  export interface Result {
    requests: Histogram;
    duration: number;
    non2xx: number;
    errors: number;
    timeouts: number;
    statusCodeStats: Record<string, { count: number }>;
  }
  export interface Instance {
    /** Every response, with its time in (fractional) milliseconds. */
    on(event: "response", listener: (client: unknown, status: number, bytes: number, responseTime: number) => void): Instance;
  }
  function autocannon(options: Options, callback: (error: Error | null, result: Result) => void): Instance;
  export default autocannon;
}
