// The shell: log-in with an API key (kept in sessionStorage), then the screens the key's role may
// use. A screen the role may not use is not shown (the API would refuse it anyway).
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, forgetKey, storedKey, storeKey, WhoAmI } from './api';
import { AuditScreen } from './audit';
import { HealthScreen } from './health';
import { KeysScreen } from './keys';
import { MemoriesScreen } from './memories';
import { QuarantineScreen } from './quarantine';

export type Screen = 'quarantine' | 'audit' | 'memories' | 'keys' | 'health';

// Where one screen sends the operator to another (e.g. a memory's blast radius in the audit screen).
export interface Jump {
  screen: Screen;
  namespace?: string;
  entryId?: string;
}

function screensFor(me: WhoAmI): Screen[] {
  const out: Screen[] = [];
  if (me.role === 'admin') out.push('quarantine', 'audit');
  out.push('memories');
  if (me.service_admin) out.push('keys', 'health');
  return out;
}

const TITLES: Record<Screen, string> = {
  quarantine: 'Quarantine',
  audit: 'Audit & blast radius',
  memories: 'Memories',
  keys: 'Keys & principals',
  health: 'Health & defenses',
};

function Login({ onLogin }: { onLogin: (me: WhoAmI) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    storeKey(key.trim());
    try {
      onLogin(await api<WhoAmI>('GET', '/v1/whoami'));
    } catch (err) {
      forgetKey();
      setError(errorText(err));
    }
  };
  return (
    <form class="login" onSubmit={submit}>
      <h1>Bulwark</h1>
      <label>
        API key
        <input
          id="api-key"
          type="password"
          autocomplete="off"
          value={key}
          onInput={(e) => setKey((e.target as HTMLInputElement).value)}
        />
      </label>
      <button type="submit" id="login">
        Log in
      </button>
      <p class="hint">The key stays in this tab's sessionStorage; closing the tab forgets it.</p>
      {error && <p class="error">{error}</p>}
    </form>
  );
}

export function App() {
  const [me, setMe] = useState<WhoAmI | null>(null);
  const [checking, setChecking] = useState(storedKey() !== '');
  const [jump, setJump] = useState<Jump>({ screen: 'memories' });

  useEffect(() => {
    if (!storedKey()) return;
    api<WhoAmI>('GET', '/v1/whoami')
      .then(login)
      .catch(() => forgetKey())
      .finally(() => setChecking(false));
  }, []);

  function login(who: WhoAmI) {
    setMe(who);
    setJump({ screen: screensFor(who)[0] });
  }

  if (checking) return <p>Checking the key…</p>;
  if (!me) return <Login onLogin={login} />;
  const screens = screensFor(me);
  const logout = () => {
    forgetKey();
    setMe(null);
  };
  return (
    <div class="shell">
      <header class="top">
        <strong>Bulwark</strong>
        <nav>
          {screens.map((s) => (
            <button
              key={s}
              id={`nav-${s}`}
              class={s === jump.screen ? 'tab active' : 'tab'}
              onClick={() => setJump({ screen: s })}
            >
              {TITLES[s]}
            </button>
          ))}
        </nav>
        <span class="who">
          {me.principal} ({me.role}
          {me.service_admin ? ', all namespaces' : ''})
        </span>
        <button id="logout" onClick={logout}>
          Log out
        </button>
      </header>
      <main>
        {jump.screen === 'quarantine' && <QuarantineScreen me={me} go={setJump} />}
        {jump.screen === 'audit' && <AuditScreen me={me} jump={jump} go={setJump} />}
        {jump.screen === 'memories' && <MemoriesScreen me={me} jump={jump} go={setJump} />}
        {jump.screen === 'keys' && <KeysScreen me={me} />}
        {jump.screen === 'health' && <HealthScreen />}
      </main>
    </div>
  );
}
