// Keys and principals (service admins): roles and grants, create a principal or a key (the key is
// shown once, then forgotten by the page), revoke, and rotate the store's signing key.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, Principal, time, WhoAmI } from './api';
import { ErrorLine } from './common';

function OnceKey({ value, onDismiss }: { value: { principal: string; key: string }; onDismiss: () => void }) {
  return (
    <div class="once" id="new-key">
      <p>
        New API key for <strong>{value.principal}</strong>. It is shown this once: copy it now; the server keeps only
        its hash.
      </p>
      <code id="new-key-value">{value.key}</code>{' '}
      <button id="new-key-dismiss" onClick={onDismiss}>
        I have copied it
      </button>
    </div>
  );
}

export function KeysScreen({ me }: { me: WhoAmI }) {
  const [principals, setPrincipals] = useState<Principal[]>([]);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const [shown, setShown] = useState<{ principal: string; key: string } | null>(null);
  const [name, setName] = useState('');
  const [role, setRole] = useState('reader');
  const [grants, setGrants] = useState('');
  // A destructive button asks for a second click (no window.confirm dialog).
  const [armed, setArmed] = useState('');
  const twice = (what: string, fn: () => void) => {
    if (armed !== what) {
      setArmed(what);
      return;
    }
    setArmed('');
    fn();
  };

  const load = () =>
    api<{ principals: Principal[] }>('GET', '/v1/admin/principals')
      .then((r) => {
        setPrincipals(r.principals);
        setError('');
      })
      .catch((e) => setError(errorText(e)));
  useEffect(() => {
    load();
  }, []);
  const run = async (fn: () => Promise<void>) => {
    try {
      await fn();
      await load();
    } catch (e) {
      setError(errorText(e));
    }
  };
  const create = (e: Event) => {
    e.preventDefault();
    run(async () => {
      const namespaces = grants.split(',').map((s) => s.trim()).filter((s) => s);
      const r = await api<{ api_key: string }>('POST', '/v1/admin/principals', { name, role, namespaces, create_key: true });
      setShown({ principal: name, key: r.api_key });
      setName('');
      setGrants('');
    });
  };
  const newKey = (p: string) =>
    run(async () => {
      const r = await api<{ api_key: string }>('POST', `/v1/admin/principals/${encodeURIComponent(p)}/keys`);
      setShown({ principal: p, key: r.api_key });
    });
  const revokeKey = (id: string) =>
    run(async () => {
      await api('POST', `/v1/admin/keys/${encodeURIComponent(id)}/revoke`);
      setNotice(`Revoked key ${id}`);
    });
  const revokePrincipal = (p: string) =>
    run(async () => {
      await api('POST', `/v1/admin/principals/${encodeURIComponent(p)}/revoke`);
      setNotice(`Revoked ${p}`);
    });
  const rotate = () =>
    run(async () => {
      const r = await api<{ key_id: number }>('POST', '/v1/admin/signing-keys/rotate');
      setNotice(`New signing key ${r.key_id}`);
    });
  return (
    <section>
      <div class="bar">
        <h2>Keys & principals</h2>
        <button id="rotate" onClick={() => twice('rotate', rotate)}>
          {armed === 'rotate' ? 'Click again: new writes get a new key (old entries still verify)' : 'Rotate the signing key'}
        </button>
      </div>
      <ErrorLine text={error} />
      {notice && <p class="notice">{notice}</p>}
      {shown && <OnceKey value={shown} onDismiss={() => setShown(null)} />}
      <form class="filters" id="create-principal" onSubmit={create}>
        <label>
          Name <input id="p-name" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Role{' '}
          <select id="p-role" value={role} onChange={(e) => setRole((e.target as HTMLSelectElement).value)}>
            <option>reader</option>
            <option>writer</option>
            <option>admin</option>
          </select>
        </label>
        <label>
          Namespaces <input id="p-namespaces" placeholder="alice, bob or *" value={grants} onInput={(e) => setGrants((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit" id="p-create">
          Create principal and key
        </button>
      </form>
      <table class="principals" id="principals">
        <thead>
          <tr>
            <th>principal</th>
            <th>role</th>
            <th>namespaces</th>
            <th>keys</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          {principals.map((p) => (
            <tr key={p.name} class={p.revoked ? 'revoked' : ''} data-principal={p.name}>
              <td>
                {p.name}
                {p.revoked ? ' (revoked)' : ''}
              </td>
              <td>{p.role}</td>
              <td>{p.namespaces.join(', ')}</td>
              <td>
                <ul class="keys">
                  {(p.keys ?? []).map((k) => (
                    <li key={k.key_id}>
                      <code>{k.key_id}</code> {time(k.created_at_us)} {k.revoked ? '(revoked)' : ''}
                      {!k.revoked && k.key_id !== me.key_id && (
                        <button class="link small" onClick={() => revokeKey(k.key_id)}>
                          revoke
                        </button>
                      )}
                      {k.key_id === me.key_id ? ' (this session)' : ''}
                    </li>
                  ))}
                </ul>
              </td>
              <td>
                {!p.revoked && (
                  <>
                    <button class="new-key" onClick={() => newKey(p.name)}>
                      New key
                    </button>
                    {p.name !== me.principal && (
                      <button class="danger" onClick={() => twice('p:' + p.name, () => revokePrincipal(p.name))}>
                        {armed === 'p:' + p.name ? 'Click again to revoke it and all its keys' : 'Revoke'}
                      </button>
                    )}
                  </>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
