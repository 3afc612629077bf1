// Small pieces the screens share: the namespace picker, a JSON block, an error line.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, NamespaceCounts } from './api';

export function useNamespaces(): [NamespaceCounts[], () => void, string] {
  const [list, setList] = useState<NamespaceCounts[]>([]);
  const [error, setError] = useState('');
  const load = () => {
    api<{ namespaces: NamespaceCounts[] }>('GET', '/v1/namespaces')
      .then((r) => {
        setList(r.namespaces);
        setError('');
      })
      .catch((e) => setError(errorText(e)));
  };
  useEffect(load, []);
  return [list, load, error];
}

export function NamespacePicker(props: {
  list: NamespaceCounts[];
  value: string;
  onChange: (ns: string) => void;
  id?: string;
}) {
  return (
    <label>
      Namespace{' '}
      <select
        id={props.id ?? 'namespace'}
        value={props.value}
        onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}
      >
        <option value="">(choose)</option>
        {props.list.map((n) => (
          <option key={n.namespace} value={n.namespace}>
            {n.namespace} ({n.active} active, {n.quarantined} quarantined)
          </option>
        ))}
      </select>
    </label>
  );
}

// Any JSON value as indented text (never as markup).
export function Json({ value }: { value: unknown }) {
  return <pre class="json">{JSON.stringify(value, null, 2)}</pre>;
}

export function ErrorLine({ text }: { text: string }) {
  return text ? <p class="error">{text}</p> : null;
}

// `text` with every occurrence of each of `marks` wrapped in <mark>: split into text nodes, never
// through HTML.
export function Highlighted({ text, marks }: { text: string; marks: string[] }) {
  const wanted = marks.filter((m) => m.length > 0);
  if (wanted.length === 0) return <span>{text}</span>;
  const parts: (string | { mark: string })[] = [];
  let rest = text;
  while (rest.length > 0) {
    let best = -1;
    let which = '';
    for (const m of wanted) {
      const at = rest.toLowerCase().indexOf(m.toLowerCase());
      if (at >= 0 && (best < 0 || at < best)) {
        best = at;
        which = m;
      }
    }
    if (best < 0) {
      parts.push(rest);
      break;
    }
    if (best > 0) parts.push(rest.slice(0, best));
    parts.push({ mark: rest.slice(best, best + which.length) });
    rest = rest.slice(best + which.length);
  }
  return (
    <span>
      {parts.map((p, i) => (typeof p === 'string' ? p : <mark key={i}>{p.mark}</mark>))}
    </span>
  );
}
