/**
 * Latency figures: every value kept, exact nearest-rank percentiles. Its own module so that the
 * store-only baseline can time its transactions without loading autocannon.
 */

export interface LatencyFigures {
  p50: number;
  p99: number;
  p99_9: number;
  mean: number;
  max: number;
}

/**
 * Every response time of a phase, at autocannon's full resolution (its own histogram keeps
 * whole milliseconds, too coarse for the median of small requests), and exact percentiles.
 */
export class LatencyRecorder {
  private values = new Float64Array(1 << 16);
  private count = 0;

  push(ms: number): void {
    if (this.count === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.count++] = ms;
  }

  /** Adds every value of `other` (the loads of several generators, merged into one phase). */
  pushAll(other: LatencyRecorder): void {
    const count = other.count;
    for (let i = 0; i < count; i++) this.push(other.values[i] as number);
  }

  get size(): number {
    return this.count;
  }

  figures(): LatencyFigures {
    if (this.count === 0) return { p50: 0, p99: 0, p99_9: 0, mean: 0, max: 0 };
    const sorted = this.values.slice(0, this.count).sort();
    // Nearest rank: the smallest value with at least q of all values at or below it.
    const at = (q: number): number => sorted[Math.min(this.count - 1, Math.ceil(q * this.count) - 1)] as number;
    let sum = 0;
    for (const v of sorted) sum += v;
    return {
      p50: at(0.5),
      p99: at(0.99),
      p99_9: at(0.999),
      mean: sum / this.count,
      max: sorted[this.count - 1] as number,
    };
  }
}
