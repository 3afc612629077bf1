// Memories: a namespace's entries by state with filters; one entry's detail with its signed history
// (each event's verification) and, for admins, purge behind a typed confirmation.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, Entry, errorText, HistoryEvent, query, time, WhoAmI } from './api';
import type { Jump } from './app';
import { ErrorLine, Json, NamespacePicker, useNamespaces } from './common';

const STATES = ['active', 'quarantined', 'deleted', 'purged'];

function Detail({ me, ns, id, go, onChanged }: { me: WhoAmI; ns: string; id: string; go: (j: Jump) => void; onChanged: () => void }) {
  const [entry, setEntry] = useState<Entry | null>(null);
  const [events, setEvents] = useState<HistoryEvent[]>([]);
  const [confirm, setConfirm] = useState('');
  const [error, setError] = useState('');
  const load = () => {
    const q = query({ namespace: ns });
    Promise.all([
      api<{ entry: Entry }>('GET', `/v1/memories/${encodeURIComponent(id)}${q}`),
      api<{ events: HistoryEvent[] }>('GET', `/v1/memories/${encodeURIComponent(id)}/history${q}`),
    ])
      .then(([e, h]) => {
        setEntry(e.entry);
        setEvents(h.events);
        setError('');
      })
      .catch((e) => setError(errorText(e)));
  };
  useEffect(load, [ns, id]);
  const purge = async () => {
    try {
      await api('POST', `/v1/memories/${encodeURIComponent(id)}/purge${query({ namespace: ns })}`);
      setConfirm('');
      load();
      onChanged();
    } catch (e) {
      setError(errorText(e));
    }
  };
  return (
    <div class="detail" id="detail">
      <ErrorLine text={error} />
      {entry && (
        <>
          <h3>
            <code>{entry.id}</code> <span class={`state ${entry.state}`}>{entry.state}</span>
          </h3>
          <p class="memtext text">{entry.text}</p>
          <dl class="provenance">
            <dt>principal</dt>
            <dd>{entry.principal}</dd>
            <dt>source</dt>
            <dd>{entry.source}</dd>
            <dt>created</dt>
            <dd>{time(entry.created_at_us)}</dd>
            <dt>updated</dt>
            <dd>{time(entry.updated_at_us)}</dd>
            <dt>signing key</dt>
            <dd>{entry.key_id}</dd>
          </dl>
          {entry.metadata && <Json value={entry.metadata} />}
          {me.role === 'admin' && (
            <button class="link" onClick={() => go({ screen: 'audit', namespace: ns, entryId: id })}>
              Blast radius: every search and answer it fed
            </button>
          )}
        </>
      )}
      <h4>Signed history</h4>
      <table class="history">
        <thead>
          <tr>
            <th>seq</th>
            <th>event</th>
            <th>actor</th>
            <th>time</th>
            <th>signature</th>
            <th>detail</th>
          </tr>
        </thead>
        <tbody>
          {events.map((ev) => (
            <tr key={ev.seq} class={ev.verified ? '' : 'unverified'}>
              <td>{ev.seq}</td>
              <td>{ev.event}</td>
              <td>{ev.actor}</td>
              <td>{time(ev.at_us)}</td>
              <td>{ev.verified ? '✓ verified' : '✗ FAILED'}</td>
              <td>
                <Json value={ev.detail} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {me.role === 'admin' && entry && entry.state !== 'purged' && (
        <div class="purge">
          <h4>Purge (GDPR erasure: text, metadata and embedding are erased everywhere)</h4>
          <label>
            Type the id <code>{id}</code> to confirm{' '}
            <input id="purge-confirm" value={confirm} onInput={(e) => setConfirm((e.target as HTMLInputElement).value)} />
          </label>{' '}
          <button id="purge" class="danger" disabled={confirm !== id} onClick={purge}>
            Purge
          </button>
        </div>
      )}
    </div>
  );
}

export function MemoriesScreen({ me, jump, go }: { me: WhoAmI; jump: Jump; go: (j: Jump) => void }) {
  const [namespaces, reload, nsError] = useNamespaces();
  const [ns, setNs] = useState(jump.namespace ?? '');
  const [states, setStates] = useState<string[]>(['active']);
  const [filter, setFilter] = useState('');
  const [entries, setEntries] = useState<Entry[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [selected, setSelected] = useState(jump.entryId ?? '');
  const [error, setError] = useState('');
  const allowed = me.role === 'admin' ? STATES : STATES.filter((s) => s !== 'quarantined');
  const latest = useRef(0); // only the newest list request may fill the table

  useEffect(() => {
    // A functional update: the user may have picked a namespace since this effect was scheduled.
    if (namespaces.length > 0) setNs((current) => current || namespaces[0].namespace);
  }, [namespaces]);
  const load = (after?: string) => {
    if (!ns) return;
    let filterParam: string | undefined;
    if (filter.trim()) {
      try {
        filterParam = JSON.stringify(JSON.parse(filter));
      } catch {
        setError('the filter must be a JSON object, e.g. {"category": "health"}');
        return;
      }
    }
    const ticket = ++latest.current;
    api<{ entries: Entry[]; next_cursor: string | null }>(
      'GET',
      '/v1/memories' + query({ namespace: ns, state: states.join(','), filter: filterParam, limit: 50, cursor: after }),
    )
      .then((r) => {
        if (ticket !== latest.current) return;
        setEntries(after ? [...entries, ...r.entries] : r.entries);
        setCursor(r.next_cursor);
        setError('');
      })
      .catch((e) => setError(errorText(e)));
  };
  useEffect(() => load(), [ns, states.join(',')]);
  const toggle = (s: string) => setStates(states.includes(s) ? states.filter((x) => x !== s) : [...states, s]);
  return (
    <section>
      <div class="bar">
        <h2>Memories</h2>
        <NamespacePicker list={namespaces} value={ns} onChange={(v) => { setNs(v); setSelected(''); }} />
        {allowed.map((s) => (
          <label key={s} class="check">
            <input type="checkbox" id={`state-${s}`} checked={states.includes(s)} onChange={() => toggle(s)} /> {s}
          </label>
        ))}
        <form class="inline" onSubmit={(e) => { e.preventDefault(); load(); }}>
          <input placeholder='metadata filter {"k": "v"}' value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
          <button type="submit">Filter</button>
        </form>
      </div>
      <ErrorLine text={nsError || error} />
      <div class="split">
        <table class="list" id="memory-list">
          <thead>
            <tr>
              <th>id</th>
              <th>state</th>
              <th>text</th>
              <th>principal</th>
              <th>created</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.id} class={e.id === selected ? 'selected' : ''} onClick={() => setSelected(e.id)}>
                <td>
                  <code>{e.id.slice(-8)}</code>
                </td>
                <td>{e.state}</td>
                <td class="memtext clip">{e.text}</td>
                <td>{e.principal}</td>
                <td>{time(e.created_at_us)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {selected && ns && <Detail me={me} ns={ns} id={selected} go={go} onChanged={() => { load(); reload(); }} />}
      </div>
      {cursor && <button onClick={() => load(cursor)}>Load more</button>}
    </section>
  );
}
