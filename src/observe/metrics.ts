/**
 * A small Prometheus registry. Families hold series keyed by their label values; callers on the
 * request path resolve a series once (per member, per application) and keep it, so an increment
 * is one property write. Series can be dropped, which is how removed members and pools vanish.
 */

type Kind = "counter" | "gauge" | "histogram";

/** One counter or gauge series. */
export class Series {
  value = 0;
  constructor(readonly labels: string) {}
  inc(by = 1): void {
    this.value += by;
  }
  set(v: number): void {
    this.value = v;
  }
}

/** One histogram series with cumulative buckets rendered at scrape time. */
export class HistogramSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(readonly labels: string, readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length);
  }
  observe(v: number): void {
    const b = this.bounds;
    for (let i = 0; i < b.length; i++) {
      if (v <= b[i]) {
        this.counts[i]++;
        break;
      }
    }
    this.sum += v;
    this.count++;
  }
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function formatNumber(v: number): string {
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  if (Number.isNaN(v)) return "NaN";
  return String(v);
}

/** A metric family: a name, help text, label names and the live series. */
export class Family<S extends Series | HistogramSeries = Series> {
  readonly series = new Map<string, S>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly kind: Kind,
    readonly labelNames: readonly string[],
    private readonly make: (labels: string) => S,
  ) {}

  /** The series for these label values (in `labelNames` order), created on first use. */
  with(...values: string[]): S {
    const key = values.join("\u0000");
    let s = this.series.get(key);
    if (s === undefined) {
      let labels = "";
      for (let i = 0; i < values.length; i++) {
        labels += `${i ? "," : ""}${this.labelNames[i]}="${escapeLabel(values[i])}"`;
      }
      s = this.make(labels);
      this.series.set(key, s);
    }
    return s;
  }

  /** Drops the series with exactly these label values. */
  remove(...values: string[]): void {
    this.series.delete(values.join("\u0000"));
  }

  /** Drops every series whose first label values equal `prefix`. */
  removeMatching(...prefix: string[]): void {
    const p = prefix.join("\u0000");
    for (const key of this.series.keys()) {
      if (key === p || key.startsWith(p + "\u0000")) this.series.delete(key);
    }
  }

  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${this.help}`);
    out.push(`# TYPE ${this.name} ${this.kind}`);
    for (const s of this.series.values()) {
      if (s instanceof HistogramSeries) {
        const sep = s.labels ? "," : "";
        let cum = 0;
        for (let i = 0; i < s.bounds.length; i++) {
          cum += s.counts[i];
          out.push(
            `${this.name}_bucket{${s.labels}${sep}le="${formatNumber(s.bounds[i])}"} ${cum}`,
          );
        }
        out.push(`${this.name}_bucket{${s.labels}${sep}le="+Inf"} ${s.count}`);
        const l = s.labels ? `{${s.labels}}` : "";
        out.push(`${this.name}_sum${l} ${formatNumber(s.sum)}`);
        out.push(`${this.name}_count${l} ${s.count}`);
      } else {
        const l = s.labels ? `{${s.labels}}` : "";
        out.push(`${this.name}${l} ${formatNumber(s.value)}`);
      }
    }
  }
}

/** Default latency buckets in seconds. */
export const DURATION_BUCKETS: readonly number[] = [
  0.0005,
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
  30,
];

/** The process-wide registry; families are registered once at start-up. */
export class Registry {
  private readonly families: Family<Series | HistogramSeries>[] = [];
  /** Called before rendering, to refresh gauges that are read rather than pushed. */
  private readonly collectors: (() => void)[] = [];

  counter(name: string, help: string, labelNames: readonly string[]): Family<Series> {
    return this.add(new Family(name, help, "counter", labelNames, (l) => new Series(l)));
  }

  gauge(name: string, help: string, labelNames: readonly string[]): Family<Series> {
    return this.add(new Family(name, help, "gauge", labelNames, (l) => new Series(l)));
  }

  histogram(
    name: string,
    help: string,
    labelNames: readonly string[],
    bounds: readonly number[] = DURATION_BUCKETS,
  ): Family<HistogramSeries> {
    return this.add(
      new Family(name, help, "histogram", labelNames, (l) => new HistogramSeries(l, bounds)),
    );
  }

  onCollect(fn: () => void): void {
    this.collectors.push(fn);
  }

  /** The text exposition format, version 0.0.4. */
  render(): string {
    for (const c of this.collectors) c();
    const out: string[] = [];
    for (const f of this.families) f.render(out);
    return out.join("\n") + "\n";
  }

  private add<S extends Series | HistogramSeries>(f: Family<S>): Family<S> {
    this.families.push(f as unknown as Family<Series | HistogramSeries>);
    return f;
  }
}

export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
