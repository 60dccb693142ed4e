/** uPlot charts: a balance over time (stepped line) and usage per day (bars, one series per type). */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const COLORS = ['#1d4ed8', '#b45309', '#047857', '#9d174d', '#6d28d9', '#0e7490', '#4d7c0f', '#be123c'];

/**
 * Bars get half a step of room at both ends (the first and last bar are drawn whole); a single instant
 * (or a few seconds) still gets a readable minute-wide time axis.
 */
function widen(u: uPlot, x: number[], kind: 'step' | 'bars'): void {
  const min = x[0];
  const max = x[x.length - 1];
  if (min === undefined || max === undefined) return;
  const step = x.length > 1 ? (x[1]! - min) / 2 : 30;
  if (kind === 'bars') u.setScale('x', { min: min - step, max: max + step });
  else if (max - min < 60) u.setScale('x', { min: min - 30, max: max + 30 });
}

export interface Series {
  label: string;
  values: (number | null)[];
}

/**
 * One chart. `x` is seconds since the epoch. The chart keeps its instance and only swaps the data when
 * new data arrives (live updates redraw without flicker); it follows its container's width.
 */
export function Chart(props: {
  title: string;
  x: number[];
  series: Series[];
  kind: 'step' | 'bars';
  height?: number;
  summary: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const shape = `${props.kind}:${props.series.map((s) => s.label).join('|')}`;
  const shapeRef = useRef('');

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const data = [props.x, ...props.series.map((s) => s.values)] as uPlot.AlignedData;
    if (plot.current && shapeRef.current === shape) {
      plot.current.setData(data);
      widen(plot.current, props.x, props.kind);
      return;
    }
    plot.current?.destroy();
    shapeRef.current = shape;
    const bars = uPlot.paths.bars?.({ size: [0.7, 40], align: 0 });
    const stepped = uPlot.paths.stepped?.({ align: 1 });
    const opts: uPlot.Options = {
      width: Math.max(280, el.clientWidth),
      height: props.height ?? 220,
      legend: { show: props.series.length > 1 },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true } },
      axes: [{}, { size: 60 }],
      series: [
        {},
        ...props.series.map((s, i) => ({
          label: s.label,
          stroke: COLORS[i % COLORS.length],
          width: 2,
          fill: props.kind === 'bars' ? `${COLORS[i % COLORS.length]}99` : `${COLORS[i % COLORS.length]}1a`,
          paths: props.kind === 'bars' ? bars : stepped,
          points: { show: false },
        })),
      ],
    };
    plot.current = new uPlot(opts, data, el);
    widen(plot.current, props.x, props.kind);
  });

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const ro = new ResizeObserver(() => {
      if (plot.current) plot.current.setSize({ width: Math.max(280, el.clientWidth), height: props.height ?? 220 });
    });
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, []);

  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <div ref={box} role="img" aria-label={`${props.title}: ${props.summary}`} data-points={props.x.length} />
    </figure>
  );
}
