// Counters, gauges and histograms in Prometheus' text exposition format (version 0.0.4), written
// here rather than taken from prom-client: that library is CommonJS for Node (cluster, v8,
// perf_hooks) and does not run on Workers, and the format is a few lines. Label values are
// escaped as the format says; each metric keeps its series in a Map keyed by its label values.

export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

type Labels = readonly string[];

const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');

function labelText(names: Labels, values: Labels, extra = ""): string {
  const pairs = names.map((name, i) => `${name}="${escapeLabel(values[i] ?? "")}"`);
  if (extra) pairs.push(extra);
  return pairs.length > 0 ? `{${pairs.join(",")}}` : "";
}

/** A number as the format writes it: +Inf, -Inf and NaN spelled out. */
function sample(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

interface Metric {
  /** The metric's lines: HELP, TYPE and its samples. */
  expose(): string;
}

abstract class Family<T> implements Metric {
  protected readonly series = new Map<string, { values: Labels; data: T }>();
  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly type: string,
    protected readonly labels: Labels,
  ) {}

  protected entry(values: Labels, make: () => T): T {
    const key = values.join("\u0000");
    let found = this.series.get(key);
    if (!found) {
      found = { values: [...values], data: make() };
      this.series.set(key, found);
    }
    return found.data;
  }

  expose(): string {
    const lines = [`# HELP ${this.name} ${this.help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}`, `# TYPE ${this.name} ${this.type}`];
    for (const { values, data } of this.series.values()) lines.push(...this.samples(values, data));
    return lines.join("\n") + "\n";
  }

  protected abstract samples(values: Labels, data: T): string[];
}

export class Counter extends Family<{ value: number }> {
  constructor(name: string, help: string, labels: Labels = []) {
    super(name, help, "counter", labels);
  }

  inc(values: Labels = [], by = 1): void {
    this.entry(values, () => ({ value: 0 })).value += by;
  }

  protected samples(values: Labels, data: { value: number }): string[] {
    return [`${this.name}${labelText(this.labels, values)} ${sample(data.value)}`];
  }
}

/** A gauge whose value is read when scraped (a count kept elsewhere). */
export class Gauge implements Metric {
  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly read: () => number,
  ) {}

  expose(): string {
    return `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} gauge\n${this.name} ${sample(this.read())}\n`;
  }
}

interface Buckets {
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram extends Family<Buckets> {
  constructor(
    name: string,
    help: string,
    labels: Labels,
    /** Upper bounds, ascending; +Inf is added. */
    private readonly bounds: readonly number[],
  ) {
    super(name, help, "histogram", labels);
  }

  observe(values: Labels, value: number): void {
    const data = this.entry(values, () => ({ counts: this.bounds.map(() => 0), sum: 0, count: 0 }));
    // Each observation counts in its own bucket only; exposition makes them cumulative.
    const bucket = this.bounds.findIndex((bound) => value <= bound);
    if (bucket >= 0) data.counts[bucket]! += 1;
    data.sum += value;
    data.count += 1;
  }

  protected samples(values: Labels, data: Buckets): string[] {
    const lines: string[] = [];
    let cumulative = 0;
    this.bounds.forEach((bound, i) => {
      cumulative += data.counts[i]!;
      lines.push(`${this.name}_bucket${labelText(this.labels, values, `le="${sample(bound)}"`)} ${cumulative}`);
    });
    lines.push(`${this.name}_bucket${labelText(this.labels, values, 'le="+Inf"')} ${data.count}`);
    lines.push(`${this.name}_sum${labelText(this.labels, values)} ${sample(data.sum)}`);
    lines.push(`${this.name}_count${labelText(this.labels, values)} ${data.count}`);
    return lines;
  }
}

/** Every metric's lines, in the order given. */
export function expose(metrics: readonly Metric[]): string {
  return metrics.map((metric) => metric.expose()).join("");
}
