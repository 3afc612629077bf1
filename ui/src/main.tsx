// Entry point of the dashboard (doc/dashboard.md). Everything is rendered by Preact as elements and
// text nodes; no HTML string is ever parsed (memory text is attacker-controlled).
import { render } from 'preact';
import { App } from './app';
import './style.css';

render(<App />, document.getElementById('app')!);
