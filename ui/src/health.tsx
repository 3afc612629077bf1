// Health and defenses (service admins): request rate and latency, rejections by reason, quarantine
// in and out, signature failures, withheld candidates, query-gate decisions and blocked sessions
// (with unblock), from GET /v1/admin/stats and /v1/admin/sessions/blocked. Refreshed every 10 s.
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, errorText, time } from './api';
import { Spark } from './chart';
import { ErrorLine } from './common';

type Counts = Record<string, number>;
interface Window {
  start_us: number;
  requests_per_s: number;
  p50_ms: number;
  p99_ms: number;
  rejects: Counts;
  quarantined: number;
  released: number;
  rejected: number;
  signature_failures: number;
  withheld_candidates: number;
  gate_decisions: Counts;
  honeypot_blocks: number;
}
interface Stats {
  now_us: number;
  interval_s: number;
  windows: Window[];
  totals: Omit<Window, 'start_us' | 'requests_per_s' | 'p50_ms' | 'p99_ms'> & { requests: number; entries_added: number; honeypot_refusals: number };
  blocked_sessions: number | null;
}
interface Blocked {
  namespace: string;
  principal: string;
  session: string;
  level: string;
  pot_hits: number;
  decided_at_us: number;
}

const sum = (c: Counts) => Object.values(c).reduce((a, b) => a + b, 0);

function Tile({ label, value, id }: { label: string; value: number | string; id?: string }) {
  return (
    <div class="tile" id={id}>
      <div class="value">{value}</div>
      <div class="label">{label}</div>
    </div>
  );
}

export function HealthScreen() {
  const [stats, setStats] = useState<Stats | null>(null);
  const [blocked, setBlocked] = useState<Blocked[] | null>(null);
  const [monitor, setMonitor] = useState('');
  const [error, setError] = useState('');
  const load = () => {
    api<Stats>('GET', '/v1/admin/stats')
      .then((s) => {
        setStats(s);
        setError('');
      })
      .catch((e) => setError(errorText(e)));
    api<{ blocked: Blocked[] }>('GET', '/v1/admin/sessions/blocked')
      .then((r) => setBlocked(r.blocked))
      .catch((e) => {
        setBlocked(null);
        setMonitor(e instanceof ApiError && e.status === 409 ? 'The honeypot monitor is off.' : errorText(e));
      });
  };
  useEffect(() => {
    load();
    const timer = setInterval(load, 10_000);
    return () => clearInterval(timer);
  }, []);
  const unblock = (b: Blocked) =>
    api('POST', '/v1/admin/sessions/unblock', {
      namespace: b.namespace,
      principal: b.principal,
      ...(b.session ? { session: b.session } : {}),
    })
      .then(load)
      .catch((e) => setError(errorText(e)));

  const w = stats?.windows ?? [];
  const t = stats?.totals;
  const gateNames = t ? Object.keys(t.gate_decisions) : [];
  return (
    <section>
      <div class="bar">
        <h2>Health & defenses</h2>
        <span class="muted">
          {stats ? `${w.length} windows of ${stats.interval_s} s; updated ${time(stats.now_us)}` : ''}
        </span>
      </div>
      <ErrorLine text={error} />
      {t && (
        <div class="tiles" id="totals">
          <Tile label="requests" value={t.requests} id="t-requests" />
          <Tile label="rejected requests" value={sum(t.rejects)} />
          <Tile label="entries added" value={t.entries_added} />
          <Tile label="quarantined" value={t.quarantined} />
          <Tile label="released" value={t.released} />
          <Tile label="rejected (quarantine)" value={t.rejected} />
          <Tile label="signature failures" value={t.signature_failures} />
          <Tile label="withheld candidates" value={t.withheld_candidates} />
          <Tile label="sessions blocked now" value={stats?.blocked_sessions ?? 'monitor off'} />
        </div>
      )}
      <div class="charts">
        <Spark id="c-rate" title="requests / s" series={[{ name: 'rate', values: w.map((x) => x.requests_per_s) }]} />
        <Spark
          title="latency (bucket bound)"
          unit=" ms"
          series={[
            { name: 'p50', values: w.map((x) => x.p50_ms) },
            { name: 'p99', values: w.map((x) => x.p99_ms) },
          ]}
        />
        <Spark title="rejected requests" series={[{ name: 'all', values: w.map((x) => sum(x.rejects)) }]} />
        <Spark
          title="quarantine"
          series={[
            { name: 'in', values: w.map((x) => x.quarantined) },
            { name: 'out', values: w.map((x) => x.released + x.rejected) },
          ]}
        />
        <Spark
          title="integrity"
          series={[
            { name: 'signature failures', values: w.map((x) => x.signature_failures) },
            { name: 'withheld', values: w.map((x) => x.withheld_candidates) },
          ]}
        />
        <Spark
          title="query gate"
          series={[
            { name: 'flag/escalate/strip', values: w.map((x) => (x.gate_decisions.flag ?? 0) + (x.gate_decisions.escalate ?? 0) + (x.gate_decisions.strip ?? 0)) },
            { name: 'reject', values: w.map((x) => x.gate_decisions.reject ?? 0) },
          ]}
        />
      </div>
      {t && (
        <div class="cols">
          <table>
            <caption>Rejections by reason (since start)</caption>
            <tbody>
              {Object.entries(t.rejects).map(([k, v]) => (
                <tr key={k}>
                  <td>{k}</td>
                  <td>{v}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <table>
            <caption>Query-gate decisions (since start)</caption>
            <tbody>
              {gateNames.map((k) => (
                <tr key={k}>
                  <td>{k}</td>
                  <td>{t.gate_decisions[k]}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h3>Blocked sessions</h3>
      {monitor && <p class="muted">{monitor}</p>}
      {blocked && blocked.length === 0 && <p class="muted">None.</p>}
      {blocked && blocked.length > 0 && (
        <table id="blocked">
          <thead>
            <tr>
              <th>namespace</th>
              <th>principal</th>
              <th>session</th>
              <th>level</th>
              <th>honeypot hits</th>
              <th>since</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            {blocked.map((b) => (
              <tr key={`${b.namespace}/${b.principal}/${b.session}`}>
                <td>{b.namespace}</td>
                <td>{b.principal}</td>
                <td>{b.session}</td>
                <td>{b.level}</td>
                <td>{b.pot_hits}</td>
                <td>{time(b.decided_at_us)}</td>
                <td>
                  <button onClick={() => unblock(b)}>Unblock</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
