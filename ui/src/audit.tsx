// Audit and blast radius: search the audit log by session, entry or principal; a timeline of the
// searches and answers with the memories they returned; for one memory, every session and answer
// it fed; and the audit chain's verification (service admins).
import { useEffect, useState } from 'preact/hooks';
import { api, AuditRecord, errorText, query, time, WhoAmI } from './api';
import type { Jump } from './app';
import { ErrorLine } from './common';

interface VerifyReport {
  ok: boolean;
  audit?: { records: number; bad_records: unknown[]; unsigned_records: number; ok: boolean };
  rows_checked?: number;
  bad_rows?: unknown[];
}

function gateOf(r: AuditRecord): string {
  const g = r.detail?.gate as { decision?: string } | undefined;
  return g?.decision ?? '';
}

function BlastRadius({ entryId, records }: { entryId: string; records: AuditRecord[] }) {
  const fed = records.filter((r) => r.operation === 'search' || r.operation === 'answer');
  const answers = fed.filter((r) => r.operation === 'answer');
  const sessions = [...new Set(fed.map((r) => `${r.principal} / ${r.session || '(no session)'}`))];
  return (
    <div class="blast" id="blast">
      <h3>
        Blast radius of <code>{entryId}</code>
      </h3>
      <p>
        Returned by <strong id="blast-searches">{fed.length - answers.length}</strong> searches and{' '}
        <strong id="blast-answers">{answers.length}</strong> answers, in{' '}
        <strong id="blast-sessions">{sessions.length}</strong> sessions.
      </p>
      <ul class="sessions">
        {sessions.map((s) => (
          <li key={s}>{s}</li>
        ))}
      </ul>
    </div>
  );
}

export function AuditScreen({ me, jump, go }: { me: WhoAmI; jump: Jump; go: (j: Jump) => void }) {
  const [principal, setPrincipal] = useState('');
  const [session, setSession] = useState('');
  const [entryId, setEntryId] = useState(jump.entryId ?? '');
  // An admin without the "*" grant reads the audit of one granted namespace at a time.
  const [ns, setNs] = useState(jump.namespace ?? (me.namespaces.includes('*') ? '' : (me.namespaces[0] ?? '')));
  const [onlyReads, setOnlyReads] = useState(!!jump.entryId);
  const [records, setRecords] = useState<AuditRecord[]>([]);
  const [shownEntry, setShownEntry] = useState('');
  const [error, setError] = useState('');
  const [verify, setVerify] = useState<VerifyReport | null>(null);

  const search = (over?: { entryId?: string; ns?: string }) => {
    const entry = over?.entryId ?? entryId;
    const namespace = over?.ns ?? ns;
    api<{ records: AuditRecord[] }>(
      'GET',
      '/v1/audit' + query({ principal, session, entry_id: entry, namespace, limit: 500 }),
    )
      .then((r) => {
        setRecords(r.records);
        setShownEntry(entry);
        setError('');
      })
      .catch((e) => setError(errorText(e)));
  };
  useEffect(() => search(), [jump.entryId, jump.namespace]);

  const runVerify = () => {
    api<VerifyReport>('POST', '/v1/admin/verify')
      .then(setVerify)
      .catch((e) => setError(errorText(e)));
  };
  const follow = (id: string, namespace: string) => {
    setEntryId(id);
    setNs(namespace);
    setOnlyReads(true);
    search({ entryId: id, ns: namespace });
  };
  const shown = onlyReads ? records.filter((r) => r.operation === 'search' || r.operation === 'answer') : records;
  return (
    <section>
      <div class="bar">
        <h2>Audit & blast radius</h2>
        {me.service_admin && (
          <button id="verify" onClick={runVerify}>
            Verify the audit chain
          </button>
        )}
        {verify && (
          <span id="verify-status" class={verify.ok ? 'badge ok' : 'badge bad'}>
            {verify.ok ? 'verified' : 'VERIFICATION FAILED'}
            {verify.audit ? ` — ${verify.audit.records} audit records, ${verify.audit.bad_records.length} bad` : ''}
          </span>
        )}
      </div>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          search();
        }}
      >
        <label>
          Principal <input id="f-principal" value={principal} onInput={(e) => setPrincipal((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Session <input id="f-session" value={session} onInput={(e) => setSession((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Entry <input id="f-entry" value={entryId} onInput={(e) => setEntryId((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Namespace <input id="f-namespace" value={ns} onInput={(e) => setNs((e.target as HTMLInputElement).value)} />
        </label>
        <label class="check">
          <input type="checkbox" checked={onlyReads} onChange={(e) => setOnlyReads((e.target as HTMLInputElement).checked)} />{' '}
          searches and answers only
        </label>
        <button type="submit" id="audit-search">
          Search
        </button>
      </form>
      <ErrorLine text={error} />
      {shownEntry && <BlastRadius entryId={shownEntry} records={records} />}
      <table class="timeline" id="timeline">
        <thead>
          <tr>
            <th>time</th>
            <th>operation</th>
            <th>principal</th>
            <th>session</th>
            <th>namespace</th>
            <th>gate</th>
            <th>memories returned</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((r) => (
            <tr key={r.seq} class={`op-${r.operation}`}>
              <td>{time(r.at_us)}</td>
              <td>{r.operation}</td>
              <td>{r.principal}</td>
              <td>{r.session}</td>
              <td>{r.namespace}</td>
              <td>{gateOf(r)}</td>
              <td>
                {(r.returned_ids ?? []).map((id) => (
                  <span key={id} class="idlink">
                    <button class="link" title="what did this memory feed?" onClick={() => follow(id, r.namespace)}>
                      {id}
                    </button>
                    <button
                      class="link small"
                      title="open the memory"
                      onClick={() => go({ screen: 'memories', namespace: r.namespace, entryId: id })}
                    >
                      ↗
                    </button>
                  </span>
                ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {shown.length === 0 && <p class="muted">No records.</p>}
    </section>
  );
}
