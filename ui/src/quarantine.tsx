// Quarantine review per namespace: each held entry with the detector that fired (score against
// threshold), its provenance, the nearest active memories (and, for a conflict, the memory it
// contradicts with the changed slots highlighted), and release / reject with a reason.
import { useEffect, useRef, useState } from 'preact/hooks';
import { age, api, AuditRecord, Conflict, DetectorReport, Entry, errorText, query, time, WhoAmI } from './api';
import type { Jump } from './app';
import { ErrorLine, Highlighted, Json, NamespacePicker, useNamespaces } from './common';

// The detectors of an entry's report: the write gate's ({"gate": {"detectors": {name: {score,
// threshold, flagged, reason, detail}}}}) and the reasons of its quarantine, in the shapes the store
// writes: the write gate's list of "detector: reason" strings ({"quarantine": {"reasons": [...],
// "by": "bulwark:write-gate"}}; a detector already listed from the gate's report is not repeated),
// an operator's manual quarantine ([{"detector": "operator", "reason"}]) or a {detector: reason}
// object from the library API.
function detectorsOf(entry: Entry): [string, DetectorReport][] {
  const report = entry.report;
  if (!report || typeof report !== 'object') return [];
  const out: [string, DetectorReport][] = [];
  const gate = (report.gate ?? report) as { detectors?: Record<string, DetectorReport> };
  for (const [name, d] of Object.entries(gate.detectors ?? {})) out.push([name, d]);
  const listed = new Set(out.map(([name]) => name));
  const add = (name: string, reason: string | undefined) => {
    if (listed.has(name)) return;
    listed.add(name);
    out.push([name, { flagged: true, reason }]);
  };
  const held = (report.quarantine as { reasons?: unknown } | undefined)?.reasons;
  if (Array.isArray(held)) {
    for (const r of held as unknown[]) {
      if (typeof r === 'string') {
        const colon = r.indexOf(': ');
        if (colon > 0) add(r.slice(0, colon), r.slice(colon + 2));
        else add('write gate', r);
      } else if (r && typeof r === 'object') {
        const o = r as { detector?: string; reason?: string };
        add(o.detector ?? 'operator', o.reason);
      }
    }
  } else if (held && typeof held === 'object') {
    for (const [name, reason] of Object.entries(held as Record<string, unknown>)) {
      add(name, typeof reason === 'string' ? reason : JSON.stringify(reason));
    }
  }
  return out;
}

function conflictOf(entry: Entry): Conflict | null {
  for (const [name, d] of detectorsOf(entry)) {
    if (name !== 'conflict') continue;
    const c = d.conflict ?? (d.detail as { conflict?: Conflict } | undefined)?.conflict;
    if (c && typeof c.entry_id === 'string') return c;
  }
  return null;
}

function num(x: number | undefined): string {
  return typeof x === 'number' ? x.toFixed(3) : '–';
}

function Detectors({ entry }: { entry: Entry }) {
  const rows = detectorsOf(entry);
  if (rows.length === 0) return <p class="muted">No detector report.</p>;
  return (
    <table class="detectors">
      <thead>
        <tr>
          <th>detector</th>
          <th>score</th>
          <th>threshold</th>
          <th>fired</th>
          <th>reason</th>
        </tr>
      </thead>
      <tbody>
        {rows.map(([name, d]) => (
          <tr key={name} class={d.flagged ? 'fired' : ''}>
            <td>{name}</td>
            <td>{num(d.score)}</td>
            <td>{num(d.threshold)}</td>
            <td>{d.flagged ? 'yes' : 'no'}</td>
            <td>{d.reason ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function ConflictView({ entry, conflict }: { entry: Entry; conflict: Conflict }) {
  const [old, setOld] = useState<Entry | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    api<{ entry: Entry }>('GET', `/v1/memories/${encodeURIComponent(conflict.entry_id)}${query({ namespace: entry.namespace })}`)
      .then((r) => setOld(r.entry))
      .catch((e) => setError(errorText(e)));
  }, [conflict.entry_id]);
  const slots = conflict.slots ?? [];
  return (
    <div class="conflict">
      <h4>
        Contradicts {conflict.entry_id}
        {typeof conflict.similarity === 'number' ? ` (similarity ${conflict.similarity.toFixed(2)})` : ''}
        {conflict.polarity_changed ? ', polarity changed' : ''}
      </h4>
      <ErrorLine text={error} />
      <div class="pair">
        <div>
          <div class="label">active memory</div>
          <p class="memtext conflict-old">
            <Highlighted text={old?.text ?? ''} marks={slots.map((s) => s.old)} />
          </p>
        </div>
        <div>
          <div class="label">this write</div>
          <p class="memtext conflict-new">
            <Highlighted text={entry.text ?? ''} marks={slots.map((s) => s.new)} />
          </p>
        </div>
      </div>
      <ul class="slots">
        {slots.map((s, i) => (
          <li key={i}>
            {s.kind}: <del>{s.old}</del> → <ins>{s.new}</ins>
          </li>
        ))}
      </ul>
    </div>
  );
}

function Provenance({ entry }: { entry: Entry }) {
  const [add, setAdd] = useState<AuditRecord | null>(null);
  useEffect(() => {
    api<{ records: AuditRecord[] }>('GET', '/v1/audit' + query({ namespace: entry.namespace, entry_id: entry.id, limit: 50 }))
      .then((r) => setAdd(r.records.filter((x) => x.operation === 'add').pop() ?? null))
      .catch(() => setAdd(null));
  }, [entry.id]);
  return (
    <dl class="provenance">
      <dt>principal</dt>
      <dd>{entry.principal}</dd>
      <dt>source</dt>
      <dd>{entry.source}</dd>
      <dt>session</dt>
      <dd>{add?.session || '–'}</dd>
      <dt>API key</dt>
      <dd>{String(add?.detail?.key_id ?? '–')}</dd>
      <dt>time</dt>
      <dd>{time(entry.created_at_us)}</dd>
    </dl>
  );
}

function Nearest({ entry }: { entry: Entry }) {
  const [hits, setHits] = useState<Entry[] | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    // gate "off": the held text may well look like an attack query; an admin may lift the gate.
    api<{ hits: Entry[] }>('POST', '/v1/memories/search', {
      namespace: entry.namespace,
      query: entry.text ?? '',
      k: 3,
      gate: 'off',
    })
      .then((r) => setHits(r.hits))
      .catch((e) => setError(errorText(e)));
  }, [entry.id]);
  return (
    <div class="nearest">
      <h4>Nearest active memories</h4>
      <ErrorLine text={error} />
      {hits && hits.length === 0 && <p class="muted">None.</p>}
      <ol>
        {(hits ?? []).map((h) => (
          <li key={h.id}>
            <span class="score">{num(h.score)}</span> <span class="memtext">{h.text}</span>
          </li>
        ))}
      </ol>
    </div>
  );
}

function Item({ entry, onDone, go }: { entry: Entry; onDone: (msg: string) => void; go: (j: Jump) => void }) {
  const [reason, setReason] = useState('');
  const [error, setError] = useState('');
  const conflict = conflictOf(entry);
  const act = async (action: 'release' | 'reject') => {
    try {
      await api('POST', `/v1/quarantine/${encodeURIComponent(entry.id)}/${action}`, {
        namespace: entry.namespace,
        ...(reason.trim() ? { reason: reason.trim() } : {}),
      });
      onDone(`${action === 'release' ? 'Released' : 'Rejected'} ${entry.id}`);
    } catch (e) {
      setError(errorText(e));
    }
  };
  return (
    <article class="item" data-id={entry.id}>
      <header>
        <code>{entry.id}</code> <span class="muted">held for {age(entry.updated_at_us)}</span>
      </header>
      <p class="memtext text">{entry.text}</p>
      {entry.metadata && Object.keys(entry.metadata).length > 0 && <Json value={entry.metadata} />}
      <div class="cols">
        <div>
          <h4>Detectors</h4>
          <Detectors entry={entry} />
        </div>
        <div>
          <h4>Provenance</h4>
          <Provenance entry={entry} />
        </div>
      </div>
      {conflict && <ConflictView entry={entry} conflict={conflict} />}
      <Nearest entry={entry} />
      <div class="actions">
        <input
          class="reason"
          placeholder="reason (recorded in the audit log)"
          maxLength={1024}
          value={reason}
          onInput={(e) => setReason((e.target as HTMLInputElement).value)}
        />
        <button class="release" onClick={() => act('release')}>
          Release
        </button>
        <button class="reject danger" onClick={() => act('reject')}>
          Reject
        </button>
        <button class="link" onClick={() => go({ screen: 'audit', namespace: entry.namespace, entryId: entry.id })}>
          Blast radius
        </button>
      </div>
      <ErrorLine text={error} />
    </article>
  );
}

const PAGE = 10;

export function QuarantineScreen({ go }: { me: WhoAmI; go: (j: Jump) => void }) {
  const [namespaces, reloadNamespaces, nsError] = useNamespaces();
  const [ns, setNs] = useState('');
  const [entries, setEntries] = useState<Entry[]>([]);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const [lastDone, setLastDone] = useState<{ id: string; namespace: string } | null>(null);
  const latest = useRef(0); // only the newest list request may fill the screen
  // Each item makes two calls (provenance, nearest memories): show a few at a time, well inside
  // the key's rate limit (50/s, burst 100 by default).
  const [shown, setShown] = useState(PAGE);

  useEffect(() => {
    // A functional update: the user may have picked a namespace since this effect was scheduled.
    if (namespaces.length > 0) {
      const first = namespaces.find((n) => n.quarantined > 0) ?? namespaces[0];
      setNs((current) => current || first.namespace);
    }
  }, [namespaces]);
  const load = () => {
    if (!ns) return;
    const ticket = ++latest.current;
    api<{ entries: Entry[] }>('GET', '/v1/quarantine' + query({ namespace: ns, limit: 100 }))
      .then((r) => {
        if (ticket !== latest.current) return;
        setEntries(r.entries);
        setError('');
      })
      .catch((e) => setError(errorText(e)));
  };
  useEffect(load, [ns]);
  useEffect(() => setShown(PAGE), [ns]);

  const pending = namespaces.find((n) => n.namespace === ns)?.quarantined ?? entries.length;
  const oldest = entries.length > 0 ? Math.min(...entries.map((e) => e.updated_at_us)) : 0;
  return (
    <section>
      <div class="bar">
        <h2>Quarantine</h2>
        <NamespacePicker list={namespaces} value={ns} onChange={setNs} />
        <span id="pending" class="badge">
          {pending} pending
        </span>
        {oldest > 0 && (
          <span id="oldest" class="muted">
            oldest held {age(oldest)}
          </span>
        )}
      </div>
      <ErrorLine text={nsError || error} />
      {notice && (
        <p class="notice" id="notice">
          {notice}{' '}
          {lastDone && (
            <button
              class="link"
              id="follow-last"
              onClick={() => go({ screen: 'audit', namespace: lastDone.namespace, entryId: lastDone.id })}
            >
              What did it feed?
            </button>
          )}
        </p>
      )}
      {ns && entries.length === 0 && !error && <p class="muted">Nothing held in {ns}.</p>}
      {entries.slice(0, shown).map((e) => (
        <Item
          key={e.id}
          entry={e}
          go={go}
          onDone={(msg) => {
            setNotice(msg);
            setLastDone({ id: e.id, namespace: e.namespace });
            load();
            reloadNamespaces();
          }}
        />
      ))}
      {entries.length > shown && (
        <button id="more" onClick={() => setShown(shown + PAGE)}>
          Show {Math.min(PAGE, entries.length - shown)} more of {entries.length - shown}
        </button>
      )}
    </section>
  );
}
