// A small hand-rolled SVG line chart (a sparkline with its last value and maximum). Attributes
// only: no inline style, which the page's Content-Security-Policy would refuse.

export function Spark(props: { title: string; series: { name: string; values: number[] }[]; unit?: string; id?: string }) {
  const width = 260;
  const height = 56;
  const all = props.series.flatMap((s) => s.values);
  const max = Math.max(1e-9, ...all);
  const n = Math.max(2, ...props.series.map((s) => s.values.length));
  const point = (v: number, i: number) =>
    `${((i / (n - 1)) * (width - 2) + 1).toFixed(1)},${(height - 2 - (v / max) * (height - 4)).toFixed(1)}`;
  const fmt = (v: number) => (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(2));
  return (
    <figure class="chart" id={props.id}>
      <figcaption>
        {props.title}
        {props.series.map((s) => (
          <span key={s.name} class="legend">
            {' '}
            {s.name}: {fmt(s.values[s.values.length - 1] ?? 0)}
            {props.unit ?? ''}
          </span>
        ))}
        <span class="muted"> (max {fmt(max)})</span>
      </figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} width={width} height={height} role="img" aria-label={props.title}>
        <rect x="0" y="0" width={width} height={height} class="frame" />
        {props.series.map((s, k) => (
          <polyline key={s.name} class={`line line${k}`} fill="none" points={s.values.map(point).join(' ')} />
        ))}
        {props.series.map((s, k) => {
          // The latest value as a dot, so a single window shows too.
          if (s.values.length === 0) return null;
          const [x, y] = point(s.values[s.values.length - 1], s.values.length - 1).split(',');
          return <circle key={'dot' + s.name} class={`dot line${k}`} cx={x} cy={y} r="2" />;
        })}
      </svg>
    </figure>
  );
}
